#include "slurm/settings.h"

#include <algorithm>
#include <set>

#include "common/text.h"
#include "slurm/hostlist.h"
#include "slurm/slurm_params.h"

namespace corral {
namespace {

constexpr size_t kMaxPartitionNameLength = 32;

Status checkPartitionName(const std::string& name, const std::vector<std::string>& reserved) {
  auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_';
  };
  bool ok = !name.empty() && name.size() <= kMaxPartitionNameLength &&
            std::isalpha(static_cast<unsigned char>(name[0])) &&
            std::all_of(name.begin(), name.end(), allowed);
  if (!ok)
    return invalidArgument("invalid partition name " + quoteForMessage(name) + ": use 1-" +
                           std::to_string(kMaxPartitionNameLength) +
                           " letters, digits, '-' and '_', starting with a letter");
  for (const auto& r : reserved) {
    if (r == name)
      return invalidArgument("partition \"" + name +
                             "\" is managed by corral and cannot be created, changed or deleted; "
                             "choose another name");
  }
  return Status::ok();
}

std::set<std::string> expand(const std::string& hostlist) {
  auto names = expandHostlist(hostlist);
  if (!names.isOk()) return {};
  return {names->begin(), names->end()};
}

}  // namespace

std::vector<std::string> nodeNamesOf(const ClusterSpec& spec) {
  std::vector<std::string> out;
  for (int i = 0; i < spec.gpuNodes; ++i) out.push_back(std::string(kGpuGroup) + "-" + std::to_string(i));
  for (int i = 0; i < spec.cpuNodes; ++i) out.push_back(std::string(kCpuGroup) + "-" + std::to_string(i));
  return out;
}

StatusOr<const ParamDef*> userSlurmConfParam(const std::string& key) {
  const ParamDef* def = findSlurmConfParam(key);
  if (def == nullptr)
    return invalidArgument(quoteForMessage(key) +
                           " is not a slurm.conf parameter corral lets users set; see "
                           "`corral config params`");
  return def;
}

Status normalizeSlurmSettings(ClusterSpec& spec, const std::vector<std::string>& platformPartitions) {
  if (spec.partitions.size() > static_cast<size_t>(kMaxUserPartitions))
    return invalidArgument("a cluster can have at most " + std::to_string(kMaxUserPartitions) +
                           " partitions of its own (this change has " +
                           std::to_string(spec.partitions.size()) + "); delete one first");
  auto reserved = reservedPartitionNames(platformPartitions);
  auto have = nodeNamesOf(spec);
  std::set<std::string> haveSet(have.begin(), have.end());
  std::set<std::string> names;
  int defaults = 0;
  for (auto& p : spec.partitions) {
    RETURN_IF_ERROR(checkPartitionName(p.name, reserved));
    if (!names.insert(p.name).second)
      return invalidArgument("partition \"" + p.name + "\" is defined twice");
    auto context = "partition \"" + p.name + "\"";
    // Empty only after a scale-down removed all its nodes (the API refuses a
    // new partition without nodes).
    auto nodes = p.nodes.empty() ? StatusOr<std::vector<std::string>>(std::vector<std::string>{})
                                 : expandHostlist(p.nodes);
    if (!nodes.isOk()) return nodes.status().withContext(context);
    for (const auto& n : *nodes) {
      if (!haveSet.count(n))
        return invalidArgument(context + ": node " + quoteForMessage(n) +
                               " does not exist; the cluster has " + compressHostlist(have));
    }
    p.nodes = compressHostlist(*nodes);
    std::map<std::string, std::string> options;
    for (const auto& [key, value] : p.options) {
      const ParamDef* def = findPartitionParam(key);
      if (def == nullptr)
        return invalidArgument(context + ": " + quoteForMessage(key) +
                               " is not a partition parameter corral lets users set; see "
                               "`corral config params`");
      auto normal = checkParamValue(*def, value);
      if (!normal.isOk()) return normal.status().withContext(context);
      if (!options.emplace(def->name, *normal).second)
        return invalidArgument(context + ": " + def->name + " is given twice");
    }
    RETURN_IF_ERROR(checkPartitionCombination(options).withContext(context));
    p.options = std::move(options);
    auto d = p.options.find("Default");
    if (d != p.options.end() && d->second == "YES") ++defaults;
  }
  if (defaults > 1)
    return invalidArgument("only one partition can be the default (Default=YES)");
  if (spec.slurmConf.size() > static_cast<size_t>(kMaxSlurmConfEntries))
    return invalidArgument("at most " + std::to_string(kMaxSlurmConfEntries) +
                           " slurm.conf parameters can be set");
  std::map<std::string, std::string> conf;
  for (const auto& [key, value] : spec.slurmConf) {
    ASSIGN_OR_RETURN(const ParamDef* def, userSlurmConfParam(key));
    ASSIGN_OR_RETURN(std::string normal, checkParamValue(*def, value));
    if (!conf.emplace(def->name, normal).second)
      return invalidArgument(def->name + " is given twice");
  }
  RETURN_IF_ERROR(checkSlurmConfCombination(conf));
  spec.slurmConf = std::move(conf);
  return Status::ok();
}

std::vector<std::string> partitionsEmptiedBy(const ClusterSpec& before, const ClusterSpec& after) {
  auto left = nodeNamesOf(after);
  std::set<std::string> leftSet(left.begin(), left.end());
  std::vector<std::string> out;
  for (const auto& p : before.partitions) {
    auto nodes = expand(p.nodes);
    if (nodes.empty()) continue;
    bool any = std::any_of(nodes.begin(), nodes.end(), [&](const auto& n) { return leftSet.count(n) > 0; });
    if (!any) out.push_back(p.name);
  }
  return out;
}

void prunePartitionNodes(ClusterSpec& spec) {
  auto have = nodeNamesOf(spec);
  std::set<std::string> haveSet(have.begin(), have.end());
  for (auto& p : spec.partitions) {
    auto names = expandHostlist(p.nodes);
    if (!names.isOk()) continue;
    std::vector<std::string> kept;
    for (const auto& n : *names)
      if (haveSet.count(n)) kept.push_back(n);
    p.nodes = compressHostlist(kept);
  }
}

}  // namespace corral
