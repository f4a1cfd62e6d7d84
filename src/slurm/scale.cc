#include "slurm/scale.h"

#include <set>

#include "slurm/settings.h"

namespace corral {
namespace {

std::string countOf(int n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? " node" : " nodes");
}

}  // namespace

ScalePlan planScale(const ClusterSpec& current, int gpuNodes, int cpuNodes) {
  ScalePlan plan;
  plan.gpuNodes = gpuNodes;
  plan.cpuNodes = cpuNodes;
  ClusterSpec next = current;
  next.gpuNodes = gpuNodes;
  next.cpuNodes = cpuNodes;
  auto kept = nodeNamesOf(next);
  std::set<std::string> keep(kept.begin(), kept.end());
  for (const auto& n : nodeNamesOf(current))
    if (!keep.count(n)) plan.removedNodes.push_back(n);
  plan.emptiedPartitions = partitionsEmptiedBy(current, next);
  return plan;
}

void applyScale(const ScalePlan& plan, ClusterSpec& spec) {
  spec.gpuNodes = plan.gpuNodes;
  spec.cpuNodes = plan.cpuNodes;
  prunePartitionNodes(spec);
}

std::string describeScale(const ScalePlan& plan, bool force) {
  return "scale to " + countOf(plan.gpuNodes, "GPU") + " and " + countOf(plan.cpuNodes, "CPU") +
         (force ? " (--force)" : "");
}

std::vector<std::string> shrunkPartitions(const ClusterSpec& before, const ClusterSpec& after) {
  std::vector<std::string> out;
  for (const auto& was : before.partitions)
    for (const auto& now : after.partitions)
      if (now.name == was.name && now.nodes != was.nodes && !now.nodes.empty())
        out.push_back(was.name + ": " + was.nodes + " -> " + now.nodes);
  return out;
}

}  // namespace corral
