#include "slurm/cluster_config.h"

#include <sstream>

#include "common/text.h"
#include "slurm/renderer.h"
#include "slurm/settings.h"
#include "slurm/slurm_params.h"

namespace corral {
namespace {

std::string canonicalName(const std::string& key) {
  const ParamDef* def = findSlurmConfParam(key);
  return def ? def->name : key;
}

}  // namespace

Status applyConfigChange(const ConfigChange& change, ClusterSpec& spec) {
  std::map<std::string, std::string> conf = spec.slurmConf;
  for (const auto& key : change.unset) {
    if (!conf.erase(canonicalName(key)))
      return invalidArgument(quoteForMessage(key) + " is not set; `corral config get` lists what is");
  }
  for (const auto& [key, value] : change.set) {
    ASSIGN_OR_RETURN(const ParamDef* def, userSlurmConfParam(key));
    conf[def->name] = value;
  }
  spec.slurmConf = std::move(conf);
  return Status::ok();
}

std::string describeConfigChange(const ConfigChange& change) {
  std::string out;
  for (const auto& [k, v] : change.set) out += (out.empty() ? "" : " ") + canonicalName(k) + "=" + v;
  for (const auto& k : change.unset) out += (out.empty() ? "unset " : " unset ") + canonicalName(k);
  return out;
}

StatusOr<ClusterRecord> withConfigChange(const ClusterRecord& record, const ConfigChange& change) {
  ClusterRecord next = record;
  RETURN_IF_ERROR(applyConfigChange(change, next.spec));
  RETURN_IF_ERROR(normalizeSlurmSettings(next.spec, record.platformPartitions));
  ASSIGN_OR_RETURN(next.nodes, planNodes(next.spec, next.subnet, record.nodes));
  return next;
}

std::map<std::string, std::string> effectiveSlurmConf(const RenderedFiles& files) {
  std::map<std::string, std::string> out;
  auto conf = files.find("etc/slurm/slurm.conf");
  if (conf == files.end()) return out;
  std::istringstream lines(conf->second.content);
  std::string line;
  while (std::getline(lines, line)) {
    auto eq = line.find('=');
    if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
    std::string key = line.substr(0, eq);
    if (key == "NodeName" || key == "PartitionName" || key == "DownNodes" || key == "NodeSet") continue;
    out[key] = line.substr(eq + 1);
  }
  return out;
}

}  // namespace corral
