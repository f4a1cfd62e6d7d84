#pragma once

// An in-process corrald API for tests that speak HTTP to it: `ApiServer` over
// `FakeStore`, `FakeRuntime` and `FakeClock` on 127.0.0.1 (port 0), with
// accounts and tokens, a realistic population of clusters, volumes, events
// and revisions (`populate`), a Slurm that answers `squeue --json` and
// `sacct --json` in the controller pod, and a snapshot of everything the
// store holds so that a test can prove a refused request changed nothing.
// The reconciler is constructed but never started, so nothing changes the
// store behind a test's back.

#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "api/server.h"
#include "fakes/fake_clock.h"
#include "fakes/fake_image_catalog.h"
#include "fakes/fake_runtime.h"
#include "fakes/fake_store.h"
#include "reconcile/reconciler.h"

namespace corral::testing_support {

// src/api/openapi.json, read from the source tree. Aborts the test binary if
// it is missing or not JSON, since every test that uses it would be void.
const nlohmann::json& openapiDocument();

// Whether an error answer's HTTP status and its body's `code` agree
// (docs/api.md: InvalidArgument 400 or 413, Unauthenticated 401, NotFound
// 404, Conflict and FailedPrecondition 409, Unavailable 503, Internal 500).
bool codeFits(int status, const std::string& code);

// The directory of corral's sources (the one holding src/ and test/).
std::filesystem::path sourceDir();

// An OpenSSH key that passes corral's validation.
inline constexpr const char* kTestSshKey =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEhtcyl2DnmY8rvK8gUTkjFaqqVzLt3v6s5kEHPr2t+T you@laptop";

struct Answer {
  int status = 0;  // 0: no HTTP answer at all (connection refused, reset, …).
  std::string raw;
  nlohmann::json body;  // Discarded (`is_discarded()`) when `raw` is not JSON.
  std::string contentType;
  std::string wire;  // `sendRaw`: everything the server wrote, every answer of it.
};

// One keep-alive connection to a server, spoken to byte by byte, for what
// httplib's client will not send. Not thread-safe.
class RawConnection {
 public:
  explicit RawConnection(int port, int timeoutMs = 5000);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool write(const std::string& bytes);
  // Reads one answer (head and Content-Length body); status 0 if the
  // connection closed or `timeoutMs` (default: the connection's) passed
  // first. What was read of an answer that timed out is kept for the next.
  Answer read(int timeoutMs = 0);

 private:
  int fd_ = -1;
  int timeoutMs_ = 0;
  std::string buffered_;
};

class ApiHarness {
 public:
  // Starts serving at once. The store holds the accounts "admin" (an
  // admin), "alice" (project team-a) and "bob" (team-b), each with a token,
  // and, when `populated`, the population below (added before serving
  // starts, so that the first metrics sample already sees it).
  //
  // The population the contract and fuzz tests work on:
  // - "a" (project default, Running): 4 GPU and 1 CPU node, a user partition
  //   "p1", MinJobAge set, login user "carol", volume "data" attached at
  //   /data, revisions 1 Applied, 2 Failed, 3 (a roll back by "corral")
  //   Applied, events of both types, health reports for slinky-0 (an XID)
  //   and slinky-1 (slurmd down), and a controller pod whose Slurm answers.
  // - "idle" (default, Running, no pods: Slurm does not answer),
  //   "old" (default, Terminated), "creating" (default, Creating),
  //   "bee" (team-b, Running).
  // - volumes "data" (attached to a), "scratch" (default), "bvol" (team-b).
  explicit ApiHarness(bool populated = true);
  ~ApiHarness();
  ApiHarness(const ApiHarness&) = delete;
  ApiHarness& operator=(const ApiHarness&) = delete;

  // Sends a request with `token` (empty: no Authorization header). `path` is
  // sent as it is, so percent-encode what needs it.
  Answer send(const std::string& method, const std::string& path, const std::string& body = "",
              const std::string& token = kAdmin);
  // Writes `request` (whole HTTP/1.1 requests, pipelined if several) to a
  // fresh connection and reads until the server closes it; the answer is
  // the first one, `wire` holds them all.
  Answer sendRaw(const std::string& request, int timeoutMs = 10000);

  // What a request could change, as JSON: every cluster's record (by its
  // version, which the store bumps on every write), status and revisions,
  // how many events it has, the files of its runtime (by size), volumes,
  // accounts, tokens and the volume directories under the data directory.
  nlohmann::json snapshot();

  // How long `send` waits for an answer (30 s unless set).
  void setReadTimeout(std::chrono::milliseconds timeout);

  std::string token(const std::string& user) const;
  int port() const { return api_->port(); }

  // Whose token `send` uses by default.
  static constexpr const char* kAdmin = "@admin";

  FakeStore store;
  FakeRuntime runtime;
  FakeImageCatalog images;
  FakeClock clock;
  std::filesystem::path dataDir;

 private:
  void populate();
  static Answer parse(int status, std::string raw, std::string contentType);

  std::unique_ptr<Reconciler> reconciler_;
  std::unique_ptr<ApiServer> api_;
  std::unique_ptr<httplib::Client> client_;
  std::thread serving_;
  std::map<std::string, std::string> tokens_;
};

}  // namespace corral::testing_support
