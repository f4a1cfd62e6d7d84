#pragma once

// An HTTPS server on 127.0.0.1 (a port of the kernel's choosing) standing in
// for kube-apiserver in the client's tests: it presents `testPki().server`,
// verifies a client certificate when one is offered (against
// `testPki().ca`, as kube-apiserver does), records every request, and
// answers through the test's handler.

#include <httplib.h>

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/config.h"

namespace corral::kube::testing {

class TestApiServer {
 public:
  struct Seen {
    std::string method;
    std::string path;    // Without the query.
    std::string target;  // With it, as sent.
    std::map<std::string, std::string> params;
    std::string contentType;
    std::string authorization;
    std::string clientCn;  // The verified client certificate's CN, or "".
    std::string body;
  };
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  explicit TestApiServer(Handler handler);
  ~TestApiServer();

  std::string url() const;
  // A config that trusts the test CA and authenticates with the test client
  // certificate.
  KubeConfig config() const;
  std::vector<Seen> seen() const;

  // For streaming handlers: blocks until the server is being destroyed (or
  // 20 s pass, so a broken test cannot hang), as a watch that stays open.
  void holdOpen();

  // An event line of a watch stream.
  static std::string eventLine(const std::string& type, const nlohmann::json& object);

 private:
  httplib::SSLServer server_;
  std::thread thread_;
  int port_ = 0;
  Handler handler_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool closing_ = false;
  std::vector<Seen> seen_;
};

}  // namespace corral::kube::testing
