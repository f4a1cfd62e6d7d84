#pragma once

// What the tests of whole `corral` command lines share: a canned corrald
// (`FakeCorrald`) with a log of what it was asked (`RequestLog`), canned
// answers for changes, a clock that never blocks (`FakeCliClock`), a
// throwaway home directory (`TempDir`), a fixed time zone (`ScopedTz`) and
// `runCorral`, which runs one command line and keeps what it printed.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cli/client.h"
#include "cli/context.h"
#include "cli/http.h"
#include "corral/clock.h"

namespace corral {

// The CLI tests' wall time, in seconds: 90 s after the canned clusters'
// `createdAt` (2025-11-30T01:00:00Z), so that their age prints as "1m".
constexpr int64_t kCliNow = 1764464400 + 90;

// The CLI's clock. Steady time moves only when the CLI sleeps, so waits run
// instantly and their timeouts are exact; wall time stays where it started,
// so that ages in the output do not depend on how often the CLI polled.
// Unlike `FakeClock` it is not thread-safe: only the CLI's thread may use it.
class FakeCliClock : public Clock {
 public:
  explicit FakeCliClock(int64_t unixMillis = kCliNow * 1000) : unixMillis_(unixMillis) {}

  std::chrono::steady_clock::time_point now() override { return now_; }
  int64_t unixMillis() override { return unixMillis_; }
  // Advances steady time by `d`, then runs `onSleep` (when set) with the
  // number of sleeps so far, counting from 1: where a test plays the part of
  // whatever would have happened meanwhile.
  void sleepFor(std::chrono::milliseconds d) override {
    now_ += d;
    ++sleeps_;
    if (onSleep) onSleep(sleeps_);
  }
  int sleeps() const { return sleeps_; }

  std::function<void(int)> onSleep;

 private:
  std::chrono::steady_clock::time_point now_{};
  int64_t unixMillis_;
  int sleeps_ = 0;
};

// A real httplib::Server on 127.0.0.1, port 0, serving on a thread of its own
// until it is destroyed. Tests install handlers through `server()`; the
// handlers run on the server's threads.
class FakeCorrald {
 public:
  FakeCorrald();
  ~FakeCorrald();
  FakeCorrald(const FakeCorrald&) = delete;
  FakeCorrald& operator=(const FakeCorrald&) = delete;

  httplib::Server& server() { return server_; }
  int port() const { return port_; }
  // What `corral --server` takes to reach this server.
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// Answers with `status` and `body`, as JSON. The `std::string` form sends
// `body` as it is spelled; the `Json` form sends `body.dump()`.
void reply(httplib::Response& res, int status, const std::string& body);
void reply(httplib::Response& res, int status, const Json& body);

// Answers with `status` and corrald's error body: {"error": {code, message}}.
void replyError(httplib::Response& res, int status, const std::string& code,
                const std::string& message);

// The requests a `FakeCorrald`'s handlers were sent, in order, each as
// "METHOD PATH" followed by " BODY" when there is a body. Handlers add to it
// on the server's threads; tests read it once the command has returned.
class RequestLog {
 public:
  void add(const httplib::Request& req);
  std::vector<std::string> lines() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

// A Running cluster `name` as GET /api/v1/clusters/{name} answers, with its
// login node at 172.29.1.3, port 22, and revision 3 applied.
Json runningCluster(const std::string& name);

// A change answer (HTTP 202): revision `revision`, made, with `message`, and
// the cluster `cluster`.
Json changeAccepted(int64_t revision, const std::string& message, const Json& cluster);

// A GET /api/v1/clusters/{name}/revisions answer whose only entry is
// revision `revision` in `state`, by "api".
Json revisionsWith(int64_t revision, const std::string& state);

// Sets TZ for its lifetime and restores it after, so that local-time output
// is the same on every machine. POSIX TZ strings need no tzdata.
class ScopedTz {
 public:
  explicit ScopedTz(const char* tz);
  ~ScopedTz();
  ScopedTz(const ScopedTz&) = delete;
  ScopedTz& operator=(const ScopedTz&) = delete;

 private:
  bool had_ = false;
  std::string old_;
};

// A fresh directory under the system's temporary directory, removed with
// everything in it when the `TempDir` is destroyed.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// What one `corral` command line did: its exit code and what it printed.
struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs `corral args...` against `ctx`, with `ctx.out` and `ctx.err` replaced
// by buffers whose text the result holds.
CliResult runCorral(std::vector<std::string> args, CliContext ctx);

// A fixture for commands that talk to a `FakeCorrald`: `run` runs a command
// line with `--server` pointed at `corrald_`, the clock `clock_` and the home
// directory `home_`.
class FakeCorraldTest : public ::testing::Test {
 protected:
  CliResult run(std::vector<std::string> args);

  // The context `run` uses; a fixture that needs more of it (a terminal, an
  // `exec`) adds to this one.
  virtual CliContext context();

  // Answers `method` ("GET", "POST", "PUT", "PATCH" or "DELETE") requests
  // for `path` with `status` and `body`, logging each in `requests_`.
  void serve(const std::string& method, const std::string& path, int status, const Json& body);

  // Serves what a command that follows a change of cluster `name` polls:
  // GET /api/v1/clusters/{name} answers `cluster`, and GET …/revisions has
  // revision `revision` Pending on the first poll and in `finalState` from
  // the second on.
  void serveChangeOutcome(const std::string& name, const Json& cluster, int64_t revision,
                          const std::string& finalState = "Applied");

  FakeCorrald corrald_;
  FakeCliClock clock_;
  TempDir home_;
  RequestLog requests_;
  std::atomic<int> revisionPolls_{0};
};

}  // namespace corral
