#pragma once

// Jobs see exactly their GPUs, as Slurm's ConstrainDevices would, without
// cgroups (pods are unprivileged and share the host's cgroups): each task of
// a step gets a mount namespace of its own whose /dev holds only the step's
// GPU device files. Containers get theirs from the container runtime.

#include <string>
#include <vector>

#include "corral/status.h"

namespace corral::spank {

// The entries of a /dev listing (`entries`) that a task allocated `gpus`
// (device minors) keeps: everything but the GPUs it was not given; the GPU
// control devices (nvidiactl, nvidia-uvm, …) only when it has a GPU.
// Pure; `narrowGpuDevices` does what it says.
std::vector<std::string> devicesToKeep(const std::vector<std::string>& entries,
                                       const std::vector<int>& gpus);

// Gives the calling process (a task before its exec, as the node's root) a
// mount namespace of its own in which /dev holds `devicesToKeep` of the
// node's /dev: a tmpfs of bind mounts, so /dev/shm and /dev/pts stay the
// job's. Does nothing when the node has no GPU this task would not see.
Status narrowGpuDevices(const std::vector<int>& gpus);

}  // namespace corral::spank
