#pragma once

// `KubeClient`: `KubeApi` over HTTPS with libcurl, authenticated by the
// config's TLS client certificate and/or bearer token, the server verified
// against the config's CA.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "common/curl_pool.h"
#include "kube/api.h"
#include "kube/config.h"

namespace corral::kube {

namespace internal {
struct Exchange;  // One request's state, in client.cc.
}

struct KubeClientOptions {
  std::chrono::seconds connectTimeout{10};
  std::chrono::seconds requestTimeout{30};  // Every request but a watch.
  std::string fieldManager = "corral";      // Who server-side apply records as the owner.
  std::string userAgent = "corral/0.1";
  size_t maxBody = 64u << 20;  // A larger response is an error.
  int listPageSize = 500;      // `list` asks for pages of this many objects.
};

// Thread-safe: requests from several threads share a pool of curl handles
// (and so their connections). A watch holds one handle while it streams.
class KubeClient : public KubeApi {
 public:
  explicit KubeClient(KubeConfig config, KubeClientOptions options = {});
  ~KubeClient() override;
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  StatusOr<nlohmann::json> get(const std::string& path) override;
  StatusOr<ObjectList> list(const std::string& path, const std::string& labelSelector) override;
  StatusOr<WatchEnd> watch(const std::string& path, const WatchOptions& options,
                           const WatchHandler& onEvent, const std::atomic<bool>& stop) override;
  StatusOr<nlohmann::json> apply(const std::string& path, const nlohmann::json& object) override;
  StatusOr<nlohmann::json> applyStatus(const std::string& path,
                                       const nlohmann::json& object) override;
  Status remove(const std::string& path) override;
  uint64_t requestCount() const override { return requests_.load(); }

  const KubeConfig& config() const { return config_; }

  // One HTTP exchange, for what the methods above do not cover: `target` is
  // a path with its query. A response of any status is a success here;
  // failures are transport errors (Unavailable).
  struct Response {
    long status = 0;
    std::string body;
  };
  struct Request {
    std::string method = "GET";
    std::string target;
    std::string body;
    std::string contentType;  // Of `body`.
  };
  StatusOr<Response> send(const Request& request);

 private:
  // Runs `exchange` on a pooled handle and counts it; the transport error,
  // if any.
  Status perform(internal::Exchange& exchange);
  // `send`, then the 2xx body as JSON, or the API server's error.
  StatusOr<nlohmann::json> jsonOf(const Request& request);
  // The token to send: the token file's content as last read (a rotated
  // token is picked up on the next request), else the config's.
  std::string bearerToken();

  const KubeConfig config_;
  const KubeClientOptions options_;
  std::atomic<uint64_t> requests_{0};
  std::mutex mu_;
  std::string lastToken_;     // Guarded by mu_.
  CurlHandlePool pool_;
};

}  // namespace corral::kube
