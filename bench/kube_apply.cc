// Issue 15's speed figures against the REAL kube-apiserver and the REAL
// Slinky operator of test/k8s/env.sh (run it through bench/kube.sh):
//
//   corral_kube_bench KUBECONFIG [REPETITIONS=10]
//
// Per repetition, a 4-GPU-node cluster "bench-<i>" in a fresh namespace of
// its own. (Each cluster needs a name of its own, not only a namespace:
// Slinky v1.1.0's NodeSet reconciler makes every NodeSet whose controllerRef
// has the cluster's NAME an owner of the worker Service, in any namespace
// (nodeset/utils SetOwnerReferences lists NodeSets cluster-wide), so a
// second Controller "bench" elsewhere stops both clusters' NodeSets with
// "cross-namespace owner references are disallowed".)
//   create  every object renderSlinkyObjects makes, applied one after the
//           other (server-side apply, as KubernetesRuntime does): time until
//           the last apply returned OK ("accepted"), and until the operator
//           has made pods slinky-0..3;
//   scale   gpuNodes 4 -> 6, everything re-rendered and re-applied: time to
//           accepted and to pods slinky-4, slinky-5;
//   config  spec.slurmConf MinJobAge 600 -> 300, re-rendered and re-applied:
//           time to accepted and to the operator's ConfigMap <cluster>-config
//           holding "MinJobAge=300" in slurm.conf;
//   steady  the unchanged cluster re-applied (a level-based pass).
// Request counts are KubeClient::requestCount of the client that applies;
// what the operator made is seen through cluster-wide watches on a second
// client, so observing costs the measured client nothing and the times are
// when the API server announced the objects (no polling interval). Last,
// ClusterWatcher (kube/watcher.h) on a third client watches one cluster:
// its requests until steady and over 100 reconcile passes.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/paths.h"
#include "kube/slinky.h"
#include "support/slinky_options.h"
#include "kube/watcher.h"

namespace corral::kube {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0, Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(t - t0).count();
}

[[noreturn]] void fail(const std::string& what) {
  std::cerr << "corral_kube_bench: " << what << "\n";
  std::exit(1);
}

// ----------------------------------------------------------- the cluster ---

ClusterRecord benchRecord(const std::string& name) {
  ClusterRecord r;
  r.spec.name = name;
  r.spec.image = {"debian-sid-slurm26.05", "abc", "26.05"};
  r.spec.gpuNodes = 4;
  r.spec.cpuNodes = 0;
  r.spec.sshKeys = {"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIC0rral alice@example"};
  r.spec.slurmConf = {{"MinJobAge", "600"}};
  return r;
}

SlinkyOptions benchOptions(const std::string& ns) {
  return standInSlinkyOptions(ns);
}

// ------------------------------------------------------------ the watches ---

// What the API server announced, each object event with the time it came.
class Observer {
 public:
  explicit Observer(KubeClient& client) : client_(client) {}
  ~Observer() { stop(); }

  void start() {
    for (const char* path : {"/api/v1/pods", "/api/v1/configmaps"})
      threads_.emplace_back([this, p = std::string(path)] { run(p); });
  }

  void stop() {
    stop_ = true;
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  // The time of the first event whose object satisfies `match` (events
  // already seen count), waiting up to `timeout`; false when none came.
  bool waitFor(const std::function<bool(const Json&)>& match, std::chrono::seconds timeout,
               Clock::time_point& when) {
    std::unique_lock<std::mutex> lock(mu_);
    size_t scanned = 0;
    auto deadline = Clock::now() + timeout;
    while (true) {
      for (; scanned < seen_.size(); ++scanned)
        if (match(seen_[scanned].second)) {
          when = seen_[scanned].first;
          return true;
        }
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && scanned == seen_.size())
        return false;
    }
  }

 private:
  void run(const std::string& path) {
    WatchOptions options;
    options.timeoutSeconds = 3600;
    while (!stop_) {
      auto end = client_.watch(path, options, [this](const WatchEvent& e) {
        if (e.type != WatchEventType::kAdded && e.type != WatchEventType::kModified) return Status::ok();
        auto now = Clock::now();
        std::lock_guard<std::mutex> lock(mu_);
        seen_.emplace_back(now, e.object);
        cv_.notify_all();
        return Status::ok();
      }, stop_);
      if (!end.isOk() && !stop_) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  KubeClient& client_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::pair<Clock::time_point, Json>> seen_;  // Guarded by mu_.
};

auto objectNamed(const std::string& ns, const std::string& kind, const std::string& name) {
  return [=](const Json& o) {
    return o.value("kind", "") == kind && o["metadata"].value("namespace", "") == ns &&
           o["metadata"].value("name", "") == name;
  };
}

// The time the last of `pods` was announced in `ns`.
Clock::time_point podsMade(Observer& observer, const std::string& ns,
                           const std::vector<std::string>& pods) {
  Clock::time_point last{};
  for (const auto& pod : pods) {
    Clock::time_point when;
    if (!observer.waitFor(objectNamed(ns, "Pod", pod), std::chrono::seconds(120), when))
      fail("the operator made no pod " + ns + "/" + pod + " within 120 s");
    last = std::max(last, when);
  }
  return last;
}

// ------------------------------------------------------------ the applies ---

struct Applied {
  Clock::time_point start, accepted;
  uint64_t requests = 0;
  size_t objects = 0;
  std::vector<std::string> moved;    // Objects whose resourceVersion moved since the last apply.
  std::vector<std::string> changed;  // Of those, the ones whose content (not status) differs.
};

// What the last apply of each object (by path) returned.
struct Stored {
  std::string resourceVersion;
  Json content;  // Without status, resourceVersion, generation and managedFields.
};
using Versions = std::map<std::string, Stored>;

Stored storedOf(const Json& object) {
  Stored s{object["metadata"].value("resourceVersion", ""), object};
  s.content.erase("status");
  for (const char* field : {"resourceVersion", "generation", "managedFields"}) s.content["metadata"].erase(field);
  return s;
}

// "Kind/name", the cluster's name in it written as "<c>", so that the
// repetitions' clusters read alike.
std::string shortName(const Json& object, const std::string& cluster) {
  std::string name = object["metadata"]["name"].get<std::string>();
  if (name.rfind(cluster, 0) == 0) name = "<c>" + name.substr(cluster.size());
  return object["kind"].get<std::string>() + "/" + name;
}

// Renders the cluster and applies every object in order, as the runtime
// would; the clock stops when the last apply has returned.
Applied applyAll(KubeClient& client, const ClusterRecord& record, const std::string& ns,
                 Versions& versions) {
  auto objects = renderSlinkyObjects(record, benchOptions(ns));
  if (!objects.isOk()) fail(objects.status().message());
  Applied a;
  a.objects = objects->size();
  std::vector<std::pair<std::string, Json>> stored;
  uint64_t before = client.requestCount();
  a.start = Clock::now();
  for (const auto& object : *objects) {
    auto path = objectPathOf(object);
    if (!path.isOk()) fail(path.status().message());
    auto result = client.apply(*path, object);
    if (!result.isOk()) fail(shortName(object, record.spec.name) + " refused: " + result.status().message());
    stored.emplace_back(*path, std::move(*result));
  }
  a.accepted = Clock::now();
  a.requests = client.requestCount() - before;
  for (const auto& [path, object] : stored) {
    Stored now = storedOf(object);
    auto last = versions.find(path);
    if (last == versions.end() || last->second.resourceVersion != now.resourceVersion) {
      a.moved.push_back(shortName(object, record.spec.name));
      if (last == versions.end() || last->second.content != now.content) a.changed.push_back(a.moved.back());
    }
    versions[path] = std::move(now);
  }
  return a;
}

void makeNamespace(KubeClient& client, const std::string& ns) {
  auto n = client.apply(objectPath(resources::kNamespaces, "", ns),
                        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
  // No kube-controller-manager here: the default ServiceAccount by hand.
  auto sa = client.apply(objectPath(resources::kServiceAccounts, ns, "default"),
                         {{"apiVersion", "v1"},
                          {"kind", "ServiceAccount"},
                          {"metadata", {{"name", "default"}, {"namespace", ns}}}});
  if (!n.isOk() || !sa.isOk()) fail("cannot make namespace " + ns);
}

// Both watches are live once they have announced objects made after they
// were opened.
void syncObserver(KubeClient& client, Observer& observer) {
  const std::string ns = "corral-bench-sync";
  makeNamespace(client, ns);
  Json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "sync"}, {"namespace", ns}}}};
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "sync"}, {"namespace", ns}}},
              {"spec", {{"containers", {{{"name", "c"}, {"image", "registry.corral.test/none:1"}}}}}}};
  for (int i = 0;; ++i) {
    std::string tag = std::to_string(i);
    cm["data"] = {{"n", tag}};
    pod["metadata"]["labels"] = {{"n", tag}};
    if (!client.apply(objectPath(resources::kConfigMaps, ns, "sync"), cm).isOk() ||
        !client.apply(objectPath(resources::kPods, ns, "sync"), pod).isOk())
      fail("cannot write the watches' sync objects");
    Clock::time_point when;
    auto isTagged = [&](const char* kind) {
      return [&, kind](const Json& o) {
        return objectNamed(ns, kind, "sync")(o) &&
               (o.value("data", Json::object()).value("n", "") == tag ||
                o["metadata"].value("labels", Json::object()).value("n", "") == tag);
      };
    };
    if (observer.waitFor(isTagged("ConfigMap"), std::chrono::seconds(2), when) &&
        observer.waitFor(isTagged("Pod"), std::chrono::seconds(2), when))
      return;
    if (i == 10) fail("the watches announce nothing");
  }
}

// ------------------------------------------------------------ repetitions ---

struct Repetition {
  double createAccepted, createPods;
  double scaleAccepted, scalePods;
  double configAccepted, configMap;
  double steadyAccepted;
  Applied create, scale, config, steady;
};

std::vector<std::string> podNames(int from, int to) {
  std::vector<std::string> v;
  for (int i = from; i < to; ++i) v.push_back("slinky-" + std::to_string(i));
  return v;
}

Repetition runOnce(KubeClient& client, Observer& observer, const std::string& ns,
                   const std::string& cluster) {
  makeNamespace(client, ns);
  Repetition r;
  Versions versions;
  ClusterRecord record = benchRecord(cluster);

  r.create = applyAll(client, record, ns, versions);
  r.createAccepted = msSince(r.create.start, r.create.accepted);
  r.createPods = msSince(r.create.start, podsMade(observer, ns, podNames(0, 4)));

  record.spec.gpuNodes = 6;
  r.scale = applyAll(client, record, ns, versions);
  r.scaleAccepted = msSince(r.scale.start, r.scale.accepted);
  r.scalePods = msSince(r.scale.start, podsMade(observer, ns, podNames(4, 6)));

  record.spec.slurmConf["MinJobAge"] = "300";
  r.config = applyAll(client, record, ns, versions);
  r.configAccepted = msSince(r.config.start, r.config.accepted);
  Clock::time_point made;
  auto hasLine = [&](const Json& o) {
    return objectNamed(ns, "ConfigMap", cluster + "-config")(o) &&
           o.value("data", Json::object()).value("slurm.conf", "").find("\nMinJobAge=300\n") !=
               std::string::npos;
  };
  if (!observer.waitFor(hasLine, std::chrono::seconds(120), made))
    fail("the operator's slurm.conf in " + ns + " never said MinJobAge=300");
  r.configMap = msSince(r.config.start, made);

  r.steady = applyAll(client, record, ns, versions);
  r.steadyAccepted = msSince(r.steady.start, r.steady.accepted);
  return r;
}

// ----------------------------------------------------------------- report ---

struct Stat {
  double median, max;
};

Stat statOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return {median, v.back()};
}

Stat statOf(const std::vector<Repetition>& reps, double Repetition::*field) {
  std::vector<double> v;
  for (const auto& r : reps) v.push_back(r.*field);
  return statOf(v);
}

// "lo" or "lo-hi" of the count the step's `list` has over the repetitions.
std::string countSummary(const std::vector<Repetition>& reps, Applied Repetition::*step,
                         std::vector<std::string> Applied::*list) {
  size_t lo = SIZE_MAX, hi = 0;
  for (const auto& r : reps) {
    lo = std::min(lo, ((r.*step).*list).size());
    hi = std::max(hi, ((r.*step).*list).size());
  }
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
}

void printRow(const char* step, const std::vector<Repetition>& reps, double Repetition::*accepted,
              double Repetition::*operatorDone, Applied Repetition::*applied, const char* operatorWhat) {
  Stat a = statOf(reps, accepted);
  const Applied& first = reps.front().*applied;
  std::printf("| %-7s | %8.1f | %8.1f |", step, a.median, a.max);
  if (operatorDone) {
    Stat o = statOf(reps, operatorDone);
    std::printf(" %8.1f | %8.1f | %-26s |", o.median, o.max, operatorWhat);
  } else {
    std::printf(" %8s | %8s | %-26s |", "-", "-", operatorWhat);
  }
  std::printf(" %4llu | %5s of %2zu | %7s |\n", static_cast<unsigned long long>(first.requests),
              countSummary(reps, applied, &Applied::moved).c_str(), first.objects,
              countSummary(reps, applied, &Applied::changed).c_str());
}

// Which objects moved, and which of them changed, with how many of the
// repetitions each did so in.
void printChanged(const char* step, const std::vector<Repetition>& reps, Applied Repetition::*field) {
  for (auto [list, what] : {std::pair{&Applied::moved, "resourceVersion moved"},
                            std::pair{&Applied::changed, "content changed"}}) {
    std::map<std::string, int> count;
    for (const auto& r : reps)
      for (const auto& name : (r.*field).*list) ++count[name];
    std::printf("  %-6s %-21s (%s):", step, what, countSummary(reps, field, list).c_str());
    for (const auto& [name, n] : count) {
      std::string times = n == int(reps.size()) ? "" : " (" + std::to_string(n) + "/" + std::to_string(reps.size()) + ")";
      std::printf(" %s%s", name.c_str(), times.c_str());
    }
    std::printf("\n");
  }
}

void printTable(const std::vector<Repetition>& reps) {
  std::printf("\n%zu repetitions; times in ms from the first apply of the step\n\n", reps.size());
  std::printf("| step    | accepted | acc. max | operator | op. max  | operator made              | "
              "req  | rv moved    | changed |\n");
  std::printf("|---------|----------|----------|----------|----------|----------------------------|------|-------------|---------|\n");
  printRow("create", reps, &Repetition::createAccepted, &Repetition::createPods, &Repetition::create,
           "pods slinky-0..3");
  printRow("scale", reps, &Repetition::scaleAccepted, &Repetition::scalePods, &Repetition::scale,
           "pods slinky-4, slinky-5");
  printRow("config", reps, &Repetition::configAccepted, &Repetition::configMap, &Repetition::config,
           "<c>-config MinJobAge=300");
  printRow("steady", reps, &Repetition::steadyAccepted, nullptr, &Repetition::steady, "(nothing to do)");
  std::printf("\n");
  printChanged("create", reps, &Repetition::create);
  printChanged("scale", reps, &Repetition::scale);
  printChanged("config", reps, &Repetition::config);
  printChanged("steady", reps, &Repetition::steady);
}

// ClusterWatcher on one (steady) cluster: requests until every kind is
// listed and watched, then over 100 reconcile passes that read the snapshot.
void watcherCost(const KubeConfig& config, const std::string& ns, const std::string& cluster,
                 size_t objectsPerPass) {
  KubeClient client(config);
  std::atomic<int> changes{0};
  ClusterWatcher watcher(client, [&](const std::string&) { ++changes; });
  auto t0 = Clock::now();
  if (!watcher.watch(cluster, ns).isOk()) fail("ClusterWatcher refused to watch");
  while (!watcher.snapshot(cluster)) {
    if (Clock::now() - t0 > std::chrono::seconds(30)) fail("ClusterWatcher never listed every kind");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  double listed = msSince(t0, Clock::now());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // The WATCHes open.
  uint64_t steady = client.requestCount();
  bool complete = true;
  for (int pass = 0; pass < 100; ++pass) {
    complete = complete && watcher.snapshot(cluster).has_value();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  uint64_t passes = client.requestCount() - steady;
  watcher.stop();
  std::printf("\nClusterWatcher on %s: first complete snapshot after %.1f ms; %llu requests until steady "
              "(8 LIST + 8 WATCH); %llu requests over 100 reconcile passes (5 s)%s\n",
              ns.c_str(), listed, static_cast<unsigned long long>(steady),
              static_cast<unsigned long long>(passes), complete ? "" : " (a snapshot was missing!)");
  double watchRate = 50.0 * 8 / ClusterWatcherOptions{}.watchTimeoutSeconds;
  std::printf("50 steady clusters: watch-based %.2f req/s (8 WATCHes per cluster per %d s); "
              "level-based re-apply of %zu objects per pass: %.1f req/s at one pass per 10 s, "
              "%.1f at one per 60 s\n",
              watchRate, ClusterWatcherOptions{}.watchTimeoutSeconds, objectsPerPass,
              50.0 * objectsPerPass / 10, 50.0 * objectsPerPass / 60);
}

}  // namespace
}  // namespace corral::kube

int main(int argc, char** argv) {
  using namespace corral::kube;
  if (argc < 2) fail("usage: corral_kube_bench KUBECONFIG [REPETITIONS=10]");
  int repetitions = argc > 2 ? std::atoi(argv[2]) : 10;
  if (repetitions < 1) fail("REPETITIONS must be at least 1");
  auto config = loadKubeConfig(argv[1]);
  if (!config.isOk()) fail(config.status().message());
  KubeClient client(*config);
  KubeClient observerClient(*config);
  Observer observer(observerClient);
  observer.start();
  syncObserver(client, observer);

  std::string tag = std::to_string(std::chrono::system_clock::now().time_since_epoch().count() % 100000);
  std::vector<Repetition> reps;
  for (int i = 0; i < repetitions; ++i) {
    std::string ns = "corral-bench-" + tag + "-" + std::to_string(i);
    reps.push_back(runOnce(client, observer, ns, "bench-" + std::to_string(i)));
    const auto& r = reps.back();
    std::printf("rep %2d %s: create %.1f/%.1f  scale %.1f/%.1f  config %.1f/%.1f  steady %.1f ms\n", i,
                ns.c_str(), r.createAccepted, r.createPods, r.scaleAccepted, r.scalePods,
                r.configAccepted, r.configMap, r.steadyAccepted);
    std::fflush(stdout);
  }
  observer.stop();
  printTable(reps);
  std::string last = std::to_string(repetitions - 1);
  watcherCost(*config, "corral-bench-" + tag + "-" + last, "bench-" + last, reps.back().steady.objects);
  return 0;
}
