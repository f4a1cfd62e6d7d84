#pragma once

// `ClusterWatcher`: keeps each watched cluster's objects (kube/observe.h's
// `ObjectSet`) current from the API server by list-then-watch, so that
// observing a cluster costs no request: a reconcile pass reads
// `snapshot(cluster)` and gives it to `observeCluster`, and the watcher's
// callback tells the reconciler when to look again instead of it polling.
//
// Per cluster and per kind of object (the eight `kObjectKinds`): one LIST of
// the kind's collection in the cluster's namespace — corral's own kinds
// selected by `clusterSelector(cluster)`, StatefulSets, Pods and Events all
// of the namespace (one cluster per namespace) — then one WATCH from the
// list's resourceVersion, held open. When the server ends it (kClosed, its
// timeout) the watch is opened again from the last version seen; when the
// version has expired (kExpired, 410) the kind is listed again and watched
// from the new list. A failed request is retried after a backoff that
// grows (a wait that `stop` cuts short, not a poll). So a steady cluster
// costs 8 LISTs once and then 8 WATCHes per `watchTimeoutSeconds`.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "corral/status.h"
#include "kube/api.h"
#include "kube/observe.h"

namespace corral::kube {

struct ClusterWatcherOptions {
  // How long the server holds each watch open. 8 watches per cluster, so a
  // steady cluster costs 8 / watchTimeoutSeconds requests a second: 50
  // clusters at 900 s are 0.44/s.
  int watchTimeoutSeconds = 900;
  // The wait before retrying a failed request, doubling up to the maximum.
  std::chrono::milliseconds retryInitial{500};
  std::chrono::milliseconds retryMax{30000};
  // A watch the server closes sooner than this (having delivered nothing)
  // is opened again only after the retry wait, so that a server that ends
  // every watch at once is not asked in a tight loop.
  std::chrono::milliseconds minWatchLife{1000};
};

class ClusterWatcher {
 public:
  // Called on a watch thread, with no lock of the watcher held, whenever an
  // object of `cluster` was added, changed or deleted, or a kind was
  // (re)listed. It must return quickly (requeue, do not reconcile) and must
  // not call `forget` or `stop`.
  using ChangeCallback = std::function<void(const std::string& cluster)>;

  // `api` is not owned and must outlive this.
  ClusterWatcher(KubeApi& api, ChangeCallback onChange, ClusterWatcherOptions options = {});
  ~ClusterWatcher();  // `stop()`.
  ClusterWatcher(const ClusterWatcher&) = delete;
  ClusterWatcher& operator=(const ClusterWatcher&) = delete;

  // Starts watching `cluster`'s objects in namespace `ns` (one thread per
  // kind). Watching it again in the same namespace does nothing; in
  // another, Conflict. Thread-safe.
  Status watch(const std::string& cluster, const std::string& ns);
  // Stops watching `cluster` (waiting for its threads) and drops its
  // objects. Thread-safe; not from the callback.
  void forget(const std::string& cluster);
  // Stops every watch. Thread-safe; not from the callback.
  void stop();

  // The cluster's objects as last seen; nullopt while it is not watched or
  // some kind has not been listed yet (an incomplete set would read as a
  // cluster missing objects). Costs no request. Thread-safe.
  std::optional<ObjectSet> snapshot(const std::string& cluster) const;

  // The clusters being watched, by name.
  std::vector<std::string> clusters() const;

 private:
  struct Watched;
  // One kind's list-then-watch loop, until `watched.stop`.
  void runKind(const std::shared_ptr<Watched>& watched, ObjectKind kind);
  // The kind's objects replaced by a list's.
  void replaceKind(Watched& watched, ObjectKind kind, const nlohmann::json& items);
  // One watch event applied; `version` follows the events' resourceVersions.
  void applyEvent(Watched& watched, ObjectKind kind, const WatchEvent& event,
                  std::string& version);
  // Waits `delay` unless `watched` is stopped first.
  void pause(Watched& watched, std::chrono::milliseconds delay);

  KubeApi& api_;
  const ChangeCallback onChange_;
  const ClusterWatcherOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Watched>> clusters_;  // Guarded by mu_.
};

}  // namespace corral::kube
