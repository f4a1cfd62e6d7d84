#include "model/actions.h"

namespace corral {
namespace {

using S = ClusterStatus;

struct Rule {
  Action action;
  const char* key;
  const char* name;
  std::vector<ClusterStatus> allowed;
};

const std::vector<Rule>& rules() {
  static const std::vector<Rule> table = {
      {Action::kScale, "scale", "scale", {S::kRunning}},
      {Action::kPartitions, "partitions", "change partitions of", {S::kRunning}},
      {Action::kConfig, "config", "change the Slurm configuration of", {S::kRunning}},
      {Action::kSetKeys, "setKeys", "set the SSH keys of", {S::kRunning}},
      {Action::kLoginRestart, "loginRestart", "restart the login service of", {S::kRunning}},
      {Action::kVolumes, "volumes", "attach or detach volumes of", {S::kRunning}},
      {Action::kNodes, "nodes", "reboot or test nodes of", {S::kRunning}},
      {Action::kUsers, "users", "change the login users of", {S::kRunning}},
      {Action::kControllerRestart, "controllerRestart", "restart the controller of", {S::kRunning}},
      {Action::kSetImage, "setImage", "change the image of", {S::kRunning}},
      {Action::kRestartWorkers, "restartWorkers", "restart the workers of", {S::kRunning}},
      // The way out of a stalled create, or a re-run of the current revision.
      {Action::kReconfigure, "reconfigure", "reconfigure", {S::kCreating, S::kRunning}},
      {Action::kTerminate, "terminate", "terminate", {S::kRunning}},
      // The way out of Failed and Terminated.
      {Action::kClone,
       "clone",
       "clone",
       {S::kRunning, S::kFailed, S::kTerminating, S::kTerminated}},
      {Action::kDelete,
       "delete",
       "delete",
       {S::kCreating, S::kRunning, S::kFailed, S::kTerminating, S::kTerminated}},
  };
  return table;
}

const Rule& ruleOf(Action action) {
  for (const auto& r : rules())
    if (r.action == action) return r;
  return rules().front();  // Unreachable: every Action has a rule.
}

}  // namespace

const char* actionName(Action action) { return ruleOf(action).name; }

const char* actionKey(Action action) { return ruleOf(action).key; }

const std::vector<Action>& allActions() {
  static const std::vector<Action> all = [] {
    std::vector<Action> out;
    for (const auto& r : rules()) out.push_back(r.action);
    return out;
  }();
  return all;
}

std::vector<ClusterStatus> allowedStatuses(Action action) { return ruleOf(action).allowed; }

bool isAllowed(Action action, ClusterStatus status) {
  for (auto s : ruleOf(action).allowed)
    if (s == status) return true;
  return false;
}

Status checkAction(Action action, const std::string& cluster, ClusterStatus status) {
  if (isAllowed(action, status)) return Status::ok();
  std::string allowed;
  const auto& statuses = ruleOf(action).allowed;
  for (size_t i = 0; i < statuses.size(); ++i) {
    if (i > 0) allowed += i + 1 == statuses.size() ? " or " : ", ";
    allowed += statusName(statuses[i]);
  }
  return failedPrecondition("cannot " + std::string(actionName(action)) + " cluster \"" +
                            cluster + "\": it is " + statusName(status) +
                            "; that is allowed only when a cluster is " + allowed);
}

}  // namespace corral
