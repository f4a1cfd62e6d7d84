#pragma once

// What a user may do to a cluster in each status: the seed's "Cluster
// Statuses" table as code. The API refuses an action the status does not
// allow with a message that names the statuses that do; the console greys
// the action out with the same words.

#include <string>
#include <vector>

#include "corral/spec.h"
#include "corral/status.h"

namespace corral {

enum class Action {
  kScale,
  kPartitions,     // create, update or delete a user partition
  kConfig,         // config set / unset
  kSetKeys,
  kLoginRestart,
  kVolumes,        // attach or detach a volume
  kNodes,          // reboot a node, inject an XID
  kUsers,          // add or remove a login user
  kControllerRestart,
  kSetImage,        // move the cluster to another image (or build of it)
  kRestartWorkers,  // recreate every worker, each once its jobs end
  kReconfigure,
  kTerminate,
  kClone,
  kDelete,
};

// The CLI's word for it: "scale", "partition", "config set", …
const char* actionName(Action action);

// A stable identifier for the API: "scale", "partitions", "config",
// "setKeys", "loginRestart", "volumes", "nodes", "users", "controllerRestart", "setImage", "restartWorkers", "reconfigure", "terminate", "clone", "delete".
const char* actionKey(Action action);

// Every action, in the order the docs list them.
const std::vector<Action>& allActions();

// The statuses in which `action` is allowed.
std::vector<ClusterStatus> allowedStatuses(Action action);

bool isAllowed(Action action, ClusterStatus status);

// OK, or FailedPrecondition: `cannot scale cluster "a": it is Failed; scale
// is allowed only when a cluster is Running`.
Status checkAction(Action action, const std::string& cluster, ClusterStatus status);

}  // namespace corral
