// Clusters as a whole (docs/api.md, "Clusters"): list, create, get, delete,
// their events and revisions, terminate and clone. Create and clone store a
// new record (`storeNewCluster`); delete and terminate write its status as
// well as its spec, so that a change request racing them retries and is then
// refused.

#include "api/http_util.h"
#include "api/server.h"
#include "common/text.h"
#include "model/spec_json.h"
#include "model/validation.h"
#include "slurm/settings.h"
#include "store/update.h"

namespace corral {

using nlohmann::json;

StatusOr<ClusterRecord> ApiServer::storeNewCluster(ClusterSpec spec, const std::string& project,
                                                   const std::string& why) {
  spec.loginGeneration = 0;
  // A clone keeps the build its source ran; a create resolves the name.
  if (spec.image.id.empty() || options_.images == nullptr) {
    ASSIGN_OR_RETURN(spec.image, resolveImage(spec.image.name));
  }
  RETURN_IF_ERROR(validateClusterSpec(spec));
  RETURN_IF_ERROR(normalizeSlurmSettings(spec, options_.platformPartitions));
  ClusterRecord r;
  r.spec = spec;
  r.project = project;
  r.status = ClusterStatus::kCreating;
  r.phase = "queued";
  r.revision = 1;
  r.platformPartitions = options_.platformPartitions;
  r.changeAuthor = caller().user.empty() ? "api" : caller().user;
  r.changeMessage = why;
  r.createdAt = r.updatedAt = clock_.unixMillis() / 1000;
  auto created = store_.createCluster(r);
  if (!created.isOk()) {
    if (created.status().code() == Code::kConflict) {
      // Names are unique across corrald; whose cluster holds one is not
      // the caller's business unless it is theirs to see.
      auto holder = store_.getCluster(r.spec.name);
      if (holder.isOk() && caller().sees(holder->project))
        return conflict("a cluster named \"" + r.spec.name +
                        "\" already exists; choose another name or delete it first");
      return conflict("the cluster name \"" + r.spec.name + "\" is not available; choose another");
    }
    return created.status();
  }
  event(r.spec.name, "CreateRequested",
        why + ": " + std::to_string(r.spec.gpuNodes) + " GPU nodes x " +
            std::to_string(r.spec.gpusPerNode) + " GPUs, " + std::to_string(r.spec.cpuNodes) +
            " CPU nodes",
        created->revision);
  reconciler_.enqueue(r.spec.name);
  return created;
}

void ApiServer::listClusters(const httplib::Request&, httplib::Response& res) {
  auto all = store_.listClusters();
  if (!all.isOk()) return sendError(res, all.status());
  json list = json::array();
  for (const auto& r : *all)
    if (caller().sees(r.project)) list.push_back(clusterView(r, reconciler_.observedNodes(r.spec.name)));
  sendJson(res, 200, {{"clusters", list}});
}

void ApiServer::createCluster(const httplib::Request& req, httplib::Response& res) {
  // What a user declares at creation; the rest of a spec (volumes, login
  // users, generations) is made by later changes, each with its own checks.
  auto body = jsonBody(req, {"name", "image", "gpuNodes", "gpusPerNode", "cpuNodes", "sshKeys",
                             "containers", "partitions", "slurmConf", "project"});
  if (!body.isOk()) return sendError(res, body.status());
  std::string requested;
  if (auto p = body->find("project"); p != body->end()) {
    if (!p->is_string()) return sendError(res, invalidArgument("field \"project\" must be a string"));
    requested = p->get<std::string>();
    body->erase("project");
  }
  if (auto img = body->find("image"); img != body->end() && !img->is_string())
    return sendError(res, invalidArgument("field \"image\" must be an image name (a string; "
                                          "`corral image list` shows them)"));
  auto spec = specFromJson(*body, /*strict=*/true);
  if (!spec.isOk()) return sendError(res, spec.status());
  auto project = projectFor(requested);
  if (!project.isOk()) return sendError(res, project.status());
  auto created = storeNewCluster(*spec, *project, "create requested");
  if (!created.isOk()) return sendError(res, created.status());
  sendJson(res, 201, clusterView(*created, {}));
}

void ApiServer::getCluster(const httplib::Request& req, httplib::Response& res) {
  auto r = findCluster(req.matches[1]);
  if (!r.isOk()) return sendError(res, r.status());
  sendJson(res, 200, clusterView(*r, reconciler_.observedNodes(r->spec.name)));
}

void ApiServer::deleteCluster(const httplib::Request& req, httplib::Response& res) {
  auto found = findCluster(req.matches[1]);
  if (!found.isOk()) return sendError(res, found.status());
  ClusterRecord rec = *found;
  // Asking again while it is deleted only asks the reconciler again.
  if (rec.status != ClusterStatus::kDeleting) {
    if (Status s = checkAction(Action::kDelete, rec.spec.name, rec.status); !s.isOk())
      return sendError(res, s);
    auto u = updateWithRetry(store_, rec.spec.name, RecordPart::kAll,
                             [&](ClusterRecord& r) -> StatusOr<Edit> {
      if (r.status == ClusterStatus::kDeleting) return Edit::kUnchanged;
      RETURN_IF_ERROR(checkAction(Action::kDelete, r.spec.name, r.status));
      r.status = ClusterStatus::kDeleting;
      r.phase = "queued";
      r.updatedAt = clock_.unixMillis() / 1000;
      return Edit::kWrite;
    });
    if (!u.isOk()) return sendError(res, u.status());
    rec = *u;
    event(rec.spec.name, "DeleteRequested", "delete requested");
  }
  reconciler_.enqueue(rec.spec.name);
  sendJson(res, 202, clusterView(rec, {}));
}

void ApiServer::listEvents(const httplib::Request& req, httplib::Response& res) {
  auto r = findCluster(req.matches[1]);
  if (!r.isOk()) return sendError(res, r.status());
  auto filter = eventFilterOf(req);
  if (!filter.isOk()) return sendError(res, filter.status());
  auto events = store_.findEvents(r->spec.name, 500, *filter);
  if (!events.isOk()) return sendError(res, events.status());
  json list = json::array();
  for (const auto& e : *events) list.push_back(eventToJson(e));
  sendJson(res, 200, {{"events", list}});
}

void ApiServer::listRevisions(const httplib::Request& req, httplib::Response& res) {
  auto r = findCluster(req.matches[1]);
  if (!r.isOk()) return sendError(res, r.status());
  auto history = store_.listRevisions(r->spec.name);
  if (!history.isOk()) return sendError(res, history.status());
  json list = json::array();
  for (const auto& rev : *history) list.push_back(revisionToJson(rev));
  sendJson(res, 200, {{"revisions", list}, {"appliedRevision", r->appliedRevision}});
}

void ApiServer::terminateCluster(const httplib::Request& req, httplib::Response& res) {
  std::string name = req.matches[1];
  if (auto r = findCluster(name); !r.isOk()) return sendError(res, r.status());
  // Both parts: a change request racing it retries and is then refused.
  auto stored = updateWithRetry(store_, name, RecordPart::kAll, [&](ClusterRecord& next) -> StatusOr<Edit> {
    RETURN_IF_ERROR(checkAction(Action::kTerminate, name, next.status));
    next.status = ClusterStatus::kTerminating;
    next.phase = "queued";
    next.updatedAt = clock_.unixMillis() / 1000;
    return Edit::kWrite;
  });
  if (!stored.isOk()) return sendError(res, stored.status());
  event(name, "TerminateRequested", "terminate requested");
  reconciler_.enqueue(name);
  sendJson(res, 202, clusterView(*stored, {}));
}

void ApiServer::cloneCluster(const httplib::Request& req, httplib::Response& res) {
  std::string name = req.matches[1];
  auto body = jsonBody(req, {"name", "image"});
  if (!body.isOk()) return sendError(res, body.status());
  auto to = body->find("name");
  if (to == body->end() || !to->is_string())
    return sendError(res, invalidArgument("field \"name\" (the new cluster's name) is required"));
  auto r = findCluster(name);
  if (!r.isOk()) return sendError(res, r.status());
  if (Status s = checkAction(Action::kClone, name, r->status); !s.isOk()) return sendError(res, s);
  ClusterSpec spec = r->spec;
  spec.name = to->get<std::string>();
  // A clone may start on another image: the way to a Slurm release the
  // cluster cannot be upgraded to in place.
  if (auto img = body->find("image"); img != body->end()) {
    if (!img->is_string() || img->get<std::string>().empty())
      return sendError(res, invalidArgument("field \"image\" must be an image name"));
    auto ref = resolveImage(img->get<std::string>());
    if (!ref.isOk()) return sendError(res, ref.status());
    spec.image = *ref;
  }
  auto created = storeNewCluster(spec, r->project, "clone of \"" + name + "\" (revision " +
                                                       std::to_string(r->revision) + ")");
  if (!created.isOk()) return sendError(res, created.status());
  sendJson(res, 201, clusterView(*created, {}));
}

}  // namespace corral
