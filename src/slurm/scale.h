#pragma once

// Scaling a cluster: what a new node count removes, which user partitions it
// empties or shrinks, and the edit it makes to the spec. Planned from the spec
// before the change is stored, so that the API's answer says what the scale
// will do (docs/api.md, "Scale"). Pure and thread-safe.

#include <string>
#include <vector>

#include "corral/spec.h"

namespace corral {

struct ScalePlan {
  int gpuNodes = 0;
  int cpuNodes = 0;
  // Nodes of the current spec the new counts do not keep, in Slurm order.
  std::vector<std::string> removedNodes;
  // User partitions with nodes now and none after (`partitionsEmptiedBy`).
  std::vector<std::string> emptiedPartitions;
};

// Scaling `current` to `gpuNodes` GPU and `cpuNodes` CPU workers. The counts
// are not checked here (`validateClusterSpec` does).
ScalePlan planScale(const ClusterSpec& current, int gpuNodes, int cpuNodes);

// Sets the plan's node counts in `spec` and drops the nodes it no longer has
// from its partitions.
void applyScale(const ScalePlan& plan, ClusterSpec& spec);

// The change's message: "scale to 4 GPU nodes and 1 CPU node", and
// " (--force)" when `force`.
std::string describeScale(const ScalePlan& plan, bool force);

// The user partitions of `before` that `after` keeps with fewer, but some,
// nodes: "p1: slinky-[0-3] -> slinky-[0-1]", in `before`'s order.
std::vector<std::string> shrunkPartitions(const ClusterSpec& before, const ClusterSpec& after);

}  // namespace corral
