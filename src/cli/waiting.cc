#include "cli/waiting.h"

#include <algorithm>
#include <ostream>

#include "cli/command.h"

namespace corral {
namespace {

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string historyHint(const std::string& name) {
  return "follow it with: corral cluster history " + name;
}

// The entry for revision `n` in a GET /revisions answer, or null.
const Json* findRevision(const Json& body, int64_t n) {
  const Json& list = jsonChild(body, "revisions");
  if (!list.is_array()) return nullptr;
  for (const Json& r : list) {
    if (jsonInt(r, "revision", -1) == n) return &r;
  }
  return nullptr;
}

int64_t newestRevision(const Json& body) {
  int64_t newest = 0;
  const Json& list = jsonChild(body, "revisions");
  if (!list.is_array()) return 0;
  for (const Json& r : list) newest = std::max(newest, jsonInt(r, "revision"));
  return newest;
}

// The revision corrald restores after `failed` failed: the cluster's applied
// revision when the failure is first seen. Should the rollback already have
// been applied by then (so that the applied revision is the rollback itself),
// the newest Applied revision before `failed`, which is what it restored.
int64_t restoredRevision(const Json& body, int64_t failed) {
  int64_t applied = jsonInt(body, "appliedRevision");
  if (applied > 0 && applied < failed) return applied;
  int64_t best = 0;
  const Json& list = jsonChild(body, "revisions");
  if (!list.is_array()) return 0;
  for (const Json& r : list) {
    int64_t n = jsonInt(r, "revision");
    if (n < failed && jsonString(r, "state") == "Applied") best = std::max(best, n);
  }
  return best;
}

// A problem a wait rides out: corrald restarting or briefly busy.
bool isTransient(const Status& s) { return s.code() == Code::kUnavailable; }

}  // namespace

std::ostream& humanStream(CliContext& ctx, OutputFormat format) {
  return format == OutputFormat::kJson ? *ctx.err : *ctx.out;
}

bool changeMade(const Json& answer) {
  const Json& made = jsonChild(jsonChild(answer, "change"), "made");
  return made.is_boolean() && made.get<bool>();
}

void reportProgress(CliContext& ctx, const Json& cluster, std::string& last) {
  std::string line = progressLine(cluster);
  if (line != last) {
    *ctx.err << line << "\n";
    ctx.err->flush();
    last = line;
  }
}

Status waitUntilRunning(ApiClient& api, CliContext& ctx, const std::string& name,
                        int timeoutSeconds, OutputFormat format, const Json& first) {
  std::string last;
  reportProgress(ctx, first, last);
  return pollCluster(
      api, ctx, name, timeoutSeconds, "become Running",
      [&](const StatusOr<Json>& got) -> StatusOr<Verdict> {
        if (!got.isOk()) {
          if (got.status().code() == Code::kNotFound) {
            return notFound("cluster " + quoted(name) + " was deleted while being created");
          }
          return got.status();
        }
        const Json& c = *got;
        reportProgress(ctx, c, last);
        std::string status = jsonString(c, "status");
        if (status == "Running") {
          if (format == OutputFormat::kJson) {
            *ctx.out << renderJson(c);
          } else {
            *ctx.out << clusterDetail(c, ctx.clock->unixMillis() / 1000);
          }
          return Verdict::kDone;
        }
        if (status == "Failed") {
          std::string reason = jsonString(c, "reason", "no reason given");
          return failedPrecondition("cluster " + quoted(name) + " failed: " + reason);
        }
        if (status == "Deleting" || status == "Deleted" || status == "Terminating" ||
            status == "Terminated") {
          return failedPrecondition("cluster " + quoted(name) + " is " + status +
                                    "; it will not become Running");
        }
        return Verdict::kKeepWaiting;
      });
}

Status followChange(ApiClient& api, CliContext& ctx, const std::string& name, const Json& answer,
                    const FollowOptions& options) {
  const Json& change = jsonChild(answer, "change");
  const bool json = options.format == OutputFormat::kJson;
  std::ostream& human = humanStream(ctx, options.format);
  if (!changeMade(answer)) {
    if (json) {
      *ctx.out << renderJson(answer);
    } else {
      *ctx.out << "nothing to change\n";
    }
    return Status::ok();
  }
  int64_t revision = jsonInt(change, "revision");
  std::string n = std::to_string(revision);
  human << changeHeadline(change) << options.notes;
  if (!options.wait) {
    if (json) *ctx.out << renderJson(answer);
    human << "revision " << n << " requested; " << historyHint(name) << "\n";
    return Status::ok();
  }
  human.flush();

  std::string last = progressLine(jsonChild(answer, "cluster"));
  auto deadline = ctx.clock->now() + std::chrono::seconds(options.timeoutSeconds);
  bool failed = false;
  int64_t restored = 0;
  Json failedEntry;
  std::string state = "Pending";
  Status lastTransient;
  while (true) {
    ctx.clock->sleepFor(kPollInterval);
    lastTransient = Status::ok();
    StatusOr<Json> cluster = api.getCluster(name);
    if (cluster.isOk()) {
      reportProgress(ctx, *cluster, last);
      std::string status = jsonString(*cluster, "status");
      if (status == "Deleting" || status == "Deleted" || status == "Terminating" ||
          status == "Terminated") {
        return failedPrecondition("cluster " + quoted(name) + " is " + status + "; revision " + n +
                                  " will not be applied");
      }
    } else if (cluster.status().code() == Code::kNotFound) {
      return notFound("cluster " + quoted(name) + " was deleted while revision " + n +
                      " was being applied");
    } else if (isTransient(cluster.status())) {
      lastTransient = cluster.status();
    } else {
      return cluster.status();
    }

    StatusOr<Json> history = api.listRevisions(name);
    if (!history.isOk() && !isTransient(history.status())) return history.status();
    if (!history.isOk()) lastTransient = history.status();
    if (history.isOk()) {
      const Json* entry = findRevision(*history, revision);
      if (entry == nullptr) {
        return internalError("corrald has no record of revision " + n + " of cluster " +
                             quoted(name) + "; see: corral cluster history " + name);
      }
      if (!failed) {
        state = jsonString(*entry, "state");
        if (state == "Applied") {
          if (json) *ctx.out << renderJson(*entry);
          human << "revision " << n << " applied\n";
          return Status::ok();
        }
        if (state == "Superseded") {
          // Every change is made on top of the newest spec, so a newer
          // change by someone (not corral's rollback) carries this one too:
          // follow it.
          int64_t newest = newestRevision(*history);
          const Json* next = findRevision(*history, newest);
          if (next != nullptr && newest > revision && !jsonBool(*next, "rollback")) {
            *ctx.err << "revision " << n << " was superseded by revision " << newest
                     << " (" << jsonString(*next, "message") << "), which includes it; following "
                     << "revision " << newest << "\n";
            ctx.err->flush();
            revision = newest;
            n = std::to_string(newest);
            continue;
          }
          if (json) *ctx.out << renderJson(*entry);
          return failedPrecondition("revision " + n + " was superseded by revision " +
                                    std::to_string(newestRevision(*history)) +
                                    ", a newer change, before it was applied; see: corral "
                                    "cluster history " +
                                    name);
        }
        if (state == "Failed") {
          failed = true;
          failedEntry = *entry;
          restored = restoredRevision(*history, revision);
          *ctx.err << "error: revision " << n
                   << " failed: " << jsonString(*entry, "error", "no reason given") << "\n";
          ctx.err->flush();
        }
      }
      if (failed) {
        // corrald's rollback is the next revision (it says `rollback`); a
        // change someone made meanwhile takes its place instead.
        const Json* next = findRevision(*history, revision + 1);
        if (next != nullptr) {
          std::string nextState = jsonString(*next, "state");
          bool isRollback = jsonBool(*next, "rollback");
          if (isRollback && nextState == "Applied") {
            if (json) *ctx.out << renderJson(failedEntry);
            *ctx.err << "the cluster was rolled back"
                     << (restored > 0 ? " to revision " + std::to_string(restored) : "") << "\n";
            return alreadyReported();
          }
          if (!isRollback || nextState == "Superseded") {
            if (json) *ctx.out << renderJson(failedEntry);
            *ctx.err << "a newer change replaced the rollback of revision " << n << "; "
                     << historyHint(name) << "\n";
            return alreadyReported();
          }
        }
      }
    }

    if (ctx.clock->now() >= deadline) {
      std::string secs = std::to_string(options.timeoutSeconds);
      std::string msg = failed ? "timed out after " + secs + "s waiting for cluster " +
                                     quoted(name) + " to be rolled back from revision " + n
                               : "timed out after " + secs + "s waiting for revision " + n +
                                     " of cluster " + quoted(name) + " to be applied; it is " +
                                     (state.empty() ? "?" : state);
      if (!last.empty()) msg += "; the cluster is " + last;
      if (!lastTransient.isOk()) msg += "; last error: " + lastTransient.message();
      return unavailable(msg + "; " + historyHint(name));
    }
  }
}

}  // namespace corral
