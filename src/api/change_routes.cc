// The API's changes to a cluster (docs/api.md, "Changes"): `change`, which
// every route that alters a spec goes through, and the changes that are not
// a resource of their own (scale, SSH keys, restarts, reconfigure). Each
// writes a new revision of the cluster's spec and asks the reconciler to
// apply it; the answer (202) carries the revision so that a client can follow
// it to Applied or Failed in the cluster's history.

#include "api/http_util.h"
#include "api/server.h"
#include "model/validation.h"
#include "slurm/hostlist.h"
#include "slurm/scale.h"
#include "slurm/settings.h"
#include "store/update.h"

namespace corral {

using nlohmann::json;

namespace {

// A node count of a scale request, checked here, before any node is planned
// for it: a million would cost seconds of CPU only to be refused by
// validation. `*out` keeps its value when the field is absent.
Status readNodeCount(const json& body, const char* field, const char* flag, int max, int* out) {
  auto it = body.find(field);
  if (it == body.end()) return Status::ok();
  if (!it->is_number_integer())
    return invalidArgument(std::string("field \"") + field + "\" must be an integer");
  int64_t v = it->get<int64_t>();
  if (v < 0 || v > max)
    return invalidArgument(std::string(flag) + " (field \"" + field + "\") must be from 0 to " +
                           std::to_string(max));
  *out = static_cast<int>(v);
  return Status::ok();
}

}  // namespace

StatusOr<ApiServer::ChangeResult> ApiServer::change(const std::string& name, Action action,
                                                    const std::string& message, bool force, bool always,
                                                    const std::function<Status(ClusterSpec&)>& edit) {
  RETURN_IF_ERROR(findCluster(name).status());  // Exists, and the caller may see it.
  bool changed = false;
  // A spec write: the reconciler's progress in the meantime does not make it
  // retry. A terminate or delete in the meantime does (they write both).
  auto stored = updateWithRetry(store_, name, RecordPart::kSpec, [&](ClusterRecord& r) -> StatusOr<Edit> {
    RETURN_IF_ERROR(checkAction(action, name, r.status));
    ClusterSpec spec = r.spec;
    RETURN_IF_ERROR(edit(spec));
    spec.name = r.spec.name;
    RETURN_IF_ERROR(validateClusterSpec(spec));
    RETURN_IF_ERROR(normalizeSlurmSettings(spec, r.platformPartitions));
    changed = always || !(spec == r.spec);
    if (!changed) return Edit::kUnchanged;
    r.spec = spec;
    r.revision += 1;
    r.changeAuthor = caller().user.empty() ? "api" : caller().user;
    r.changeMessage = message;
    r.changeForce = force;
    r.changeRollback = false;
    r.updatedAt = clock_.unixMillis() / 1000;
    return Edit::kWrite;
  });
  if (!stored.isOk()) return stored.status();
  if (!changed) return ChangeResult{*stored, false};
  event(name, "ChangeRequested", "revision " + std::to_string(stored->revision) + ": " + message,
        stored->revision);
  reconciler_.enqueue(name);
  return ChangeResult{*stored, true};
}

void ApiServer::answerChange(httplib::Response& res, const std::string& name,
                             const StatusOr<ChangeResult>& after, const json& extra) {
  if (!after.isOk()) return sendError(res, after.status());
  sendChange(res, after->record, after->made, reconciler_.observedNodes(name), extra);
}

void ApiServer::bumpGeneration(const httplib::Request& req, httplib::Response& res, Action action,
                               const std::string& message, int ClusterSpec::*generation) {
  std::string name = req.matches[1];
  auto after = change(name, action, message, false, true, [&](ClusterSpec& spec) {
    spec.*generation += 1;
    return Status::ok();
  });
  answerChange(res, name, after);
}

void ApiServer::removeNamed(const httplib::Request& req, httplib::Response& res, Action action,
                            const std::string& verb, Removal remove) {
  std::string name = req.matches[1], thing = req.matches[2];
  auto after = change(name, action, verb + " " + thing, false, false,
                      [&](ClusterSpec& spec) { return remove(spec, name, thing); });
  answerChange(res, name, after);
}

// The answer says what the scale will do: the nodes it removes, the user
// partitions it empties or shrinks, and the jobs running on removed nodes,
// which are waited for, or cancelled with `force`.
void ApiServer::scaleCluster(const httplib::Request& req, httplib::Response& res) {
  std::string name = req.matches[1];
  auto body = jsonBody(req, {"gpuNodes", "cpuNodes", "force"});
  if (!body.isOk()) return sendError(res, body.status());
  auto current = findCluster(name);
  if (!current.isOk()) return sendError(res, current.status());
  int gpuNodes = current->spec.gpuNodes, cpuNodes = current->spec.cpuNodes;
  Status counts = readNodeCount(*body, "gpuNodes", "--gpu-nodes", kMaxGpuNodes, &gpuNodes);
  if (counts.isOk()) counts = readNodeCount(*body, "cpuNodes", "--cpu-nodes", kMaxCpuNodes, &cpuNodes);
  if (!counts.isOk()) return sendError(res, counts);
  if (body->contains("force") && !(*body)["force"].is_boolean())
    return sendError(res, invalidArgument("field \"force\" must be true or false"));
  bool force = body->value("force", false);
  ScalePlan plan = planScale(current->spec, gpuNodes, cpuNodes);
  std::string removed = plan.removedNodes.empty() ? "" : compressHostlist(plan.removedNodes);
  json jobs = json::array();
  if (!removed.empty() && current->status == ClusterStatus::kRunning) {
    if (auto running = reconciler_.jobsOn(name, {"-w", removed}); running.isOk()) jobs = *running;
  }
  auto after = change(name, Action::kScale, describeScale(plan, force), force, false,
                      [&](ClusterSpec& spec) {
                        applyScale(plan, spec);
                        return Status::ok();
                      });
  json shrunk = after.isOk() ? json(shrunkPartitions(current->spec, after->record.spec)) : json::array();
  answerChange(res, name, after,
               {{"removedNodes", removed},
                {"emptiedPartitions", plan.emptiedPartitions},
                {"shrunkPartitions", shrunk},
                {"jobsOnRemovedNodes", jobs},
                {"jobsWillBe", jobs.empty() ? "none" : force ? "cancelled" : "waited for"}});
}

void ApiServer::setSshKeys(const httplib::Request& req, httplib::Response& res) {
  std::string name = req.matches[1];
  auto body = jsonBody(req, {"sshKeys"});
  if (!body.isOk()) return sendError(res, body.status());
  std::vector<std::string> keys;
  if (Status s = readStrings(*body, "sshKeys", &keys); !s.isOk()) return sendError(res, s);
  if (keys.empty())
    return sendError(res, invalidArgument("give at least one --ssh-key; without one nobody "
                                          "could log in"));
  std::string message = "set " + std::to_string(keys.size()) +
                        (keys.size() == 1 ? " SSH key" : " SSH keys") + " for root";
  auto after = change(name, Action::kSetKeys, message, false, false, [&](ClusterSpec& spec) {
    spec.sshKeys = keys;
    return Status::ok();
  });
  answerChange(res, name, after);
}

void ApiServer::restartLogin(const httplib::Request& req, httplib::Response& res) {
  bumpGeneration(req, res, Action::kLoginRestart, "restart the login service",
                 &ClusterSpec::loginGeneration);
}

void ApiServer::restartController(const httplib::Request& req, httplib::Response& res) {
  bumpGeneration(req, res, Action::kControllerRestart, "restart the controller",
                 &ClusterSpec::controllerGeneration);
}

// Applies the cluster's revision again; a cluster still being created gets
// another creation pass instead, without a revision.
void ApiServer::reconfigureCluster(const httplib::Request& req, httplib::Response& res) {
  std::string name = req.matches[1];
  auto r = findCluster(name);
  if (!r.isOk()) return sendError(res, r.status());
  if (r->status == ClusterStatus::kCreating) {
    event(name, "ReconfigureRequested", "reconfigure requested while creating: another creation pass",
          r->revision);
    reconciler_.enqueue(name);
    sendChange(res, *r, false, {});
    res.status = 202;  // A creation pass was asked for, though no revision was made.
    return;
  }
  auto after = change(name, Action::kReconfigure,
                      "reconfigure: apply revision " + std::to_string(r->revision) + " again", false,
                      true, [](ClusterSpec&) { return Status::ok(); });
  answerChange(res, name, after);
}

}  // namespace corral
