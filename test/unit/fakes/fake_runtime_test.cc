// `FakeRuntime`'s own behaviour: what the reconciler tests rely on it for.

#include "fakes/fake_runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace corral {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

PodSpec makePod(const std::string& name, const std::string& role) {
  PodSpec p;
  p.cluster = "demo";
  p.name = name;
  p.role = role;
  return p;
}

class FakeRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(rt_.prepareCluster({"demo", 1, "172.29.0.0/24"}).isOk()); }
  FakeRuntime rt_;
};

TEST_F(FakeRuntimeTest, PrepareGeneratesAHostKey) {
  StatusOr<std::string> key = rt_.readFile("demo", "etc/ssh/ssh_host_ed25519_key.pub");
  ASSERT_TRUE(key.isOk()) << key.status().toString();
  EXPECT_EQ(*key, std::string(FakeRuntime::kFakeHostKey) + " root@login.demo\n");
  EXPECT_EQ(rt_.readFile("demo", "no/such/file").status().code(), Code::kNotFound);
  EXPECT_EQ(rt_.readFile("demo", "../escape").status().code(), Code::kInvalidArgument);
}

TEST_F(FakeRuntimeTest, WritesFilesAndRejectsPathsOutsideTheCluster) {
  ASSERT_TRUE(rt_.writeFiles("demo", {{"etc/hosts", {"x", 0644}}}).isOk());
  EXPECT_EQ(*rt_.readFile("demo", "etc/hosts"), "x");
  EXPECT_EQ(rt_.writeFiles("demo", {{"a", {"1", 0644}}, {"/etc/passwd", {"y", 0644}}}).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(rt_.files("demo").count("a"), 0u);  // Nothing of a failed call was written.
}

TEST_F(FakeRuntimeTest, PodsAreReadyUnlessToldOtherwise) {
  ASSERT_TRUE(rt_.startPod(makePod("slinky-0", "worker")).isOk());
  EXPECT_TRUE(rt_.podStatus("demo", "slinky-0")->ready);

  rt_.setPodReady("demo", "slinky-1", false);  // Before it exists.
  ASSERT_TRUE(rt_.startPod(makePod("slinky-1", "worker")).isOk());
  StatusOr<PodStatus> st = rt_.podStatus("demo", "slinky-1");
  ASSERT_TRUE(st.isOk());
  EXPECT_TRUE(st->exists);
  EXPECT_TRUE(st->running);
  EXPECT_FALSE(st->ready);
  rt_.setPodReady("demo", "slinky-1", true);
  EXPECT_TRUE(rt_.podStatus("demo", "slinky-1")->ready);

  StatusOr<PodStatus> none = rt_.podStatus("demo", "nope");
  ASSERT_TRUE(none.isOk());
  EXPECT_FALSE(none->exists);
}

TEST_F(FakeRuntimeTest, StartPodNeedsAPreparedCluster) {
  EXPECT_EQ(rt_.startPod([] {
                 PodSpec p = makePod("controller", "controller");
                 p.cluster = "other";
                 return p;
               }())
                .code(),
            Code::kNotFound);
}

TEST_F(FakeRuntimeTest, KilledPodExistsButDoesNotRunUntilRestarted) {
  ASSERT_TRUE(rt_.startPod(makePod("slinky-0", "worker")).isOk());
  ASSERT_TRUE(rt_.startPod(makePod("slinky-0", "worker")).isOk());  // Already running: no-op.
  EXPECT_THAT(rt_.startOrder("demo"), ElementsAre("slinky-0"));
  rt_.killPod("demo", "slinky-0");
  StatusOr<PodStatus> st = rt_.podStatus("demo", "slinky-0");
  ASSERT_TRUE(st.isOk());
  EXPECT_TRUE(st->exists);
  EXPECT_FALSE(st->running);
  EXPECT_FALSE(st->ready);
  EXPECT_EQ(rt_.exec("demo", "slinky-0", {"true"}).status().code(), Code::kUnavailable);
  ASSERT_TRUE(rt_.startPod(makePod("slinky-0", "worker")).isOk());
  EXPECT_THAT(rt_.startOrder("demo"), ElementsAre("slinky-0", "slinky-0"));
  EXPECT_TRUE(rt_.podStatus("demo", "slinky-0")->running);
}

TEST_F(FakeRuntimeTest, FailNextFailsOnceAndChangesNothing) {
  rt_.failNext("startPod", internalError("boom"));
  Status s = rt_.startPod(makePod("controller", "controller"));
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_EQ(s.message(), "boom");
  EXPECT_FALSE(rt_.pod("demo", "controller").has_value());
  EXPECT_TRUE(rt_.startPod(makePod("controller", "controller")).isOk());
  EXPECT_EQ(rt_.calls("startPod"), 2);

  rt_.failNext("listClusters", unavailable("x"));
  rt_.failNext("listClusters", Status::ok());  // Cancelled.
  EXPECT_TRUE(rt_.listClusters().isOk());
}

TEST_F(FakeRuntimeTest, DefaultExecAnswersSinfoWithRunningWorkers) {
  ASSERT_TRUE(rt_.startPod(makePod("controller", "controller")).isOk());
  ASSERT_TRUE(rt_.startPod(makePod("slinky-0", "worker")).isOk());
  ASSERT_TRUE(rt_.startPod(makePod("cpu-workers-0", "worker")).isOk());
  ASSERT_TRUE(rt_.startPod(makePod("slinky-1", "worker")).isOk());
  rt_.killPod("demo", "slinky-1");
  StatusOr<ProcessResult> r = rt_.exec("demo", "controller", {"sinfo", "-h", "-N"});
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(r->exitCode, 0);
  EXPECT_EQ(r->out, "cpu-workers-0|idle|none\nslinky-0|idle|none\n");

  rt_.setExecHandler([](const std::string& c, const std::string& p,
                        const std::vector<std::string>& argv) -> StatusOr<ProcessResult> {
    ProcessResult res;
    res.exitCode = 3;
    res.out = c + "/" + p + "/" + argv.at(0);
    return res;
  });
  r = rt_.exec("demo", "controller", {"scontrol"});
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(r->exitCode, 3);
  EXPECT_EQ(r->out, "demo/controller/scontrol");
}

TEST_F(FakeRuntimeTest, DestroyRemovesEverythingOfOneCluster) {
  ASSERT_TRUE(rt_.prepareCluster({"other", 2, "172.29.1.0/24"}).isOk());
  ASSERT_TRUE(rt_.startPod(makePod("controller", "controller")).isOk());
  EXPECT_THAT(*rt_.listClusters(), ElementsAre("demo", "other"));

  ASSERT_TRUE(rt_.destroyCluster({"demo", 1, "172.29.0.0/24"}).isOk());
  ASSERT_TRUE(rt_.destroyCluster({"never", 0, ""}).isOk());  // Nothing there: still OK.
  EXPECT_THAT(rt_.destroyed(), ElementsAre("demo", "never"));
  StatusOr<std::vector<std::string>> left = rt_.listClusters();
  ASSERT_TRUE(left.isOk());
  EXPECT_THAT(*left, ElementsAre("other"));
  EXPECT_FALSE(rt_.prepared("demo").has_value());
  EXPECT_THAT(rt_.files("demo"), IsEmpty());
  EXPECT_THAT(*rt_.listPods("demo"), IsEmpty());
}

TEST(FakeRuntimeDeathTest, FailNextRejectsAnUnknownMethod) {
  FakeRuntime rt;
  EXPECT_DEATH(rt.failNext("startpod", internalError("x")), "not a Runtime method");
}

}  // namespace
}  // namespace corral
