#pragma once

// `FakeClock`: time that moves only when a test says so. `sleepFor` advances
// it instead of blocking, so code that backs off or polls runs at full speed
// and deterministically (Envoy's "no sleeps in unit tests"). Thread-safe.

#include <chrono>
#include <cstdint>
#include <mutex>

#include "corral/clock.h"

namespace corral {

class FakeClock : public Clock {
 public:
  // Starts at `startUnixMillis` on the wall clock (2025-11-30T00:00:00Z by
  // default, a fixed date so that test output is stable) and at an arbitrary
  // fixed point on the steady clock.
  explicit FakeClock(int64_t startUnixMillis = 1764460800000) : unixMillis_(startUnixMillis) {}

  std::chrono::steady_clock::time_point now() override {
    std::lock_guard<std::mutex> lock(mu_);
    return steady_;
  }

  int64_t unixMillis() override {
    std::lock_guard<std::mutex> lock(mu_);
    return unixMillis_;
  }

  // Advances both clocks by `d` (a negative `d` is ignored: no clock of
  // corral's goes backwards) and adds it to `slept()`.
  void sleepFor(std::chrono::milliseconds d) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (d.count() <= 0) return;
    advanceLocked(d);
    slept_ += d;
    ++sleeps_;
  }

  // Advances both clocks by `d`, as time passing while the code under test
  // does something else. Does not count as sleeping.
  void advance(std::chrono::milliseconds d) {
    std::lock_guard<std::mutex> lock(mu_);
    if (d.count() > 0) advanceLocked(d);
  }
  void advance(int64_t ms) { advance(std::chrono::milliseconds(ms)); }

  // The total time passed to `sleepFor`, and how many calls did so.
  std::chrono::milliseconds slept() const {
    std::lock_guard<std::mutex> lock(mu_);
    return slept_;
  }
  int64_t sleeps() const {
    std::lock_guard<std::mutex> lock(mu_);
    return sleeps_;
  }

 private:
  void advanceLocked(std::chrono::milliseconds d) {
    steady_ += d;
    unixMillis_ += d.count();
  }

  mutable std::mutex mu_;
  std::chrono::steady_clock::time_point steady_{std::chrono::hours(1)};
  int64_t unixMillis_;
  std::chrono::milliseconds slept_{0};
  int64_t sleeps_ = 0;
};

}  // namespace corral
