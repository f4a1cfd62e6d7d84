#pragma once

// Trying a Slurm configuration before the live controller sees it.
//
// A change's slurm.conf is written to the controller pod's candidate
// directory and loaded by a throwaway slurmctld that runs inside the
// controller pod but in namespaces of its own:
// - a network namespace holding only the controller's address (so that name
//   lookups behave as in the pod) and no route to anything: it cannot reach
//   the cluster's slurmd or slurmdbd, and nothing can reach it;
// - a mount namespace with tmpfs over /run, /var/log/slurm and the state
//   directory, which gets a copy of the live state, so the candidate is
//   tried against the jobs and nodes the cluster has now;
// - a PID namespace, so that everything it started dies with the check.
// Accounting is switched off in the throwaway's copy: it must not register
// with the cluster's slurmdbd. The check passes once it listens on the
// slurmctld port; slurmctld reads and validates the whole configuration,
// partitions, nodes and plugins included, before it listens.

#include <string>
#include <vector>

#include "corral/process.h"
#include "corral/status.h"

namespace corral {

// The command (run with `Runtime::exec` in the controller pod) that tries the
// configuration in `candidateDir` (inside the pod). `controllerAddress` is
// the controller's address on the cluster network.
std::vector<std::string> configCheckCommand(const std::string& candidateDir,
                                            const std::string& controllerAddress);

// OK when the throwaway slurmctld came up; otherwise InvalidArgument whose
// message quotes what slurmctld said (its fatal and error lines).
Status configCheckResult(const ProcessResult& result);

}  // namespace corral
