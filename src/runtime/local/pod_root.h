#pragma once

// The sandbox of a local pod: a user namespace of its cluster's id range and
// a root filesystem that is its image (read-only, shown root-owned through
// an idmapped mount) under a writable layer of its own, plus exactly the
// mounts its spec names. Nothing else of the host is visible inside.
//
// Building it takes two processes, because some steps need the host's
// privileges and others must be done as the pod's root:
//   1. the launcher (host root, in a private mount namespace of its own)
//      creates the user namespace, mounts the overlay root and the pod's
//      /dev, /sys and /run into it, and stages every mount the spec names,
//      idmapped and read-only where asked, outside the root (`stageRoot`);
//   2. it then joins the user namespace as the pod's root and creates the
//      pod's other namespaces: the copy of the mount table the kernel makes
//      for a less privileged namespace locks every read-only flag, so the
//      pod can never make a read-only mount writable;
//   3. PID 1 (the pod's root) attaches the staged mounts at their targets,
//      mounts /proc and /dev/pts, and pivots into the root (`enterRoot`).
// `attachLiveMount` and `detachLiveMount` change a running pod's mounts the
// same way (a volume attached while jobs run).

#include <cstdint>
#include <string>

#include "common/unique_fd.h"
#include "corral/status.h"
#include "runtime/local/pod_json.h"

namespace corral {

// A user namespace mapping `ids`: uid and gid k inside are `ids.base + k` on
// the host. Returns a descriptor of it (it lives while the descriptor does).
// The caller must be host root and single-threaded.
StatusOr<UniqueFd> createUserNamespace(const IdRange& ids);

// Step 1 (see above), in the launcher. `usernsFd` is the pod's namespace.
Status stageRoot(const LaunchSpec& spec, int usernsFd);

// Step 2: the calling process becomes uid/gid 0 of `usernsFd` (the pod's
// root) with no supplementary groups, then gets new mount, UTS, IPC, PID
// and cgroup namespaces owned by it. The next child forked is the pod's
// PID 1.
Status becomePodRoot(int usernsFd);

// Step 3, in PID 1: attaches the staged mounts, mounts /proc and /dev/pts,
// pivots into the pod's root and creates `spec.pod.setupDirs`.
Status enterRoot(const LaunchSpec& spec);

// Mounts `mount.source` (a host path) at `mount.target` in the running pod
// whose PID 1 is `pid`, as step 1–3 would have. Runs in a child process;
// the caller (host root) is unchanged.
Status attachLiveMount(const LaunchSpec& spec, int pid, const Mount& mount);

// Unmounts `target` in the running pod whose PID 1 is `pid`, acting as the
// pod's root, and removes the mount point if it is an empty directory.
Status detachLiveMount(const LaunchSpec& spec, int pid, const std::string& target);

// Host directories of a pod instance, under `LaunchSpec::podDir`.
inline constexpr const char* kPodRootDir = "root";     // Mount point of the overlay.
inline constexpr const char* kPodLowerDir = "lower";   // The idmapped image.
inline constexpr const char* kPodUpperDir = "upper";   // The writable layer.
inline constexpr const char* kPodWorkDir = "work";     // overlayfs' work directory.
inline constexpr const char* kPodStageDir = "stage";   // Staged mounts (launcher only).

}  // namespace corral
