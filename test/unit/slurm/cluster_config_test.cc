#include "slurm/cluster_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "slurm/renderer.h"
#include "support/planned_record.h"

namespace corral {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Key;
using ::testing::Not;
using ::testing::Pair;

ClusterRecord record() { return testing_support::plannedRecord(2, 0); }

TEST(ApplyConfigChange, SetsAndUnsetsByCanonicalName) {
  ClusterSpec spec;
  spec.slurmConf = {{"KillWait", "10"}};
  ConfigChange change{{{"minjobage", "60"}}, {"killwait"}};
  ASSERT_TRUE(applyConfigChange(change, spec).isOk());
  EXPECT_THAT(spec.slurmConf, ElementsAre(Pair("MinJobAge", "60")));
}

TEST(ApplyConfigChange, RefusesUnsettingWhatIsNotSetAndChangesNothing) {
  ClusterSpec spec;
  spec.slurmConf = {{"KillWait", "10"}};
  Status s = applyConfigChange({{{"MinJobAge", "60"}}, {"KillWait", "MinJobAge"}}, spec);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "\"MinJobAge\" is not set; `corral config get` lists what is");
  EXPECT_THAT(spec.slurmConf, ElementsAre(Pair("KillWait", "10")));
}

TEST(ApplyConfigChange, RefusesAParameterUsersMayNotSet) {
  ClusterSpec spec;
  Status s = applyConfigChange({{{"SlurmUser", "alice"}}, {}}, spec);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "\"SlurmUser\" is not a slurm.conf parameter corral lets users set; see `corral config params`");
  EXPECT_TRUE(spec.slurmConf.empty());
}

TEST(DescribeConfigChange, SetsThenUnsetsWithCanonicalNames) {
  EXPECT_EQ(describeConfigChange({{{"minjobage", "60"}, {"KillWait", "5"}}, {"overtimelimit"}}),
            "KillWait=5 MinJobAge=60 unset OverTimeLimit");
  EXPECT_EQ(describeConfigChange({{}, {"KillWait", "Nope"}}), "unset KillWait unset Nope");
  EXPECT_EQ(describeConfigChange({}), "");
}

TEST(WithConfigChange, NormalisesThePlannedRecord) {
  ClusterRecord r = record();
  auto next = withConfigChange(r, {{{"minjobage", "60"}}, {}});
  ASSERT_TRUE(next.isOk()) << next.status().toString();
  EXPECT_THAT(next->spec.slurmConf, ElementsAre(Pair("MinJobAge", "60")));
  ASSERT_EQ(next->nodes.size(), r.nodes.size());
  for (size_t i = 0; i < r.nodes.size(); ++i) EXPECT_EQ(next->nodes[i].name, r.nodes[i].name);
  EXPECT_TRUE(r.spec.slurmConf.empty());
}

TEST(WithConfigChange, RefusesAValueTheParameterDoesNotTake) {
  auto next = withConfigChange(record(), {{{"MinJobAge", "1"}}, {}});
  EXPECT_EQ(next.status().code(), Code::kInvalidArgument);
}

TEST(EffectiveSlurmConf, KeysOfTheRenderedFileWithoutNodesAndPartitions) {
  ClusterRecord r = record();
  r.spec.slurmConf = {{"MinJobAge", "60"}};
  auto files = renderFiles(r);
  ASSERT_TRUE(files.isOk()) << files.status().toString();
  auto effective = effectiveSlurmConf(*files);
  EXPECT_THAT(effective, Contains(Pair("MinJobAge", "60")));
  EXPECT_THAT(effective, Contains(Pair("ClusterName", "demo")));
  EXPECT_THAT(effective, Contains(Pair("SchedulerType", "sched/backfill")));
  EXPECT_THAT(effective, Not(Contains(Key("NodeName"))));
  EXPECT_THAT(effective, Not(Contains(Key("PartitionName"))));
}

TEST(EffectiveSlurmConf, ALaterLineWinsAndCommentsAreSkipped) {
  RenderedFiles files;
  files["etc/slurm/slurm.conf"] = {
      "# KillWait=1\nKillWait=5\nNodeSet=x Feature=y\nDownNodes=a\nnot a setting\n\nKillWait=7\n"
      "SlurmctldParameters=a=b\n",
      0644};
  EXPECT_THAT(effectiveSlurmConf(files),
              ElementsAre(Pair("KillWait", "7"), Pair("SlurmctldParameters", "a=b")));
  EXPECT_TRUE(effectiveSlurmConf({}).empty());
}

}  // namespace
}  // namespace corral
