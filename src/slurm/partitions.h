#pragma once

// A cluster's partitions: corral's own, which every cluster has, and its
// users'. corral's list is kept here and nowhere else: the names users may
// not take (`reservedPartitionNames`) and the partitions the API lists
// (`partitionView`) and slurm.conf's (src/slurm/renderer.cc) all come
// from it. Also the edits the API makes to a spec's user
// partitions; `normalizeSlurmSettings` (src/slurm/settings.h) checks the
// result. Pure and thread-safe.

#include <map>
#include <string>
#include <vector>

#include "corral/spec.h"
#include "corral/status.h"

namespace corral {

// One partition as a cluster's partition list shows it.
struct PartitionView {
  std::string name;
  std::string nodes;  // "ALL", or a Slurm hostlist.
  bool managedByCorral = false;
  bool isDefault = false;
  std::map<std::string, std::string> options;
  bool operator==(const PartitionView&) const = default;
};

// The partitions corral manages on every cluster (`all` and one per node
// group, whether the group has nodes or not), plus `platformPartitions`
// (corrald's --platform-partition): users can neither create nor change them.
std::vector<std::string> reservedPartitionNames(const std::vector<std::string>& platformPartitions);

// corral's partitions on a cluster whose nodes are `nodeNames`: `all` over
// every node (the default unless `userDefault`), one per node group that has
// nodes (slinky, then cpu-workers), then `platformPartitions` over every
// node. Each has MaxTime=INFINITE.
std::vector<PartitionView> managedPartitions(const std::vector<std::string>& nodeNames,
                                             const std::vector<std::string>& platformPartitions,
                                             bool userDefault);

// Whether a user partition is the cluster's default (Default=YES).
bool isDefaultPartition(const PartitionSpec& partition);

// corral's partitions for the nodes `record.spec` asks for, then the users'
// in creation order: what `GET /clusters/{name}/partitions` lists.
std::vector<PartitionView> partitionView(const ClusterRecord& record);

// Adds a user partition. Conflict when one of that name exists;
// InvalidArgument when the spec has kMaxUserPartitions already.
Status addPartition(ClusterSpec& spec, const PartitionSpec& partition);

// Replaces the user partition of `partition.name`. InvalidArgument for one of
// corral's own (`all`, a node group's); NotFound for any other name the spec
// has no partition of, a platform partition's included.
Status replacePartition(ClusterSpec& spec, const PartitionSpec& partition);

// Removes the user partition `name`. InvalidArgument for a reserved name
// (`platformPartitions` included), NotFound for another unknown one.
Status removePartition(ClusterSpec& spec, const std::string& name,
                       const std::vector<std::string>& platformPartitions);

}  // namespace corral
