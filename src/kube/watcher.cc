#include "kube/watcher.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <set>
#include <thread>

#include "kube/paths.h"
#include "kube/slinky.h"

namespace corral::kube {

// One watched cluster: its objects and the threads that keep them.
struct ClusterWatcher::Watched {
  std::string cluster;
  std::string ns;
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable stopped;  // Wakes `pause` when `stop` is set.
  ObjectSet objects;                // Guarded by mu.
  std::set<ObjectKind> listed;      // Kinds listed at least once; guarded by mu.
  std::vector<std::thread> threads;
};

namespace {

// A retry wait that doubles from `initial` to `max`, back to `initial`
// after a success.
class Backoff {
 public:
  Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max)
      : initial_(initial), max_(max), next_(initial) {}
  std::chrono::milliseconds next() {
    auto now = next_;
    next_ = std::min(max_, next_ * 2);
    return now;
  }
  void reset() { next_ = initial_; }

 private:
  const std::chrono::milliseconds initial_, max_;
  std::chrono::milliseconds next_;
};

std::string nameOf(const nlohmann::json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  return meta->value("name", "");
}

std::string versionOf(const nlohmann::json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  return meta->value("resourceVersion", "");
}

}  // namespace

ClusterWatcher::ClusterWatcher(KubeApi& api, ChangeCallback onChange,
                               ClusterWatcherOptions options)
    : api_(api), onChange_(std::move(onChange)), options_(options) {}

ClusterWatcher::~ClusterWatcher() { stop(); }

Status ClusterWatcher::watch(const std::string& cluster, const std::string& ns) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = clusters_.find(cluster);
  if (it != clusters_.end()) {
    if (it->second->ns == ns) return Status::ok();
    return conflict("cluster " + cluster + " is already watched in namespace " + it->second->ns +
                    ", not " + ns + ": forget it first");
  }
  auto watched = std::make_shared<Watched>();
  watched->cluster = cluster;
  watched->ns = ns;
  for (ObjectKind kind : kObjectKinds) watched->objects.of(kind);  // Every kind, empty.
  for (ObjectKind kind : kObjectKinds)
    watched->threads.emplace_back([this, watched, kind] { runKind(watched, kind); });
  clusters_[cluster] = std::move(watched);
  return Status::ok();
}

void ClusterWatcher::forget(const std::string& cluster) {
  std::shared_ptr<Watched> watched;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = clusters_.find(cluster);
    if (it == clusters_.end()) return;
    watched = std::move(it->second);
    clusters_.erase(it);
  }
  {
    std::lock_guard<std::mutex> lock(watched->mu);
    watched->stop = true;
  }
  watched->stopped.notify_all();
  for (std::thread& t : watched->threads) t.join();
}

void ClusterWatcher::stop() {
  for (const std::string& cluster : clusters()) forget(cluster);
}

std::optional<ObjectSet> ClusterWatcher::snapshot(const std::string& cluster) const {
  std::shared_ptr<Watched> watched;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = clusters_.find(cluster);
    if (it == clusters_.end()) return std::nullopt;
    watched = it->second;
  }
  std::lock_guard<std::mutex> lock(watched->mu);
  if (watched->listed.size() < std::size(kObjectKinds)) return std::nullopt;
  return watched->objects;
}

std::vector<std::string> ClusterWatcher::clusters() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, watched] : clusters_) out.push_back(name);
  return out;
}

void ClusterWatcher::pause(Watched& watched, std::chrono::milliseconds delay) {
  std::unique_lock<std::mutex> lock(watched.mu);
  watched.stopped.wait_for(lock, delay, [&] { return watched.stop.load(); });
}

void ClusterWatcher::replaceKind(Watched& watched, ObjectKind kind, const nlohmann::json& items) {
  {
    std::lock_guard<std::mutex> lock(watched.mu);
    ObjectSet::ByName& byName = watched.objects.of(kind);
    byName.clear();
    for (const nlohmann::json& item : items) byName[nameOf(item)] = item;
    watched.listed.insert(kind);
  }
  if (onChange_) onChange_(watched.cluster);
}

void ClusterWatcher::applyEvent(Watched& watched, ObjectKind kind, const WatchEvent& event,
                                std::string& version) {
  std::string seen = versionOf(event.object);
  if (!seen.empty()) version = seen;
  if (event.type == WatchEventType::kBookmark || event.type == WatchEventType::kError) return;
  {
    std::lock_guard<std::mutex> lock(watched.mu);
    ObjectSet::ByName& byName = watched.objects.of(kind);
    if (event.type == WatchEventType::kDeleted) {
      byName.erase(nameOf(event.object));
    } else {
      byName[nameOf(event.object)] = event.object;
    }
  }
  if (onChange_) onChange_(watched.cluster);
}

// The loop, per kind: list (when there is no version to watch from), then
// watch from the version; on kClosed watch again from the last version
// seen; on kExpired list again. A failed list, or a watch that fails or
// ends at once twice running, waits the backoff first. A failure other
// than Unavailable (a broken connection: the version still holds) lists
// again too, since what was missed is unknown.
void ClusterWatcher::runKind(const std::shared_ptr<Watched>& watched, ObjectKind kind) {
  const std::string path = collectionPath(resourceTypeFor(kind), watched->ns);
  WatchOptions options;
  options.labelSelector = selectedByClusterLabels(kind) ? clusterSelector(watched->cluster) : "";
  options.timeoutSeconds = options_.watchTimeoutSeconds;
  Backoff backoff(options_.retryInitial, options_.retryMax);
  bool needList = true;
  while (!watched->stop) {
    if (needList) {
      StatusOr<ObjectList> list = api_.list(path, options.labelSelector);
      if (!list.isOk()) {
        pause(*watched, backoff.next());
        continue;
      }
      replaceKind(*watched, kind, list->items);
      options.resourceVersion = list->resourceVersion;
      needList = false;
    }
    bool delivered = false;
    auto opened = std::chrono::steady_clock::now();
    StatusOr<WatchEnd> end = api_.watch(path, options, [&](const WatchEvent& event) {
      delivered = true;
      applyEvent(*watched, kind, event, options.resourceVersion);
      return Status::ok();
    }, watched->stop);
    bool quick = !delivered && std::chrono::steady_clock::now() - opened < options_.minWatchLife;
    if (end.isOk() && *end == WatchEnd::kStopped) return;
    if (end.isOk() && *end == WatchEnd::kExpired) {
      needList = true;  // Listed at once; a second expiry in a row waits below.
      if (!quick) continue;
    }
    if (!end.isOk() && end.status().code() != Code::kUnavailable) needList = true;
    if (end.isOk() && !quick) {
      backoff.reset();
      continue;
    }
    pause(*watched, backoff.next());
  }
}

}  // namespace corral::kube
