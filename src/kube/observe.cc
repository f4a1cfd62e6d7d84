#include "kube/observe.h"

#include <algorithm>
#include <tuple>

namespace corral::kube {
namespace {

using Json = nlohmann::json;

// `object[a][b]…` as a string, "" where any step is missing or not one.
std::string text(const Json& object, std::initializer_list<const char*> keys) {
  const Json* at = &object;
  for (const char* key : keys) {
    if (!at->is_object()) return "";
    auto it = at->find(key);
    if (it == at->end()) return "";
    at = &*it;
  }
  return at->is_string() ? at->get<std::string>() : "";
}

// The same for an integer; `fallback` where it is missing.
int64_t number(const Json& object, std::initializer_list<const char*> keys, int64_t fallback = 0) {
  const Json* at = &object;
  for (const char* key : keys) {
    if (!at->is_object()) return fallback;
    auto it = at->find(key);
    if (it == at->end()) return fallback;
    at = &*it;
  }
  return at->is_number_integer() ? at->get<int64_t>() : fallback;
}

bool has(const Json& object, const char* section, const char* key) {
  auto it = object.find(section);
  return it != object.end() && it->is_object() && it->contains(key);
}

std::string nameOf(const Json& object) { return text(object, {"metadata", "name"}); }

// The condition of `type` in status.conditions, or null.
const Json* condition(const Json& object, const std::string& type) {
  auto status = object.find("status");
  if (status == object.end() || !status->is_object()) return nullptr;
  auto conditions = status->find("conditions");
  if (conditions == status->end() || !conditions->is_array()) return nullptr;
  for (const Json& c : *conditions)
    if (c.is_object() && c.value("type", "") == type) return &c;
  return nullptr;
}

// Container waiting reasons that mean retrying will not make the pod run:
// the kubelet has already retried and is backing off (ImagePullBackOff,
// CrashLoopBackOff), or the pod's own definition is wrong. ErrImagePull
// and ContainerCreating are a first attempt and a normal step: not here.
constexpr const char* kTerminalWaitingReasons[] = {
    "ImagePullBackOff",    "CrashLoopBackOff",      "InvalidImageName",
    "ErrImageNeverPull",   "CreateContainerConfigError", "CreateContainerError",
    "RunContainerError",
};

bool isTerminalWaiting(const std::string& reason) {
  return std::any_of(std::begin(kTerminalWaitingReasons), std::end(kTerminalWaitingReasons),
                     [&](const char* r) { return reason == r; });
}

// The first waiting container, init containers first (they run first):
// {container, reason, message}; reason "" when none waits.
std::tuple<std::string, std::string, std::string> firstWaiting(const Json& pod) {
  for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
    auto status = pod.find("status");
    if (status == pod.end() || !status->is_object() || !status->contains(list)) continue;
    const Json& statuses = (*status)[list];
    if (!statuses.is_array()) continue;
    for (const Json& c : statuses) {
      std::string reason = text(c, {"state", "waiting", "reason"});
      if (!reason.empty())
        return {c.value("name", ""), reason, text(c, {"state", "waiting", "message"})};
    }
  }
  return {"", "", ""};
}

// Rules for one pod:
// - ready: condition Ready is "True" and no deletion is under way;
// - failure: a container waits for a terminal reason ("container slurmd:
//   CrashLoopBackOff: back-off 10s …");
// - detail, for the phase text: "Terminating" while it is deleted;
//   "Pending: no node" (with the scheduler's message, PodScheduled's) while
//   unscheduled; "<phase>: <waiting reason>" while a container waits;
//   "Running: not ready" for a running pod whose probes do not pass yet;
//   else the phase alone. A pod in phase Failed (evicted) is not a failure
//   of the cluster: its controller makes a new one.
PodObservation observePod(const Json& pod) {
  PodObservation p;
  p.name = nameOf(pod);
  p.phase = text(pod, {"status", "phase"});
  if (p.phase.empty()) p.phase = "Pending";
  p.nodeName = text(pod, {"spec", "nodeName"});
  p.ip = text(pod, {"status", "podIP"});
  bool deleting = !text(pod, {"metadata", "deletionTimestamp"}).empty();
  const Json* ready = condition(pod, "Ready");
  p.ready = !deleting && ready != nullptr && ready->value("status", "") == "True";
  auto [container, reason, message] = firstWaiting(pod);
  if (isTerminalWaiting(reason))
    p.failure = "container " + container + ": " + reason + (message.empty() ? "" : ": " + message);
  if (p.ready) return p;
  if (deleting) {
    p.detail = "Terminating";
  } else if (p.phase == "Pending" && p.nodeName.empty()) {
    const Json* scheduled = condition(pod, "PodScheduled");
    std::string why = scheduled != nullptr ? scheduled->value("message", "") : "";
    p.detail = "Pending: no node" + (why.empty() ? "" : ": " + why);
  } else if (!reason.empty()) {
    p.detail = p.phase + ": " + reason;
  } else if (p.phase == "Running") {
    p.detail = "Running: not ready";
  } else {
    p.detail = p.phase + (text(pod, {"status", "reason"}).empty()
                              ? ""
                              : ": " + text(pod, {"status", "reason"}));
  }
  return p;
}

// Observed at its generation: `status.observedGeneration` equals
// `metadata.generation`. NodeSets and StatefulSets always carry it once
// their controller has looked, so a missing one means "not yet"; the other
// kinds (Controller, Accounting, LoginSet) have it only in some releases,
// and are compared only when it is there. Claims have no generation.
bool observedAtGeneration(ObjectKind kind, const Json& object, std::string* why) {
  int64_t generation = number(object, {"metadata", "generation"}, 0);
  bool always = kind == ObjectKind::kNodeSet || kind == ObjectKind::kStatefulSet;
  if (!has(object, "status", "observedGeneration")) {
    if (!always || generation == 0) return true;
    *why = std::string(objectKindName(kind)) + " " + nameOf(object) + " (generation " +
           std::to_string(generation) + " not yet observed)";
    return false;
  }
  int64_t observed = number(object, {"status", "observedGeneration"}, 0);
  if (observed == generation) return true;
  *why = std::string(objectKindName(kind)) + " " + nameOf(object) + " (generation " +
         std::to_string(generation) + ", observed " + std::to_string(observed) + ")";
  return false;
}

// The objects corral applies and waits for, by kind and name: Controller
// and Accounting named after the cluster, LoginSet `<cluster>-login`, at
// least one NodeSet. The first that is missing, as a phase text.
std::string firstMissing(const ObjectSet& set, const std::string& cluster) {
  if (!set.of(ObjectKind::kController).count(cluster)) return "Controller " + cluster;
  if (!set.of(ObjectKind::kAccounting).count(cluster)) return "Accounting " + cluster;
  if (set.of(ObjectKind::kNodeSet).empty()) return "a NodeSet";
  if (!set.of(ObjectKind::kLoginSet).count(cluster + "-login")) return "LoginSet " + cluster + "-login";
  return "";
}

// Every object of the generation-carrying kinds that is not observed at
// its generation, by kind then name.
std::vector<std::string> unobservedObjects(const ObjectSet& set) {
  std::vector<std::string> out;
  for (ObjectKind kind : {ObjectKind::kController, ObjectKind::kAccounting, ObjectKind::kNodeSet,
                          ObjectKind::kLoginSet, ObjectKind::kStatefulSet}) {
    for (const auto& [name, object] : set.of(kind)) {
      std::string why;
      if (!observedAtGeneration(kind, object, &why)) out.push_back(why);
    }
  }
  return out;
}

NodeSetObservation observeNodeSet(const Json& nodeSet) {
  NodeSetObservation n;
  n.name = nameOf(nodeSet);
  n.replicas = number(nodeSet, {"spec", "replicas"}, 1);  // The API's default.
  n.statusReplicas = number(nodeSet, {"status", "replicas"});
  n.readyReplicas = number(nodeSet, {"status", "readyReplicas"});
  for (const char* key : {"slurmIdle", "slurmAllocated", "slurmDown", "slurmDrain"})
    n.hasSlurmCounts = n.hasSlurmCounts || has(nodeSet, "status", key);
  n.slurmIdle = number(nodeSet, {"status", "slurmIdle"});
  n.slurmAllocated = number(nodeSet, {"status", "slurmAllocated"});
  n.slurmDown = number(nodeSet, {"status", "slurmDown"});
  n.slurmDrain = number(nodeSet, {"status", "slurmDrain"});
  return n;
}

// A NodeSet's rows: ordinals 0 … spec.replicas-1, as the operator names
// them. Pod `<nodeset>-<i>`; Slurm node = the pod's spec.hostname, or,
// before the pod exists, the template's hostname prefix + i (Slinky's
// rule; `<nodeset>-` when the template sets none). Pods of ordinals past
// replicas (a scale-down in progress) have no row.
void addNodeRows(const Json& nodeSet, const std::map<std::string, PodObservation>& pods,
                 const ObjectSet& set, std::vector<NodeRow>& rows) {
  std::string group = nameOf(nodeSet);
  std::string prefix = text(nodeSet, {"spec", "template", "spec", "hostname"});
  if (prefix.empty()) prefix = group + "-";
  int64_t replicas = number(nodeSet, {"spec", "replicas"}, 1);
  for (int64_t i = 0; i < replicas; ++i) {
    NodeRow row;
    row.group = group;
    row.name = prefix + std::to_string(i);
    std::string podName = group + "-" + std::to_string(i);
    auto it = pods.find(podName);
    if (it == pods.end()) {
      row.detail = "no pod yet";
    } else {
      std::string hostname = text(set.of(ObjectKind::kPod).at(podName), {"spec", "hostname"});
      if (!hostname.empty()) row.name = hostname;
      row.pod = podName;
      row.ready = it->second.ready;
      row.address = it->second.ip;
      row.physicalId = it->second.nodeName;
      row.detail = it->second.detail;
    }
    rows.push_back(std::move(row));
  }
}

// The event's occurrence count: core/v1 `count`, else events.k8s.io's
// `series.count`, else 1.
int64_t eventCount(const Json& event) {
  int64_t count = number(event, {"count"}, 0);
  if (count == 0) count = number(event, {"series", "count"}, 0);
  return count == 0 ? 1 : count;
}

// When it last happened, for ordering (RFC 3339 strings sort by time).
std::string eventTime(const Json& event) {
  for (const char* key : {"lastTimestamp", "eventTime", "firstTimestamp"}) {
    std::string t = text(event, {key});
    if (!t.empty()) return t;
  }
  return text(event, {"metadata", "creationTimestamp"});
}

// Whether the event is about the cluster: its involved object is one of
// the set's objects (by kind and name), or named after the cluster.
bool aboutCluster(const ObjectSet& set, const Json& event, const std::string& cluster) {
  std::string kind = text(event, {"involvedObject", "kind"});
  std::string name = text(event, {"involvedObject", "name"});
  if (name == cluster || name.starts_with(cluster + "-")) return true;
  for (ObjectKind k : kObjectKinds)
    if (kind == objectKindName(k) && set.of(k).count(name)) return true;
  return false;
}

// Warning events about the cluster, oldest first (then by name), each with
// the Slurm node when it is about a worker's pod.
std::vector<EventCandidate> warningEvents(const ObjectSet& set, const std::vector<NodeRow>& rows,
                                          const std::string& cluster) {
  std::vector<std::pair<std::string, EventCandidate>> found;
  for (const auto& [name, event] : set.of(ObjectKind::kEvent)) {
    if (text(event, {"type"}) != "Warning" || !aboutCluster(set, event, cluster)) continue;
    EventCandidate c;
    std::string uid = text(event, {"metadata", "uid"});
    c.key = (uid.empty() ? name : uid) + "/" + std::to_string(eventCount(event));
    c.reason = text(event, {"reason"});
    c.message = text(event, {"message"});
    std::string kind = text(event, {"involvedObject", "kind"});
    std::string object = text(event, {"involvedObject", "name"});
    c.object = kind + "/" + object;
    for (const NodeRow& row : rows)
      if (kind == "Pod" && row.pod == object) c.node = row.name;
    found.push_back({eventTime(event) + "\n" + name, std::move(c)});
  }
  std::sort(found.begin(), found.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<EventCandidate> out;
  for (auto& [order, c] : found) out.push_back(std::move(c));
  return out;
}

// Failures that no waiting cures, in a fixed order:
// 1. an object refused: a Warning `FailedCreate` (a controller could not
//    create what the object asks for: admission refused the pod, a quota)
//    about one of the cluster's objects;
// 2. a claim that cannot bind: a Warning `ProvisioningFailed` about a
//    claim that is not Bound (a claim that bound after a retry is fine);
// 3. a pod failing for a terminal reason (see `observePod`), pods by name.
std::vector<std::string> failuresOf(const ObjectSet& set, const ClusterObservation& o) {
  std::vector<std::string> out;
  for (const EventCandidate& e : o.events)
    if (e.reason == "FailedCreate") out.push_back(e.object + " refused: " + e.message);
  for (const EventCandidate& e : o.events) {
    std::string prefix = "PersistentVolumeClaim/";
    if (e.reason != "ProvisioningFailed" || !e.object.starts_with(prefix)) continue;
    auto claim = set.of(ObjectKind::kPersistentVolumeClaim).find(e.object.substr(prefix.size()));
    if (claim != set.of(ObjectKind::kPersistentVolumeClaim).end() &&
        text(claim->second, {"status", "phase"}) == "Bound")
      continue;
    std::string failure = "claim " + e.object.substr(prefix.size()) + " cannot bind: " + e.message;
    if (std::find(out.begin(), out.end(), failure) == out.end()) out.push_back(failure);
  }
  for (const auto& [name, pod] : o.pods)
    if (!pod.failure.empty()) out.push_back("pod " + name + ": " + pod.failure);
  return out;
}

// The pods a Running cluster needs, in the order the phase names them: the
// controller side (slurmctld, slurmdbd, MariaDB: StatefulSets
// `<cluster>-controller`, `-accounting`, `-mariadb`, pod 0 of each), then
// every node row, then a login pod (the LoginSet's Deployment names its
// pods `<cluster>-login-<hash>-<hash>`). The first not ready, as
// "<what> (<detail>)"; "" when all are.
std::string firstNotReady(const ClusterObservation& o, const std::string& cluster) {
  for (const char* part : {"-controller-0", "-accounting-0", "-mariadb-0"}) {
    auto it = o.pods.find(cluster + part);
    if (it == o.pods.end()) return cluster + part + " (no pod yet)";
    if (!it->second.ready) return cluster + part + " (" + it->second.detail + ")";
  }
  for (const NodeRow& row : o.nodes)
    if (!row.ready) return row.name + " (" + row.detail + ")";
  if (o.loginAddress.empty()) {
    std::string detail = "no pod yet";
    for (const auto& [name, pod] : o.pods)
      if (name.starts_with(cluster + "-login-")) detail = pod.detail;
    return "the login node (" + detail + ")";
  }
  return "";
}

}  // namespace

const char* objectKindName(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kController: return "Controller";
    case ObjectKind::kAccounting: return "Accounting";
    case ObjectKind::kNodeSet: return "NodeSet";
    case ObjectKind::kLoginSet: return "LoginSet";
    case ObjectKind::kStatefulSet: return "StatefulSet";
    case ObjectKind::kPod: return "Pod";
    case ObjectKind::kPersistentVolumeClaim: return "PersistentVolumeClaim";
    case ObjectKind::kEvent: return "Event";
  }
  return "";
}

const ResourceType& resourceTypeFor(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kController: return resources::kControllers;
    case ObjectKind::kAccounting: return resources::kAccountings;
    case ObjectKind::kNodeSet: return resources::kNodeSets;
    case ObjectKind::kLoginSet: return resources::kLoginSets;
    case ObjectKind::kStatefulSet: return resources::kStatefulSets;
    case ObjectKind::kPod: return resources::kPods;
    case ObjectKind::kPersistentVolumeClaim: return resources::kPersistentVolumeClaims;
    case ObjectKind::kEvent: return resources::kEvents;
  }
  return resources::kPods;
}

bool selectedByClusterLabels(ObjectKind kind) {
  return kind != ObjectKind::kStatefulSet && kind != ObjectKind::kPod &&
         kind != ObjectKind::kEvent;
}

const ObjectSet::ByName& ObjectSet::of(ObjectKind kind) const {
  static const ByName kNone;
  auto it = objects.find(kind);
  return it == objects.end() ? kNone : it->second;
}

void ObjectSet::put(ObjectKind kind, nlohmann::json object) {
  std::string name = nameOf(object);
  objects[kind][name] = std::move(object);
}

const char* verdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kCreating: return "Creating";
    case Verdict::kRunning: return "Running";
    case Verdict::kFailed: return "Failed";
  }
  return "";
}

// The verdict, by the first rule that holds:
// 1. Failed, when anything in `failuresOf` is found (reason: the first);
// 2. Creating, waiting for the first missing object (`firstMissing`);
// 3. Creating, waiting for the first object not observed at its
//    generation (`unobservedObjects`): until then status describes an
//    older spec, so nothing else in it is trusted;
// 4. Creating, waiting for the first pod not ready (`firstNotReady`);
// 5. Running.
ClusterObservation observeCluster(const ObjectSet& set, const std::string& cluster) {
  ClusterObservation o;
  for (const auto& [name, pod] : set.of(ObjectKind::kPod)) o.pods[name] = observePod(pod);
  for (const auto& [name, nodeSet] : set.of(ObjectKind::kNodeSet)) {
    o.nodeSets.push_back(observeNodeSet(nodeSet));
    addNodeRows(nodeSet, o.pods, set, o.nodes);
  }
  for (const auto& [name, pod] : o.pods)
    if (name.starts_with(cluster + "-login-") && pod.ready && o.loginAddress.empty())
      o.loginAddress = pod.ip;
  o.events = warningEvents(set, o.nodes, cluster);
  std::string missing = firstMissing(set, cluster);
  o.unobserved = unobservedObjects(set);
  o.allObserved = missing.empty() && o.unobserved.empty();
  o.failures = failuresOf(set, o);
  if (!o.failures.empty()) {
    o.verdict = Verdict::kFailed;
    o.reason = o.failures.front();
    return o;
  }
  std::string waiting = !missing.empty()             ? missing
                        : !o.unobserved.empty()      ? o.unobserved.front()
                                                     : firstNotReady(o, cluster);
  if (!waiting.empty()) {
    o.phase = "waiting for " + waiting;
    return o;
  }
  o.verdict = Verdict::kRunning;
  return o;
}

std::vector<NodeRecord> nodeRecords(const ClusterObservation& observation) {
  std::vector<NodeRecord> out;
  for (const NodeRow& row : observation.nodes)
    out.push_back({row.name, row.group, row.physicalId, row.address});
  return out;
}

std::vector<EventCandidate> unseenEvents(const std::vector<EventCandidate>& candidates,
                                         std::set<std::string>& seen) {
  std::vector<EventCandidate> out;
  for (const EventCandidate& c : candidates)
    if (seen.insert(c.key).second) out.push_back(c);
  return out;
}

}  // namespace corral::kube
