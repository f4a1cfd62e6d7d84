#include "slurm/release.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace corral {
namespace {

using ::testing::HasSubstr;

TEST(SlurmReleaseTest, SameReleaseIsAlwaysFine) { EXPECT_TRUE(checkSlurmUpgrade("24.11", "24.11").isOk()); }

TEST(SlurmReleaseTest, NeverBackwards) {
  Status s = checkSlurmUpgrade("24.11", "22.05");
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("cannot go back"));
  EXPECT_THAT(s.message(), HasSubstr("cluster clone"));
}

TEST(SlurmReleaseTest, TwoReleasesAheadBefore2411ThreeFrom2411) {
  EXPECT_TRUE(checkSlurmUpgrade("22.05", "23.02").isOk());
  EXPECT_TRUE(checkSlurmUpgrade("22.05", "23.11").isOk());
  EXPECT_FALSE(checkSlurmUpgrade("22.05", "24.05").isOk());
  EXPECT_TRUE(checkSlurmUpgrade("23.02", "24.11").isOk());
  EXPECT_TRUE(checkSlurmUpgrade("24.05", "25.11").isOk());
  EXPECT_FALSE(checkSlurmUpgrade("24.05", "26.05").isOk());
}

TEST(SlurmReleaseTest, From2205To2411IsRefusedWithTheRule) {
  Status s = checkSlurmUpgrade("22.05", "24.11");
  ASSERT_FALSE(s.isOk());
  EXPECT_THAT(s.message(), HasSubstr("only from the 3 releases before it (23.02 or later)"));
  EXPECT_THAT(s.message(), HasSubstr("4 releases older"));
  EXPECT_THAT(s.message(), HasSubstr("cluster clone"));
}

TEST(SlurmReleaseTest, SupportedReleases) {
  EXPECT_TRUE(checkSupportedSlurmRelease("22.05").isOk());
  EXPECT_TRUE(checkSupportedSlurmRelease("24.11").isOk());
  Status s = checkSupportedSlurmRelease("23.02");
  ASSERT_FALSE(s.isOk());
  EXPECT_THAT(s.message(), HasSubstr("supports 22.05, 24.11"));
}

TEST(SlurmReleaseTest, Supports2605ForKubernetes) {
  EXPECT_TRUE(checkSupportedSlurmRelease("26.05").isOk());
  EXPECT_EQ(supportedSlurmReleases().back(), "26.05");
  Status s = checkSupportedSlurmRelease("25.11");
  ASSERT_FALSE(s.isOk());
  EXPECT_THAT(s.message(), HasSubstr("supports 22.05, 24.11, 26.05"));
}

TEST(SlurmReleaseTest, From2411To2605InPlaceButNotFrom2205) {
  // 25.05, 25.11, 26.05: three releases, which 26.05 accepts.
  EXPECT_TRUE(checkSlurmUpgrade("24.11", "26.05").isOk());
  Status s = checkSlurmUpgrade("22.05", "26.05");
  ASSERT_FALSE(s.isOk());
  EXPECT_THAT(s.message(), HasSubstr("only from the 3 releases before it (24.11 or later)"));
  EXPECT_FALSE(checkSlurmUpgrade("26.05", "24.11").isOk());
}

}  // namespace
}  // namespace corral
