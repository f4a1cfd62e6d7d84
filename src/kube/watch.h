#pragma once

// The watch stream's framing: the API server writes one JSON event per line
// ({"type":"ADDED","object":{…}}\n), in HTTP chunks that need not end at a
// line. Pure; `KubeClient::watch` feeds it what curl receives.

#include <functional>
#include <string>

#include "corral/status.h"
#include "kube/api.h"

namespace corral::kube {

// One event line. InvalidArgument when it is not JSON, names no known type,
// or has no object.
StatusOr<WatchEvent> parseWatchEvent(const std::string& line);

// Splits bytes into lines and hands each non-empty one to `onLine`; an
// error it returns stops the splitter and is returned by every later call.
class WatchLineSplitter {
 public:
  using LineHandler = std::function<Status(const std::string& line)>;
  static constexpr size_t kMaxLine = 16u << 20;  // One event; larger ones are an error.

  explicit WatchLineSplitter(LineHandler onLine) : onLine_(std::move(onLine)) {}

  Status feed(const char* data, size_t size);
  // The stream ended: a last line without its newline is handed on too.
  Status finish();

 private:
  Status emit(std::string line);

  LineHandler onLine_;
  std::string pending_;
  Status failed_;
};

}  // namespace corral::kube
