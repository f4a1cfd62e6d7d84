// `ClusterWatcher` over `FakeKubeApi` with blocking watches: the snapshot
// follows the API, a 410 lists again once, and a steady cluster costs its
// initial lists and one open watch per kind, however many passes read it.
// No sleeps: tests wait on the watcher's callback and the fake's count of
// open watches.

#include "kube/watcher.h"

#include <algorithm>
#include <condition_variable>
#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fakes/fake_kube_api.h"
#include "kube/paths.h"
#include "kube/slinky.h"

namespace corral::kube {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

constexpr size_t kKinds = std::size(kObjectKinds);

Json object(const char* apiVersion, const char* kind, const std::string& name,
            const std::string& ns, const std::string& cluster) {
  Json labels = Json::object();
  if (!cluster.empty())
    labels = {{"app.kubernetes.io/managed-by", "corral"}, {"corral.dev/cluster", cluster}};
  return {{"apiVersion", apiVersion}, {"kind", kind},
          {"metadata", {{"name", name}, {"namespace", ns}, {"labels", labels}}}};
}

std::string pathOf(ObjectKind kind, const std::string& ns, const std::string& name) {
  return objectPath(resourceTypeFor(kind), ns, name);
}

// Counts the watcher's callbacks and lets a test wait for a condition on
// the snapshot, woken by each callback.
class Changes {
 public:
  void operator()(const std::string& cluster) {
    std::lock_guard<std::mutex> lock(mu_);
    ++count_[cluster];
    cv_.notify_all();
  }
  bool waitUntil(const std::function<bool()>& done) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, 10s, done);
  }
  int count(const std::string& cluster) {
    std::lock_guard<std::mutex> lock(mu_);
    return count_[cluster];
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, int> count_;
};

ClusterWatcherOptions testOptions() {
  ClusterWatcherOptions o;
  o.retryInitial = 1ms;
  o.retryMax = 5ms;
  o.minWatchLife = 0ms;
  return o;
}

class WatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.setBlockingWatches(true);
    // A cluster as the API holds it: corral's objects, the operator's pods.
    api_.put(pathOf(ObjectKind::kController, "ns-demo", "demo"),
             object("slinky.slurm.net/v1beta1", "Controller", "demo", "ns-demo", "demo"));
    api_.put(pathOf(ObjectKind::kNodeSet, "ns-demo", "slinky"),
             object("slinky.slurm.net/v1beta1", "NodeSet", "slinky", "ns-demo", "demo"));
    // Another cluster's NodeSet in the same namespace is not selected.
    api_.put(pathOf(ObjectKind::kNodeSet, "ns-demo", "stranger"),
             object("slinky.slurm.net/v1beta1", "NodeSet", "stranger", "ns-demo", "other"));
    api_.put(pathOf(ObjectKind::kPod, "ns-demo", "slinky-0"),
             object("v1", "Pod", "slinky-0", "ns-demo", ""));
  }

  // Waits until `count` watches are open after `requests` requests.
  void awaitSteady(size_t count, uint64_t requests) {
    ASSERT_TRUE(api_.awaitOpenWatches(count, 10s, requests))
        << "open " << api_.openWatches() << ", requests " << api_.requestCount();
  }

  bool has(ClusterWatcher& w, ObjectKind kind, const std::string& name,
           const std::string& cluster = "demo") {
    auto s = w.snapshot(cluster);
    return s && s->of(kind).count(name) > 0;
  }

  FakeKubeApi api_;
  Changes changes_;
};

TEST_F(WatcherTest, TheSnapshotFollowsAddsModifiesAndDeletes) {
  ClusterWatcher w(api_, std::ref(changes_), testOptions());
  EXPECT_FALSE(w.snapshot("demo").has_value());
  ASSERT_TRUE(w.watch("demo", "ns-demo").isOk());
  ASSERT_TRUE(changes_.waitUntil([&] { return has(w, ObjectKind::kPod, "slinky-0"); }));
  ObjectSet first = *w.snapshot("demo");
  EXPECT_EQ(first.of(ObjectKind::kController).size(), 1u);
  EXPECT_EQ(first.of(ObjectKind::kNodeSet).count("slinky"), 1u);
  EXPECT_EQ(first.of(ObjectKind::kNodeSet).count("stranger"), 0u);

  // Added.
  api_.put(pathOf(ObjectKind::kPod, "ns-demo", "slinky-1"),
           object("v1", "Pod", "slinky-1", "ns-demo", ""));
  EXPECT_TRUE(changes_.waitUntil([&] { return has(w, ObjectKind::kPod, "slinky-1"); }));
  // Modified: a kubelet writes the pod's status.
  Json running = object("v1", "Pod", "slinky-1", "ns-demo", "");
  running["status"] = {{"phase", "Running"}};
  api_.put(pathOf(ObjectKind::kPod, "ns-demo", "slinky-1"), running);
  EXPECT_TRUE(changes_.waitUntil([&] {
    auto s = w.snapshot("demo");
    return s && s->of(ObjectKind::kPod).count("slinky-1") &&
           s->of(ObjectKind::kPod).at("slinky-1").value("/status/phase"_json_pointer, "") ==
               "Running";
  }));
  // Deleted.
  ASSERT_TRUE(api_.remove(pathOf(ObjectKind::kPod, "ns-demo", "slinky-0")).isOk());
  EXPECT_TRUE(changes_.waitUntil([&] { return !has(w, ObjectKind::kPod, "slinky-0"); }));
  // An object of another cluster changes nothing of this one's.
  api_.put(pathOf(ObjectKind::kNodeSet, "ns-demo", "stranger2"),
           object("slinky.slurm.net/v1beta1", "NodeSet", "stranger2", "ns-demo", "other"));
  api_.put(pathOf(ObjectKind::kController, "ns-demo", "demo2"),
           object("slinky.slurm.net/v1beta1", "Controller", "demo2", "ns-demo", "demo"));
  EXPECT_TRUE(changes_.waitUntil([&] { return has(w, ObjectKind::kController, "demo2"); }));
  EXPECT_FALSE(has(w, ObjectKind::kNodeSet, "stranger2"));

  w.forget("demo");
  EXPECT_FALSE(w.snapshot("demo").has_value());
  EXPECT_EQ(api_.openWatches(), 0u);
}

// Cost of a steady cluster: 8 LISTs and 8 WATCHes, once. 100 reconcile
// passes that each read the snapshot and observe it add nothing; the
// server's watch timeout costs 8 WATCHes and no LIST.
TEST_F(WatcherTest, ASteadyClusterCostsItsListsAndOneOpenWatchPerKind) {
  ClusterWatcher w(api_, std::ref(changes_), testOptions());
  uint64_t before = api_.requestCount();
  ASSERT_TRUE(w.watch("demo", "ns-demo").isOk());
  awaitSteady(kKinds, before + 2 * kKinds);
  EXPECT_EQ(api_.requestCount() - before, 16u);

  std::vector<std::string> calls = api_.calls();
  std::sort(calls.begin(), calls.end());
  const std::string sel = "?" + clusterSelector("demo");
  EXPECT_THAT(calls, ::testing::ElementsAreArray(std::vector<std::string>{
      "LIST /api/v1/namespaces/ns-demo/events",
      "LIST /api/v1/namespaces/ns-demo/persistentvolumeclaims" + sel,
      "LIST /api/v1/namespaces/ns-demo/pods",
      "LIST /apis/apps/v1/namespaces/ns-demo/statefulsets",
      "LIST /apis/slinky.slurm.net/v1beta1/namespaces/ns-demo/accountings" + sel,
      "LIST /apis/slinky.slurm.net/v1beta1/namespaces/ns-demo/controllers" + sel,
      "LIST /apis/slinky.slurm.net/v1beta1/namespaces/ns-demo/loginsets" + sel,
      "LIST /apis/slinky.slurm.net/v1beta1/namespaces/ns-demo/nodesets" + sel,
      "WATCH /api/v1/namespaces/ns-demo/events",
      "WATCH /api/v1/namespaces/ns-demo/persistentvolumeclaims",
      "WATCH /api/v1/namespaces/ns-demo/pods",
      "WATCH /apis/apps/v1/namespaces/ns-demo/statefulsets",
      "WATCH /apis/slinky.slurm.net/v1beta1/namespaces/ns-demo/accountings",
      "WATCH /apis/slinky.slurm.net/v1beta1/namespaces/ns-demo/controllers",
      "WATCH /apis/slinky.slurm.net/v1beta1/namespaces/ns-demo/loginsets",
      "WATCH /apis/slinky.slurm.net/v1beta1/namespaces/ns-demo/nodesets"}));

  for (int pass = 0; pass < 100; ++pass) {
    auto snapshot = w.snapshot("demo");
    ASSERT_TRUE(snapshot.has_value());
    (void)observeCluster(*snapshot, "demo");
  }
  EXPECT_EQ(api_.requestCount() - before, 16u);
  EXPECT_EQ(api_.openWatches(), kKinds);

  api_.closeWatches();  // The server's timeout.
  awaitSteady(kKinds, before + 3 * kKinds);
  EXPECT_EQ(api_.requestCount() - before, 24u);
  calls = api_.calls();
  EXPECT_EQ(std::count_if(calls.begin(), calls.end(),
                          [](const std::string& c) { return c.starts_with("LIST "); }),
            8);
}

TEST_F(WatcherTest, AnExpiredVersionListsAgainOnce) {
  ClusterWatcher w(api_, std::ref(changes_), testOptions());
  uint64_t before = api_.requestCount();
  ASSERT_TRUE(w.watch("demo", "ns-demo").isOk());
  awaitSteady(kKinds, before + 2 * kKinds);

  api_.expireWatches();  // 410 on every open watch.
  awaitSteady(kKinds, before + 4 * kKinds);
  EXPECT_EQ(api_.requestCount() - before, 32u);  // One LIST and one WATCH more per kind.
  std::vector<std::string> calls = api_.calls();
  const std::string pods = "LIST /api/v1/namespaces/ns-demo/pods";
  EXPECT_EQ(std::count(calls.begin(), calls.end(), pods), 2);

  // Watching goes on from the new list.
  api_.put(pathOf(ObjectKind::kPod, "ns-demo", "slinky-9"),
           object("v1", "Pod", "slinky-9", "ns-demo", ""));
  EXPECT_TRUE(changes_.waitUntil([&] { return has(w, ObjectKind::kPod, "slinky-9"); }));
  EXPECT_TRUE(has(w, ObjectKind::kPod, "slinky-0"));
  EXPECT_EQ(api_.requestCount() - before, 32u);
}

TEST_F(WatcherTest, AFailedListIsRetried) {
  ClusterWatcher w(api_, std::ref(changes_), testOptions());
  uint64_t before = api_.requestCount();
  api_.failNext(unavailable("connection refused"));
  ASSERT_TRUE(w.watch("demo", "ns-demo").isOk());
  awaitSteady(kKinds, before + 2 * kKinds + 1);
  EXPECT_EQ(api_.requestCount() - before, 17u);
  EXPECT_TRUE(w.snapshot("demo").has_value());
}

TEST_F(WatcherTest, ClustersAreWatchedApartAndForgottenAlone) {
  ClusterWatcher w(api_, std::ref(changes_), testOptions());
  uint64_t before = api_.requestCount();
  for (int i = 0; i < 5; ++i) {
    std::string c = "c" + std::to_string(i);
    api_.put(pathOf(ObjectKind::kController, "ns-" + c, c),
             object("slinky.slurm.net/v1beta1", "Controller", c, "ns-" + c, c));
    ASSERT_TRUE(w.watch(c, "ns-" + c).isOk());
  }
  awaitSteady(5 * kKinds, before + 5 * 2 * kKinds);
  EXPECT_EQ(api_.requestCount() - before, 80u);  // 16 requests per cluster.
  EXPECT_THAT(w.clusters(), ::testing::ElementsAre("c0", "c1", "c2", "c3", "c4"));
  for (int i = 0; i < 5; ++i) {
    std::string c = "c" + std::to_string(i);
    ASSERT_TRUE(changes_.waitUntil([&] { return has(w, ObjectKind::kController, c, c); }));
    EXPECT_EQ(w.snapshot(c)->of(ObjectKind::kController).size(), 1u);
  }
  EXPECT_TRUE(w.watch("c1", "ns-c1").isOk());  // Again, the same: nothing.
  EXPECT_EQ(w.watch("c1", "elsewhere").code(), Code::kConflict);
  w.forget("c2");
  EXPECT_EQ(api_.openWatches(), 4 * kKinds);
  EXPECT_FALSE(w.snapshot("c2").has_value());
  w.stop();
  EXPECT_EQ(api_.openWatches(), 0u);
}

}  // namespace
}  // namespace corral::kube
