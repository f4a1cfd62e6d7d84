#include "fakes/fake_kube_api.h"

#include <cstdlib>

#include "kube/errors.h"

namespace corral::kube {
namespace {

// The last segment of `path` (the object's name) and the one before it (the
// resource's plural).
std::string segment(const std::string& path, int fromEnd) {
  size_t end = path.size();
  for (int i = 0; i < fromEnd; ++i) end = path.rfind('/', end - 1);
  size_t start = path.rfind('/', end - 1);
  return path.substr(start + 1, end - start - 1);
}

// An error as the API server words it, through the same mapping as the
// real client's.
Status serverError(const std::string& method, const std::string& path, long code,
                   const std::string& reason, const std::string& message) {
  nlohmann::json status = {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                           {"message", message}, {"reason", reason}, {"code", code}};
  return apiError(method, path, code, status.dump());
}

Status notFoundAt(const std::string& method, const std::string& path) {
  return serverError(method, path, 404, "NotFound",
                     segment(path, 1) + " \"" + segment(path, 0) + "\" not found");
}

bool inCollection(const std::string& objectPath, const std::string& collection) {
  return objectPath.size() > collection.size() + 1 && objectPath.starts_with(collection) &&
         objectPath[collection.size()] == '/' &&
         objectPath.find('/', collection.size() + 1) == std::string::npos;
}

nlohmann::json labelsOf(const nlohmann::json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return nlohmann::json::object();
  auto labels = meta->find("labels");
  return labels != meta->end() && labels->is_object() ? *labels : nlohmann::json::object();
}

std::string nameOf(const nlohmann::json& object) {
  if (!object.is_object()) return "";
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  auto name = meta->find("name");
  return name != meta->end() && name->is_string() ? name->get<std::string>() : "";
}

// `object` without what the server manages: status and the metadata a
// client does not write.
nlohmann::json desiredPart(nlohmann::json object) {
  object.erase("status");
  if (object.contains("metadata") && object["metadata"].is_object()) {
    for (const char* key : {"resourceVersion", "uid", "generation", "creationTimestamp"})
      object["metadata"].erase(key);
  }
  return object;
}

int64_t generationOf(const nlohmann::json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return 0;
  auto g = meta->find("generation");
  return g != meta->end() && g->is_number_integer() ? g->get<int64_t>() : 0;
}

}  // namespace

StatusOr<bool> matchesLabelSelector(const nlohmann::json& labels, const std::string& selector) {
  if (selector.empty()) return true;
  auto valueOf = [&](const std::string& key) -> std::optional<std::string> {
    auto it = labels.find(key);
    if (it == labels.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  // Every term is checked for form before any is matched, so a bad
  // selector is refused whatever the labels, as the server refuses it.
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = selector.find(',', start);
    terms.push_back(selector.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  for (const std::string& term : terms) {
    if (term.empty() || term.find_first_of(" ()") != std::string::npos)
      return invalidArgument("label selector \"" + selector + "\" has a term the fake does not "
                             "support: \"" + term + "\"");
  }
  bool all = true;
  for (const std::string& term : terms) {
    size_t ne = term.find("!=");
    size_t eq = term.find('=');
    if (ne != std::string::npos) {
      all = all && valueOf(term.substr(0, ne)) != term.substr(ne + 2);
    } else if (eq != std::string::npos) {
      size_t valueAt = term.compare(eq, 2, "==") == 0 ? eq + 2 : eq + 1;
      all = all && valueOf(term.substr(0, eq)) == term.substr(valueAt);
    } else if (term[0] == '!') {
      all = all && !valueOf(term.substr(1)).has_value();
    } else {
      all = all && valueOf(term).has_value();
    }
  }
  return all;
}

Status FakeKubeApi::begin(const std::string& call) {
  requests_++;
  calls_.push_back(call);
  changed_.notify_all();
  if (fault_) {
    Status st = *fault_;
    fault_.reset();
    return st;
  }
  return Status::ok();
}

nlohmann::json FakeKubeApi::write(const std::string& path, nlohmann::json object) {
  bool existed = objects_.count(path) > 0;
  object["metadata"]["resourceVersion"] = std::to_string(++version_);
  objects_[path] = object;
  log_.push_back({version_, path, existed ? WatchEventType::kModified : WatchEventType::kAdded,
                  object});
  changed_.notify_all();
  return object;
}

StatusOr<nlohmann::json> FakeKubeApi::get(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(begin("GET " + path));
  auto it = objects_.find(path);
  if (it == objects_.end()) return notFoundAt("GET", path);
  return it->second;
}

StatusOr<ObjectList> FakeKubeApi::list(const std::string& path, const std::string& labelSelector) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(begin("LIST " + path + (labelSelector.empty() ? "" : "?" + labelSelector)));
  ObjectList out;
  for (const auto& [p, object] : objects_) {
    if (!inCollection(p, path)) continue;
    ASSIGN_OR_RETURN(bool match, matchesLabelSelector(labelsOf(object), labelSelector));
    if (match) out.items.push_back(object);
  }
  out.resourceVersion = std::to_string(version_);
  return out;
}

StatusOr<WatchEnd> FakeKubeApi::watch(const std::string& path, const WatchOptions& options,
                                      const WatchHandler& onEvent, const std::atomic<bool>& stop) {
  std::vector<WatchEvent> events;
  std::optional<int64_t> blockFrom;  // Set when the watch is to block.
  {
    std::lock_guard<std::mutex> lock(mu_);
    RETURN_IF_ERROR(begin("WATCH " + path));
    const std::string& rv = options.resourceVersion;
    if (blocking_ && (rv.empty() || rv == "0")) blockFrom = -1;
    auto selected = [&](const nlohmann::json& object) -> StatusOr<bool> {
      return matchesLabelSelector(labelsOf(object), options.labelSelector);
    };
    if (blockFrom) {
      // Checked and collected by watchBlocking.
    } else if (rv.empty() || rv == "0") {
      // As the server does: the current objects as ADDED, then the changes.
      for (const auto& [p, object] : objects_) {
        if (!inCollection(p, path)) continue;
        ASSIGN_OR_RETURN(bool match, selected(object));
        if (match) events.push_back({WatchEventType::kAdded, object});
      }
    } else {
      char* end = nullptr;
      long long since = std::strtoll(rv.c_str(), &end, 10);
      if (end == rv.c_str() || *end != '\0')
        return serverError("GET", path, 400, "BadRequest",
                           "invalid resource version \"" + rv + "\"");
      if (since < expiredBefore_) return WatchEnd::kExpired;
      if (blocking_) {
        blockFrom = since;
      } else {
        ASSIGN_OR_RETURN(events, changesSince(path, options.labelSelector, since));
      }
    }
    nlohmann::json bookmark = {{"metadata", {{"resourceVersion", std::to_string(version_)}}}};
    events.push_back({WatchEventType::kBookmark, bookmark});
  }
  if (blockFrom) return watchBlocking(path, options, *blockFrom, onEvent, stop);
  for (const WatchEvent& e : events) {
    if (stop.load()) return WatchEnd::kStopped;
    RETURN_IF_ERROR(onEvent(e));
  }
  return stop.load() ? WatchEnd::kStopped : WatchEnd::kClosed;
}

StatusOr<std::vector<WatchEvent>> FakeKubeApi::changesSince(const std::string& path,
                                                            const std::string& selector,
                                                            int64_t since) {
  std::vector<WatchEvent> events;
  for (const Change& c : log_) {
    if (c.version <= since || !inCollection(c.path, path)) continue;
    ASSIGN_OR_RETURN(bool match, matchesLabelSelector(labelsOf(c.object), selector));
    if (match) events.push_back({c.type, c.object});
  }
  return events;
}

StatusOr<WatchEnd> FakeKubeApi::watchBlocking(const std::string& path, const WatchOptions& options,
                                              int64_t since, const WatchHandler& onEvent,
                                              const std::atomic<bool>& stop) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t closeEpoch = closeEpoch_, expireEpoch = expireEpoch_;
  std::vector<WatchEvent> events;
  if (since < 0) {  // From now: the current objects as ADDED, as the server does.
    for (const auto& [p, object] : objects_) {
      if (!inCollection(p, path)) continue;
      ASSIGN_OR_RETURN(bool match, matchesLabelSelector(labelsOf(object), options.labelSelector));
      if (match) events.push_back({WatchEventType::kAdded, object});
    }
    since = version_;
  }
  for (;;) {
    lock.unlock();
    for (const WatchEvent& e : events) {
      if (stop.load()) return WatchEnd::kStopped;
      RETURN_IF_ERROR(onEvent(e));
    }
    lock.lock();
    ++open_;
    changed_.notify_all();
    // Stop is an atomic the fake cannot be woken by: looked at every 20 ms.
    while (!stop.load() && closeEpoch_ == closeEpoch && expireEpoch_ == expireEpoch &&
           version_ == since)
      changed_.wait_for(lock, std::chrono::milliseconds(20));
    --open_;
    changed_.notify_all();
    if (stop.load()) return WatchEnd::kStopped;
    if (expireEpoch_ != expireEpoch) return WatchEnd::kExpired;
    if (closeEpoch_ != closeEpoch) return WatchEnd::kClosed;
    ASSIGN_OR_RETURN(events, changesSince(path, options.labelSelector, since));
    since = version_;
  }
}

StatusOr<nlohmann::json> FakeKubeApi::apply(const std::string& path, const nlohmann::json& object) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(begin("PATCH " + path));
  if (!object.is_object() || !object.contains("apiVersion") || !object.contains("kind"))
    return serverError("PATCH", path, 400, "BadRequest", "apiVersion and kind must be set");
  if (nameOf(object) != segment(path, 0))
    return serverError("PATCH", path, 400, "BadRequest",
                       "the name of the object (" + nameOf(object) +
                           ") does not match the name on the URL (" + segment(path, 0) + ")");
  auto it = objects_.find(path);
  if (it == objects_.end()) {
    nlohmann::json created = desiredPart(object);
    created["metadata"]["uid"] = "uid-" + std::to_string(version_ + 1);
    created["metadata"]["generation"] = 1;
    return write(path, std::move(created));
  }
  const nlohmann::json& stored = it->second;
  if (desiredPart(stored) == desiredPart(object)) return stored;  // A no-op apply.
  nlohmann::json next = desiredPart(object);
  const nlohmann::json& meta = stored.at("metadata");  // `write` always sets it.
  for (const char* key : {"uid", "creationTimestamp"}) {
    if (meta.contains(key)) next["metadata"][key] = meta.at(key);
  }
  next["metadata"]["generation"] = generationOf(stored) + 1;
  if (stored.contains("status")) next["status"] = stored["status"];
  return write(path, std::move(next));
}

StatusOr<nlohmann::json> FakeKubeApi::applyStatus(const std::string& path,
                                                  const nlohmann::json& object) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(begin("PATCH " + path + "/status"));
  auto it = objects_.find(path);
  if (it == objects_.end()) return notFoundAt("PATCH", path + "/status");
  if (!object.is_object() || !object.contains("status")) return it->second;
  if (it->second.contains("status") && it->second["status"] == object["status"]) return it->second;
  nlohmann::json next = it->second;
  next["status"] = object["status"];
  return write(path, std::move(next));
}

Status FakeKubeApi::remove(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(begin("DELETE " + path));
  auto it = objects_.find(path);
  if (it == objects_.end()) return notFoundAt("DELETE", path);
  nlohmann::json gone = it->second;
  objects_.erase(it);
  gone["metadata"]["resourceVersion"] = std::to_string(++version_);
  log_.push_back({version_, path, WatchEventType::kDeleted, gone});
  changed_.notify_all();
  return Status::ok();
}

uint64_t FakeKubeApi::requestCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

void FakeKubeApi::failNext(Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (status.isOk()) {
    fault_.reset();
  } else {
    fault_ = std::move(status);
  }
}

void FakeKubeApi::expireBefore(int64_t resourceVersion) {
  std::lock_guard<std::mutex> lock(mu_);
  expiredBefore_ = resourceVersion;
}

void FakeKubeApi::put(const std::string& path, nlohmann::json object) {
  std::lock_guard<std::mutex> lock(mu_);
  write(path, std::move(object));
}

std::optional<nlohmann::json> FakeKubeApi::object(const std::string& path) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = objects_.find(path);
  if (it == objects_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> FakeKubeApi::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

int64_t FakeKubeApi::resourceVersion() const {
  std::lock_guard<std::mutex> lock(mu_);
  return version_;
}

void FakeKubeApi::setBlockingWatches(bool blocking) {
  std::lock_guard<std::mutex> lock(mu_);
  blocking_ = blocking;
}

void FakeKubeApi::closeWatches() {
  std::lock_guard<std::mutex> lock(mu_);
  ++closeEpoch_;
  changed_.notify_all();
}

void FakeKubeApi::expireWatches() {
  std::lock_guard<std::mutex> lock(mu_);
  ++expireEpoch_;
  expiredBefore_ = version_;
  changed_.notify_all();
}

size_t FakeKubeApi::openWatches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_;
}

bool FakeKubeApi::awaitOpenWatches(size_t count, std::chrono::milliseconds timeout,
                                   uint64_t minRequests) const {
  std::unique_lock<std::mutex> lock(mu_);
  return changed_.wait_for(lock, timeout,
                           [&] { return open_ >= count && requests_ >= minRequests; });
}

}  // namespace corral::kube
