#include "common/log.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>

namespace corral {
namespace {
std::atomic<int> gLevel{static_cast<int>(LogLevel::kInfo)};
}

void setLogLevel(LogLevel level) { gLevel = static_cast<int>(level); }

void logLine(LogLevel level, const std::string& message) {
  if (static_cast<int>(level) < gLevel) return;
  static const char* kNames[] = {"D", "I", "W", "E"};
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() %
      1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[40];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string line = std::string(stamp) + "." + std::to_string(1000 + ms).substr(1) + "Z " +
                     kNames[static_cast<int>(level)] + " " + message + "\n";
  ssize_t ignored = write(2, line.data(), line.size());
  (void)ignored;
}

}  // namespace corral
