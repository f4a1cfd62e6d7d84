#pragma once

// The pods of a cluster: what runs where (daemons, their order and
// readiness), on which image, with which mounts, scratch directories and
// devices. Pure and deterministic, like the renderer; the runtime turns a
// `PodSpec` into a sandbox (local) or a Slinky resource (Kubernetes).

#include <vector>

#include "corral/runtime.h"
#include "corral/spec.h"
#include "corral/status.h"

namespace corral {

// controller, login, the registry if asked for, then the workers in order.
// `record.nodes` must come from `planNodes`.
StatusOr<std::vector<PodSpec>> buildPods(const ClusterRecord& record);

struct RenderedCluster {
  RenderedFiles files;        // Relative to the cluster's directory (src/slurm/renderer.h).
  std::vector<PodSpec> pods;  // `buildPods`.
};

// Both: what the reconciler applies and `config diff` compares.
StatusOr<RenderedCluster> renderCluster(const ClusterRecord& record);

}  // namespace corral
