#include "slurm/partitions.h"

#include <algorithm>

#include "slurm/hostlist.h"
#include "slurm/settings.h"

namespace corral {
namespace {

// corral's own partitions, in slurm.conf's order. `group` is the node group a
// partition covers; none: every node.
struct CorralPartition {
  const char* name;
  const char* group;
};
constexpr CorralPartition kCorralPartitions[] = {
    {"all", nullptr}, {kGpuGroup, kGpuGroup}, {kCpuGroup, kCpuGroup}};

const std::map<std::string, std::string> kManagedOptions = {{"MaxTime", "INFINITE"}};

bool inGroup(const std::string& node, const std::string& group) {
  return node.rfind(group + "-", 0) == 0;
}

bool isReserved(const std::string& name, const std::vector<std::string>& platformPartitions) {
  auto reserved = reservedPartitionNames(platformPartitions);
  return std::find(reserved.begin(), reserved.end(), name) != reserved.end();
}

std::vector<PartitionSpec>::iterator findPartition(ClusterSpec& spec, const std::string& name) {
  return std::find_if(spec.partitions.begin(), spec.partitions.end(),
                      [&](const PartitionSpec& p) { return p.name == name; });
}

Status managedOrMissing(const std::string& name, const std::vector<std::string>& platformPartitions,
                        const char* verb) {
  if (isReserved(name, platformPartitions))
    return invalidArgument("partition \"" + name + "\" is managed by corral and cannot be " + verb);
  return notFound("no partition named \"" + name + "\"");
}

}  // namespace

std::vector<std::string> reservedPartitionNames(const std::vector<std::string>& platformPartitions) {
  std::vector<std::string> out;
  for (const auto& p : kCorralPartitions) out.push_back(p.name);
  out.insert(out.end(), platformPartitions.begin(), platformPartitions.end());
  return out;
}

std::vector<PartitionView> managedPartitions(const std::vector<std::string>& nodeNames,
                                             const std::vector<std::string>& platformPartitions,
                                             bool userDefault) {
  std::vector<PartitionView> out;
  for (const auto& p : kCorralPartitions) {
    if (p.group == nullptr) {
      out.push_back({p.name, "ALL", true, !userDefault, kManagedOptions});
      continue;
    }
    std::vector<std::string> members;
    for (const auto& n : nodeNames)
      if (inGroup(n, p.group)) members.push_back(n);
    if (!members.empty()) out.push_back({p.name, compressHostlist(members), true, false, kManagedOptions});
  }
  for (const auto& name : platformPartitions) out.push_back({name, "ALL", true, false, kManagedOptions});
  return out;
}

bool isDefaultPartition(const PartitionSpec& partition) {
  auto d = partition.options.find("Default");
  return d != partition.options.end() && d->second == "YES";
}

std::vector<PartitionView> partitionView(const ClusterRecord& record) {
  const auto& users = record.spec.partitions;
  bool userDefault = std::any_of(users.begin(), users.end(), isDefaultPartition);
  auto out = managedPartitions(nodeNamesOf(record.spec), record.platformPartitions, userDefault);
  for (const auto& p : users) out.push_back({p.name, p.nodes, false, isDefaultPartition(p), p.options});
  return out;
}

Status addPartition(ClusterSpec& spec, const PartitionSpec& partition) {
  if (findPartition(spec, partition.name) != spec.partitions.end())
    return conflict("partition \"" + partition.name + "\" already exists");
  if (spec.partitions.size() >= static_cast<size_t>(kMaxUserPartitions))
    return invalidArgument("a cluster can have at most " + std::to_string(kMaxUserPartitions) +
                           " partitions of its own; delete one first");
  spec.partitions.push_back(partition);
  return Status::ok();
}

Status replacePartition(ClusterSpec& spec, const PartitionSpec& partition) {
  auto it = findPartition(spec, partition.name);
  // Only corral's fixed partitions are named as such here; a platform
  // partition reads as one that does not exist (as it always has).
  if (it == spec.partitions.end()) return managedOrMissing(partition.name, {}, "changed");
  *it = partition;
  return Status::ok();
}

Status removePartition(ClusterSpec& spec, const std::string& name,
                       const std::vector<std::string>& platformPartitions) {
  auto it = findPartition(spec, name);
  if (it == spec.partitions.end()) return managedOrMissing(name, platformPartitions, "deleted");
  spec.partitions.erase(it);
  return Status::ok();
}

}  // namespace corral
