#include "kube/watch.h"

#include "common/text.h"

namespace corral::kube {

const char* watchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded: return "ADDED";
    case WatchEventType::kModified: return "MODIFIED";
    case WatchEventType::kDeleted: return "DELETED";
    case WatchEventType::kBookmark: return "BOOKMARK";
    case WatchEventType::kError: return "ERROR";
  }
  return "UNKNOWN";
}

StatusOr<WatchEvent> parseWatchEvent(const std::string& line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object())
    return invalidArgument("a watch event is not a JSON object: " + quoteForMessage(line, 120));
  auto type = j.find("type");
  auto object = j.find("object");
  if (type == j.end() || !type->is_string())
    return invalidArgument("a watch event has no type: " + quoteForMessage(line, 120));
  if (object == j.end() || !object->is_object())
    return invalidArgument("a watch event has no object: " + quoteForMessage(line, 120));
  WatchEvent event;
  std::string name = type->get<std::string>();
  for (WatchEventType t : {WatchEventType::kAdded, WatchEventType::kModified,
                           WatchEventType::kDeleted, WatchEventType::kBookmark,
                           WatchEventType::kError}) {
    if (name == watchEventTypeName(t)) {
      event.type = t;
      event.object = std::move(*object);
      return event;
    }
  }
  return invalidArgument("a watch event has an unknown type " + quoteForMessage(name));
}

Status WatchLineSplitter::emit(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.find_first_not_of(" \t") == std::string::npos) return Status::ok();
  return onLine_(line);
}

Status WatchLineSplitter::feed(const char* data, size_t size) {
  if (!failed_.isOk()) return failed_;
  size_t start = 0;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] != '\n') continue;
    pending_.append(data + start, i - start);
    start = i + 1;
    std::string line = std::move(pending_);
    pending_.clear();
    failed_ = emit(std::move(line));
    if (!failed_.isOk()) return failed_;
  }
  pending_.append(data + start, size - start);
  if (pending_.size() > kMaxLine) {
    failed_ = internalError("a watch event is larger than 16 MiB");
    pending_.clear();
  }
  return failed_;
}

Status WatchLineSplitter::finish() {
  if (!failed_.isOk()) return failed_;
  std::string line = std::move(pending_);
  pending_.clear();
  failed_ = emit(std::move(line));
  return failed_;
}

}  // namespace corral::kube
