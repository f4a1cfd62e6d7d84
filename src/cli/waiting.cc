#include "cli/waiting.h"

#include <algorithm>
#include <optional>
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

namespace {

// Following one change to its end: the revision's state in the cluster's
// history, corrald's rollback after a failure, and a newer change that
// carries this one. Each poll either ends the wait (`done`) or keeps waiting.
class ChangeFollower {
 public:
  ChangeFollower(CliContext& ctx, const std::string& name, const Json& answer,
                 const FollowOptions& options)
      : ctx_(ctx),
        name_(name),
        options_(options),
        json_(options.format == OutputFormat::kJson),
        human_(humanStream(ctx, options.format)),
        revision_(jsonInt(jsonChild(answer, "change"), "revision")),
        n_(std::to_string(revision_)),
        last_(progressLine(jsonChild(answer, "cluster"))) {}

  Status run(ApiClient& api) {
    auto deadline = ctx_.clock->now() + std::chrono::seconds(options_.timeoutSeconds);
    while (true) {
      ctx_.clock->sleepFor(kPollInterval);
      lastTransient_ = Status::ok();
      if (auto end = checkCluster(api.getCluster(name_))) return *end;
      StatusOr<Json> history = api.listRevisions(name_);
      if (!history.isOk() && !isTransient(history.status())) return history.status();
      if (!history.isOk()) lastTransient_ = history.status();
      if (history.isOk()) {
        if (auto end = checkHistory(*history)) return *end;
      }
      if (ctx_.clock->now() >= deadline) return timedOut();
    }
  }

 private:
  using Done = std::optional<Status>;

  // The cluster itself: gone or going away ends the wait.
  Done checkCluster(const StatusOr<Json>& cluster) {
    if (cluster.isOk()) {
      reportProgress(ctx_, *cluster, last_);
      std::string status = jsonString(*cluster, "status");
      if (status == "Deleting" || status == "Deleted" || status == "Terminating" ||
          status == "Terminated") {
        return failedPrecondition("cluster " + quoted(name_) + " is " + status + "; revision " +
                                  n_ + " will not be applied");
      }
    } else if (cluster.status().code() == Code::kNotFound) {
      return notFound("cluster " + quoted(name_) + " was deleted while revision " + n_ +
                      " was being applied");
    } else if (isTransient(cluster.status())) {
      lastTransient_ = cluster.status();
    } else {
      return cluster.status();
    }
    return std::nullopt;
  }

  Done checkHistory(const Json& history) {
    const Json* entry = findRevision(history, revision_);
    if (entry == nullptr) {
      return internalError("corrald has no record of revision " + n_ + " of cluster " +
                           quoted(name_) + "; see: corral cluster history " + name_);
    }
    if (!failed_) {
      state_ = jsonString(*entry, "state");
      if (state_ == "Applied") {
        if (json_) *ctx_.out << renderJson(*entry);
        human_ << "revision " << n_ << " applied\n";
        return Status::ok();
      }
      if (state_ == "Superseded") return superseded(history, *entry);
      if (state_ == "Failed") {
        failed_ = true;
        failedEntry_ = *entry;
        restored_ = restoredRevision(history, revision_);
        *ctx_.err << "error: revision " << n_
                  << " failed: " << jsonString(*entry, "error", "no reason given") << "\n";
        ctx_.err->flush();
      }
    }
    return failed_ ? afterFailure(history) : std::nullopt;
  }

  // Every change is made on top of the newest spec, so a newer change by
  // someone (not corral's rollback) carries this one too: follow it.
  Done superseded(const Json& history, const Json& entry) {
    int64_t newest = newestRevision(history);
    const Json* next = findRevision(history, newest);
    if (next != nullptr && newest > revision_ && !jsonBool(*next, "rollback")) {
      *ctx_.err << "revision " << n_ << " was superseded by revision " << newest << " ("
                << jsonString(*next, "message") << "), which includes it; following revision "
                << newest << "\n";
      ctx_.err->flush();
      revision_ = newest;
      n_ = std::to_string(newest);
      return std::nullopt;
    }
    if (json_) *ctx_.out << renderJson(entry);
    return failedPrecondition("revision " + n_ + " was superseded by revision " +
                              std::to_string(newest) +
                              ", a newer change, before it was applied; see: corral "
                              "cluster history " +
                              name_);
  }

  // corrald's rollback is the next revision (it says `rollback`); a change
  // someone made meanwhile takes its place instead.
  Done afterFailure(const Json& history) {
    const Json* next = findRevision(history, revision_ + 1);
    if (next == nullptr) return std::nullopt;
    std::string nextState = jsonString(*next, "state");
    bool isRollback = jsonBool(*next, "rollback");
    if (isRollback && nextState == "Applied") {
      if (json_) *ctx_.out << renderJson(failedEntry_);
      *ctx_.err << "the cluster was rolled back"
                << (restored_ > 0 ? " to revision " + std::to_string(restored_) : "") << "\n";
      return alreadyReported();
    }
    if (!isRollback || nextState == "Superseded") {
      if (json_) *ctx_.out << renderJson(failedEntry_);
      *ctx_.err << "a newer change replaced the rollback of revision " << n_ << "; "
                << historyHint(name_) << "\n";
      return alreadyReported();
    }
    return std::nullopt;
  }

  Status timedOut() const {
    std::string secs = std::to_string(options_.timeoutSeconds);
    std::string msg = failed_ ? "timed out after " + secs + "s waiting for cluster " +
                                    quoted(name_) + " to be rolled back from revision " + n_
                              : "timed out after " + secs + "s waiting for revision " + n_ +
                                    " of cluster " + quoted(name_) + " to be applied; it is " +
                                    (state_.empty() ? "?" : state_);
    if (!last_.empty()) msg += "; the cluster is " + last_;
    if (!lastTransient_.isOk()) msg += "; last error: " + lastTransient_.message();
    return unavailable(msg + "; " + historyHint(name_));
  }

  CliContext& ctx_;
  const std::string& name_;
  const FollowOptions& options_;
  const bool json_;
  std::ostream& human_;
  int64_t revision_;
  std::string n_;
  std::string last_;
  bool failed_ = false;
  int64_t restored_ = 0;
  Json failedEntry_;
  std::string state_ = "Pending";
  Status lastTransient_;
};

}  // namespace

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
  human << changeHeadline(change) << options.notes;
  if (!options.wait) {
    if (json) *ctx.out << renderJson(answer);
    human << "revision " << jsonInt(change, "revision") << " requested; " << historyHint(name)
          << "\n";
    return Status::ok();
  }
  human.flush();
  return ChangeFollower(ctx, name, answer, options).run(api);
}

}  // namespace corral
