#pragma once

// `KubeApi`: what corral asks of a Kubernetes API server, in the API's own
// terms (paths from kube/paths.h, objects as JSON). `KubeClient`
// (kube/client.h) is the real one; `FakeKubeApi` (test/fakes) keeps objects
// in memory, so a runtime built on this interface is unit-tested without a
// server.

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "corral/status.h"

namespace corral::kube {

// The objects of a collection and the resourceVersion they were read at,
// from which a watch continues.
struct ObjectList {
  nlohmann::json items = nlohmann::json::array();
  std::string resourceVersion;
};

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };
const char* watchEventTypeName(WatchEventType type);  // "ADDED", …

// One line of a watch stream. For kBookmark the object carries only
// `metadata.resourceVersion`; for kError it is a `Status` object.
struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  nlohmann::json object;
};

// Receives a watch's events in order, on the watching thread. An error it
// returns ends the watch and is the watch's result.
using WatchHandler = std::function<Status(const WatchEvent& event)>;

// How a watch ended, when it ended without an error.
enum class WatchEnd {
  kStopped,  // `stop` was set.
  kClosed,   // The server ended the stream (its timeout): watch again from the last version seen.
  kExpired,  // 410 Gone: the version is too old; list again, then watch from the list's version.
};

struct WatchOptions {
  std::string resourceVersion;  // Usually an `ObjectList::resourceVersion`; "" = from now.
  std::string labelSelector;    // "app=x,tier!=y"; "" = all.
  // How long the server keeps the stream open before it ends it (kClosed);
  // a bound on how long a silently dead connection can go unnoticed.
  int timeoutSeconds = 300;
};

class KubeApi {
 public:
  virtual ~KubeApi() = default;

  // GET an object. NotFound when it does not exist.
  virtual StatusOr<nlohmann::json> get(const std::string& path) = 0;

  // GET a collection (`collectionPath`), every page of it, filtered by
  // `labelSelector` ("" for all).
  virtual StatusOr<ObjectList> list(const std::string& path, const std::string& labelSelector) = 0;

  // Streams the changes to a collection after `options.resourceVersion` to
  // `onEvent` (ADDED, MODIFIED, DELETED and BOOKMARK) until `stop` is set,
  // the server ends the stream, or the version expires. An ERROR event ends
  // the watch: kExpired for 410, else its message as a Status; a broken
  // connection is Unavailable (watch again from the last version seen).
  // Blocks; the caller sets `stop` from any thread (seen within about a
  // second), or from `onEvent` (seen at once).
  virtual StatusOr<WatchEnd> watch(const std::string& path, const WatchOptions& options,
                                   const WatchHandler& onEvent, const std::atomic<bool>& stop) = 0;

  // Server-side apply of `object` (a whole object with apiVersion, kind and
  // metadata.name) at its object path, as field manager "corral", forcing
  // ownership of the fields it names: creates the object or makes the
  // fields corral manages equal to `object`, so applying the same object
  // twice changes nothing. Returns the object as stored.
  virtual StatusOr<nlohmann::json> apply(const std::string& path,
                                         const nlohmann::json& object) = 0;

  // The same for the object's status subresource (`path` + "/status"):
  // `object` carries apiVersion, kind, metadata.name and status.
  virtual StatusOr<nlohmann::json> applyStatus(const std::string& path,
                                               const nlohmann::json& object) = 0;

  // DELETE an object; what it owns is deleted in the background. NotFound
  // when it is already gone (which callers that want it gone may ignore).
  virtual Status remove(const std::string& path) = 0;

  // How many HTTP requests have been sent (a watch is one, however long it
  // streams; a list is one per page). Read by tests and benchmarks.
  virtual uint64_t requestCount() const = 0;
};

}  // namespace corral::kube
