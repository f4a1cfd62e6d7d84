// Changes to a Running cluster (src/reconcile/apply.cc) against FakeStore,
// FakeRuntime and FakeClock. A scripted "Slurm" answers the commands the
// reconciler runs in the controller pod: sinfo lists the running worker
// pods, squeue lists the jobs a test put on nodes, and the throwaway
// slurmctld of a configuration check passes unless told to fail.

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fakes/fake_clock.h"
#include "fakes/fake_image_catalog.h"
#include "fakes/fake_runtime.h"
#include "fakes/fake_store.h"
#include "reconcile/reconciler.h"
#include "slurm/hostlist.h"

namespace corral {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::string joined(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

class ApplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ReconcilerOptions o;
    o.loginProbe = [](const std::string&, int) { return true; };
    reconciler_ = std::make_unique<Reconciler>(store_, runtime_, clock_, o);
    runtime_.setExecHandler([this](const std::string& cluster, const std::string&,
                                   const std::vector<std::string>& argv) {
      return slurm(cluster, argv);
    });
  }

  // The scripted Slurm of the controller pod.
  StatusOr<ProcessResult> slurm(const std::string& cluster, const std::vector<std::string>& argv) {
    commands_.push_back(joined(argv));
    ProcessResult res;
    res.exitCode = 0;
    const std::string& cmd = argv.at(0);
    if (cmd == "unshare") {
      if (!checkError_.empty()) {
        res.exitCode = 1;
        res.out = "corral-check: failed\nslurmctld: fatal: " + checkError_ + "\n";
      } else {
        res.out = "corral-check: ok\n";
      }
    } else if (cmd == "sinfo") {
      auto pods = runtime_.listPods(cluster);
      for (const auto& p : pods.isOk() ? *pods : std::vector<std::string>{}) {
        auto spec = runtime_.pod(cluster, p);
        if (!spec || spec->role != "worker") continue;
        std::string reason = drained_.count(p) ? drained_[p] : "none";
        res.out += p + "|" + (drained_.count(p) ? "drained" : "idle") + "|" + reason + "\n";
      }
    } else if (cmd == "squeue" && argv.size() > 5 && argv[2] == "-w" && argv[5] == "%i %N") {
      // The roll's poll: a job on each busy node asked about, for as many
      // polls as the test says; while it runs, the node must still be the
      // pod it ran on.
      auto asked = expandHostlist(argv[3]);
      for (const auto& node : asked.isOk() ? *asked : std::vector<std::string>{}) {
        if (!busy_.count(node) || busy_[node] <= 0) continue;
        --busy_[node];
        res.out += "12 " + node + "\n";
        auto pod = runtime_.pod(cluster, node);
        EXPECT_TRUE(pod && runtime_.podStatus(cluster, node)->running) << node << " went while its job ran";
        if (pod) busyImage_[node] = pod->image.id;
      }
    } else if (cmd == "squeue") {
      if (jobPolls_ > 0) {
        --jobPolls_;
        res.out = "12 alice train\n";
      }
    } else if (cmd == "scancel") {
      jobPolls_ = 0;
    } else if (cmd == "scontrol" && argv.size() > 3 && argv[1] == "update") {
      // scontrol update nodename=X state=drain reason=...
      auto nodes = expandHostlist(argv[2].substr(std::string("nodename=").size()));
      for (const auto& n : nodes.isOk() ? *nodes : std::vector<std::string>{}) {
        if (argv[3] == "state=drain") drained_[n] = argv[4].substr(std::string("reason=").size());
        if (argv[3] == "state=resume") drained_.erase(n);
      }
    }
    return res;
  }

  ClusterRecord get(const std::string& name) {
    auto r = store_.getCluster(name);
    EXPECT_TRUE(r.isOk()) << r.status().toString();
    return r.isOk() ? *r : ClusterRecord{};
  }

  void createRunning(const std::string& name, int gpuNodes) {
    ClusterRecord r;
    r.spec.name = name;
    r.spec.gpuNodes = gpuNodes;
    r.spec.image = {"debian13-slurm24.11", std::string(64, 'a'), "24.11"};
    r.revision = 1;
    ASSERT_TRUE(store_.createCluster(r).isOk());
    ASSERT_TRUE(reconciler_->reconcile(name).isOk());
    ASSERT_EQ(get(name).status, ClusterStatus::kRunning) << get(name).reason;
    commands_.clear();
  }

  // Stores the next revision of `name` with `edit` applied to its spec.
  void changeSpec(const std::string& name, const std::function<void(ClusterSpec&)>& edit,
                  bool force = false) {
    ClusterRecord r = get(name);
    edit(r.spec);
    r.revision += 1;
    r.changeAuthor = "api";
    r.changeMessage = "test change";
    r.changeForce = force;
    ASSERT_TRUE(store_.updateCluster(r).isOk());
  }

  RevisionState stateOf(const std::string& name, int64_t revision) {
    auto history = store_.listRevisions(name);
    EXPECT_TRUE(history.isOk());
    for (const auto& r : *history)
      if (r.number == revision) return r.state;
    ADD_FAILURE() << "no revision " << revision;
    return RevisionState::kPending;
  }

  std::vector<std::string> reasons(const std::string& name) {
    std::vector<std::string> out;
    auto events = store_.listEvents(name, 1000);
    EXPECT_TRUE(events.isOk());
    for (const auto& e : *events) out.push_back(e.reason);
    return out;
  }

  std::string slurmConf(const std::string& name) {
    return runtime_.files(name)["etc/slurm/slurm.conf"].content;
  }

  FakeStore store_;
  FakeRuntime runtime_;
  FakeClock clock_;
  std::unique_ptr<Reconciler> reconciler_;
  std::vector<std::string> commands_;
  std::string checkError_;
  int jobPolls_ = 0;
  std::map<std::string, std::string> drained_;
  std::map<std::string, int> busy_;               // node -> polls its job still runs
  std::map<std::string, std::string> busyImage_;  // node -> the image its job ran on
};

TEST_F(ApplyTest, ScaleUpAddsTheNextOrdinalsAndRestartsSlurmctldOnce) {
  createRunning("a", 2);
  std::string id0 = get("a").nodes[0].physicalId;
  changeSpec("a", [](ClusterSpec& s) { s.gpuNodes = 4; });
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());

  ClusterRecord r = get("a");
  EXPECT_EQ(r.appliedRevision, 2);
  ASSERT_EQ(r.nodes.size(), 4u);
  EXPECT_EQ(r.nodes[0].physicalId, id0);  // Existing nodes keep their ids.
  EXPECT_EQ(r.nodes[3].name, "slinky-3");
  EXPECT_FALSE(r.nodes[3].physicalId.empty());
  EXPECT_EQ(stateOf("a", 2), RevisionState::kApplied);
  EXPECT_THAT(runtime_.restarts(), ElementsAre("a/controller/slurmctld"));
  EXPECT_TRUE(runtime_.pod("a", "slinky-3").has_value());
  EXPECT_THAT(slurmConf("a"), HasSubstr("NodeName=slinky-3 "));
  EXPECT_THAT(commands_, Contains("scontrol reconfigure"));
  EXPECT_THAT(reasons("a"), Contains("Applied"));

  // A second pass has nothing left to do.
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());
  EXPECT_EQ(runtime_.restarts().size(), 1u);
}

TEST_F(ApplyTest, PartitionChangeReconfiguresWithoutRestartingSlurmctld) {
  createRunning("a", 4);
  changeSpec("a", [](ClusterSpec& s) {
    s.partitions.push_back({"short", "slinky-[0-1]", {{"MaxTime", "30"}}});
  });
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());

  EXPECT_EQ(get("a").appliedRevision, 2);
  EXPECT_THAT(runtime_.restarts(), IsEmpty());
  EXPECT_THAT(commands_, Contains(HasSubstr("unshare")));  // The candidate was tried first.
  EXPECT_THAT(commands_, Contains("scontrol reconfigure"));
  EXPECT_THAT(slurmConf("a"), HasSubstr("PartitionName=short Nodes=slinky-[0-1] MaxTime=30 State=UP"));
}

TEST_F(ApplyTest, ConfigurationSlurmctldRefusesIsRolledBackWithoutTouchingTheController) {
  createRunning("a", 2);
  std::string before = slurmConf("a");
  checkError_ = "PreemptMode=SUSPEND requires GANG too";
  changeSpec("a", [](ClusterSpec& s) {
    s.slurmConf["PreemptType"] = "preempt/partition_prio";
    s.slurmConf["PreemptMode"] = "SUSPEND";
  });
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());

  ClusterRecord r = get("a");
  EXPECT_EQ(stateOf("a", 2), RevisionState::kFailed);
  EXPECT_EQ(r.revision, 3);  // The rollback is a revision of its own.
  EXPECT_EQ(r.changeAuthor, "corral");
  EXPECT_TRUE(r.spec.slurmConf.empty());
  EXPECT_THAT(r.reason, HasSubstr("GANG"));
  EXPECT_THAT(commands_, Not(Contains("scontrol reconfigure")));
  EXPECT_EQ(slurmConf("a"), before);
  EXPECT_THAT(reasons("a"), Contains("ChangeFailed"));

  checkError_.clear();
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());
  r = get("a");
  EXPECT_EQ(r.appliedRevision, 3);
  EXPECT_EQ(stateOf("a", 3), RevisionState::kApplied);
  EXPECT_EQ(slurmConf("a"), before);
  EXPECT_THAT(runtime_.restarts(), IsEmpty());
  EXPECT_THAT(r.reason, HasSubstr("rolled back"));  // Still says what happened.
  EXPECT_THAT(reasons("a"), Contains("RolledBack"));
}

TEST_F(ApplyTest, FailureAfterTheControllerWasTouchedRollsBackNodesAndPods) {
  createRunning("a", 2);
  runtime_.failNext("restartDaemon", unavailable("slurmctld did not come back"));
  changeSpec("a", [](ClusterSpec& s) { s.gpuNodes = 3; });
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());
  EXPECT_EQ(stateOf("a", 2), RevisionState::kFailed);
  EXPECT_TRUE(runtime_.pod("a", "slinky-2").has_value());  // Started before the failure.

  ASSERT_TRUE(reconciler_->reconcile("a").isOk());  // The rollback.
  ClusterRecord r = get("a");
  EXPECT_EQ(r.appliedRevision, 3);
  EXPECT_EQ(r.nodes.size(), 2u);
  EXPECT_FALSE(runtime_.pod("a", "slinky-2").has_value());  // No orphan pod.
  EXPECT_THAT(runtime_.restarts(), ElementsAre("a/controller/slurmctld"));
  EXPECT_THAT(slurmConf("a"), Not(HasSubstr("slinky-2")));
}

TEST_F(ApplyTest, ScaleDownDrainsAndWaitsForJobsBeforeRemovingNodes) {
  createRunning("a", 4);
  jobPolls_ = 3;  // A job runs on slinky-3 for three polls.
  changeSpec("a", [](ClusterSpec& s) { s.gpuNodes = 3; });
  // Each pass that finds the job still running ends there, asking to be run
  // again, instead of holding a worker until the job ends.
  for (int pass = 0; pass < 3; ++pass) {
    ASSERT_TRUE(reconciler_->reconcile("a").isOk());
    ClusterRecord r = get("a");
    EXPECT_EQ(r.appliedRevision, 1) << "pass " << pass;
    EXPECT_THAT(r.phase, HasSubstr("draining slinky-3: waiting for jobs to finish (12 alice train)"));
    EXPECT_TRUE(reconciler_->requeued("a"));
    EXPECT_TRUE(runtime_.pod("a", "slinky-3").has_value());
  }
  EXPECT_EQ(clock_.slept(), std::chrono::milliseconds(0));
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());

  EXPECT_EQ(get("a").appliedRevision, 2);
  EXPECT_THAT(commands_, Contains(HasSubstr("scontrol update nodename=slinky-3 state=drain")));
  EXPECT_THAT(commands_, Not(Contains(HasSubstr("scancel"))));
  EXPECT_EQ(jobPolls_, 0);
  // The configuration was tried once for the revision, not once per pass.
  EXPECT_EQ(std::count_if(commands_.begin(), commands_.end(),
                          [](const std::string& c) { return c.rfind("unshare", 0) == 0; }),
            1);
  EXPECT_FALSE(runtime_.pod("a", "slinky-3").has_value());
  EXPECT_THAT(runtime_.restarts(), ElementsAre("a/controller/slurmctld"));
  EXPECT_EQ(get("a").nodes.size(), 3u);
}

TEST_F(ApplyTest, ScaleDownWithForceCancelsTheJobsOnRemovedNodes) {
  createRunning("a", 4);
  jobPolls_ = 1000;
  changeSpec("a", [](ClusterSpec& s) { s.gpuNodes = 2; }, /*force=*/true);
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());  // Cancels; the jobs end meanwhile.
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());

  EXPECT_EQ(get("a").appliedRevision, 2);
  EXPECT_THAT(commands_, Contains("scancel --nodelist=slinky-[2-3]"));
  EXPECT_THAT(reasons("a"), Contains("JobsCancelled"));
}

TEST_F(ApplyTest, ASupersededDrainIsNotWaitedFor) {
  createRunning("a", 4);
  jobPolls_ = 1000;  // The job on slinky-3 never ends.
  changeSpec("a", [](ClusterSpec& s) { s.gpuNodes = 3; });
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());
  EXPECT_EQ(get("a").appliedRevision, 1);
  // The user gives up on the scale-down: revision 3 keeps all four nodes.
  changeSpec("a", [](ClusterSpec& s) { s.gpuNodes = 4; });
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());
  EXPECT_EQ(get("a").appliedRevision, 3);
  EXPECT_TRUE(runtime_.pod("a", "slinky-3").has_value());
}

TEST_F(ApplyTest, LoginRestartRecreatesOnlyTheLoginPod) {
  createRunning("a", 2);
  size_t starts = runtime_.startOrder("a").size();
  changeSpec("a", [](ClusterSpec& s) { s.loginGeneration = 1; });
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());

  auto order = runtime_.startOrder("a");
  ASSERT_EQ(order.size(), starts + 1);
  EXPECT_EQ(order.back(), "login");
  EXPECT_EQ(runtime_.pod("a", "login")->generation, 1);
  EXPECT_THAT(runtime_.restarts(), IsEmpty());
  EXPECT_THAT(reasons("a"), Contains("PodRecreated"));
}

TEST_F(ApplyTest, HandEditedFilesAreRestoredOnTheNextPass) {
  createRunning("a", 2);
  std::string good = slurmConf("a");
  runtime_.putFile("a", "etc/slurm/slurm.conf", good + "SlurmctldDebug=debug5\n");
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());

  EXPECT_EQ(slurmConf("a"), good);
  EXPECT_THAT(reasons("a"), Contains("DriftCorrected"));
  EXPECT_THAT(commands_, Contains("scontrol reconfigure"));
}

TEST_F(ApplyTest, TerminateStopsPodsAndKeepsTheFiles) {
  createRunning("a", 2);
  ClusterRecord r = get("a");
  r.status = ClusterStatus::kTerminating;
  ASSERT_TRUE(store_.updateCluster(r).isOk());
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());

  EXPECT_EQ(get("a").status, ClusterStatus::kTerminated);
  EXPECT_THAT(*runtime_.listPods("a"), IsEmpty());
  EXPECT_FALSE(slurmConf("a").empty());
  EXPECT_THAT(runtime_.destroyed(), IsEmpty());
}

TEST_F(ApplyTest, AWorkerThatDiesDuringAChangeIsRecreatedAndDoesNotFailIt) {
  createRunning("a", 3);
  runtime_.setExecHandler([this](const std::string& cluster, const std::string&,
                                 const std::vector<std::string>& argv) {
    if (argv.size() > 1 && argv[0] == "scontrol" && argv[1] == "reconfigure")
      runtime_.killPod(cluster, "slinky-2");
    return slurm(cluster, argv);
  });
  changeSpec("a", [](ClusterSpec& s) { s.nodeGenerations["slinky-0"] = 1; });
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());
  EXPECT_EQ(get("a").appliedRevision, 2);
  EXPECT_EQ(stateOf("a", 2), RevisionState::kApplied);
  EXPECT_THAT(reasons("a"), Contains("PodRestarted"));
  EXPECT_THAT(commands_, Contains(HasSubstr("nodename=slinky-2 state=down")));
  EXPECT_TRUE(runtime_.podStatus("a", "slinky-2")->running);
}

TEST_F(ApplyTest, AFailingRollbackIsRetriedNotRolledBackAgain) {
  createRunning("a", 2);
  checkError_ = "bad";
  changeSpec("a", [](ClusterSpec& s) { s.slurmConf["MinJobAge"] = "60"; });
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());
  ASSERT_EQ(get("a").revision, 3);
  // The rollback fails too (its slurm.conf equals the live one, so the check
  // is skipped; make the reconfigure fail instead).
  runtime_.setExecHandler([](const std::string&, const std::string&,
                             const std::vector<std::string>& argv) -> StatusOr<ProcessResult> {
    ProcessResult res;
    res.exitCode = argv[0] == "scontrol" ? 1 : 0;
    res.err = "slurm_reconfigure error: Unable to contact slurm controller";
    return res;
  });
  EXPECT_FALSE(reconciler_->reconcile("a").isOk());
  EXPECT_EQ(get("a").revision, 3);  // No revision 4.
  EXPECT_THAT(reasons("a"), Contains("RollbackRetrying"));
}

TEST_F(ApplyTest, AnImageUpdateRecreatesControllerAndLoginAndRollsWorkersWhenIdle) {
  createRunning("a", 2);
  busy_["slinky-1"] = 3;
  ImageRef next{"debian13-extra", std::string(64, 'e'), "24.11"};
  changeSpec("a", [&](ClusterSpec& s) { s.image = next; });
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());

  EXPECT_EQ(get("a").appliedRevision, 2);
  EXPECT_EQ(stateOf("a", 2), RevisionState::kApplied);
  for (const char* pod : {"controller", "login", "slinky-0", "slinky-1"})
    EXPECT_EQ(runtime_.podStatus("a", pod)->imageId, next.id) << pod;
  // The busy node's job ran to its end on the old pod; nothing was killed.
  EXPECT_EQ(busy_["slinky-1"], 0);
  EXPECT_EQ(busyImage_["slinky-1"], std::string(64, 'a'));
  EXPECT_THAT(commands_, Not(Contains(HasSubstr("state=down"))));
  EXPECT_THAT(commands_, Contains(HasSubstr("nodename=slinky-[0-1] state=drain reason=corral: rolling")));
  EXPECT_TRUE(drained_.empty()) << "the rolled nodes are back in service";
  int rolled = 0;
  for (const auto& r : reasons("a")) rolled += r == "WorkerRolled";
  EXPECT_EQ(rolled, 2);
  // A second pass finds everything current.
  auto starts = runtime_.startOrder("a").size();
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());
  EXPECT_EQ(runtime_.startOrder("a").size(), starts);
}

TEST_F(ApplyTest, RestartWorkersRollsThemOnTheSameImageAndLeavesTheController) {
  createRunning("a", 2);
  auto before = runtime_.startOrder("a");
  changeSpec("a", [](ClusterSpec& s) { s.workerGeneration += 1; });
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());
  EXPECT_EQ(get("a").appliedRevision, 2);
  auto after = runtime_.startOrder("a");
  std::vector<std::string> started(after.begin() + static_cast<long>(before.size()), after.end());
  EXPECT_THAT(started, ElementsAre("slinky-0", "slinky-1"));
  EXPECT_EQ(runtime_.pod("a", "slinky-1")->rollGeneration, 1);
}

TEST_F(ApplyTest, AWorkerThatDoesNotComeUpOnTheNewImageIsRolledBack) {
  createRunning("a", 2);
  ImageRef old = get("a").spec.image;
  runtime_.setPodReady("a", "slinky-0", false);
  changeSpec("a", [](ClusterSpec& s) { s.image = {"broken", std::string(64, 'f'), "24.11"}; });
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());
  EXPECT_EQ(stateOf("a", 2), RevisionState::kFailed);
  ClusterRecord r = get("a");
  EXPECT_EQ(r.revision, 3);
  EXPECT_EQ(r.spec.image, old);
  runtime_.setPodReady("a", "slinky-0", true);
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());
  EXPECT_EQ(get("a").appliedRevision, 3);
  for (const char* pod : {"controller", "login", "slinky-0", "slinky-1"})
    EXPECT_EQ(runtime_.podStatus("a", pod)->imageId, old.id) << pod;
  EXPECT_THAT(reasons("a"), Contains("RolledBack"));
}

TEST_F(ApplyTest, AnImageThatCannotBeBuiltFailsTheChangeBeforeAnythingChanges) {
  FakeImageCatalog images;
  ReconcilerOptions o;
  o.loginProbe = [](const std::string&, int) { return true; };
  o.images = &images;
  reconciler_ = std::make_unique<Reconciler>(store_, runtime_, clock_, o);
  createRunning("a", 1);
  auto starts = runtime_.startOrder("a").size();
  images.failNextBuild(invalidArgument("building image debian13-extra failed: E: Unable to locate package nope"));
  changeSpec("a", [&](ClusterSpec& s) { s.image = images.ref("debian13-extra"); });
  ASSERT_TRUE(reconciler_->reconcile("a").isOk());
  EXPECT_EQ(stateOf("a", 2), RevisionState::kFailed);
  EXPECT_THAT(get("a").reason, HasSubstr("Unable to locate package nope"));
  EXPECT_EQ(runtime_.startOrder("a").size(), starts);
}

}  // namespace
}  // namespace corral
