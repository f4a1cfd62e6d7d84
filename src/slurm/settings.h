#pragma once

// Checks of the Slurm side of a spec: the user's partitions and slurm.conf
// parameters. Shared by the API (which refuses a bad change before it
// becomes a revision) and tests; pure and thread-safe.

#include <string>
#include <vector>

#include "corral/spec.h"
#include "corral/status.h"
#include "slurm/partitions.h"  // reservedPartitionNames: corral's own partitions.

namespace corral {

struct ParamDef;  // src/slurm/slurm_params.h

// The allowlisted slurm.conf parameter that `key` names, case-insensitively
// (src/slurm/slurm_params.h); InvalidArgument saying users may not set it
// otherwise.
StatusOr<const ParamDef*> userSlurmConfParam(const std::string& key);

// Normalises `spec.partitions` and `spec.slurmConf` in place (canonical
// parameter names, normalised values, compressed hostlists) and checks them:
// at most kMaxUserPartitions partitions with valid, unique, unreserved names;
// nodes given as a Slurm hostlist naming only nodes the spec has; options
// and slurm.conf parameters from the allowlists (a partition may have no nodes
// left after a scale-down) (src/slurm/slurm_params.h);
// at most one user partition with Default=YES. InvalidArgument says what is
// wrong and how to put it right.
Status normalizeSlurmSettings(ClusterSpec& spec, const std::vector<std::string>& platformPartitions);

// Partitions that have nodes in `before` but none in `after` (a scale-down
// would leave them empty), by name.
std::vector<std::string> partitionsEmptiedBy(const ClusterSpec& before, const ClusterSpec& after);

// Drops from each partition the nodes `spec` no longer has (after a
// scale-down), keeping the rest as a compressed hostlist.
void prunePartitionNodes(ClusterSpec& spec);

// The node names a spec has: slinky-0…, then cpu-workers-0….
std::vector<std::string> nodeNamesOf(const ClusterSpec& spec);

}  // namespace corral
