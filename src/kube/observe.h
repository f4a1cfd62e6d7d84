#pragma once

// What a cluster's Kubernetes objects say about it, in corral's terms: the
// observing half of issue 15's `KubernetesRuntime`. Pure and deterministic:
// the same objects give the same observation, whatever order they were
// read in (every collection is keyed and walked by name).
//
// The input is what the API server returns (objects as JSON, status
// included); `ClusterWatcher` (kube/watcher.h) keeps one such set current
// per cluster. Nothing here talks to a server.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "corral/spec.h"
#include "kube/paths.h"

namespace corral::kube {

// The kinds of object a cluster's observation reads. Controller,
// Accounting, NodeSet, LoginSet and PersistentVolumeClaim are corral's own
// (rendered by kube/slinky.h, labelled with `clusterSelector`); StatefulSets
// and Pods are mostly the operator's, Events the API's, so those are read by
// namespace (one cluster per namespace).
enum class ObjectKind {
  kController,
  kAccounting,
  kNodeSet,
  kLoginSet,
  kStatefulSet,
  kPod,
  kPersistentVolumeClaim,
  kEvent,
};
inline constexpr ObjectKind kObjectKinds[] = {
    ObjectKind::kController, ObjectKind::kAccounting, ObjectKind::kNodeSet,
    ObjectKind::kLoginSet,   ObjectKind::kStatefulSet, ObjectKind::kPod,
    ObjectKind::kPersistentVolumeClaim, ObjectKind::kEvent,
};

const char* objectKindName(ObjectKind kind);  // The API's kind: "NodeSet".
const ResourceType& resourceTypeFor(ObjectKind kind);
// Whether the kind is listed with `clusterSelector(cluster)` (corral's own
// objects) rather than every object of the namespace.
bool selectedByClusterLabels(ObjectKind kind);

// A cluster's current objects, by kind and then by metadata.name.
struct ObjectSet {
  using ByName = std::map<std::string, nlohmann::json>;
  std::map<ObjectKind, ByName> objects;

  ByName& of(ObjectKind kind) { return objects[kind]; }
  const ByName& of(ObjectKind kind) const;
  // Stores `object` under its kind and metadata.name (replacing one there).
  void put(ObjectKind kind, nlohmann::json object);
};

// One pod as Kubernetes reports it.
struct PodObservation {
  std::string name;
  std::string phase;      // status.phase: Pending, Running, Succeeded, Failed, Unknown.
  bool ready = false;     // condition Ready is "True" (and the pod is not being deleted).
  std::string nodeName;   // spec.nodeName: the Kubernetes node it was scheduled on.
  std::string ip;         // status.podIP.
  // Why it is not ready, for a phase text: "Pending: no node",
  // "Pending: ContainerCreating", "Running: not ready", "Terminating".
  std::string detail;
  // Set when a container is stuck for a reason that retrying will not cure
  // (see observe.cc, `kTerminalWaitingReasons`): the failure's text.
  std::string failure;
};

// One Slurm node of a NodeSet: Slurm name, group, and its pod.
struct NodeRow {
  std::string name;   // The pod's hostname, which Slurm names the node by: slinky-0.
  std::string group;  // The NodeSet: slinky, cpu-workers.
  std::string pod;    // The pod's name ("" while the pod does not exist).
  bool ready = false;
  std::string address;     // The pod's IP ("" until it has one).
  std::string physicalId;  // The Kubernetes node the pod runs on.
  std::string detail;      // As PodObservation::detail; "no pod yet" when there is none.
};

// A NodeSet's counters: spec.replicas and what its status reports. The
// Slurm counters are present only once the operator has read Slurm.
struct NodeSetObservation {
  std::string name;
  int64_t replicas = 0;  // spec.replicas: what corral asked for.
  int64_t statusReplicas = 0;
  int64_t readyReplicas = 0;
  bool hasSlurmCounts = false;
  int64_t slurmIdle = 0, slurmAllocated = 0, slurmDown = 0, slurmDrain = 0;
};

// A Warning event about one of the cluster's objects, as a candidate for
// corral's event log. `key` (uid + "/" + count) names one occurrence: the
// API server raises `count` on the same event when it repeats, so an event
// seen again with the same key is the same occurrence.
struct EventCandidate {
  std::string key;
  std::string reason;
  std::string message;
  std::string object;  // "Pod/slinky-0", "PersistentVolumeClaim/demo-shared".
  std::string node;    // The Slurm node, when the object is a worker's pod.
};

enum class Verdict { kCreating, kRunning, kFailed };
const char* verdictName(Verdict verdict);

struct ClusterObservation {
  Verdict verdict = Verdict::kCreating;
  std::string phase;   // For kCreating: what it is waiting for.
  std::string reason;  // For kFailed: the first failure (all are in `failures`).
  std::vector<std::string> failures;
  // Every object corral applied exists and its controller has observed its
  // current generation; `unobserved` names those that have not.
  bool allObserved = false;
  std::vector<std::string> unobserved;
  std::map<std::string, PodObservation> pods;  // By pod name.
  std::vector<NodeRow> nodes;                 // By NodeSet name, then ordinal.
  std::vector<NodeSetObservation> nodeSets;    // By name.
  std::string loginAddress;                    // The ready login pod's IP.
  std::vector<EventCandidate> events;          // Oldest first.
};

// The observation of `cluster` from its objects (see observe.cc for each
// rule, in the order they are applied).
ClusterObservation observeCluster(const ObjectSet& objects, const std::string& cluster);

// The observation's nodes as corral's node table.
std::vector<NodeRecord> nodeRecords(const ClusterObservation& observation);

// The candidates whose key is not in `seen`, in order; adds their keys to
// `seen`. For the runtime to record each occurrence once.
std::vector<EventCandidate> unseenEvents(const std::vector<EventCandidate>& candidates,
                                         std::set<std::string>& seen);

}  // namespace corral::kube
