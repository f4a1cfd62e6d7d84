#pragma once

#include <chrono>
#include <cstdint>

namespace corral {

// Time, injectable so that unit tests need no sleeps. `realClock()` belongs to
// corral and must never be deleted. Implementations are thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point now() = 0;
  // Wall-clock time in Unix milliseconds, for records and events.
  virtual int64_t unixMillis() = 0;
  virtual void sleepFor(std::chrono::milliseconds d) = 0;
};

Clock& realClock();

}  // namespace corral
