#pragma once

// A pool of idle libcurl easy handles for a client that makes many requests
// from several threads (the registry client, the Kubernetes client). A handle
// given back keeps its live connections and TLS sessions for the next
// request; its options are reset. Header-only, so that only the parts that
// use it link libcurl. Thread-safe.

#include <curl/curl.h>

#include <mutex>
#include <vector>

namespace corral {

class CurlHandlePool {
 public:
  CurlHandlePool() = default;
  ~CurlHandlePool() {
    for (CURL* h : idle_) curl_easy_cleanup(h);
  }
  CurlHandlePool(const CurlHandlePool&) = delete;
  CurlHandlePool& operator=(const CurlHandlePool&) = delete;

  // An idle handle, or a new one; null only if curl cannot make one.
  CURL* acquire() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        CURL* h = idle_.back();
        idle_.pop_back();
        return h;
      }
    }
    return curl_easy_init();
  }

  void release(CURL* handle) {
    if (handle == nullptr) return;
    curl_easy_reset(handle);
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(handle);
  }

 private:
  std::mutex mu_;
  std::vector<CURL*> idle_;
};

}  // namespace corral
