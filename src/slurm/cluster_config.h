#pragma once

// A cluster's slurm.conf settings as `corral config` shows and changes them
// (docs/api.md, "Configuration"): a change to the user's settings, what it
// is called in the cluster's history, the record it would make, and what a
// rendered slurm.conf sets in effect. Pure and thread-safe.

#include <map>
#include <string>
#include <vector>

#include "corral/runtime.h"
#include "corral/spec.h"
#include "corral/status.h"

namespace corral {

// {"set": {Key: Value}, "unset": [Key]}: keys as the user wrote them,
// matched case-insensitively against the allowlist (src/slurm/slurm_params.h).
struct ConfigChange {
  std::map<std::string, std::string> set;
  std::vector<std::string> unset;
  bool empty() const { return set.empty() && unset.empty(); }
};

// Unsets, then sets, the change's keys in `spec.slurmConf` under their
// canonical names; values are checked later (`normalizeSlurmSettings`).
// InvalidArgument, and `spec` unchanged, for a key to unset that is not set
// or a key to set that users may not set.
Status applyConfigChange(const ConfigChange& change, ClusterSpec& spec);

// "MinJobAge=60 unset KillWait", with the parameters' canonical names.
std::string describeConfigChange(const ConfigChange& change);

// `record` with `change` applied to its spec, normalised, and its nodes
// planned for the result: what `config diff` renders.
StatusOr<ClusterRecord> withConfigChange(const ClusterRecord& record, const ConfigChange& change);

// What the rendered slurm.conf in `files` sets, by key (a later line wins):
// corral's defaults with the user's settings over them, leaving out the node
// and partition lines (NodeName, PartitionName, DownNodes, NodeSet). Empty
// when `files` has no slurm.conf.
std::map<std::string, std::string> effectiveSlurmConf(const RenderedFiles& files);

}  // namespace corral
