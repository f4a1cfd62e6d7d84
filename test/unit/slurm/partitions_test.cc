#include "slurm/partitions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "slurm/renderer.h"
#include "support/planned_record.h"

namespace corral {

// For gtest's messages.
void PrintTo(const PartitionView& p, std::ostream* os) {
  *os << "{" << p.name << " " << p.nodes << (p.managedByCorral ? " corral" : " user")
      << (p.isDefault ? " default" : "") << " options:";
  for (const auto& [k, v] : p.options) *os << " " << k << "=" << v;
  *os << "}";
}

namespace {

using ::testing::ElementsAre;

const std::map<std::string, std::string> kInfinite = {{"MaxTime", "INFINITE"}};

using testing_support::plannedRecord;

TEST(ReservedPartitionNames, CorralsOwnThenThePlatforms) {
  EXPECT_THAT(reservedPartitionNames({}), ElementsAre("all", "slinky", "cpu-workers"));
  EXPECT_THAT(reservedPartitionNames({"llm", "debug"}),
              ElementsAre("all", "slinky", "cpu-workers", "llm", "debug"));
}

TEST(ManagedPartitions, OneGroupPartitionPerGroupWithNodes) {
  auto parts = managedPartitions({"slinky-0", "slinky-1", "slinky-2"}, {}, false);
  EXPECT_THAT(parts, ElementsAre(PartitionView{"all", "ALL", true, true, kInfinite},
                                 PartitionView{"slinky", "slinky-[0-2]", true, false, kInfinite}));
}

TEST(ManagedPartitions, CpuGroupAfterGpuGroupThenPlatformPartitions) {
  auto parts = managedPartitions({"slinky-0", "cpu-workers-0", "cpu-workers-1"}, {"llm"}, false);
  EXPECT_THAT(parts,
              ElementsAre(PartitionView{"all", "ALL", true, true, kInfinite},
                          PartitionView{"slinky", "slinky-0", true, false, kInfinite},
                          PartitionView{"cpu-workers", "cpu-workers-[0-1]", true, false, kInfinite},
                          PartitionView{"llm", "ALL", true, false, kInfinite}));
}

TEST(ManagedPartitions, AllIsNotTheDefaultWhenAUserPartitionIs) {
  auto parts = managedPartitions({"cpu-workers-0"}, {}, true);
  EXPECT_THAT(parts, ElementsAre(PartitionView{"all", "ALL", true, false, kInfinite},
                                 PartitionView{"cpu-workers", "cpu-workers-0", true, false, kInfinite}));
}

TEST(PartitionView, CorralsForTheSpecsNodesThenTheUsersInOrder) {
  ClusterRecord r = plannedRecord(4, 0);
  r.spec.gpuNodes = 2;  // A scale-down not yet applied: the list follows the spec.
  r.platformPartitions = {"llm"};
  r.spec.partitions = {{"zeta", "slinky-1", {}}, {"alpha", "slinky-[0-1]", {{"Default", "YES"}}}};
  EXPECT_THAT(partitionView(r),
              ElementsAre(PartitionView{"all", "ALL", true, false, kInfinite},
                          PartitionView{"slinky", "slinky-[0-1]", true, false, kInfinite},
                          PartitionView{"llm", "ALL", true, false, kInfinite},
                          PartitionView{"zeta", "slinky-1", false, false, {}},
                          PartitionView{"alpha", "slinky-[0-1]", false, true, {{"Default", "YES"}}}));
}

TEST(IsDefaultPartition, OnlyDefaultYes) {
  EXPECT_TRUE(isDefaultPartition({"p", "slinky-0", {{"Default", "YES"}}}));
  EXPECT_FALSE(isDefaultPartition({"p", "slinky-0", {{"Default", "NO"}}}));
  EXPECT_FALSE(isDefaultPartition({"p", "slinky-0", {}}));
}

// slurm.conf declares exactly corral's list, in the same order.
TEST(ManagedPartitions, AreTheOnesSlurmConfDeclares) {
  for (bool userDefault : {false, true}) {
    ClusterRecord r = plannedRecord(2, 1);
    r.platformPartitions = {"llm"};
    if (userDefault) r.spec.partitions = {{"mine", "slinky-0", {{"Default", "YES"}}}};
    std::vector<std::string> names;
    for (const auto& n : r.nodes) names.push_back(n.name);
    std::vector<std::string> expected;
    for (const auto& p : managedPartitions(names, r.platformPartitions, userDefault))
      expected.push_back("PartitionName=" + p.name + " Nodes=" + p.nodes +
                         (p.isDefault ? " Default=YES" : "") + " MaxTime=INFINITE State=UP");
    std::vector<std::string> declared;
    std::istringstream conf(renderSlurmConf(r));
    for (std::string line; std::getline(conf, line);)
      if (line.rfind("PartitionName=", 0) == 0 && line.find("PartitionName=mine") != 0)
        declared.push_back(line);
    EXPECT_EQ(declared, expected) << "userDefault=" << userDefault;
  }
}

TEST(AddPartition, AppendsAUserPartition) {
  ClusterSpec spec;
  ASSERT_TRUE(addPartition(spec, {"a", "slinky-0", {}}).isOk());
  ASSERT_TRUE(addPartition(spec, {"b", "slinky-1", {}}).isOk());
  ASSERT_EQ(spec.partitions.size(), 2u);
  EXPECT_EQ(spec.partitions[1], (PartitionSpec{"b", "slinky-1", {}}));
}

TEST(AddPartition, RefusesATakenNameAndTheTwentyFirst) {
  ClusterSpec spec;
  ASSERT_TRUE(addPartition(spec, {"a", "slinky-0", {}}).isOk());
  Status taken = addPartition(spec, {"a", "slinky-1", {}});
  EXPECT_EQ(taken.code(), Code::kConflict);
  EXPECT_EQ(taken.message(), "partition \"a\" already exists");
  for (int i = 1; i < kMaxUserPartitions; ++i)
    ASSERT_TRUE(addPartition(spec, {"p" + std::to_string(i), "slinky-0", {}}).isOk());
  Status full = addPartition(spec, {"one-more", "slinky-0", {}});
  EXPECT_EQ(full.code(), Code::kInvalidArgument);
  EXPECT_EQ(full.message(), "a cluster can have at most 20 partitions of its own; delete one first");
  EXPECT_EQ(spec.partitions.size(), 20u);
}

TEST(ReplacePartition, ReplacesByName) {
  ClusterSpec spec;
  spec.partitions = {{"a", "slinky-0", {}}, {"b", "slinky-1", {}}};
  ASSERT_TRUE(replacePartition(spec, {"b", "slinky-[0-1]", {{"MaxTime", "30"}}}).isOk());
  EXPECT_EQ(spec.partitions[1], (PartitionSpec{"b", "slinky-[0-1]", {{"MaxTime", "30"}}}));
  EXPECT_EQ(spec.partitions[0], (PartitionSpec{"a", "slinky-0", {}}));
}

TEST(ReplacePartition, CorralsOwnAreManagedOthersMissing) {
  ClusterSpec spec;
  Status own = replacePartition(spec, {"slinky", "slinky-0", {}});
  EXPECT_EQ(own.code(), Code::kInvalidArgument);
  EXPECT_EQ(own.message(), "partition \"slinky\" is managed by corral and cannot be changed");
  Status missing = replacePartition(spec, {"nope", "slinky-0", {}});
  EXPECT_EQ(missing.code(), Code::kNotFound);
  EXPECT_EQ(missing.message(), "no partition named \"nope\"");
}

TEST(RemovePartition, RemovesByName) {
  ClusterSpec spec;
  spec.partitions = {{"a", "slinky-0", {}}, {"b", "slinky-1", {}}};
  ASSERT_TRUE(removePartition(spec, "a", {}).isOk());
  ASSERT_EQ(spec.partitions.size(), 1u);
  EXPECT_EQ(spec.partitions[0].name, "b");
}

TEST(RemovePartition, PlatformPartitionsAreManaged) {
  ClusterSpec spec;
  Status platform = removePartition(spec, "llm", {"llm"});
  EXPECT_EQ(platform.code(), Code::kInvalidArgument);
  EXPECT_EQ(platform.message(), "partition \"llm\" is managed by corral and cannot be deleted");
  Status missing = removePartition(spec, "llm", {});
  EXPECT_EQ(missing.code(), Code::kNotFound);
  EXPECT_EQ(missing.message(), "no partition named \"llm\"");
}

}  // namespace
}  // namespace corral
