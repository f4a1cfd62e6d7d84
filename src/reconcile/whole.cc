// The reconciler's passes over clusters on a runtime that takes them whole
// (`ClusterRuntime`: Kubernetes through Slinky). The same states, revisions,
// rollbacks and events as the pod-level passes, but each pass does one
// step and returns: it applies the desired objects once per revision, or
// reads what the runtime observes (which costs the runtime no request) and
// records it, then asks to be run again (`enqueueAfter`) or waits for the
// runtime's change callback. No pass sleeps on a rollout, so one slow
// cluster never holds a worker that another needs.

#include "reconcile/reconciler.h"

#include <algorithm>

#include "common/log.h"

namespace corral {
namespace {

using std::chrono::milliseconds;

// How soon a pass that is waiting looks again without news from the
// runtime's watch (which normally asks sooner), and after an error.
constexpr milliseconds kRecheck{2000};
constexpr milliseconds kRetry{3000};

std::string secondsBetween(std::chrono::steady_clock::time_point start,
                           std::chrono::steady_clock::time_point end) {
  auto ms = std::chrono::duration_cast<milliseconds>(end - start);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

bool sameNodes(const std::vector<NodeRecord>& a, const std::vector<NodeRecord>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const NodeRecord& x, const NodeRecord& y) {
                      return x.name == y.name && x.group == y.group &&
                             x.physicalId == y.physicalId && x.address == y.address;
                    });
}

}  // namespace

void Reconciler::enqueueAfter(const std::string& cluster, milliseconds delay) {
  auto due = std::chrono::steady_clock::now() + delay;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto [it, inserted] = delayed_.emplace(cluster, due);
    if (!inserted) it->second = std::min(it->second, due);
  }
  timerCv_.notify_all();
}

bool Reconciler::requeued(const std::string& cluster) {
  std::lock_guard<std::mutex> l(mu_);
  return delayed_.count(cluster) > 0;
}

void Reconciler::timerLoop() {
  std::unique_lock<std::mutex> l(mu_);
  while (!stopping_) {
    auto now = std::chrono::steady_clock::now();
    std::vector<std::string> due;
    auto next = now + std::chrono::hours(1);
    for (auto it = delayed_.begin(); it != delayed_.end();) {
      if (it->second <= now) {
        due.push_back(it->first);
        it = delayed_.erase(it);
      } else {
        next = std::min(next, it->second);
        ++it;
      }
    }
    if (!due.empty()) {
      l.unlock();
      for (const auto& name : due) enqueue(name);
      l.lock();
      continue;
    }
    timerCv_.wait_until(l, next);
  }
}

Status Reconciler::reconcileWhole(ClusterRuntime& whole, const ClusterRecord& r) {
  switch (r.status) {
    case ClusterStatus::kCreating:
      return wholeCreate(whole, r);
    case ClusterStatus::kRunning:
      if (r.revision > r.appliedRevision) return wholeApply(whole, r);
      return wholeSteady(whole, r);
    case ClusterStatus::kTerminating:
      return wholeTerminate(whole, r);
    case ClusterStatus::kDeleting:
      return wholeDelete(whole, r);
    case ClusterStatus::kFailed:
    case ClusterStatus::kTerminated:
    case ClusterStatus::kDeleted:
      return Status::ok();
  }
  return Status::ok();
}

Status Reconciler::applyWholeOnce(ClusterRuntime& whole, const ClusterRecord& r, bool* applied) {
  const std::string& name = r.spec.name;
  *applied = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = wholeApplied_.find(name);
    if (it != wholeApplied_.end() && it->second == r.revision) return Status::ok();
  }
  auto started = clock_.now();
  RETURN_IF_ERROR(whole.applyCluster(r));
  *applied = true;
  {
    std::lock_guard<std::mutex> l(mu_);
    wholeApplied_[name] = r.revision;
    wholeApplyStarted_[name] = started;
  }
  event(name, "Normal", "ObjectsApplied",
        "revision " + std::to_string(r.revision) + "'s objects were applied and accepted in " +
            secondsBetween(started, clock_.now()),
        {"", r.revision});
  return Status::ok();
}

void Reconciler::recordView(const ClusterRecord& r, const ClusterView& view) {
  const std::string& name = r.spec.name;
  for (const auto& w : view.warnings)
    event(name, "Warning", w.reason, w.message, {w.node, 0});
  std::string phase = r.status == ClusterStatus::kRunning && r.revision == r.appliedRevision
                          ? (view.state == ClusterView::State::kFailed ? "degraded: " + view.reason
                                                                       : view.phase)
                          : view.phase;
  if (view.state == ClusterView::State::kReady && r.revision == r.appliedRevision) phase.clear();
  if (phase == r.phase && sameNodes(view.nodes, r.nodes) && view.loginAddress == r.loginAddress)
    return;
  auto written = mutate(name, [&](ClusterRecord& c) {
    if (!phase.empty() || c.revision == c.appliedRevision) c.phase = phase;
    c.nodes = view.nodes;
    c.loginAddress = view.loginAddress;
  });
  if (!written.isOk()) LOG_WARN("cluster " << name << ": " << written.status().toString());
}

Status Reconciler::wholeCreate(ClusterRuntime& whole, const ClusterRecord& r) {
  const std::string& name = r.spec.name;
  if (r.phase.empty()) setPhase(name, "applying the cluster's objects");
  bool applied = false;
  if (Status s = applyWholeOnce(whole, r, &applied); !s.isOk()) {
    if (s.code() != Code::kUnavailable)
      return wholeCreateFailed(whole, r, "applying the cluster's objects: " + s.message());
    setPhase(name, "cannot reach the runtime, retrying: " + s.message());
    enqueueAfter(name, kRetry);
    return s;
  }
  auto view = whole.viewCluster(r);
  if (!view.isOk()) {
    enqueueAfter(name, milliseconds(500));
    return Status::ok();
  }
  if (view->state == ClusterView::State::kFailed) return wholeCreateFailed(whole, r, view->reason);
  if (view->state == ClusterView::State::kReady) {
    auto key = runtime_.loginHostKey(name);
    std::string hostKey = key.isOk() ? *key : "";
    for (const auto& w : view->warnings) event(name, "Warning", w.reason, w.message, {w.node, 0});
    ClusterRecord shown = r;
    shown.nodes = view->nodes;
    shown.loginAddress = view->loginAddress;
    return markCreated(shown, [&](ClusterRecord& c) {
      c.nodes = view->nodes;
      c.loginAddress = view->loginAddress;
      c.loginHostKey = hostKey;
    });
  }
  int64_t age = clock_.unixMillis() / 1000 - r.createdAt;
  if (age > options_.createTimeout.count())
    return wholeCreateFailed(whole, r,
                             "not running after " + std::to_string(age) + " s: " + view->phase);
  recordView(r, *view);
  enqueueAfter(name, kRecheck);
  return Status::ok();
}

Status Reconciler::wholeCreateFailed(ClusterRuntime& whole, const ClusterRecord& r,
                                     const std::string& reason) {
  const std::string& name = r.spec.name;
  if (!stillStatus(name, ClusterStatus::kCreating)) {
    enqueue(name);  // Deleted while creating: let the delete pass run.
    return Status::ok();
  }
  event(name, "Warning", "CreateFailed", reason);
  // CORRAL_KEEP_FAILED=1 leaves a failed cluster's objects for debugging.
  if (!getenv("CORRAL_KEEP_FAILED")) {
    auto removed = whole.removeCluster(name);
    if (!removed.isOk()) event(name, "Warning", "CleanupFailed", removed.status().message());
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    wholeApplied_.erase(name);
  }
  auto failed = mutate(name, [&](ClusterRecord& c) {
    c.status = ClusterStatus::kFailed;
    c.phase.clear();
    c.reason = reason;
  });
  return failed.isOk() ? Status::ok() : failed.status();
}

Status Reconciler::wholeApply(ClusterRuntime& whole, const ClusterRecord& r) {
  const std::string& name = r.spec.name;
  const int64_t target = r.revision;
  const std::string what = r.changeMessage.empty() ? "" : " (" + r.changeMessage + ")";
  auto forgetApplied = [&] {
    std::lock_guard<std::mutex> l(mu_);
    wholeApplied_.erase(name);
  };
  bool applied = false;
  if (Status s = applyWholeOnce(whole, r, &applied); !s.isOk()) {
    if (s.code() == Code::kUnavailable) {
      setPhase(name, "cannot reach the runtime, retrying: " + s.message());
      enqueueAfter(name, kRetry);
      return s;
    }
    // The objects before the refused one were applied: roll them back too.
    return failApply(r, s, true);
  }
  if (applied) setPhase(name, "applying revision " + std::to_string(target) + what);
  auto view = whole.viewCluster(r);
  if (!view.isOk()) {
    enqueueAfter(name, milliseconds(500));
    return Status::ok();
  }
  std::chrono::steady_clock::time_point started;
  {
    std::lock_guard<std::mutex> l(mu_);
    started = wholeApplyStarted_[name];
  }
  if (view->state == ClusterView::State::kFailed) {
    forgetApplied();
    return failApply(r, unavailable(view->reason), true);
  }
  if (view->state != ClusterView::State::kReady) {
    if (clock_.now() - started > options_.applyTimeout) {
      forgetApplied();
      return failApply(
          r, unavailable("not done after " + secondsBetween(started, clock_.now()) + ": " + view->phase),
          true);
    }
    recordView(r, *view);
    enqueueAfter(name, kRecheck);
    return Status::ok();
  }
  for (const auto& w : view->warnings) event(name, "Warning", w.reason, w.message, {w.node, 0});
  return finishApply(r, clock_.now() - started, [&](ClusterRecord& c) {
    c.nodes = view->nodes;
    c.loginAddress = view->loginAddress;
  });
}

Status Reconciler::wholeSteady(ClusterRuntime& whole, const ClusterRecord& r) {
  // After a corrald restart, apply the revision once more: it costs one
  // request per object and puts back anything changed by hand meanwhile.
  bool applied = false;
  if (Status s = applyWholeOnce(whole, r, &applied); !s.isOk()) {
    event(r.spec.name, "Warning", "ReapplyFailed", s.message(), {"", r.revision});
    enqueueAfter(r.spec.name, kRetry);
    return s;
  }
  auto view = whole.viewCluster(r);
  if (!view.isOk()) {
    enqueueAfter(r.spec.name, milliseconds(500));
    return Status::ok();
  }
  recordView(r, *view);
  return Status::ok();
}

Status Reconciler::wholeTerminate(ClusterRuntime& whole, const ClusterRecord& r) {
  const std::string& name = r.spec.name;
  if (r.phase.empty()) setPhase(name, "stopping pods; keeping configuration, secrets and claims");
  auto done = whole.suspendCluster(r);
  if (!done.isOk()) {
    event(name, "Warning", "TerminateFailed", done.status().message());
    enqueueAfter(name, kRetry);
    return done.status();
  }
  if (!*done) {
    enqueueAfter(name, kRecheck);
    return Status::ok();
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    wholeApplied_.erase(name);
  }
  auto written = mutate(name, [&](ClusterRecord& c) {
    if (c.status != ClusterStatus::kTerminating) return;
    c.status = ClusterStatus::kTerminated;
    c.phase.clear();
  });
  if (!written.isOk()) return written.status();
  event(name, "Normal", "Terminated",
        "the controller, accounting, workers and login node are deleted; the cluster's "
        "Secrets, ConfigMaps and claims (/shared, Slurm state, the accounting database) "
        "are kept until it is deleted");
  return Status::ok();
}

Status Reconciler::wholeDelete(ClusterRuntime& whole, const ClusterRecord& r) {
  const std::string& name = r.spec.name;
  if (r.phase.empty()) setPhase(name, "deleting every object corral made for the cluster");
  auto done = whole.removeCluster(name);
  if (!done.isOk()) {
    event(name, "Warning", "DeleteFailed", done.status().message());
    enqueueAfter(name, kRetry);
    return done.status();
  }
  if (!*done) {
    enqueueAfter(name, milliseconds(1000));
    return Status::ok();
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    wholeApplied_.erase(name);
    wholeApplyStarted_.erase(name);
  }
  LOG_INFO("cluster " << name << " deleted");
  return store_.deleteCluster(name);
}

}  // namespace corral
