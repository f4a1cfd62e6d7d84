#include "corral/clock.h"

#include <thread>

namespace corral {
namespace {

class RealClock : public Clock {
 public:
  std::chrono::steady_clock::time_point now() override { return std::chrono::steady_clock::now(); }
  int64_t unixMillis() override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  void sleepFor(std::chrono::milliseconds d) override { std::this_thread::sleep_for(d); }
};

}  // namespace

Clock& realClock() {
  static RealClock* clock = new RealClock();
  return *clock;
}

}  // namespace corral
