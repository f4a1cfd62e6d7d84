#include "slurm/scale.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace corral {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

ClusterSpec specWith(int gpuNodes, int cpuNodes, std::vector<PartitionSpec> partitions = {}) {
  ClusterSpec s;
  s.name = "demo";
  s.gpuNodes = gpuNodes;
  s.cpuNodes = cpuNodes;
  s.partitions = std::move(partitions);
  return s;
}

TEST(PlanScale, ScaleDownRemovesTheHighestNodesOfEachGroup) {
  ScalePlan plan = planScale(specWith(6, 2), 4, 1);
  EXPECT_EQ(plan.gpuNodes, 4);
  EXPECT_EQ(plan.cpuNodes, 1);
  EXPECT_THAT(plan.removedNodes, ElementsAre("slinky-4", "slinky-5", "cpu-workers-1"));
  EXPECT_THAT(plan.emptiedPartitions, IsEmpty());
}

TEST(PlanScale, ScaleUpRemovesNothing) {
  ScalePlan plan = planScale(specWith(2, 0), 6, 1);
  EXPECT_THAT(plan.removedNodes, IsEmpty());
  EXPECT_THAT(plan.emptiedPartitions, IsEmpty());
}

TEST(PlanScale, NamesThePartitionsLeftWithoutNodes) {
  ClusterSpec current = specWith(6, 0,
                                 {{"tail", "slinky-[4-5]", {}},
                                  {"mixed", "slinky-[3-4]", {}},
                                  {"head", "slinky-0", {}}});
  ScalePlan plan = planScale(current, 4, 0);
  EXPECT_THAT(plan.emptiedPartitions, ElementsAre("tail"));
}

TEST(ApplyScale, SetsTheCountsAndPrunesPartitions) {
  ClusterSpec spec = specWith(6, 0, {{"tail", "slinky-[4-5]", {}}, {"mixed", "slinky-[3-4]", {}}});
  applyScale(planScale(spec, 4, 0), spec);
  EXPECT_EQ(spec.gpuNodes, 4);
  EXPECT_EQ(spec.cpuNodes, 0);
  EXPECT_EQ(spec.partitions[0].nodes, "");
  EXPECT_EQ(spec.partitions[1].nodes, "slinky-3");
}

TEST(DescribeScale, CountsNodesInWords) {
  EXPECT_EQ(describeScale(planScale(specWith(2, 0), 4, 1), false),
            "scale to 4 GPU nodes and 1 CPU node");
  EXPECT_EQ(describeScale(planScale(specWith(2, 0), 1, 0), true),
            "scale to 1 GPU node and 0 CPU nodes (--force)");
}

TEST(ShrunkPartitions, OnlyThoseThatKeepSomeNodes) {
  ClusterSpec before = specWith(6, 0,
                                {{"tail", "slinky-[4-5]", {}},
                                 {"mixed", "slinky-[3-4]", {}},
                                 {"head", "slinky-0", {}}});
  ClusterSpec after = before;
  applyScale(planScale(before, 4, 0), after);
  EXPECT_THAT(shrunkPartitions(before, after), ElementsAre("mixed: slinky-[3-4] -> slinky-3"));
  EXPECT_THAT(shrunkPartitions(before, before), IsEmpty());
}

}  // namespace
}  // namespace corral
