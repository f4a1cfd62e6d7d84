#pragma once

// `FakeKubeApi`: the `KubeApi` contract in memory, for unit tests of what is
// built on it (the Kubernetes runtime). Objects are kept by path, as the API
// server keeps them; every write takes the next resourceVersion and is
// logged, so `list` + `watch` behave as they do against a server: a watch
// from a list's version sees exactly the changes after it.
//
// What it models: apply creates or replaces an object (keeping its status
// and server-set metadata), and an apply that changes nothing bumps no
// version and sends no event, as server-side apply does; `applyStatus`
// replaces only the status; the name in the object must match the path's.
// What it does not: other field managers' fields (apply replaces the whole
// object but status), validation, defaulting, owner references' garbage
// collection.
//
// Fault injection: `failNext` makes the next call fail without touching the
// objects; `expireBefore` makes a watch from an older version answer
// kExpired, as a compacted etcd does. A watch delivers what is logged after
// its version, then ends with kClosed (it never blocks) — unless
// `setBlockingWatches(true)`: then it stays open as a server's does,
// delivering each later change as it is written, until `stop` (seen within
// about 20 ms), `closeWatches` (the server's timeout: kClosed) or
// `expireWatches` (410: kExpired). Thread-safe; `onEvent` is called without
// the lock held.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kube/api.h"

namespace corral::kube {

class FakeKubeApi : public KubeApi {
 public:
  FakeKubeApi() = default;

  StatusOr<nlohmann::json> get(const std::string& path) override;
  StatusOr<ObjectList> list(const std::string& path, const std::string& labelSelector) override;
  StatusOr<WatchEnd> watch(const std::string& path, const WatchOptions& options,
                           const WatchHandler& onEvent, const std::atomic<bool>& stop) override;
  StatusOr<nlohmann::json> apply(const std::string& path, const nlohmann::json& object) override;
  StatusOr<nlohmann::json> applyStatus(const std::string& path,
                                       const nlohmann::json& object) override;
  Status remove(const std::string& path) override;
  uint64_t requestCount() const override;

  // The next call of any method above fails with `status` and changes
  // nothing (it still counts as a request).
  void failNext(Status status);
  // A watch from a version below `resourceVersion` answers kExpired.
  void expireBefore(int64_t resourceVersion);
  // Writes `object` at `path` as another client would (the operator, a
  // kubelet): ADDED or MODIFIED, with the next version.
  void put(const std::string& path, nlohmann::json object);
  // The object at `path`, without counting a request.
  std::optional<nlohmann::json> object(const std::string& path) const;
  // Every call so far, in order: "GET path", "LIST path[?selector]",
  // "WATCH path", "PATCH path[/status]", "DELETE path".
  std::vector<std::string> calls() const;
  int64_t resourceVersion() const;

  // Watches stay open and stream later changes (see above); false, the
  // default, restores the watch that ends once it has delivered the log.
  void setBlockingWatches(bool blocking);
  // Every open (blocking) watch ends with kClosed, as at the server's timeout.
  void closeWatches();
  // Every open watch ends with kExpired, and a watch from a version below
  // the current one answers kExpired (etcd compacted up to now): a client
  // must list again.
  void expireWatches();
  // How many blocking watches are open and waiting for changes. `await…`
  // waits up to `timeout` until at least `count` are and at least
  // `minRequests` requests have been made (so that a test knows the watches
  // it waits for are new ones), without sleeping; false on timeout.
  size_t openWatches() const;
  bool awaitOpenWatches(size_t count, std::chrono::milliseconds timeout,
                        uint64_t minRequests = 0) const;

 private:
  struct Change {
    int64_t version;
    std::string path;
    WatchEventType type;
    nlohmann::json object;
  };
  // Counts and records the call; the injected failure, if any. Holds mu_.
  Status begin(const std::string& call);
  // Stores `object` at `path` with the next version and logs it. Holds mu_.
  nlohmann::json write(const std::string& path, nlohmann::json object);
  // The blocking watch, from a checked version `since` (-1: from now, the
  // current objects as ADDED first).
  StatusOr<WatchEnd> watchBlocking(const std::string& path, const WatchOptions& options,
                                   int64_t since, const WatchHandler& onEvent,
                                   const std::atomic<bool>& stop);
  // The logged changes to `path` after `since` that `selector` selects.
  // Holds mu_.
  StatusOr<std::vector<WatchEvent>> changesSince(const std::string& path,
                                                 const std::string& selector, int64_t since);

  mutable std::mutex mu_;
  std::map<std::string, nlohmann::json> objects_;
  std::vector<Change> log_;
  std::vector<std::string> calls_;
  std::optional<Status> fault_;
  int64_t version_ = 0;
  int64_t expiredBefore_ = 0;
  uint64_t requests_ = 0;
  mutable std::condition_variable changed_;  // A write, a close or an expiry; open_ moved.
  bool blocking_ = false;
  uint64_t closeEpoch_ = 0;   // Raised by closeWatches.
  uint64_t expireEpoch_ = 0;  // Raised by expireWatches.
  size_t open_ = 0;           // Blocking watches waiting for changes.
};

// Whether `labels` (an object's metadata.labels) satisfy `selector`:
// comma-separated "k=v", "k==v", "k!=v", "k" (has k) and "!k" (lacks k).
// InvalidArgument for anything else.
StatusOr<bool> matchesLabelSelector(const nlohmann::json& labels, const std::string& selector);

}  // namespace corral::kube
