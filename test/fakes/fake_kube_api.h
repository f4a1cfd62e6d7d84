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
// its version, then ends with kClosed (it never blocks). Thread-safe;
// `onEvent` is called without the lock held.

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

  mutable std::mutex mu_;
  std::map<std::string, nlohmann::json> objects_;
  std::vector<Change> log_;
  std::vector<std::string> calls_;
  std::optional<Status> fault_;
  int64_t version_ = 0;
  int64_t expiredBefore_ = 0;
  uint64_t requests_ = 0;
};

// Whether `labels` (an object's metadata.labels) satisfy `selector`:
// comma-separated "k=v", "k==v", "k!=v", "k" (has k) and "!k" (lacks k).
// InvalidArgument for anything else.
StatusOr<bool> matchesLabelSelector(const nlohmann::json& labels, const std::string& selector);

}  // namespace corral::kube
