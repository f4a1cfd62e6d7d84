// `observeCluster`: a cluster's objects, as the API server returns them, in
// corral's terms — verdict, phase, reason, node rows, counters, events.

#include "kube/observe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace corral::kube {
namespace {

using ::testing::ElementsAre;
using Json = nlohmann::json;

const char* kNs = "corral-demo";

Json labels() { return {{"app.kubernetes.io/managed-by", "corral"}, {"corral.dev/cluster", "demo"}}; }

Json meta(const std::string& name, int64_t generation = 1) {
  return {{"name", name}, {"namespace", kNs}, {"uid", "uid-" + name},
          {"generation", generation}, {"resourceVersion", "100"}, {"labels", labels()}};
}

Json slinkyObject(const char* kind, const std::string& name) {
  return {{"apiVersion", "slinky.slurm.net/v1beta1"}, {"kind", kind}, {"metadata", meta(name)},
          {"spec", Json::object()}, {"status", {{"conditions", Json::array()}}}};
}

Json nodeSet(const std::string& name, int replicas, int64_t generation = 1,
             std::optional<int64_t> observed = 1) {
  Json n = slinkyObject("NodeSet", name);
  n["metadata"]["generation"] = generation;
  n["spec"] = {{"replicas", replicas},
               {"controllerRef", {{"name", "demo"}, {"namespace", kNs}}},
               {"template", {{"spec", {{"hostname", name + "-"}}}}}};
  n["status"] = {{"replicas", replicas}, {"readyReplicas", replicas},
                 {"selector", "app.kubernetes.io/instance=" + name}};
  if (observed) n["status"]["observedGeneration"] = *observed;
  return n;
}

Json statefulSet(const std::string& name) {
  return {{"apiVersion", "apps/v1"}, {"kind", "StatefulSet"}, {"metadata", meta(name)},
          {"spec", {{"replicas", 1}}},
          {"status", {{"observedGeneration", 1}, {"replicas", 1}, {"readyReplicas", 1}}}};
}

// A pod as the kubelet reports it once running and ready.
Json readyPod(const std::string& name, const std::string& ip, const std::string& container,
              const std::string& hostname = "") {
  Json spec = {{"nodeName", "kind-worker"}, {"containers", {{{"name", container}}}}};
  if (!hostname.empty()) spec["hostname"] = hostname;
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", meta(name)}, {"spec", spec},
          {"status",
           {{"phase", "Running"}, {"podIP", ip}, {"hostIP", "172.18.0.2"},
            {"conditions",
             {{{"type", "PodScheduled"}, {"status", "True"}},
              {{"type", "Initialized"}, {"status", "True"}},
              {{"type", "ContainersReady"}, {"status", "True"}},
              {{"type", "Ready"}, {"status", "True"}}}},
            {"containerStatuses",
             {{{"name", container}, {"ready", true}, {"restartCount", 0},
               {"state", {{"running", {{"startedAt", "2025-05-01T10:00:03Z"}}}}}}}}}}};
}

// Not scheduled: no spec.nodeName, PodScheduled False (with the scheduler's
// message when `why` is given).
Json unscheduledPod(const std::string& name, const std::string& why = "") {
  Json scheduled = {{"type", "PodScheduled"}, {"status", "False"}};
  if (!why.empty()) {
    scheduled["reason"] = "Unschedulable";
    scheduled["message"] = why;
  }
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", meta(name)},
          {"spec", {{"hostname", name}, {"containers", {{{"name", "slurmd"}}}}}},
          {"status", {{"phase", "Pending"}, {"conditions", {scheduled}}}}};
}

// Scheduled, but `container` waits for `reason`.
Json waitingPod(const std::string& name, const std::string& phase, const std::string& container,
                const std::string& reason, const std::string& message) {
  Json pod = readyPod(name, phase == "Pending" ? "" : "10.244.1.9", container, name);
  if (phase == "Pending") pod["status"].erase("podIP");
  pod["status"]["phase"] = phase;
  pod["status"]["conditions"][3] = {{"type", "Ready"}, {"status", "False"},
                                    {"reason", "ContainersNotReady"}};
  Json waiting = {{"reason", reason}};
  if (!message.empty()) waiting["message"] = message;
  pod["status"]["containerStatuses"][0]["ready"] = false;
  pod["status"]["containerStatuses"][0]["state"] = {{"waiting", waiting}};
  return pod;
}

Json claim(const std::string& name, const std::string& phase) {
  return {{"apiVersion", "v1"}, {"kind", "PersistentVolumeClaim"}, {"metadata", meta(name)},
          {"spec", {{"accessModes", {"ReadWriteMany"}}}}, {"status", {{"phase", phase}}}};
}

Json event(const std::string& name, const std::string& type, const std::string& reason,
           const std::string& kind, const std::string& object, const std::string& message,
           int count = 1, const std::string& last = "2025-05-01T10:00:05Z") {
  Json m = meta(name);
  m.erase("labels");
  m.erase("generation");
  return {{"apiVersion", "v1"}, {"kind", "Event"}, {"metadata", m},
          {"involvedObject", {{"kind", kind}, {"name", object}, {"namespace", kNs}}},
          {"type", type}, {"reason", reason}, {"message", message}, {"count", count},
          {"firstTimestamp", "2025-05-01T10:00:01Z"}, {"lastTimestamp", last}};
}

// A 2-node cluster with everything applied, observed and ready.
ObjectSet runningCluster() {
  ObjectSet s;
  s.put(ObjectKind::kController, slinkyObject("Controller", "demo"));
  s.put(ObjectKind::kAccounting, slinkyObject("Accounting", "demo"));
  s.put(ObjectKind::kLoginSet, slinkyObject("LoginSet", "demo-login"));
  s.put(ObjectKind::kNodeSet, nodeSet("slinky", 2));
  for (const char* sts : {"demo-controller", "demo-accounting", "demo-mariadb"})
    s.put(ObjectKind::kStatefulSet, statefulSet(sts));
  s.put(ObjectKind::kPod, readyPod("demo-controller-0", "10.244.1.2", "slurmctld"));
  s.put(ObjectKind::kPod, readyPod("demo-accounting-0", "10.244.1.3", "slurmdbd"));
  s.put(ObjectKind::kPod, readyPod("demo-mariadb-0", "10.244.1.4", "mariadb"));
  s.put(ObjectKind::kPod, readyPod("slinky-0", "10.244.1.5", "slurmd", "slinky-0"));
  s.put(ObjectKind::kPod, readyPod("slinky-1", "10.244.2.6", "slurmd", "slinky-1"));
  s.put(ObjectKind::kPod, readyPod("demo-login-7c9f8d4b5-x2x4q", "10.244.1.7", "login"));
  s.put(ObjectKind::kPersistentVolumeClaim, claim("demo-shared", "Bound"));
  return s;
}

struct Row {
  std::string name, group, pod;
  bool ready;
  std::string address, detail;
  bool operator==(const Row&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Row& r) {
  return os << r.name << "/" << r.group << "/" << r.pod << "/" << r.ready << "/" << r.address
            << "/" << r.detail;
}
std::vector<Row> rows(const ClusterObservation& o) {
  std::vector<Row> out;
  for (const NodeRow& n : o.nodes)
    out.push_back({n.name, n.group, n.pod, n.ready, n.address, n.detail});
  return out;
}

TEST(ObserveTest, RunningWhenControllerNodesAndLoginAreReady) {
  ClusterObservation o = observeCluster(runningCluster(), "demo");
  EXPECT_EQ(o.verdict, Verdict::kRunning);
  EXPECT_EQ(o.phase, "");
  EXPECT_EQ(o.reason, "");
  EXPECT_TRUE(o.allObserved);
  EXPECT_TRUE(o.unobserved.empty());
  EXPECT_THAT(rows(o), ElementsAre(Row{"slinky-0", "slinky", "slinky-0", true, "10.244.1.5", ""},
                                   Row{"slinky-1", "slinky", "slinky-1", true, "10.244.2.6", ""}));
  EXPECT_EQ(o.loginAddress, "10.244.1.7");
  std::vector<NodeRecord> records = nodeRecords(o);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].name, "slinky-1");
  EXPECT_EQ(records[1].group, "slinky");
  EXPECT_EQ(records[1].physicalId, "kind-worker");
  EXPECT_EQ(records[1].address, "10.244.2.6");
  EXPECT_EQ(o.pods.size(), 6u);
  EXPECT_TRUE(o.pods.at("demo-controller-0").ready);
}

TEST(ObserveTest, APendingPodWithNoNodeKeepsItCreating) {
  ObjectSet s = runningCluster();
  s.put(ObjectKind::kPod, unscheduledPod("slinky-1"));
  ClusterObservation o = observeCluster(s, "demo");
  EXPECT_EQ(o.verdict, Verdict::kCreating);
  EXPECT_EQ(o.phase, "waiting for slinky-1 (Pending: no node)");
  EXPECT_THAT(rows(o), ElementsAre(Row{"slinky-0", "slinky", "slinky-0", true, "10.244.1.5", ""},
                                   Row{"slinky-1", "slinky", "slinky-1", false, "",
                                       "Pending: no node"}));

  // With the scheduler's word on why.
  s.put(ObjectKind::kPod, unscheduledPod("slinky-1", "0/3 nodes are available: 3 Insufficient "
                                                     "nvidia.com/gpu."));
  EXPECT_EQ(observeCluster(s, "demo").phase,
            "waiting for slinky-1 (Pending: no node: 0/3 nodes are available: 3 Insufficient "
            "nvidia.com/gpu.)");
}

TEST(ObserveTest, TheControllerSideComesBeforeTheNodesAndTheLoginLast) {
  ObjectSet s = runningCluster();
  s.put(ObjectKind::kPod, unscheduledPod("slinky-0"));
  s.put(ObjectKind::kPod, waitingPod("demo-login-7c9f8d4b5-x2x4q", "Pending", "login",
                                     "ContainerCreating", ""));
  s.put(ObjectKind::kPod, waitingPod("demo-mariadb-0", "Running", "mariadb", "", ""));
  s.of(ObjectKind::kPod)["demo-mariadb-0"]["status"]["containerStatuses"][0]["state"] = {
      {"running", {{"startedAt", "2025-05-01T10:00:03Z"}}}};
  EXPECT_EQ(observeCluster(s, "demo").phase, "waiting for demo-mariadb-0 (Running: not ready)");
  s.put(ObjectKind::kPod, readyPod("demo-mariadb-0", "10.244.1.4", "mariadb"));
  EXPECT_EQ(observeCluster(s, "demo").phase, "waiting for slinky-0 (Pending: no node)");
  s.put(ObjectKind::kPod, readyPod("slinky-0", "10.244.1.5", "slurmd", "slinky-0"));
  ClusterObservation o = observeCluster(s, "demo");
  EXPECT_EQ(o.phase, "waiting for the login node (Pending: ContainerCreating)");
  EXPECT_EQ(o.loginAddress, "");
  s.of(ObjectKind::kPod).erase("demo-login-7c9f8d4b5-x2x4q");
  EXPECT_EQ(observeCluster(s, "demo").phase, "waiting for the login node (no pod yet)");
}

TEST(ObserveTest, CrashLoopBackOffFailsTheClusterWithTheReason) {
  ObjectSet s = runningCluster();
  s.put(ObjectKind::kPod,
        waitingPod("slinky-0", "Running", "slurmd", "CrashLoopBackOff",
                   "back-off 5m0s restarting failed container=slurmd pod=slinky-0_corral-demo"));
  ClusterObservation o = observeCluster(s, "demo");
  EXPECT_EQ(o.verdict, Verdict::kFailed);
  EXPECT_EQ(o.reason,
            "pod slinky-0: container slurmd: CrashLoopBackOff: back-off 5m0s restarting failed "
            "container=slurmd pod=slinky-0_corral-demo");
  EXPECT_THAT(o.failures, ElementsAre(o.reason));
  EXPECT_EQ(o.nodes[0].detail, "Running: CrashLoopBackOff");
  EXPECT_FALSE(o.nodes[0].ready);
}

TEST(ObserveTest, ImagePullBackOffFailsButAFirstErrImagePullDoesNot) {
  ObjectSet s = runningCluster();
  const std::string image = "Back-off pulling image \"registry.local/corral/slurmctld:26.05\"";
  s.put(ObjectKind::kPod, waitingPod("demo-controller-0", "Pending", "slurmctld", "ErrImagePull",
                                     "failed to pull and unpack image"));
  ClusterObservation o = observeCluster(s, "demo");
  EXPECT_EQ(o.verdict, Verdict::kCreating);
  EXPECT_EQ(o.phase, "waiting for demo-controller-0 (Pending: ErrImagePull)");

  s.put(ObjectKind::kPod,
        waitingPod("demo-controller-0", "Pending", "slurmctld", "ImagePullBackOff", image));
  o = observeCluster(s, "demo");
  EXPECT_EQ(o.verdict, Verdict::kFailed);
  EXPECT_EQ(o.reason, "pod demo-controller-0: container slurmctld: ImagePullBackOff: " + image);
  EXPECT_EQ(o.phase, "");
}

TEST(ObserveTest, AnInitContainerIsLookedAtFirst) {
  ObjectSet s = runningCluster();
  Json pod = waitingPod("slinky-1", "Pending", "slurmd", "PodInitializing", "");
  pod["status"]["initContainerStatuses"] = {
      {{"name", "logfile"},
       {"state", {{"waiting", {{"reason", "CreateContainerConfigError"},
                               {"message", "secret \"demo-slurm-key\" not found"}}}}}}};
  s.put(ObjectKind::kPod, pod);
  ClusterObservation o = observeCluster(s, "demo");
  EXPECT_EQ(o.verdict, Verdict::kFailed);
  EXPECT_EQ(o.reason, "pod slinky-1: container logfile: CreateContainerConfigError: secret "
                      "\"demo-slurm-key\" not found");
}

TEST(ObserveTest, NodeSetCountersComeFromItsStatus) {
  ObjectSet s = runningCluster();
  Json n = nodeSet("slinky", 2);
  n["status"].update({{"readyReplicas", 1}, {"slurmIdle", 1}, {"slurmAllocated", 0},
                      {"slurmDrain", 1}});
  s.put(ObjectKind::kNodeSet, n);
  ClusterObservation o = observeCluster(s, "demo");
  ASSERT_EQ(o.nodeSets.size(), 1u);
  const NodeSetObservation& c = o.nodeSets[0];
  EXPECT_EQ(c.name, "slinky");
  EXPECT_EQ(c.replicas, 2);
  EXPECT_EQ(c.statusReplicas, 2);
  EXPECT_EQ(c.readyReplicas, 1);
  EXPECT_TRUE(c.hasSlurmCounts);
  EXPECT_EQ(c.slurmIdle, 1);
  EXPECT_EQ(c.slurmAllocated, 0);
  EXPECT_EQ(c.slurmDown, 0);
  EXPECT_EQ(c.slurmDrain, 1);
  // Before the operator has read Slurm (it omits zeros, and had nothing).
  EXPECT_FALSE(observeCluster(runningCluster(), "demo").nodeSets[0].hasSlurmCounts);
}

TEST(ObserveTest, RowsFollowReplicasAndTheHostnameRule) {
  ObjectSet s = runningCluster();
  s.put(ObjectKind::kNodeSet, nodeSet("slinky", 3));
  Json cpu = nodeSet("cpu-workers", 1);
  cpu["spec"]["template"]["spec"].erase("hostname");  // Slinky's default: `<nodeset>-`.
  s.put(ObjectKind::kNodeSet, cpu);
  s.put(ObjectKind::kPod, readyPod("cpu-workers-0", "10.244.3.2", "slurmd", "cpu-workers-0"));
  s.put(ObjectKind::kPod, readyPod("slinky-3", "10.244.3.9", "slurmd", "slinky-3"));  // Past replicas.
  ClusterObservation o = observeCluster(s, "demo");
  EXPECT_THAT(rows(o),
              ElementsAre(Row{"cpu-workers-0", "cpu-workers", "cpu-workers-0", true, "10.244.3.2", ""},
                          Row{"slinky-0", "slinky", "slinky-0", true, "10.244.1.5", ""},
                          Row{"slinky-1", "slinky", "slinky-1", true, "10.244.2.6", ""},
                          Row{"slinky-2", "slinky", "", false, "", "no pod yet"}));
  EXPECT_EQ(o.phase, "waiting for slinky-2 (no pod yet)");
}

TEST(ObserveTest, AnObjectNotYetObservedAtItsGenerationKeepsItCreating) {
  ObjectSet s = runningCluster();
  s.put(ObjectKind::kNodeSet, nodeSet("slinky", 2, /*generation=*/2, /*observed=*/1));
  ClusterObservation o = observeCluster(s, "demo");
  EXPECT_EQ(o.verdict, Verdict::kCreating);
  EXPECT_FALSE(o.allObserved);
  EXPECT_THAT(o.unobserved, ElementsAre("NodeSet slinky (generation 2, observed 1)"));
  EXPECT_EQ(o.phase, "waiting for NodeSet slinky (generation 2, observed 1)");

  // A NodeSet whose status the operator has not written yet.
  s.put(ObjectKind::kNodeSet, nodeSet("slinky", 2, 1, std::nullopt));
  EXPECT_EQ(observeCluster(s, "demo").phase,
            "waiting for NodeSet slinky (generation 1 not yet observed)");

  // A StatefulSet behind: its controller has not seen the new template.
  s = runningCluster();
  s.of(ObjectKind::kStatefulSet)["demo-controller"]["metadata"]["generation"] = 3;
  EXPECT_EQ(observeCluster(s, "demo").phase,
            "waiting for StatefulSet demo-controller (generation 3, observed 1)");

  // Kinds without status.observedGeneration are compared only when it is there.
  s = runningCluster();
  s.of(ObjectKind::kController)["demo"]["metadata"]["generation"] = 4;
  EXPECT_EQ(observeCluster(s, "demo").verdict, Verdict::kRunning);
  s.of(ObjectKind::kController)["demo"]["status"]["observedGeneration"] = 3;
  EXPECT_EQ(observeCluster(s, "demo").phase,
            "waiting for Controller demo (generation 4, observed 3)");
}

TEST(ObserveTest, AMissingObjectIsWaitedForInApplyOrder) {
  ObjectSet s = runningCluster();
  s.of(ObjectKind::kLoginSet).clear();
  ClusterObservation o = observeCluster(s, "demo");
  EXPECT_EQ(o.phase, "waiting for LoginSet demo-login");
  EXPECT_FALSE(o.allObserved);
  s.of(ObjectKind::kController).clear();
  EXPECT_EQ(observeCluster(s, "demo").phase, "waiting for Controller demo");
  EXPECT_EQ(observeCluster(ObjectSet{}, "demo").phase, "waiting for Controller demo");
}

TEST(ObserveTest, AProvisioningFailedClaimFailsTheClusterUntilItBinds) {
  ObjectSet s = runningCluster();
  s.put(ObjectKind::kPersistentVolumeClaim, claim("demo-shared", "Pending"));
  s.put(ObjectKind::kEvent,
        event("demo-shared.183f2a1b", "Warning", "ProvisioningFailed", "PersistentVolumeClaim",
              "demo-shared", "storageclass.storage.k8s.io \"rwx\" not found", 4));
  ClusterObservation o = observeCluster(s, "demo");
  EXPECT_EQ(o.verdict, Verdict::kFailed);
  EXPECT_EQ(o.reason, "claim demo-shared cannot bind: storageclass.storage.k8s.io \"rwx\" not found");
  ASSERT_EQ(o.events.size(), 1u);
  EXPECT_EQ(o.events[0].key, "uid-demo-shared.183f2a1b/4");
  EXPECT_EQ(o.events[0].object, "PersistentVolumeClaim/demo-shared");
  EXPECT_EQ(o.events[0].node, "");

  // Bound after a retry: the old event no longer fails it.
  s.put(ObjectKind::kPersistentVolumeClaim, claim("demo-shared", "Bound"));
  EXPECT_EQ(observeCluster(s, "demo").verdict, Verdict::kRunning);
}

TEST(ObserveTest, ARefusedObjectFailsTheCluster) {
  ObjectSet s = runningCluster();
  s.of(ObjectKind::kPod).erase("demo-controller-0");
  const std::string why =
      "create Pod demo-controller-0 in StatefulSet demo-controller failed error: pods "
      "\"demo-controller-0\" is forbidden: violates PodSecurity \"baseline:latest\": privileged";
  s.put(ObjectKind::kEvent, event("demo-controller.1", "Warning", "FailedCreate", "StatefulSet",
                                  "demo-controller", why, 12));
  ClusterObservation o = observeCluster(s, "demo");
  EXPECT_EQ(o.verdict, Verdict::kFailed);
  EXPECT_EQ(o.reason, "StatefulSet/demo-controller refused: " + why);
}

TEST(ObserveTest, WarningEventsBecomeCandidatesOncePerOccurrence) {
  ObjectSet s = runningCluster();
  s.put(ObjectKind::kEvent, event("slinky-0.2", "Warning", "Unhealthy", "Pod", "slinky-0",
                                  "Readiness probe failed: connection refused", 3,
                                  "2025-05-01T10:02:00Z"));
  s.put(ObjectKind::kEvent, event("slinky-0.1", "Normal", "Pulled", "Pod", "slinky-0",
                                  "Container image already present"));
  s.put(ObjectKind::kEvent, event("demo.1", "Warning", "BackOff", "Controller", "demo",
                                  "slurmrestd not reachable", 1, "2025-05-01T10:01:00Z"));
  s.put(ObjectKind::kEvent, event("other.1", "Warning", "BackOff", "Pod", "someone-else",
                                  "not corral's"));
  ClusterObservation o = observeCluster(s, "demo");
  ASSERT_EQ(o.events.size(), 2u);  // Oldest first; Normal and strangers' left out.
  EXPECT_EQ(o.events[0].reason, "BackOff");
  EXPECT_EQ(o.events[0].object, "Controller/demo");
  EXPECT_EQ(o.events[1].key, "uid-slinky-0.2/3");
  EXPECT_EQ(o.events[1].message, "Readiness probe failed: connection refused");
  EXPECT_EQ(o.events[1].node, "slinky-0");
  EXPECT_EQ(o.verdict, Verdict::kRunning);  // Warnings alone fail nothing.

  std::set<std::string> seen;
  EXPECT_EQ(unseenEvents(o.events, seen).size(), 2u);
  EXPECT_TRUE(unseenEvents(observeCluster(s, "demo").events, seen).empty());
  s.of(ObjectKind::kEvent)["slinky-0.2"]["count"] = 4;  // It happened again.
  std::vector<EventCandidate> again = unseenEvents(observeCluster(s, "demo").events, seen);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].key, "uid-slinky-0.2/4");
}

TEST(ObserveTest, APodBeingDeletedIsNotReady) {
  ObjectSet s = runningCluster();
  s.of(ObjectKind::kPod)["slinky-1"]["metadata"]["deletionTimestamp"] = "2025-05-01T10:09:00Z";
  ClusterObservation o = observeCluster(s, "demo");
  EXPECT_EQ(o.phase, "waiting for slinky-1 (Terminating)");
  EXPECT_FALSE(o.nodes[1].ready);
}

TEST(ObserveTest, KindsMapToTheirResources) {
  EXPECT_EQ(resourceTypeFor(ObjectKind::kNodeSet).plural, "nodesets");
  EXPECT_EQ(resourceTypeFor(ObjectKind::kPersistentVolumeClaim).plural, "persistentvolumeclaims");
  EXPECT_STREQ(objectKindName(ObjectKind::kLoginSet), "LoginSet");
  EXPECT_TRUE(selectedByClusterLabels(ObjectKind::kController));
  EXPECT_FALSE(selectedByClusterLabels(ObjectKind::kPod));
  EXPECT_FALSE(selectedByClusterLabels(ObjectKind::kEvent));
  EXPECT_STREQ(verdictName(Verdict::kFailed), "Failed");
}

}  // namespace
}  // namespace corral::kube
