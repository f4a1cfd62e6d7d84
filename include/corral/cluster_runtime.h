#pragma once

// `ClusterRuntime`: a runtime that is handed a cluster's whole desired state
// and brings it about by itself, then reports what it observes — Kubernetes,
// where SchedMD's Slinky operator and the kubelets own the pods
// (src/runtime/kubernetes). The local runtime is driven pod by pod through
// `Runtime` instead; a runtime that is also a `ClusterRuntime` says so with
// `Runtime::wholeClusters()`, and the reconciler then drives each cluster by
// passes that apply, record progress and ask to be run again
// (src/reconcile/whole.cc), never waiting inside a pass.

#include <functional>
#include <string>
#include <vector>

#include "corral/spec.h"
#include "corral/status.h"

namespace corral {

// What the runtime reports of one cluster, in corral's terms.
struct ClusterView {
  enum class State {
    kProgressing,  // Not (yet) what was applied: `phase` says what it waits for.
    kReady,        // What was last applied is observed and every pod is ready.
    kFailed,       // Something will not come right by waiting: `reason`.
  };
  State state = State::kProgressing;
  std::string phase;
  std::string reason;
  std::vector<NodeRecord> nodes;  // The Slurm nodes, in order, as observed.
  std::string loginAddress;       // Where the login node's sshd is reached; "" until known.
  // Warnings about the cluster's objects that were not reported before,
  // oldest first (each occurrence once); `node` is the Slurm node it concerns.
  struct Warning {
    std::string reason, message, node;
  };
  std::vector<Warning> warnings;
};

class ClusterRuntime {
 public:
  virtual ~ClusterRuntime() = default;

  // Makes the cluster's objects those of `desired` (created, changed, and
  // the ones `desired` no longer has removed). Idempotent. An object the
  // runtime refuses is InvalidArgument with its own message (nothing after
  // it is applied); Unavailable when it cannot be reached (try again).
  virtual Status applyCluster(const ClusterRecord& desired) = 0;

  // What is observed of `desired`'s cluster now, costing no request to the
  // runtime (its state is kept current by watching). Unavailable until it
  // has been read once.
  virtual StatusOr<ClusterView> viewCluster(const ClusterRecord& desired) = 0;

  // A Terminated cluster: its pods stop, its storage and secrets stay.
  // Idempotent; true once nothing of the cluster runs.
  virtual StatusOr<bool> suspendCluster(const ClusterRecord& record) = 0;

  // Deletes everything the runtime made for the cluster and nothing else.
  // Idempotent; true once it is all gone.
  virtual StatusOr<bool> removeCluster(const std::string& cluster) = 0;

  // Called (on the runtime's own thread, quickly: it should only enqueue)
  // whenever something of a cluster changed, so that nothing polls.
  virtual void onChange(std::function<void(const std::string& cluster)> callback) = 0;
};

}  // namespace corral
