// Rolling the workers (an image update, `cluster restart-workers`): every
// worker whose pod runs another image or roll generation than the render
// asks for is drained, recreated once no job runs on it, and resumed as
// soon as its new slurmd registers, so no job is killed and every node is
// back in service as early as it can be. Nodes an administrator (or the
// health agent) drained are recreated too but stay drained.
//
// Idempotent like every pass: a corrald that dies mid-roll finds the nodes
// already recreated current and rolls the rest.

#include <algorithm>
#include <map>
#include <sstream>

#include "reconcile/reconciler.h"
#include "slurm/hostlist.h"

namespace corral {
namespace {

bool drained(const NodeObservation& o) { return o.state.find("drain") != std::string::npos; }

// `squeue -h -o "%i %N"` as node -> "its job ids, space-separated"; a
// pending job (no nodes) is no one's.
std::map<std::string, std::string> jobsByNode(const std::string& squeueOut) {
  std::map<std::string, std::string> out;
  std::istringstream lines(squeueOut);
  std::string id, nodes;
  while (lines >> id && std::getline(lines, nodes)) {
    auto at = nodes.find_first_not_of(' ');
    if (at == std::string::npos) continue;
    auto hosts = expandHostlist(nodes.substr(at));
    if (!hosts.isOk()) continue;
    for (const auto& h : *hosts) out[h] += (out[h].empty() ? "" : " ") + id;
  }
  return out;
}

}  // namespace

StatusOr<std::vector<std::string>> Reconciler::workersToRoll(const std::string& cluster,
                                                             const RenderedCluster& rendered) {
  std::vector<std::string> out;
  for (const auto& pod : rendered.pods) {
    if (pod.role != "worker") continue;
    ASSIGN_OR_RETURN(PodStatus st, runtime_.podStatus(cluster, pod.name));
    // A reboot (generation) recreates at once; see syncPods.
    if (!st.running || st.generation != pod.generation) continue;
    if (st.imageId != pod.image.id || st.rollGeneration != pod.rollGeneration) out.push_back(pod.name);
  }
  return out;
}

Status Reconciler::rollWorkers(const ClusterRecord& desired, const RenderedCluster& rendered,
                               const std::vector<std::string>& nodes,
                               const std::function<Status()>& stillWanted,
                               std::set<std::string>* recreated) {
  const std::string& name = desired.spec.name;
  (void)refreshNodes(name);
  auto observed = observedNodes(name);
  // Drain what is not drained already (an administrator's reason stays).
  std::vector<std::string> toDrain;
  for (const auto& n : nodes)
    if (auto o = observed.find(n); o == observed.end() || !drained(o->second)) toDrain.push_back(n);
  if (!toDrain.empty())
    RETURN_IF_ERROR(slurmCommand(name, {"scontrol", "update", "nodename=" + compressHostlist(toDrain),
                                        "state=drain", std::string("reason=") + kRollReason})
                        .status());
  std::vector<std::string> pending = nodes;
  std::set<std::string> rolled;
  std::string lastPhase;
  const std::string target = "image " + desired.spec.image.name;
  while (true) {
    std::string waiting;
    // One squeue for every node still to roll, whatever the cluster's size.
    auto listed = slurmCommand(name, {"squeue", "-h", "-w", compressHostlist(pending), "-o", "%i %N"});
    if (!listed.isOk()) return listed.status();
    auto busy = jobsByNode(*listed);
    for (auto it = pending.begin(); it != pending.end();) {
      if (auto jobs = busy.find(*it); jobs != busy.end()) {
        if (waiting.empty()) waiting = *it + " waits for job " + jobs->second;
        ++it;
        continue;
      }
      const PodSpec* spec = nullptr;
      for (const auto& p : rendered.pods)
        if (p.name == *it) spec = &p;
      if (spec == nullptr) return internalError("no pod " + *it + " in the render");
      event(name, "Normal", "WorkerRolled",
            "recreating " + *it + " on " + target + " (" + spec->image.id.substr(0, 12) +
                ", roll generation " + std::to_string(spec->rollGeneration) + "); no job runs on it",
            {*it});
      RETURN_IF_ERROR(runtime_.stopPod(name, *it));
      RETURN_IF_ERROR(runtime_.startPod(*spec).withContext("recreating " + *it));
      RETURN_IF_ERROR(waitPodsReady(name, {*it}, "starting " + *it,
                                    clock_.now() + options_.applyTimeout, stillWanted));
      recreated->insert(*it);
      rolled.insert(*it);
      it = pending.erase(it);
    }
    // Back in service as soon as its new slurmd answers: only drains of ours.
    (void)refreshNodes(name);
    std::vector<std::string> resume;
    for (const auto& [node, o] : observedNodes(name))
      if (rolled.count(node) && drained(o) && o.reason.rfind(kRollReason, 0) == 0 &&
          o.state.back() != '*')
        resume.push_back(node);
    if (!resume.empty())
      (void)slurmCommand(name, {"scontrol", "update", "nodename=" + compressHostlist(resume), "state=resume"});
    if (pending.empty()) return Status::ok();
    std::string phase = "rolling workers to " + target + ": " + std::to_string(rolled.size()) + "/" +
                        std::to_string(nodes.size()) + " done; " + waiting;
    if (phase != lastPhase) setPhase(name, phase);
    lastPhase = phase;
    RETURN_IF_ERROR(stillWanted());
    clock_.sleepFor(std::chrono::milliseconds(500));
  }
}

}  // namespace corral
