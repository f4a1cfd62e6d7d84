// The reconciler against `FakeStore`, `FakeRuntime` and `FakeClock`: every
// pass runs synchronously, time moves only through the fake clock, and the
// login probe is answered in memory, so nothing here touches the network or
// sleeps.

#include "reconcile/reconciler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "fakes/fake_clock.h"
#include "fakes/fake_runtime.h"
#include "fakes/fake_store.h"
#include "mocks/mock_runtime.h"
#include "slurm/renderer.h"

namespace corral {
namespace {

using ::testing::_;
using ::testing::AnyNumber;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::NiceMock;
using ::testing::Return;

ClusterRecord creatingRecord(const std::string& name, int gpuNodes, int cpuNodes = 0) {
  ClusterRecord r;
  r.spec.name = name;
  r.spec.gpuNodes = gpuNodes;
  r.spec.gpusPerNode = 8;
  r.spec.cpuNodes = cpuNodes;
  r.spec.sshKeys = {"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKey alice@laptop"};
  r.revision = 1;
  r.status = ClusterStatus::kCreating;
  return r;
}

// The events of `cluster` whose reason is `reason`.
std::vector<Event> eventsWithReason(Store& store, const std::string& cluster,
                                    const std::string& reason) {
  std::vector<Event> out;
  StatusOr<std::vector<Event>> all = store.listEvents(cluster, 1000);
  EXPECT_TRUE(all.isOk()) << all.status().toString();
  if (!all.isOk()) return out;
  for (const auto& e : *all)
    if (e.reason == reason) out.push_back(e);
  return out;
}

class ReconcilerTest : public ::testing::Test {
 protected:
  ReconcilerOptions testOptions() {
    ReconcilerOptions o;
    o.loginProbe = [this](const std::string& address, int port) {
      probes_.push_back(address + ":" + std::to_string(port));
      return loginAnswers_;
    };
    return o;
  }

  Reconciler& reconciler() {
    if (!reconciler_)
      reconciler_ = std::make_unique<Reconciler>(store_, runtime_, clock_, testOptions());
    return *reconciler_;
  }

  ClusterRecord add(const std::string& name, int gpuNodes, int cpuNodes = 0) {
    StatusOr<ClusterRecord> r = store_.createCluster(creatingRecord(name, gpuNodes, cpuNodes));
    EXPECT_TRUE(r.isOk()) << r.status().toString();
    return r.isOk() ? *r : ClusterRecord{};
  }

  ClusterRecord get(const std::string& name) {
    StatusOr<ClusterRecord> r = store_.getCluster(name);
    EXPECT_TRUE(r.isOk()) << r.status().toString();
    return r.isOk() ? *r : ClusterRecord{};
  }

  void setStatus(const std::string& name, ClusterStatus status) {
    ClusterRecord r = get(name);
    r.status = status;
    StatusOr<ClusterRecord> updated = store_.updateCluster(r);
    ASSERT_TRUE(updated.isOk()) << updated.status().toString();
  }

  // Creates `name` and reconciles it to Running.
  void createRunning(const std::string& name, int gpuNodes) {
    add(name, gpuNodes);
    ASSERT_TRUE(reconciler().reconcile(name).isOk());
    ASSERT_EQ(get(name).status, ClusterStatus::kRunning) << get(name).reason;
  }

  FakeStore store_;
  FakeRuntime runtime_;
  FakeClock clock_;
  bool loginAnswers_ = true;
  std::vector<std::string> probes_;
  std::unique_ptr<Reconciler> reconciler_;
};

TEST_F(ReconcilerTest, CreateConvergesToRunning) {
  ClusterRecord added = add("demo", 2);
  ASSERT_TRUE(reconciler().reconcile("demo").isOk());

  ClusterRecord r = get("demo");
  EXPECT_EQ(r.status, ClusterStatus::kRunning) << r.reason;
  EXPECT_EQ(r.appliedRevision, 1);
  EXPECT_EQ(r.revision, 1);
  EXPECT_EQ(r.phase, "");
  EXPECT_EQ(r.reason, "");
  EXPECT_EQ(r.subnet, "172.29.0.0/24");
  EXPECT_EQ(r.loginAddress, "172.29.0.3");
  EXPECT_EQ(r.loginHostKey, FakeRuntime::kFakeHostKey);  // Without the comment.
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_EQ(r.nodes[0].name, "slinky-0");
  EXPECT_EQ(r.nodes[0].physicalId, "corral_node_1");
  EXPECT_EQ(r.nodes[0].address, "172.29.0.10");
  EXPECT_EQ(r.nodes[1].name, "slinky-1");
  EXPECT_EQ(r.nodes[1].physicalId, "corral_node_2");
  EXPECT_EQ(r.nodes[1].address, "172.29.0.11");

  // The runtime got the cluster's network, its rendered files and all of its
  // pods (started concurrently; slurmd itself waits for slurmctld).
  std::optional<ClusterNetwork> net = runtime_.prepared("demo");
  ASSERT_TRUE(net.has_value());
  EXPECT_EQ(net->id, added.id);
  EXPECT_EQ(net->subnet, "172.29.0.0/24");
  EXPECT_THAT(runtime_.startOrder("demo"),
              UnorderedElementsAre("controller", "login", "slinky-0", "slinky-1"));
  RenderedFiles files = runtime_.files("demo");
  ASSERT_EQ(files.count("etc/slurm/slurm.conf"), 1u);
  EXPECT_EQ(files.at("etc/slurm/slurm.conf").content, renderSlurmConf(r));
  EXPECT_EQ(files.at("etc/slurm/slurmdbd.conf").mode, 0600);
  std::optional<PodSpec> worker = runtime_.pod("demo", "slinky-1");
  ASSERT_TRUE(worker.has_value());
  EXPECT_EQ(worker->address, "172.29.0.11");
  EXPECT_EQ(worker->gpus, 8);

  EXPECT_THAT(probes_, ElementsAre("172.29.0.3:22"));
  std::vector<Event> running = eventsWithReason(store_, "demo", "Running");
  ASSERT_EQ(running.size(), 1u);
  EXPECT_EQ(running[0].type, "Normal");
  EXPECT_THAT(running[0].message, HasSubstr("root@172.29.0.3"));
  EXPECT_THAT(eventsWithReason(store_, "demo", "CreateFailed"), IsEmpty());

  auto observed = reconciler().observedNodes("demo");
  ASSERT_EQ(observed.size(), 2u);
  EXPECT_EQ(observed.at("slinky-0").state, "idle");
  EXPECT_EQ(observed.at("slinky-1").state, "idle");
}

TEST_F(ReconcilerTest, ReconcilingARunningClusterAgainChangesNothing) {
  createRunning("demo", 2);
  ClusterRecord before = get("demo");
  ASSERT_TRUE(reconciler().reconcile("demo").isOk());
  ClusterRecord after = get("demo");
  EXPECT_EQ(after.status, ClusterStatus::kRunning);
  EXPECT_EQ(after.nodes.size(), before.nodes.size());
  EXPECT_EQ(runtime_.startOrder("demo").size(), 4u);  // No pod was started twice.
  EXPECT_THAT(eventsWithReason(store_, "demo", "PodRestarted"), IsEmpty());
}

TEST_F(ReconcilerTest, SecondClusterGetsTheNextSubnetAndNodeIds) {
  createRunning("a", 2);
  add("b", 1, 1);
  ASSERT_TRUE(reconciler().reconcile("b").isOk());
  ClusterRecord b = get("b");
  EXPECT_EQ(b.status, ClusterStatus::kRunning) << b.reason;
  EXPECT_EQ(b.subnet, "172.29.1.0/24");
  EXPECT_EQ(b.loginAddress, "172.29.1.3");
  ASSERT_EQ(b.nodes.size(), 2u);
  EXPECT_EQ(b.nodes[0].name, "slinky-0");
  EXPECT_EQ(b.nodes[0].address, "172.29.1.10");
  EXPECT_EQ(b.nodes[0].physicalId, "corral_node_3");  // Ids are never reused across clusters.
  EXPECT_EQ(b.nodes[1].name, "cpu-workers-0");
  EXPECT_EQ(b.nodes[1].address, "172.29.1.230");
  EXPECT_EQ(b.nodes[1].physicalId, "corral_node_4");
  EXPECT_EQ(get("a").subnet, "172.29.0.0/24");
  std::optional<PodSpec> cpu = runtime_.pod("b", "cpu-workers-0");
  ASSERT_TRUE(cpu.has_value());
  EXPECT_EQ(cpu->gpus, 0);
}

TEST_F(ReconcilerTest, FailedStartPodFailsTheClusterAndCleansUp) {
  add("demo", 2);
  runtime_.failNext("startPod", internalError("boom"));
  ASSERT_TRUE(reconciler().reconcile("demo").isOk());

  ClusterRecord r = get("demo");
  EXPECT_EQ(r.status, ClusterStatus::kFailed);
  EXPECT_EQ(r.reason, "starting controller: boom");
  EXPECT_EQ(r.phase, "");
  EXPECT_EQ(r.appliedRevision, 0);
  EXPECT_THAT(runtime_.destroyed(), ElementsAre("demo"));
  StatusOr<std::vector<std::string>> left = runtime_.listClusters();
  ASSERT_TRUE(left.isOk());
  EXPECT_THAT(*left, IsEmpty());

  std::vector<Event> failed = eventsWithReason(store_, "demo", "CreateFailed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].type, "Warning");
  EXPECT_EQ(failed[0].message, r.reason);
  EXPECT_THAT(eventsWithReason(store_, "demo", "Running"), IsEmpty());

  // Failed is terminal: another pass touches nothing.
  int starts = runtime_.calls("startPod");
  ASSERT_TRUE(reconciler().reconcile("demo").isOk());
  EXPECT_EQ(runtime_.calls("startPod"), starts);
  EXPECT_EQ(get("demo").status, ClusterStatus::kFailed);
}

TEST_F(ReconcilerTest, FailureKeepsTheControllerLogAsDiagnostics) {
  add("demo", 1);
  runtime_.setPodReady("demo", "controller", false);
  runtime_.putPodFile("demo", "controller", "/var/log/slurm/slurmctld.log",
                   "line 1\nfatal: Unable to determine this slurmctld's NodeName\n");
  ASSERT_TRUE(reconciler().reconcile("demo").isOk());
  EXPECT_EQ(get("demo").status, ClusterStatus::kFailed);
  std::vector<Event> diag = eventsWithReason(store_, "demo", "Diagnostics");
  ASSERT_EQ(diag.size(), 1u);
  EXPECT_THAT(diag[0].message, HasSubstr("slurmctld.log"));
  EXPECT_THAT(diag[0].message, HasSubstr("Unable to determine this slurmctld's NodeName"));
}

TEST_F(ReconcilerTest, WorkerThatNeverBecomesReadyTimesOut) {
  add("demo", 2);
  runtime_.setPodReady("demo", "slinky-1", false);
  auto start = clock_.now();
  ASSERT_TRUE(reconciler().reconcile("demo").isOk());

  ClusterRecord r = get("demo");
  EXPECT_EQ(r.status, ClusterStatus::kFailed);
  EXPECT_THAT(r.reason, HasSubstr("starting workers"));
  EXPECT_THAT(r.reason, HasSubstr("timed out"));
  EXPECT_THAT(r.reason, HasSubstr("slinky-1"));
  EXPECT_GE(clock_.now() - start, ReconcilerOptions{}.createTimeout);
  EXPECT_LT(clock_.now() - start, ReconcilerOptions{}.createTimeout + std::chrono::seconds(1));
  EXPECT_THAT(runtime_.destroyed(), ElementsAre("demo"));
  EXPECT_EQ(eventsWithReason(store_, "demo", "CreateFailed").size(), 1u);
  EXPECT_TRUE(probes_.empty());
}

TEST_F(ReconcilerTest, NodesThatNeverRegisterTimeOut) {
  add("demo", 2);
  runtime_.setExecHandler([](const std::string&, const std::string&,
                             const std::vector<std::string>&) -> StatusOr<ProcessResult> {
    ProcessResult res;
    res.exitCode = 0;
    res.out = "slinky-0|idle|none\nslinky-1|down*|Not responding\n";
    return res;
  });
  ASSERT_TRUE(reconciler().reconcile("demo").isOk());
  ClusterRecord r = get("demo");
  EXPECT_EQ(r.status, ClusterStatus::kFailed);
  EXPECT_THAT(r.reason, HasSubstr("registering nodes"));
  EXPECT_THAT(r.reason, HasSubstr("timed out"));
  EXPECT_THAT(r.reason, HasSubstr("slinky-1 is down*"));
}

TEST_F(ReconcilerTest, LoginNodeThatNeverAnswersSshFails) {
  add("demo", 1);
  loginAnswers_ = false;
  ASSERT_TRUE(reconciler().reconcile("demo").isOk());
  ClusterRecord r = get("demo");
  EXPECT_EQ(r.status, ClusterStatus::kFailed);
  EXPECT_THAT(r.reason, HasSubstr("sshd does not answer on 172.29.0.3:22"));
  EXPECT_GT(probes_.size(), 1u);  // It kept asking until the deadline.
  EXPECT_THAT(runtime_.destroyed(), ElementsAre("demo"));
}

TEST_F(ReconcilerTest, DeleteDuringCreateCancelsWithoutFailing) {
  add("demo", 1);
  // The first look at Slurm finds no node and, meanwhile, the user deletes
  // the cluster.
  runtime_.setExecHandler([this](const std::string&, const std::string&,
                                 const std::vector<std::string>&) -> StatusOr<ProcessResult> {
    setStatus("demo", ClusterStatus::kDeleting);
    ProcessResult res;
    res.exitCode = 0;
    return res;
  });
  ASSERT_TRUE(reconciler().reconcile("demo").isOk());
  EXPECT_EQ(get("demo").status, ClusterStatus::kDeleting);
  EXPECT_THAT(eventsWithReason(store_, "demo", "CreateFailed"), IsEmpty());

  // The next pass deletes it.
  runtime_.setExecHandler(nullptr);
  ASSERT_TRUE(reconciler().reconcile("demo").isOk());
  EXPECT_EQ(store_.getCluster("demo").status().code(), Code::kNotFound);
  EXPECT_THAT(runtime_.destroyed(), ElementsAre("demo"));
}

TEST_F(ReconcilerTest, DeletingDestroysTheRuntimeThenTheRecord) {
  createRunning("demo", 2);
  setStatus("demo", ClusterStatus::kDeleting);
  ASSERT_TRUE(reconciler().reconcile("demo").isOk());

  EXPECT_THAT(runtime_.destroyed(), ElementsAre("demo"));
  EXPECT_EQ(store_.getCluster("demo").status().code(), Code::kNotFound);
  StatusOr<std::vector<std::string>> left = runtime_.listClusters();
  ASSERT_TRUE(left.isOk());
  EXPECT_THAT(*left, IsEmpty());
  EXPECT_TRUE(reconciler().observedNodes("demo").empty());
  EXPECT_EQ(reconciler().reconcile("demo").code(), Code::kNotFound);
}

TEST_F(ReconcilerTest, FailedDestroyKeepsTheRecordForTheNextPass) {
  createRunning("demo", 1);
  setStatus("demo", ClusterStatus::kDeleting);
  runtime_.failNext("destroyCluster", unavailable("bridge busy"));
  Status s = reconciler().reconcile("demo");
  EXPECT_EQ(s.code(), Code::kUnavailable);
  EXPECT_EQ(get("demo").status, ClusterStatus::kDeleting);
  std::vector<Event> failed = eventsWithReason(store_, "demo", "DeleteFailed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].message, "bridge busy");

  ASSERT_TRUE(reconciler().reconcile("demo").isOk());
  EXPECT_EQ(store_.getCluster("demo").status().code(), Code::kNotFound);
}

TEST_F(ReconcilerTest, HealthPassRestartsAKilledPod) {
  createRunning("demo", 2);
  runtime_.killPod("demo", "slinky-0");
  ASSERT_TRUE(reconciler().reconcile("demo").isOk());

  // The create started every pod once (concurrently, in any order); the
  // health pass then started slinky-0 again, and nothing else.
  std::vector<std::string> order = runtime_.startOrder("demo");
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(order.back(), "slinky-0");
  order.pop_back();
  EXPECT_THAT(order, UnorderedElementsAre("controller", "login", "slinky-0", "slinky-1"));
  StatusOr<PodStatus> st = runtime_.podStatus("demo", "slinky-0");
  ASSERT_TRUE(st.isOk());
  EXPECT_TRUE(st->running);
  std::vector<Event> restarted = eventsWithReason(store_, "demo", "PodRestarted");
  ASSERT_EQ(restarted.size(), 1u);
  EXPECT_EQ(restarted[0].type, "Warning");
  EXPECT_THAT(restarted[0].message, HasSubstr("slinky-0"));
  EXPECT_EQ(get("demo").status, ClusterStatus::kRunning);
}

TEST_F(ReconcilerTest, HealthPassRecordsWhatSlurmReports) {
  createRunning("demo", 2);
  runtime_.setExecHandler([](const std::string&, const std::string& pod,
                             const std::vector<std::string>& argv) -> StatusOr<ProcessResult> {
    EXPECT_EQ(pod, "controller");
    EXPECT_EQ(argv.at(0), "sinfo");
    ProcessResult res;
    res.exitCode = 0;
    res.out = "slinky-0|allocated|none\nslinky-1|drained|GPU XID 79\nslinky-0|allocated|none\n";
    return res;
  });
  ASSERT_TRUE(reconciler().reconcile("demo").isOk());
  auto observed = reconciler().observedNodes("demo");
  ASSERT_EQ(observed.size(), 2u);
  EXPECT_EQ(observed.at("slinky-0").state, "allocated");
  EXPECT_EQ(observed.at("slinky-1").state, "drained");
  EXPECT_EQ(observed.at("slinky-1").reason, "GPU XID 79");
}

TEST_F(ReconcilerTest, CollectOrphansDestroysOnlyUnknownClusters) {
  createRunning("demo", 1);
  ASSERT_TRUE(runtime_.prepareCluster({"ghost", 99, "172.29.200.0/24"}).isOk());
  ASSERT_TRUE(reconciler().collectOrphans().isOk());

  EXPECT_THAT(runtime_.destroyed(), ElementsAre("ghost"));
  StatusOr<std::vector<std::string>> left = runtime_.listClusters();
  ASSERT_TRUE(left.isOk());
  EXPECT_THAT(*left, ElementsAre("demo"));
  EXPECT_EQ(get("demo").status, ClusterStatus::kRunning);
}

TEST_F(ReconcilerTest, CollectOrphansStopsOnAStoreError) {
  ASSERT_TRUE(runtime_.prepareCluster({"ghost", 99, "172.29.200.0/24"}).isOk());
  store_.failNext(Code::kUnavailable, "database locked");
  EXPECT_EQ(reconciler().collectOrphans().code(), Code::kUnavailable);
  // Not knowing is not the same as knowing it is absent: nothing destroyed.
  EXPECT_THAT(runtime_.destroyed(), IsEmpty());
}

TEST_F(ReconcilerTest, UnknownClusterIsNotFound) {
  EXPECT_EQ(reconciler().reconcile("nope").code(), Code::kNotFound);
  EXPECT_EQ(runtime_.calls("prepareCluster"), 0);
}

// The same failure seen through `MockRuntime`: it checks the exact calls,
// while a `FakeRuntime` behind it does the work.
TEST(ReconcilerMockTest, FailedWorkerStartDestroysTheClusterExactlyOnce) {
  FakeStore store;
  FakeClock clock;
  FakeRuntime fake;
  NiceMock<MockRuntime> mock;
  ON_CALL(mock, allocateNetwork).WillByDefault([&](const std::string& c) { return fake.allocateNetwork(c); });
  ON_CALL(mock, prepareCluster).WillByDefault([&](const ClusterNetwork& n) {
    return fake.prepareCluster(n);
  });
  ON_CALL(mock, writeFiles).WillByDefault([&](const std::string& c, const RenderedFiles& f) {
    return fake.writeFiles(c, f);
  });
  ON_CALL(mock, readFile).WillByDefault([&](const std::string& c, const std::string& p) {
    return fake.readFile(c, p);
  });
  ON_CALL(mock, startPod).WillByDefault([&](const PodSpec& p) { return fake.startPod(p); });
  ON_CALL(mock, podStatus).WillByDefault([&](const std::string& c, const std::string& p) {
    return fake.podStatus(c, p);
  });
  ON_CALL(mock, listPods).WillByDefault([&](const std::string& c) { return fake.listPods(c); });
  ON_CALL(mock, stopPod).WillByDefault([&](const std::string& c, const std::string& p) {
    return fake.stopPod(c, p);
  });
  ON_CALL(mock, exec)
      .WillByDefault([&](const std::string& c, const std::string& p,
                         const std::vector<std::string>& a,
                         const ProcessOptions& o) { return fake.exec(c, p, a, o); });
  ON_CALL(mock, listClusters).WillByDefault([&] { return fake.listClusters(); });
  ON_CALL(mock, loginHostKey).WillByDefault([&](const std::string& c) { return fake.loginHostKey(c); });
  ON_CALL(mock, podLogTail)
      .WillByDefault([&](const std::string& c, const std::string& p, const std::string& f, size_t n) {
        return fake.podLogTail(c, p, f, n);
      });
  ON_CALL(mock, prepareSharedDirectory)
      .WillByDefault([&](const std::string& c, const std::string& p, int u, int g, int m) {
        return fake.prepareSharedDirectory(c, p, u, g, m);
      });

  ClusterRecord rec = creatingRecord("demo", 2);
  StatusOr<ClusterRecord> created = store.createCluster(rec);
  ASSERT_TRUE(created.isOk());

  // Newer expectations match first: slinky-1 fails, every other start works.
  EXPECT_CALL(mock, startPod(_)).Times(AnyNumber());
  EXPECT_CALL(mock, startPod(Field(&PodSpec::name, "slinky-1")))
      .WillOnce(Return(internalError("no veth left")));
  EXPECT_CALL(mock, destroyCluster(Field(&ClusterNetwork::cluster, "demo")))
      .WillOnce([&](const ClusterNetwork& n) {
        EXPECT_EQ(n.id, created->id);
        EXPECT_EQ(n.subnet, "172.29.0.0/24");
        return fake.destroyCluster(n);
      });

  ReconcilerOptions options;
  options.loginProbe = [](const std::string&, int) { return true; };
  Reconciler reconciler(store, mock, clock, options);
  ASSERT_TRUE(reconciler.reconcile("demo").isOk());

  StatusOr<ClusterRecord> r = store.getCluster("demo");
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(r->status, ClusterStatus::kFailed);
  EXPECT_EQ(r->reason, "starting slinky-1: no veth left");
  StatusOr<std::vector<std::string>> left = fake.listClusters();
  ASSERT_TRUE(left.isOk());
  EXPECT_THAT(*left, IsEmpty());
}

}  // namespace
}  // namespace corral
