#pragma once

// A registry speaking just enough of the distribution API for pull: token
// (or basic) authentication, manifests by tag and digest, blobs behind a
// redirect to "storage". Counts what it serves. cpp-httplib on 127.0.0.1 and
// a port of the kernel's choosing.

#include <httplib.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "image/sha256.h"

namespace corral::image::testing {

class FakeRegistry {
 public:
  enum class Auth { kNone, kBearer, kBasic };

  explicit FakeRegistry(Auth auth = Auth::kBearer) : auth_(auth) {
    server_.Get("/token", [this](const httplib::Request& req, httplib::Response& res) {
      tokenRequests_++;
      if (rejectTokens || req.get_param_value("service") != "fake-registry") {
        res.status = 401;
        return;
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        lastScope_ = req.get_param_value("scope");
      }
      std::string key = useAccessToken ? "access_token" : "token";
      res.set_content("{\"" + key + "\": \"" + kToken + "\", \"expires_in\": 300}",
                      "application/json");
    });
    server_.Get(R"(/v2/(.+)/manifests/([^/]+))", [this](const httplib::Request& req,
                                                        httplib::Response& res) {
      manifestRequests_++;
      if (!authorized(req, res, req.matches[1])) return;
      std::lock_guard<std::mutex> lock(mu_);
      auto it = manifests_.find(std::string(req.matches[1]) + "@" + std::string(req.matches[2]));
      if (it == manifests_.end()) {
        res.status = 404;
        res.set_content(R"({"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]})",
                        "application/json");
        return;
      }
      res.set_header("Docker-Content-Digest", sha256Digest(it->second.second));
      res.set_content(it->second.second, it->second.first.c_str());
    });
    server_.Get(R"(/v2/(.+)/blobs/(sha256:[0-9a-f]{64}))", [this](const httplib::Request& req,
                                                                  httplib::Response& res) {
      if (!authorized(req, res, req.matches[1])) return;
      std::lock_guard<std::mutex> lock(mu_);
      std::string digest = req.matches[2];
      if (!blobs_.count(digest)) {
        res.status = 404;
        res.set_content(R"({"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown"}]})",
                        "application/json");
        return;
      }
      res.set_redirect("/storage/" + digest.substr(7), 307);
    });
    server_.Get(R"(/storage/([0-9a-f]{64}))",
                [this](const httplib::Request& req, httplib::Response& res) {
                  std::string digest = "sha256:" + std::string(req.matches[1]);
                  if (blobDelayMs > 0)
                    std::this_thread::sleep_for(std::chrono::milliseconds(blobDelayMs.load()));
                  std::lock_guard<std::mutex> lock(mu_);
                  blobFetches_[digest]++;
                  res.set_content(blobs_[digest], "application/octet-stream");
                });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::yield();
  }

  ~FakeRegistry() {
    server_.stop();
    thread_.join();
  }

  int port() const { return port_; }
  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }

  // Stores a blob; returns its digest.
  std::string addBlob(const std::string& content) {
    std::string digest = sha256Digest(content);
    std::lock_guard<std::mutex> lock(mu_);
    blobs_[digest] = content;
    return digest;
  }
  // Serves `content` under `digest`, which it does not match.
  void corruptBlob(const std::string& digest, const std::string& content) {
    std::lock_guard<std::mutex> lock(mu_);
    blobs_[digest] = content;
  }
  // Stores a manifest under its digest and, when given, a tag.
  std::string addManifest(const std::string& repo, const std::string& tag,
                          const std::string& mediaType, const std::string& body) {
    std::string digest = sha256Digest(body);
    std::lock_guard<std::mutex> lock(mu_);
    manifests_[repo + "@" + digest] = {mediaType, body};
    if (!tag.empty()) manifests_[repo + "@" + tag] = {mediaType, body};
    return digest;
  }

  int blobFetches(const std::string& digest) {
    std::lock_guard<std::mutex> lock(mu_);
    return blobFetches_[digest];
  }
  int totalBlobFetches() {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const auto& [d, c] : blobFetches_) n += c;
    return n;
  }
  int tokenRequests() const { return tokenRequests_; }
  int manifestRequests() const { return manifestRequests_; }
  std::string lastScope() {
    std::lock_guard<std::mutex> lock(mu_);
    return lastScope_;
  }

  static constexpr const char* kToken = "tok-123";
  static constexpr const char* kBasic = "Basic YWxpY2U6czNjcmV0";  // alice:s3cret
  std::atomic<bool> rejectTokens{false};
  std::atomic<bool> useAccessToken{false};
  std::atomic<int> blobDelayMs{0};

 private:
  bool authorized(const httplib::Request& req, httplib::Response& res, const std::string& repo) {
    std::string got = req.get_header_value("Authorization");
    if (auth_ == Auth::kNone) return true;
    if (auth_ == Auth::kBearer && got == std::string("Bearer ") + kToken) return true;
    if (auth_ == Auth::kBasic && got == kBasic) return true;
    res.status = 401;
    if (auth_ == Auth::kBearer) {
      res.set_header("WWW-Authenticate",
                     "Bearer realm=\"http://" + host() +
                         "/token\",service=\"fake-registry\",scope=\"repository:" + repo +
                         ":pull\"");
    } else {
      res.set_header("WWW-Authenticate", "Basic realm=\"fake\"");
    }
    res.set_content(R"({"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]})",
                    "application/json");
    return false;
  }

  Auth auth_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::map<std::string, std::string> blobs_;
  std::map<std::string, std::pair<std::string, std::string>> manifests_;  // repo@ref → type, body
  std::map<std::string, int> blobFetches_;
  std::string lastScope_;
  std::atomic<int> tokenRequests_{0};
  std::atomic<int> manifestRequests_{0};
};

}  // namespace corral::image::testing
