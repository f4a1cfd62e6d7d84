#pragma once

// `corral-pod`: the per-pod supervisor of the local runtime. It is the parent
// of a pod's daemons, so corrald can stop, crash and restart without touching
// running pods.
//
// `startPod(specPath)` (the `corral-pod start SPEC` command) detaches a
// supervisor that joins the pod's network namespace, creates new mount, UTS,
// IPC and PID namespaces, becomes PID 1 there, lays out the pod's filesystem
// view and starts its daemons in order. It returns 0 once the pod's
// filesystem is set up and its PID is recorded in `<podDir>/pid`, or non-zero
// with the reason on stderr. Readiness is reported in `<podDir>/status.json`.

#include <string>

namespace corral {

int podStartCommand(const std::string& specPath);

// File names inside a pod directory, shared with `LocalRuntime`.
inline constexpr const char* kPodPidFile = "pid";
inline constexpr const char* kPodStatusFile = "status.json";
inline constexpr const char* kPodSpecFile = "spec.json";
inline constexpr const char* kPodLogFile = "supervisor.log";
// Names of daemons to restart now, one a line; read on SIGUSR1.
inline constexpr const char* kPodRestartFile = "restart-request";

// Host directory that backs the ephemeral pod directory `target`.
std::string ephemeralSource(const std::string& podDir, const std::string& target);

}  // namespace corral
