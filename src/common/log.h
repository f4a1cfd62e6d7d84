#pragma once

// Minimal leveled logging to stderr with a timestamp. Thread-safe: each line
// is written with one `write`.

#include <sstream>
#include <string>

namespace corral {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

void setLogLevel(LogLevel level);
void logLine(LogLevel level, const std::string& message);

}  // namespace corral

#define CORRAL_LOG(level, expr)                              \
  do {                                                       \
    std::ostringstream _corral_log_os;                       \
    _corral_log_os << expr;                                  \
    ::corral::logLine(::corral::LogLevel::level, _corral_log_os.str()); \
  } while (0)
#define LOG_INFO(expr) CORRAL_LOG(kInfo, expr)
#define LOG_WARN(expr) CORRAL_LOG(kWarning, expr)
#define LOG_ERROR(expr) CORRAL_LOG(kError, expr)
#define LOG_DEBUG(expr) CORRAL_LOG(kDebug, expr)
