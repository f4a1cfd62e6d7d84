// The reconciler's passes over clusters on a whole-cluster runtime
// (src/reconcile/whole.cc), against a scripted `ClusterRuntime`: what each
// pass applies, what it records from the runtime's view, how it fails,
// rolls back and finishes, and that no pass waits (the fake clock never
// sleeps; a pass that waits for the runtime asks to be run again).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "fakes/fake_clock.h"
#include "fakes/fake_runtime.h"
#include "fakes/fake_store.h"
#include "reconcile/reconciler.h"

namespace corral {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A whole-cluster runtime whose answers the test sets.
class ScriptedWholeRuntime : public FakeRuntime, public ClusterRuntime {
 public:
  ClusterRuntime* wholeClusters() override { return this; }

  Status applyCluster(const ClusterRecord& desired) override {
    applied.push_back(desired.revision);
    appliedSpecs.push_back(desired.spec);
    return applyResult;
  }
  StatusOr<ClusterView> viewCluster(const ClusterRecord&) override {
    ++views;
    return view;
  }
  StatusOr<bool> suspendCluster(const ClusterRecord&) override {
    ++suspends;
    return suspended;
  }
  StatusOr<bool> removeCluster(const std::string& cluster) override {
    removed.push_back(cluster);
    return removeDone;
  }
  void onChange(std::function<void(const std::string&)>) override {}
  StatusOr<std::string> loginHostKey(const std::string&) override {
    return std::string("ssh-ed25519 AAAAkube");
  }

  // What the test sets.
  Status applyResult;
  StatusOr<ClusterView> view = ClusterView{};
  bool suspended = true;
  bool removeDone = true;
  // What the reconciler did.
  std::vector<int64_t> applied;
  std::vector<ClusterSpec> appliedSpecs;
  std::vector<std::string> removed;
  int views = 0;
  int suspends = 0;
};

ClusterView readyView(int gpuNodes) {
  ClusterView v;
  v.state = ClusterView::State::kReady;
  for (int i = 0; i < gpuNodes; ++i)
    v.nodes.push_back({"slinky-" + std::to_string(i), "slinky", "kube-node-1",
                       "10.244.0." + std::to_string(10 + i)});
  v.loginAddress = "10.244.0.3";
  return v;
}

ClusterView waitingView(const std::string& phase) {
  ClusterView v;
  v.phase = phase;
  return v;
}

class WholeTest : public ::testing::Test {
 protected:
  WholeTest() {
    ReconcilerOptions o;
    o.createTimeout = std::chrono::seconds(180);
    o.applyTimeout = std::chrono::seconds(90);
    reconciler_ = std::make_unique<Reconciler>(store_, runtime_, clock_, o);
  }

  void add(const std::string& name, int gpuNodes) {
    ClusterRecord r;
    r.spec.name = name;
    r.spec.gpuNodes = gpuNodes;
    r.spec.gpusPerNode = 8;
    r.spec.image = {"debian-unstable-slurm26.05", std::string(64, 'b'), "26.05"};
    r.revision = 1;
    r.status = ClusterStatus::kCreating;
    r.createdAt = clock_.unixMillis() / 1000;
    ASSERT_TRUE(store_.createCluster(r).isOk());
  }

  ClusterRecord get(const std::string& name) {
    auto r = store_.getCluster(name);
    EXPECT_TRUE(r.isOk()) << r.status().toString();
    return r.isOk() ? *r : ClusterRecord{};
  }

  Status pass(const std::string& name) { return reconciler_->reconcile(name); }

  void createRunning(const std::string& name, int gpuNodes) {
    add(name, gpuNodes);
    runtime_.view = readyView(gpuNodes);
    ASSERT_TRUE(pass(name).isOk());
    ASSERT_EQ(get(name).status, ClusterStatus::kRunning) << get(name).reason;
  }

  void changeSpec(const std::string& name, const std::function<void(ClusterSpec&)>& edit) {
    ClusterRecord r = get(name);
    edit(r.spec);
    r.revision += 1;
    r.changeAuthor = "alice";
    r.changeMessage = "test change";
    ASSERT_TRUE(store_.updateCluster(r).isOk());
  }

  std::vector<std::string> reasons(const std::string& name) {
    std::vector<std::string> out;
    auto all = store_.listEvents(name, 1000);
    if (all.isOk())
      for (const auto& e : *all) out.push_back(e.reason);
    return out;
  }

  std::string eventMessage(const std::string& name, const std::string& reason) {
    auto all = store_.listEvents(name, 1000);
    if (all.isOk())
      for (const auto& e : *all)
        if (e.reason == reason) return e.message;
    return "";
  }

  RevisionState stateOf(const std::string& name, int64_t revision) {
    auto history = store_.listRevisions(name);
    EXPECT_TRUE(history.isOk());
    for (const auto& r : *history)
      if (r.number == revision) return r.state;
    return RevisionState::kPending;
  }

  FakeStore store_;
  ScriptedWholeRuntime runtime_;
  FakeClock clock_;
  std::unique_ptr<Reconciler> reconciler_;
};

TEST_F(WholeTest, CreateAppliesOnceAndRecordsWhatItWaitsForWithoutWaiting) {
  add("demo", 4);
  runtime_.view = waitingView("waiting for demo-controller-0 (Pending: no node)");
  ASSERT_TRUE(pass("demo").isOk());
  ClusterRecord r = get("demo");
  EXPECT_EQ(r.status, ClusterStatus::kCreating);
  EXPECT_EQ(r.phase, "waiting for demo-controller-0 (Pending: no node)");
  EXPECT_THAT(runtime_.applied, ElementsAre(1));
  EXPECT_TRUE(reconciler_->requeued("demo"));  // Asks to be run again...
  EXPECT_EQ(clock_.slept(), std::chrono::milliseconds(0));  // ...instead of sleeping.

  // Later passes only look: the objects of revision 1 are applied already.
  ASSERT_TRUE(pass("demo").isOk());
  ASSERT_TRUE(pass("demo").isOk());
  EXPECT_THAT(runtime_.applied, ElementsAre(1));
  EXPECT_EQ(runtime_.views, 3);
  EXPECT_THAT(reasons("demo"), ElementsAre("ObjectsApplied"));
}

TEST_F(WholeTest, CreateIsRunningOnceTheRuntimeIsReady) {
  add("demo", 2);
  runtime_.view = waitingView("waiting for slinky-1 (Pending: no node)");
  ASSERT_TRUE(pass("demo").isOk());
  runtime_.view = readyView(2);
  ASSERT_TRUE(pass("demo").isOk());
  ClusterRecord r = get("demo");
  EXPECT_EQ(r.status, ClusterStatus::kRunning);
  EXPECT_EQ(r.appliedRevision, 1);
  EXPECT_EQ(r.phase, "");
  EXPECT_EQ(r.loginAddress, "10.244.0.3");
  EXPECT_EQ(r.loginHostKey, "ssh-ed25519 AAAAkube");
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_EQ(r.nodes[1].name, "slinky-1");
  EXPECT_EQ(r.nodes[1].address, "10.244.0.11");
  EXPECT_EQ(stateOf("demo", 1), RevisionState::kApplied);
  EXPECT_THAT(eventMessage("demo", "Running"),
              HasSubstr("running with 2 nodes; login: ssh root@10.244.0.3"));
}

TEST_F(WholeTest, ARefusedCreateFailsWithTheRuntimesMessageAndRemovesWhatWasMade) {
  add("demo", 8);
  runtime_.applyResult = invalidArgument("applying NodeSet slinky: at most 6 workers per NodeSet");
  ASSERT_TRUE(pass("demo").isOk());
  ClusterRecord r = get("demo");
  EXPECT_EQ(r.status, ClusterStatus::kFailed);
  EXPECT_THAT(r.reason, HasSubstr("at most 6 workers per NodeSet"));
  EXPECT_THAT(runtime_.removed, ElementsAre("demo"));
  EXPECT_THAT(reasons("demo"), ElementsAre("CreateFailed"));
  // A Failed cluster is left alone.
  ASSERT_TRUE(pass("demo").isOk());
  EXPECT_EQ(runtime_.applied.size(), 1u);
}

TEST_F(WholeTest, AnUnreachableRuntimeIsRetriedNotFailed) {
  add("demo", 2);
  runtime_.applyResult = unavailable("connection refused");
  EXPECT_EQ(pass("demo").code(), Code::kUnavailable);
  ClusterRecord r = get("demo");
  EXPECT_EQ(r.status, ClusterStatus::kCreating);
  EXPECT_THAT(r.phase, HasSubstr("cannot reach the runtime, retrying: connection refused"));
  EXPECT_TRUE(reconciler_->requeued("demo"));
  runtime_.applyResult = Status::ok();
  runtime_.view = readyView(2);
  ASSERT_TRUE(pass("demo").isOk());
  EXPECT_EQ(get("demo").status, ClusterStatus::kRunning);
  EXPECT_THAT(runtime_.applied, ElementsAre(1, 1));
}

TEST_F(WholeTest, AFailureTheRuntimeSeesFailsTheCreate) {
  add("demo", 2);
  runtime_.view = waitingView("waiting");
  ASSERT_TRUE(pass("demo").isOk());
  ClusterView failed;
  failed.state = ClusterView::State::kFailed;
  failed.reason = "pod slinky-0: InvalidImageName: couldn't parse image name";
  runtime_.view = failed;
  ASSERT_TRUE(pass("demo").isOk());
  EXPECT_EQ(get("demo").status, ClusterStatus::kFailed);
  EXPECT_THAT(get("demo").reason, HasSubstr("InvalidImageName"));
  EXPECT_THAT(runtime_.removed, ElementsAre("demo"));
}

TEST_F(WholeTest, ACreateThatDoesNotComeUpInTimeFails) {
  add("demo", 2);
  runtime_.view = waitingView("waiting for demo-controller-0 (Pending: no node)");
  ASSERT_TRUE(pass("demo").isOk());
  clock_.advance(std::chrono::seconds(179));
  ASSERT_TRUE(pass("demo").isOk());
  EXPECT_EQ(get("demo").status, ClusterStatus::kCreating);
  clock_.advance(std::chrono::seconds(2));
  ASSERT_TRUE(pass("demo").isOk());
  EXPECT_EQ(get("demo").status, ClusterStatus::kFailed);
  EXPECT_THAT(get("demo").reason,
              HasSubstr("not running after 181 s: waiting for demo-controller-0 (Pending: no node)"));
}

TEST_F(WholeTest, AChangeIsAppliedOnceAndDoneWhenTheRuntimeIsReady) {
  createRunning("demo", 2);
  changeSpec("demo", [](ClusterSpec& s) { s.gpuNodes = 4; });
  runtime_.view = waitingView("waiting for slinky-3 (no pod yet)");
  ASSERT_TRUE(pass("demo").isOk());
  ClusterRecord r = get("demo");
  EXPECT_EQ(r.appliedRevision, 1);
  EXPECT_EQ(r.phase, "waiting for slinky-3 (no pod yet)");
  EXPECT_THAT(runtime_.applied, ElementsAre(1, 2));
  EXPECT_EQ(runtime_.appliedSpecs.back().gpuNodes, 4);
  EXPECT_TRUE(reconciler_->requeued("demo"));

  runtime_.view = readyView(4);
  ASSERT_TRUE(pass("demo").isOk());
  r = get("demo");
  EXPECT_EQ(r.appliedRevision, 2);
  EXPECT_EQ(r.phase, "");
  EXPECT_EQ(r.nodes.size(), 4u);
  EXPECT_EQ(stateOf("demo", 2), RevisionState::kApplied);
  EXPECT_THAT(runtime_.applied, ElementsAre(1, 2));
  EXPECT_THAT(reasons("demo").back(), "Applied");
}

TEST_F(WholeTest, ARefusedChangeIsRolledBackToTheAppliedRevision) {
  createRunning("demo", 2);
  changeSpec("demo", [](ClusterSpec& s) { s.gpuNodes = 8; });
  runtime_.applyResult = invalidArgument("applying NodeSet slinky: at most 6 workers per NodeSet");
  ASSERT_TRUE(pass("demo").isOk());
  ClusterRecord r = get("demo");
  EXPECT_EQ(r.revision, 3);
  EXPECT_TRUE(r.changeRollback);
  EXPECT_EQ(r.spec.gpuNodes, 2);
  EXPECT_EQ(stateOf("demo", 2), RevisionState::kFailed);
  EXPECT_THAT(eventMessage("demo", "ChangeFailed"),
              HasSubstr("at most 6 workers per NodeSet; rolling back to revision 1"));

  // The rollback is a revision like any other: its objects are applied.
  runtime_.applyResult = Status::ok();
  runtime_.view = readyView(2);
  ASSERT_TRUE(pass("demo").isOk());
  r = get("demo");
  EXPECT_EQ(r.appliedRevision, 3);
  EXPECT_EQ(r.status, ClusterStatus::kRunning);
  EXPECT_THAT(r.reason, HasSubstr("revision 2 (test change) failed and was rolled back"));
  EXPECT_EQ(runtime_.appliedSpecs.back().gpuNodes, 2);
  EXPECT_EQ(reasons("demo").back(), "RolledBack");
}

TEST_F(WholeTest, AChangeThatDoesNotSettleInTimeIsRolledBack) {
  createRunning("demo", 2);
  changeSpec("demo", [](ClusterSpec& s) { s.gpuNodes = 3; });
  runtime_.view = waitingView("waiting for slinky-2 (Pending: no node)");
  ASSERT_TRUE(pass("demo").isOk());
  clock_.advance(std::chrono::seconds(91));
  ASSERT_TRUE(pass("demo").isOk());
  ClusterRecord r = get("demo");
  EXPECT_EQ(r.revision, 3);
  EXPECT_TRUE(r.changeRollback);
  EXPECT_EQ(stateOf("demo", 2), RevisionState::kFailed);
  EXPECT_THAT(eventMessage("demo", "ChangeFailed"),
              HasSubstr("not done after 91.00 s: waiting for slinky-2 (Pending: no node)"));
}

TEST_F(WholeTest, ASteadyPassOnlyLooksAndRecordsNewsOnce) {
  createRunning("demo", 2);
  ClusterView v = readyView(2);
  v.nodes[1].address = "10.244.0.99";  // slinky-1's pod was recreated.
  v.warnings.push_back({"BackOff", "Pod/slinky-1: Back-off restarting failed container", "slinky-1"});
  runtime_.view = v;
  ASSERT_TRUE(pass("demo").isOk());
  ClusterRecord r = get("demo");
  EXPECT_EQ(r.nodes[1].address, "10.244.0.99");
  EXPECT_THAT(runtime_.applied, ElementsAre(1));
  auto events = store_.findEvents("demo", 100, EventFilter{"slinky-1", 0});
  ASSERT_TRUE(events.isOk());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].reason, "BackOff");
  int64_t version = get("demo").statusVersion;
  runtime_.view = readyView(2);
  runtime_.view->nodes[1].address = "10.244.0.99";
  ASSERT_TRUE(pass("demo").isOk());
  EXPECT_EQ(get("demo").statusVersion, version);  // Nothing new: nothing written.
}

TEST_F(WholeTest, ARestartedCorraldAppliesTheRunningRevisionOnce) {
  createRunning("demo", 2);
  ReconcilerOptions o;
  reconciler_ = std::make_unique<Reconciler>(store_, runtime_, clock_, o);
  ASSERT_TRUE(pass("demo").isOk());
  ASSERT_TRUE(pass("demo").isOk());
  EXPECT_THAT(runtime_.applied, ElementsAre(1, 1));
}

TEST_F(WholeTest, TerminateWaitsForTheRuntimeByRequeueing) {
  createRunning("demo", 2);
  ClusterRecord r = get("demo");
  r.status = ClusterStatus::kTerminating;
  ASSERT_TRUE(store_.writeCluster(r, RecordPart::kAll).isOk());
  runtime_.suspended = false;
  ASSERT_TRUE(pass("demo").isOk());
  EXPECT_EQ(get("demo").status, ClusterStatus::kTerminating);
  EXPECT_TRUE(reconciler_->requeued("demo"));
  runtime_.suspended = true;
  ASSERT_TRUE(pass("demo").isOk());
  EXPECT_EQ(get("demo").status, ClusterStatus::kTerminated);
  EXPECT_EQ(runtime_.suspends, 2);
}

TEST_F(WholeTest, DeleteForgetsTheClusterOnlyOnceTheRuntimeHasRemovedIt) {
  createRunning("demo", 2);
  ClusterRecord r = get("demo");
  r.status = ClusterStatus::kDeleting;
  ASSERT_TRUE(store_.writeCluster(r, RecordPart::kAll).isOk());
  runtime_.removeDone = false;
  ASSERT_TRUE(pass("demo").isOk());
  EXPECT_TRUE(store_.getCluster("demo").isOk());
  runtime_.removeDone = true;
  ASSERT_TRUE(pass("demo").isOk());
  EXPECT_EQ(store_.getCluster("demo").status().code(), Code::kNotFound);
  EXPECT_THAT(runtime_.removed, ElementsAre("demo", "demo"));
}

TEST_F(WholeTest, NoPodLevelOperationIsAskedOfAWholeClusterRuntime) {
  createRunning("demo", 2);
  changeSpec("demo", [](ClusterSpec& s) { s.gpuNodes = 3; });
  runtime_.view = readyView(3);
  ASSERT_TRUE(pass("demo").isOk());
  EXPECT_THAT(runtime_.startOrder("demo"), IsEmpty());
  EXPECT_FALSE(runtime_.prepared("demo").has_value());
}

}  // namespace
}  // namespace corral
