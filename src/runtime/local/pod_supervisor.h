#pragma once

// `corral-pod`: the per-pod supervisor of the local runtime. It is the parent
// of a pod's daemons, so corrald can stop, crash and restart without touching
// running pods.
//
// `podStartCommand(specPath)` (the `corral-pod start SPEC` command) detaches a
// launcher that builds the pod's sandbox (pod_root.h) and a PID 1 that starts
// the pod's daemons in order, as the pod's root. It returns 0 once the pod's
// filesystem is set up and its PID is recorded, or non-zero with the reason
// on stderr. Readiness is reported in the state directory's status.json.

#include <string>
#include <vector>

namespace corral {

int podStartCommand(const std::string& specPath);

// `corral-pod mount SPEC SOURCE TARGET ro|rw` and `corral-pod umount SPEC
// TARGET`: a running pod's mounts, changed in place (pod_root.h).
int podMountCommand(const std::string& specPath, const std::string& action,
                    const std::vector<std::string>& args);

// In a pod directory on the host: the launch spec and the supervisor's log,
// written by corrald and the launcher as host root...
inline constexpr const char* kPodSpecFile = "spec.json";
inline constexpr const char* kPodLogFile = "supervisor.log";
// ...and the state directory, owned by the pod's root and written by PID 1
// through a descriptor it opened before leaving the host's view (no process
// of the pod can reach it by name).
inline constexpr const char* kPodStateDir = "supervisor";
inline constexpr const char* kPodPidFile = "pid";
inline constexpr const char* kPodStatusFile = "status.json";
// Names of daemons to restart now, one a line; read on SIGUSR1.
inline constexpr const char* kPodRestartFile = "restart-request";
// The pod's agent directory (health reports, the simulated kernel log):
// `agent/` on the host, `kPodAgentMount` inside, and $CORRAL_POD_DIR for
// the pod's daemons.
inline constexpr const char* kPodAgentDir = "agent";
inline constexpr const char* kPodAgentMount = "/run/corral";

}  // namespace corral
