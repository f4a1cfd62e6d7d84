#pragma once

// The renderer: pure functions from a cluster's record to the files that
// configure its Slurm, sshd, MariaDB and container runtime. Deterministic,
// so re-rendering the same revision is byte-identical and a diff of two
// renders is exactly what a change does.

#include <string>
#include <vector>

#include "corral/runtime.h"
#include "corral/spec.h"
#include "corral/status.h"

namespace corral {

// Slurm's ports.
inline constexpr int kSlurmctldPort = 6817;
inline constexpr int kSlurmdPort = 6818;
inline constexpr int kSlurmdbdPort = 6819;

// Fixed addresses inside a cluster's subnet.
inline constexpr uint32_t kGatewayOffset = 1;     // The host's side of the bridge.
inline constexpr uint32_t kControllerOffset = 2;
inline constexpr uint32_t kLoginOffset = 3;
inline constexpr uint32_t kGpuNodeOffset = 10;    // slinky-i is at .10+i.
inline constexpr uint32_t kCpuNodeOffset = 230;   // cpu-workers-i is at .230+i.
inline constexpr int kClusterPrefix = 24;
inline constexpr uint32_t kRegistryOffset = 4;   // The cluster's registry pod.
inline constexpr int kRegistryPort = 5000;
// A change's Slurm configuration, before it is applied: written to this
// directory of the cluster and seen by the controller pod at the mount point.
inline constexpr const char* kCandidateDir = "candidate";
inline constexpr const char* kCandidateMountPoint = "/etc/slurm-candidate";

// Resources each worker advertises to Slurm. The pods share the host's cores,
// so these are what the scheduler plans with, not what the host has
// (`SlurmdParameters=config_overrides`).
inline constexpr int kGpuNodeCpus = 32;
inline constexpr int kGpuNodeMemoryMb = 256000;
inline constexpr int kCpuNodeCpus = 32;
inline constexpr int kCpuNodeMemoryMb = 128000;

// The node list a spec asks for, in Slurm order (GPU group, then CPU group),
// with addresses in `subnet`. Physical ids are copied from `existing` by
// name; nodes new to the cluster get an empty `physicalId` for the caller to
// assign.
StatusOr<std::vector<NodeRecord>> planNodes(const ClusterSpec& spec, const std::string& subnet,
                                            const std::vector<NodeRecord>& existing);

// Every file of the cluster (relative to its directory), for its image's
// Slurm release. `record.nodes` must come from `planNodes`. The pods that
// use them are src/cluster/pods.h's.
StatusOr<RenderedFiles> renderFiles(const ClusterRecord& record);

// What decides whether a change must restart slurmctld (Slurm 22.05 learns
// new or removed nodes and some parameters only at a restart; everything
// else takes `scontrol reconfigure`): the node names and the values of
// restart-only parameters. Equal keys mean a reconfigure suffices.
std::string controllerRestartKey(const ClusterRecord& record);

// The individual files, exposed for tests and `config diff`.
std::string renderSlurmConf(const ClusterRecord& record);
std::string renderGresConf(const ClusterRecord& record);
std::string renderHosts(const ClusterRecord& record);
std::string renderPlugstackConf(const ClusterRecord& record);
std::string renderEnrootConf(const ClusterRecord& record);

// corral's SPANK plugin built for a Slurm release, as found in kPodBinDir:
// slurmstepd and srun load only a plugin stamped with their own release.
std::string spankPluginFile(const std::string& slurmRelease);

}  // namespace corral
