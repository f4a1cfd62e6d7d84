#include "support/cli_test_support.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <system_error>
#include <utility>

#include "cli/cli.h"

namespace corral {

namespace fs = std::filesystem;

FakeCorrald::FakeCorrald() {
  port_ = server_.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  // stop() before the accept loop has started would leave it running.
  while (!server_.is_running()) std::this_thread::yield();
}

FakeCorrald::~FakeCorrald() {
  server_.stop();
  thread_.join();
}

void reply(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, "application/json");
}

void reply(httplib::Response& res, int status, const Json& body) {
  reply(res, status, body.dump());
}

void replyError(httplib::Response& res, int status, const std::string& code,
                const std::string& message) {
  reply(res, status, Json{{"error", {{"code", code}, {"message", message}}}});
}

void RequestLog::add(const httplib::Request& req) {
  std::lock_guard<std::mutex> lock(mu_);
  lines_.push_back(req.method + " " + req.path + (req.body.empty() ? "" : " " + req.body));
}

std::vector<std::string> RequestLog::lines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lines_;
}

Json runningCluster(const std::string& name) {
  Json c = Json::parse(R"({"name": "", "status": "Running", "phase": "", "reason": "",
      "revision": 3, "appliedRevision": 3,
      "spec": {"name": "", "gpuNodes": 2, "gpusPerNode": 8, "cpuNodes": 0, "sshKeys": ["k"]},
      "subnet": "172.29.1.0/24",
      "login": {"address": "172.29.1.3", "port": 22, "hostKey": "ssh-ed25519 HOSTKEY"},
      "nodes": [], "createdAt": 1764464400, "updatedAt": 1764464405})");
  c["name"] = name;
  c["spec"]["name"] = name;
  return c;
}

Json changeAccepted(int64_t revision, const std::string& message, const Json& cluster) {
  return {{"change", {{"revision", revision}, {"made", true}, {"message", message}}},
          {"cluster", cluster}};
}

Json revisionsWith(int64_t revision, const std::string& state) {
  Json entry = {{"revision", revision},      {"author", "api"}, {"message", ""},
                {"createdAt", kCliNow - 60}, {"state", state},  {"error", ""}};
  return {{"revisions", Json::array({entry})}, {"appliedRevision", revision - 1}};
}

ScopedTz::ScopedTz(const char* tz) {
  const char* old = getenv("TZ");
  if (old != nullptr) old_ = old;
  had_ = old != nullptr;
  setenv("TZ", tz, 1);
  tzset();
}

ScopedTz::~ScopedTz() {
  if (had_) {
    setenv("TZ", old_.c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
}

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "corral-cli-test-XXXXXX").string();
  path_ = ::mkdtemp(tmpl.data()) != nullptr ? tmpl : "";
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

CliResult runCorral(std::vector<std::string> args, CliContext ctx) {
  std::ostringstream out, err;
  ctx.out = &out;
  ctx.err = &err;
  args.insert(args.begin(), "corral");
  CliResult r;
  r.code = runCli(args, ctx);
  r.out = out.str();
  r.err = err.str();
  return r;
}

CliResult FakeCorraldTest::run(std::vector<std::string> args) {
  args.insert(args.begin(), {"--server", corrald_.url()});
  return runCorral(std::move(args), context());
}

void FakeCorraldTest::serve(const std::string& method, const std::string& path, int status,
                            const Json& body) {
  auto handler = [this, status, body](const httplib::Request& req, httplib::Response& res) {
    requests_.add(req);
    reply(res, status, body);
  };
  httplib::Server& s = corrald_.server();
  if (method == "GET") s.Get(path, handler);
  if (method == "POST") s.Post(path, handler);
  if (method == "PUT") s.Put(path, handler);
  if (method == "PATCH") s.Patch(path, handler);
  if (method == "DELETE") s.Delete(path, handler);
  ASSERT_TRUE(method == "GET" || method == "POST" || method == "PUT" || method == "PATCH" ||
              method == "DELETE")
      << method;
}

void FakeCorraldTest::serveChangeOutcome(const std::string& name, const Json& cluster,
                                         int64_t revision, const std::string& finalState) {
  std::string path = "/api/v1/clusters/" + percentEncode(name);
  corrald_.server().Get(path, [cluster](const httplib::Request&, httplib::Response& res) {
    reply(res, 200, cluster);
  });
  corrald_.server().Get(path + "/revisions", [this, revision, finalState](const httplib::Request&,
                                                                          httplib::Response& res) {
    bool first = revisionPolls_++ == 0;
    reply(res, 200, revisionsWith(revision, first ? "Pending" : finalState));
  });
}

CliContext FakeCorraldTest::context() {
  CliContext ctx;
  ctx.clock = &clock_;
  ctx.home = home_.path();
  return ctx;
}

}  // namespace corral
