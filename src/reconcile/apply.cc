// Applying a change to a Running cluster: the reconciler's path from the
// applied revision to the newest one, and back when that fails.
//
// A pass is idempotent and decides everything from the store and from what
// Slurm reports, never from where an earlier pass stopped: corrald killed in
// the middle of a change re-runs the pass for the same revision and
// converges to it, or rolls back to the applied one. The steps:
//   1. plan the target's nodes and render it;
//   2. try its slurm.conf in a throwaway slurmctld (src/slurm/config_check.h)
//      — a refusal here has touched nothing live;
//   3. drain nodes that go and wait for their jobs (or cancel them: --force);
//   4. write the files; start new pods, recreate pods whose generation moved,
//      stop pods of removed nodes;
//   5. restart slurmctld only when Slurm needs it (node set or a restart-only
//      parameter changed), then `scontrol reconfigure`;
//   6. wait until Slurm serves exactly the target's nodes;
//   7. record the revision as applied.
// A failure after step 2 records the revision as Failed and stores a new
// revision equal to the last applied spec, which the next pass applies the
// same way: a rollback is a change like any other.

#include <algorithm>
#include <set>
#include <sstream>
#include <thread>

#include "common/ipv4.h"
#include "common/log.h"
#include "reconcile/reconciler.h"
#include "slurm/config_check.h"
#include "slurm/hostlist.h"
#include "slurm/parsers.h"

namespace corral {
namespace {

// Drain reasons corral sets start with this; corral resumes only nodes whose
// reason does (an administrator's drain is never undone).
constexpr const char* kRemovalReason = "corral: removed by scaling down";
constexpr const char* kCorralReasonPrefix = "corral:";

// The author of revisions corral makes itself (rollbacks).
constexpr const char* kCorralAuthor = "corral";

std::string seconds(std::chrono::steady_clock::duration d) {
  std::ostringstream o;
  o.precision(2);
  o << std::fixed << std::chrono::duration<double>(d).count() << " s";
  return o.str();
}

bool isRollback(const ClusterRecord& r) { return r.changeRollback; }

// A state sinfo prints for a node whose slurmd answers.
bool serving(const std::string& state) {
  if (state.empty() || state.back() == '*' || state.back() == '~' || state.back() == '#') return false;
  return state.rfind("down", 0) != 0 && state.rfind("unk", 0) != 0 &&
         state.rfind("not_responding", 0) != 0 && state.rfind("future", 0) != 0;
}

}  // namespace

StatusOr<std::string> Reconciler::slurmCommand(const std::string& cluster,
                                               const std::vector<std::string>& argv,
                                               std::chrono::seconds timeout) {
  ProcessOptions po;
  po.timeout = timeout;
  ASSIGN_OR_RETURN(ProcessResult res, runtime_.exec(cluster, "controller", argv, po));
  if (res.exitCode != 0) {
    std::string err = res.err.empty() ? res.out : res.err;
    while (!err.empty() && err.back() == '\n') err.pop_back();
    return unavailable(argv[0] + " failed: " + err);
  }
  return res.out;
}

StatusOr<std::vector<std::string>> Reconciler::jobsOn(const std::string& cluster,
                                                      const std::vector<std::string>& filter) {
  std::vector<std::string> argv = {"squeue", "-h", "-o", "%i %u %j"};
  argv.insert(argv.end(), filter.begin(), filter.end());
  ASSIGN_OR_RETURN(std::string out, slurmCommand(cluster, argv, std::chrono::seconds(5)));
  std::vector<std::string> jobs;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line))
    if (!line.empty()) jobs.push_back(line);
  return jobs;
}

Status Reconciler::runApply(ClusterRecord record) {
  const std::string name = record.spec.name;
  const int64_t target = record.revision;
  const auto started = clock_.now();
  auto stillWanted = [&]() -> Status {
    ASSIGN_OR_RETURN(ClusterRecord now, store_.getCluster(name));
    if (now.status != ClusterStatus::kRunning || now.revision != target)
      return conflict("revision " + std::to_string(target) + " was superseded");
    return Status::ok();
  };
  auto superseded = [&](const Status& s) {
    if (s.code() != Code::kConflict || stillWanted().isOk()) return false;
    enqueue(name);
    return true;
  };
  const std::string what = record.changeMessage.empty() ? "" : " (" + record.changeMessage + ")";
  // A pass that ended waiting for a drain is continued by the next, which
  // does not try the configuration again (it was tried for this revision).
  bool continuing = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = configTried_.find(name);
    continuing = it != configTried_.end() && it->second == target;
  }
  if (!continuing) setPhase(name, "applying revision " + std::to_string(target) + what);

  // 1. Plan and render the target, on an image that is built.
  if (Status s = ensureImage(name, record.spec.image); !s.isOk()) return failApply(record, s, false);
  auto planned = planNodes(record.spec, record.subnet, record.nodes);
  if (!planned.isOk()) return failApply(record, planned.status(), false);
  RETURN_IF_ERROR(assignPhysicalIds(&*planned));
  ClusterRecord desired = record;
  desired.nodes = *planned;
  auto rendered = renderCluster(desired);
  if (!rendered.isOk()) return failApply(record, rendered.status(), false);
  std::set<std::string> targetNames;
  for (const auto& n : desired.nodes) targetNames.insert(n.name);
  std::vector<std::string> removed;
  for (const auto& n : record.nodes)
    if (!targetNames.count(n.name)) removed.push_back(n.name);

  // 2. Try the configuration before anything live changes.
  if (!continuing) {
    if (Status s = tryConfiguration(desired, rendered->files); !s.isOk()) {
      if (superseded(s)) return Status::ok();
      return failApply(record, s, false);
    }
    std::lock_guard<std::mutex> l(mu_);
    configTried_[name] = target;
  }

  // 3. Nodes that go are drained first; their jobs finish (or are
  // cancelled). While they run, the pass asks to be run again.
  bool waiting = false;
  if (Status s = drainRemovedNodes(record, removed, &waiting); !s.isOk()) {
    if (superseded(s)) return Status::ok();
    return failApply(record, s, true);
  }
  if (waiting) {
    enqueueAfter(name, std::chrono::milliseconds(1000));
    return Status::ok();
  }

  // 4–6. Files, pods, controller, the workers' roll, and Slurm's view of
  // the nodes.
  Status s = applyLive(record, desired, *rendered, removed, stillWanted);
  if (!s.isOk()) {
    if (superseded(s)) return Status::ok();
    return failApply(record, s, true);
  }

  // 7. Done.
  return finishApply(record, clock_.now() - started,
                     [&](ClusterRecord& c) { c.nodes = desired.nodes; });
}

Status Reconciler::finishApply(const ClusterRecord& record,
                               std::chrono::steady_clock::duration took,
                               const std::function<void(ClusterRecord&)>& observed) {
  const std::string& name = record.spec.name;
  const int64_t target = record.revision;
  const std::string what = record.changeMessage.empty() ? "" : " (" + record.changeMessage + ")";
  auto done = mutate(name, [&](ClusterRecord& c) {
    if (c.revision != target) return;
    observed(c);
    c.appliedRevision = target;
    c.phase.clear();
    if (!isRollback(c)) c.reason.clear();
  });
  if (!done.isOk()) return done.status();
  if (done->appliedRevision != target) {
    enqueue(name);
    return Status::ok();
  }
  (void)store_.setRevisionState(name, target, RevisionState::kApplied, "");
  event(name, "Normal", isRollback(record) ? "RolledBack" : "Applied",
        "revision " + std::to_string(target) + what + " applied in " + seconds(took), {"", target});
  return Status::ok();
}

Status Reconciler::assignPhysicalIds(std::vector<NodeRecord>* nodes) {
  for (auto& n : *nodes) {
    if (!n.physicalId.empty()) continue;
    ASSIGN_OR_RETURN(int64_t seq, store_.nextSequence("node"));
    n.physicalId = options_.physicalIdPrefix + "_node_" + std::to_string(seq);
  }
  return Status::ok();
}

Status Reconciler::applyLive(const ClusterRecord& record, const ClusterRecord& desired,
                             const RenderedCluster& rendered, const std::vector<std::string>& removed,
                             const std::function<Status()>& stillWanted) {
  const std::string& name = desired.spec.name;
  Deadline deadline = clock_.now() + options_.applyTimeout;
  std::vector<std::string> startedPods;
  std::set<std::string> recreated;
  ASSIGN_OR_RETURN(std::vector<std::string> rolling, workersToRoll(name, rendered));
  std::set<std::string> rollingSet(rolling.begin(), rolling.end());
  RETURN_IF_ERROR(runtime_.writeFiles(name, rendered.files));
  RETURN_IF_ERROR(prepareHomes(desired));
  RETURN_IF_ERROR(syncPods(desired, rendered, removed, rollingSet, &startedPods, &recreated));
  RETURN_IF_ERROR(waitPodsReady(name, startedPods, "starting pods", deadline, stillWanted));
  RETURN_IF_ERROR(syncController(record, desired));
  if (!rolling.empty()) {
    RETURN_IF_ERROR(rollWorkers(desired, rendered, rolling, stillWanted, &recreated));
    // The roll waits for jobs as long as they run; what follows gets its
    // own time.
    deadline = clock_.now() + options_.applyTimeout;
  }
  // Every pod this change (re)started must serve, the rolled workers too.
  std::set<std::string> mustServe(startedPods.begin(), startedPods.end());
  mustServe.insert(recreated.begin(), recreated.end());
  return waitNodesServing(desired, rendered, deadline, stillWanted, recreated, mustServe);
}

Status Reconciler::tryConfiguration(const ClusterRecord& desired, const RenderedFiles& files) {
  const std::string& name = desired.spec.name;
  auto live = runtime_.readFile(name, "etc/slurm/slurm.conf");
  auto next = files.find("etc/slurm/slurm.conf");
  if (next == files.end()) return internalError("the render has no slurm.conf");
  if (live.isOk() && *live == next->second.content) return Status::ok();
  setPhase(name, "trying the new Slurm configuration");
  RenderedFiles candidate;
  for (const auto& [path, file] : files) {
    const std::string prefix = "etc/slurm/";
    if (path.rfind(prefix, 0) == 0 && path.find('/', prefix.size()) == std::string::npos &&
        path != "etc/slurm/slurmdbd.conf")
      candidate[std::string(kCandidateDir) + "/" + path.substr(prefix.size())] = file;
  }
  RETURN_IF_ERROR(runtime_.writeFiles(name, candidate));
  ASSIGN_OR_RETURN(Cidr net, parseCidr(desired.subnet));
  ProcessOptions po;
  po.timeout = std::chrono::seconds(20);
  ASSIGN_OR_RETURN(ProcessResult res,
                   runtime_.exec(name, "controller",
                                 configCheckCommand(kCandidateMountPoint,
                                                    hostAddress(net, kControllerOffset)),
                                 po));
  return configCheckResult(res);
}

Status Reconciler::drainRemovedNodes(const ClusterRecord& record,
                                     const std::vector<std::string>& removed, bool* waiting) {
  *waiting = false;
  if (removed.empty()) return Status::ok();
  const std::string& name = record.spec.name;
  std::string hostlist = compressHostlist(removed);
  // A pass that restarted slurmctld before corrald died may find the nodes
  // already gone from Slurm: then there is nothing to drain.
  auto known = slurmCommand(name, {"sinfo", "-h", "-N", "-n", hostlist, "-o", "%N"});
  if (!known.isOk() || known->empty()) return Status::ok();
  const std::string draining = "draining " + hostlist;
  if (record.phase.rfind(draining, 0) != 0) setPhase(name, draining);
  // Again on every pass: idempotent, and a node an admin resumed meanwhile
  // is drained again.
  RETURN_IF_ERROR(slurmCommand(name, {"scontrol", "update", "nodename=" + hostlist, "state=drain",
                                      std::string("reason=") + kRemovalReason})
                      .status());
  (void)refreshNodes(name);  // So that `cluster get` shows the drain.
  auto jobs = slurmCommand(name, {"squeue", "-h", "-w", hostlist, "-o", "job %i (%u, %j)"});
  if (!jobs.isOk()) return jobs.status();
  if (jobs->empty()) return Status::ok();
  std::string list = *jobs;
  while (!list.empty() && list.back() == '\n') list.pop_back();
  for (size_t p = list.find('\n'); p != std::string::npos; p = list.find('\n', p))
    list.replace(p, 1, ", ");
  if (record.changeForce) {
    bool first = false;
    {
      std::lock_guard<std::mutex> l(mu_);
      auto [it, inserted] = jobsCancelled_.emplace(name, record.revision);
      first = inserted || it->second != record.revision;
      it->second = record.revision;
    }
    if (first)
      event(name, "Warning", "JobsCancelled",
            "scale --force: cancelling jobs on " + hostlist + ": " + list, {"", record.revision});
    RETURN_IF_ERROR(slurmCommand(name, {"scancel", "--nodelist=" + hostlist}).status());
  } else {
    std::string phase = draining + ": waiting for jobs to finish (" + list +
                        "); scale with --force to cancel them";
    if (phase != record.phase) setPhase(name, phase);
  }
  // The jobs may run for hours: this pass ends here, and a later one looks
  // again (no worker is held meanwhile).
  *waiting = true;
  return Status::ok();
}

Status Reconciler::syncPods(const ClusterRecord& desired, const RenderedCluster& rendered,
                            const std::vector<std::string>& removed,
                            const std::set<std::string>& rolling, std::vector<std::string>* started,
                            std::set<std::string>* recreated) {
  const std::string& name = desired.spec.name;
  auto observed = observedNodes(name);
  // Pods that are missing, dead, or of another generation start (again);
  // running ones get any change of mounts (an attached volume) in place.
  std::vector<const PodSpec*> toStart;
  for (const auto& pod : rendered.pods) {
    ASSIGN_OR_RETURN(PodStatus st, runtime_.podStatus(name, pod.name));
    bool current = st.generation == pod.generation && st.rollGeneration == pod.rollGeneration &&
                   st.imageId == pod.image.id;
    if (st.running && (current || rolling.count(pod.name))) {
      RETURN_IF_ERROR(runtime_.updateMounts(pod));
      continue;
    }
    if (st.running) {
      std::string why = st.imageId != pod.image.id
                            ? "image " + pod.image.name + " (" + pod.image.id.substr(0, 12) + ")"
                            : "generation " + std::to_string(st.generation) + " -> " +
                                  std::to_string(pod.generation);
      event(name, "Normal", "PodRecreated", "recreating pod " + pod.name + " (" + why + ")",
            {pod.role == "worker" ? pod.name : "", desired.revision});
      // A rebooting node's jobs end now (NODE_FAIL) rather than when Slurm
      // notices; drained nodes stay drained (ReturnToService brings a down
      // node back when its slurmd registers).
      auto o = observed.find(pod.name);
      bool drained = o != observed.end() && o->second.state.find("drain") != std::string::npos;
      if (pod.role == "worker" && !drained)
        (void)slurmCommand(name, {"scontrol", "update", "nodename=" + pod.name, "state=down",
                                  "reason=corral: rebooting"});
      RETURN_IF_ERROR(runtime_.stopPod(name, pod.name));
      recreated->insert(pod.name);
    }
    toStart.push_back(&pod);
  }
  if (!toStart.empty())
    setPhase(name, "starting " + std::to_string(toStart.size()) +
                       (toStart.size() == 1 ? " pod" : " pods"));
  std::string failedPod;
  if (Status s = startPods(toStart, started, &failedPod); !s.isOk())
    return s.withContext("starting pod " + failedPod);
  // Pods of removed nodes go, and so does any pod the target does not have
  // (left by a change that failed half-way, say).
  std::set<std::string> keep;
  for (const auto& pod : rendered.pods) keep.insert(pod.name);
  std::set<std::string> stop(removed.begin(), removed.end());
  ASSIGN_OR_RETURN(std::vector<std::string> present, runtime_.listPods(name));
  for (const auto& pod : present)
    if (!keep.count(pod)) stop.insert(pod);
  for (const auto& pod : stop) RETURN_IF_ERROR(runtime_.stopPod(name, pod));
  return Status::ok();
}

Status Reconciler::prepareHomes(const ClusterRecord& desired) {
  // The shared image cache (containers.cachePath, under /shared): every user
  // makes their own directory in it, like in /tmp.
  const std::string& cache = desired.spec.containers.cachePath;
  if (!cache.empty())
    RETURN_IF_ERROR(runtime_.prepareSharedDirectory(
        desired.spec.name, cache.substr(std::string(kSharedPath).size() + 1), 0, 0, 01777));
  if (desired.spec.users.empty()) return Status::ok();
  RETURN_IF_ERROR(runtime_.prepareSharedDirectory(desired.spec.name, "home", 0, 0, 0755));
  for (const auto& u : desired.spec.users)
    RETURN_IF_ERROR(
        runtime_.prepareSharedDirectory(desired.spec.name, "home/" + u.name, u.uid, u.uid, 0700));
  return Status::ok();
}

Status Reconciler::syncController(const ClusterRecord& record, const ClusterRecord& desired) {
  const std::string& name = desired.spec.name;
  std::string key = controllerRestartKey(desired);
  if (key != record.controllerConfigKey) {
    // Slurm 22.05 learns a changed node set (and a few parameters) only when
    // slurmctld starts. Its state (queue, running jobs) is saved on SIGTERM
    // and read back; jobs keep running on their nodes meanwhile.
    setPhase(name, "restarting slurmctld (the node set or a restart-only parameter changed)");
    RETURN_IF_ERROR(
        runtime_.restartDaemon(name, "controller", "slurmctld", std::chrono::seconds(60)));
    auto saved = mutate(name, [&](ClusterRecord& c) { c.controllerConfigKey = key; });
    if (!saved.isOk()) return saved.status();
  }
  // Every apply ends with a reconfigure: slurmctld re-reads slurm.conf and
  // tells every slurmd to, and slurmds re-register at once after a restart.
  setPhase(name, "reconfiguring Slurm");
  // A slurmctld that came back is answering within seconds; one that does
  // not (it refused its configuration) fails the change within 30 s.
  const auto until = clock_.now() + std::chrono::seconds(30);
  while (true) {
    auto r = slurmCommand(name, {"scontrol", "reconfigure"}, std::chrono::seconds(10));
    if (r.isOk()) return Status::ok();
    if (clock_.now() >= until) return r.status();
    clock_.sleepFor(std::chrono::milliseconds(250));
  }
}

Status Reconciler::waitNodesServing(const ClusterRecord& desired, const RenderedCluster& rendered,
                                    Deadline deadline,
                                    const std::function<Status()>& stillWanted,
                                    const std::set<std::string>& recreated,
                                    const std::set<std::string>& mustServe) {
  const std::string& name = desired.spec.name;
  std::set<std::string> want;
  for (const auto& n : desired.nodes) want.insert(n.name);
  setPhase(name, "waiting for Slurm to serve " + std::to_string(want.size()) + " nodes");
  std::string problem;
  while (true) {
    // A node that fails meanwhile is the health pass's business, not this
    // change's: recreate it here too, since passes do not overlap.
    RETURN_IF_ERROR(restartDeadPods(desired, rendered));
    Status s = refreshNodes(name);
    if (s.isOk()) {
      auto obs = observedNodes(name);
      problem.clear();
      std::vector<std::string> toResume;
      for (const auto& [node, o] : obs) {
        if (!want.count(node)) {
          problem = "Slurm still has node " + node;
          break;
        }
        // Nodes corral drained for a removal that was then undone (a
        // rollback, or a scale back up) return to service, and so do nodes
        // corral drained for a fault once a reboot recreated them. Drains
        // corral did not set are left alone.
        bool ours = o.reason.rfind(kCorralReasonPrefix, 0) == 0;
        bool serve = o.reason.rfind(kRemovalReason, 0) == 0 || o.reason.rfind(kRollReason, 0) == 0 ||
                     (ours && recreated.count(node));
        if (serve && o.state.find("drain") != std::string::npos) toResume.push_back(node);
      }
      // Every target node must be known to Slurm; those this change
      // started (new or recreated pods) must also serve. A node that is
      // down for reasons of its own does not fail the change.
      for (const auto& node : want) {
        auto it = obs.find(node);
        if (!problem.empty()) break;
        if (it == obs.end()) problem = node + " is not known to Slurm";
        else if (mustServe.count(node) && !serving(it->second.state))
          problem = node + " is " + it->second.state;
      }
      if (!toResume.empty()) {
        (void)slurmCommand(name, {"scontrol", "update", "nodename=" + compressHostlist(toResume),
                                  "state=resume"});
        problem = "resuming " + compressHostlist(toResume);
      }
      if (problem.empty()) return Status::ok();
    } else {
      problem = s.message();
    }
    if (clock_.now() > deadline) return unavailable("Slurm did not converge: " + problem);
    RETURN_IF_ERROR(stillWanted());
    clock_.sleepFor(std::chrono::milliseconds(100));
  }
}

Status Reconciler::failApply(const ClusterRecord& record, const Status& why, bool touchedLive) {
  const std::string& name = record.spec.name;
  const int64_t failed = record.revision;
  const std::string error = why.message();
  LOG_WARN("cluster " << name << ": revision " << failed << " failed: " << error);
  if (isRollback(record)) {
    // Never roll back a rollback: keep retrying it on later passes.
    event(name, "Warning", "RollbackRetrying",
          "rolling back to revision " + std::to_string(record.appliedRevision) +
              " did not complete: " + error + "; retrying",
          {"", record.revision});
    (void)mutate(name, [&](ClusterRecord& c) { c.phase = "rollback did not complete; retrying"; });
    return why;
  }
  ASSIGN_OR_RETURN(std::vector<Revision> history, store_.listRevisions(name));
  const Revision* applied = nullptr;
  for (const auto& r : history)
    if (r.number == record.appliedRevision) applied = &r;
  if (applied == nullptr)
    return internalError("cluster " + name + " has no record of its applied revision " +
                         std::to_string(record.appliedRevision));
  RETURN_IF_ERROR(store_.setRevisionState(name, failed, RevisionState::kFailed, error));
  std::string what = record.changeMessage.empty() ? "" : " (" + record.changeMessage + ")";
  event(name, "Warning", "ChangeFailed",
        "revision " + std::to_string(failed) + what + " failed: " + error +
            (touchedLive ? "; rolling back to revision " : "; nothing was changed; restoring revision ") +
            std::to_string(applied->number),
        {"", failed});
  ClusterSpec restore = applied->spec;
  auto r = mutate(name, [&](ClusterRecord& c) {
    if (c.revision != failed) return;  // A newer change replaced it anyway.
    c.spec = restore;
    c.revision = failed + 1;
    c.changeAuthor = kCorralAuthor;
    c.changeRollback = true;
    c.changeMessage = "roll back to revision " + std::to_string(applied->number) +
                      " after revision " + std::to_string(failed) + " failed";
    c.changeForce = false;
    c.reason = "revision " + std::to_string(failed) + what + " failed and was rolled back: " + error;
    c.phase = "rolling back";
    // What slurmctld runs with is uncertain after a failure that reached
    // it: the rollback restarts it to be sure.
    if (touchedLive) c.controllerConfigKey.clear();
  }, RecordPart::kAll);
  if (!r.isOk()) return r.status();
  enqueue(name);
  return Status::ok();
}

Status Reconciler::correctDrift(const ClusterRecord& record, const RenderedCluster& rendered) {
  const std::string& name = record.spec.name;
  RenderedFiles drifted;
  std::string which;
  for (const auto& [path, file] : rendered.files) {
    auto onDisk = runtime_.readFile(name, path);
    if (onDisk.isOk() && *onDisk == file.content) continue;
    drifted[path] = file;
    which += (which.empty() ? "" : ", ") + path;
  }
  if (drifted.empty()) return Status::ok();
  RETURN_IF_ERROR(runtime_.writeFiles(name, drifted));
  event(name, "Warning", "DriftCorrected",
        "restored files that differed from revision " + std::to_string(record.appliedRevision) +
            " (edited by hand?): " + which,
        {"", record.appliedRevision});
  bool slurmFiles = std::any_of(drifted.begin(), drifted.end(), [](const auto& f) {
    return f.first.rfind("etc/slurm/", 0) == 0;
  });
  if (slurmFiles) return slurmCommand(name, {"scontrol", "reconfigure"}).status();
  return Status::ok();
}

Status Reconciler::runTerminate(const ClusterRecord& record) {
  const std::string& name = record.spec.name;
  setPhase(name, "stopping pods; keeping configuration, state and accounting data");
  ClusterNetwork net{name, record.id, record.subnet};
  if (Status s = runtime_.stopCluster(net); !s.isOk()) {
    event(name, "Warning", "TerminateFailed", s.message());
    return s;
  }
  {
    std::lock_guard<std::mutex> l(observedMu_);
    observed_.erase(name);
  }
  auto r = mutate(name, [&](ClusterRecord& c) {
    if (c.status != ClusterStatus::kTerminating) return;
    c.status = ClusterStatus::kTerminated;
    c.phase.clear();
  });
  if (!r.isOk()) return r.status();
  event(name, "Normal", "Terminated",
        "every pod is stopped; its record, and on this host its /shared files, Slurm state "
        "and accounting database, are kept until it is deleted. Attached volumes are "
        "untouched. `corral cluster clone` starts a new cluster from its spec (empty /shared "
        "and accounting; attach the volumes again for your data)");
  return Status::ok();
}

}  // namespace corral
