#pragma once

// How `corral` waits for corrald: polling a cluster until it reaches a
// status, and following a change (a new revision of the cluster's spec) until
// it is applied, fails and is rolled back, or is superseded. Progress goes to
// `ctx.err`, one line each time the cluster's status or phase changes; time
// comes from `ctx.clock`, so that tests run without sleeping.

#include <chrono>
#include <string>

#include "cli/client.h"
#include "cli/context.h"
#include "cli/output.h"
#include "corral/status.h"

namespace corral {

// How often a wait asks corrald how a cluster is doing.
inline constexpr std::chrono::milliseconds kPollInterval{250};

// What a poll that found the cluster concluded.
enum class Verdict { kKeepWaiting, kDone };

// Prints `cluster`'s progress line to `ctx.err` when it differs from `last`,
// the one printed before, and remembers it there.
void reportProgress(CliContext& ctx, const Json& cluster, std::string& last);

// Polls GET /clusters/{name} every `kPollInterval` until `judge` says done or
// fails, or `timeoutSeconds` pass. `judge` sees each answer (a 404 arrives as
// NotFound). A corrald that cannot be reached or is unavailable for a moment
// does not end the wait: a restart of corrald should not abort a long create.
// `goal` completes "waiting for cluster "x" to …" in the timeout's message.
template <typename Judge>
Status pollCluster(ApiClient& api, CliContext& ctx, const std::string& name, int timeoutSeconds,
                   const std::string& goal, Judge judge) {
  auto deadline = ctx.clock->now() + std::chrono::seconds(timeoutSeconds);
  Status lastTransient;
  std::string lastStatus;
  while (true) {
    ctx.clock->sleepFor(kPollInterval);
    StatusOr<Json> got = api.getCluster(name);
    if (got.isOk()) lastStatus = progressLine(*got);
    if (!got.isOk() && got.status().code() == Code::kUnavailable) {
      lastTransient = got.status();
    } else {
      lastTransient = Status::ok();
      ASSIGN_OR_RETURN(Verdict v, judge(got));
      if (v == Verdict::kDone) return Status::ok();
    }
    if (ctx.clock->now() >= deadline) {
      std::string msg = "timed out after " + std::to_string(timeoutSeconds) +
                        "s waiting for cluster \"" + name + "\" to " + goal;
      if (!lastStatus.empty()) msg += "; it is " + lastStatus;
      if (!lastTransient.isOk()) msg += "; last error: " + lastTransient.message();
      msg += "; follow it with: corral cluster get " + name;
      return unavailable(msg);
    }
  }
}

// Waits until cluster `name` is Running and prints it (`clusterDetail` or
// JSON). `first` is the cluster as the request that started it answered; its
// progress line is the first one printed. Fails when the cluster fails, is
// deleted or terminated, or the wait times out.
Status waitUntilRunning(ApiClient& api, CliContext& ctx, const std::string& name,
                        int timeoutSeconds, OutputFormat format, const Json& first);

struct FollowOptions {
  bool wait = true;
  int timeoutSeconds = 600;
  OutputFormat format = OutputFormat::kTable;
  // Lines for people printed after the change's headline, e.g.
  // `scaleSummary`'s; "" or whole lines, each ending in "\n".
  std::string notes;
};

// Reports the answer to a change request (`{"change": {...}, "cluster":
// {...}}`): its headline ("revision N: …") and `options.notes`. Then, unless
// `options.wait` is false, follows the change's revision in
// GET /clusters/{name}/revisions, polling every `kPollInterval`, until:
//   - it is Applied: prints "revision N applied"; OK.
//   - it Failed: prints "error: revision N failed: …" at once, then waits for
//     corrald's rollback (revision N+1 by "corral") and prints "the cluster
//     was rolled back to revision A"; returns `alreadyReported()`.
//   - it is Superseded by a newer change: FailedPrecondition.
//   - the cluster is being deleted or terminated: FailedPrecondition.
//   - `options.timeoutSeconds` pass: Unavailable, saying how to follow it.
// An answer with made=false prints "nothing to change"; OK. In table format
// the outcome goes to `ctx.out`; with JSON, `ctx.out` gets one document (the
// answer when not waiting, else the revision's final history entry) and the
// lines for people go to `ctx.err`.
Status followChange(ApiClient& api, CliContext& ctx, const std::string& name, const Json& answer,
                    const FollowOptions& options);

// Whether a change answer made a new revision (its "change" has made=true);
// false for "nothing to change".
bool changeMade(const Json& answer);

// Where the lines for people go: `ctx.out` for tables, `ctx.err` when
// `ctx.out` is reserved for JSON.
std::ostream& humanStream(CliContext& ctx, OutputFormat format);

}  // namespace corral
