#include "common/parallel.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace corral {

Status runInParallel(size_t count, int parallel, const std::function<Status(size_t)>& task) {
  if (count == 0) return Status::ok();
  std::atomic<size_t> next{0};
  std::mutex errMu;
  Status firstError;
  auto worker = [&] {
    while (true) {
      size_t i = next.fetch_add(1);
      if (i >= count) return;
      {
        std::lock_guard<std::mutex> lock(errMu);
        if (!firstError.isOk()) return;
      }
      Status st = task(i);
      if (!st.isOk()) {
        std::lock_guard<std::mutex> lock(errMu);
        if (firstError.isOk()) firstError = st;
        return;
      }
    }
  };
  size_t n = std::min<size_t>(std::max(parallel, 1), count);
  if (n == 1) {
    worker();
  } else {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < n; ++i) threads.emplace_back(worker);
    for (auto& t : threads) t.join();
  }
  return firstError;
}

}  // namespace corral
