// Cluster images (docs/images.md): which there are, and moving a cluster to
// another one. An image update is a change like any other: a new revision,
// applied by recreating the controller and login pods and rolling the
// workers (each drained, recreated once its jobs end, resumed), rolled back
// if the new image does not come up.

#include "api/http_util.h"
#include "api/server.h"
#include "common/text.h"
#include "slurm/release.h"

namespace corral {

using nlohmann::json;

namespace {

const std::string kCluster = R"(/api/v1/clusters/([^/]+))";

json imageView(const ImageInfo& i, const std::vector<std::string>& clusters) {
  return {{"name", i.ref.name},
          {"id", i.ref.id},
          {"slurmVersion", i.ref.slurmVersion},
          {"description", i.description},
          {"os", i.os},
          {"suite", i.suite},
          {"base", i.base},
          {"packages", i.packages},
          {"builtIn", i.builtIn},
          {"built", i.built},
          {"sizeBytes", i.sizeBytes},
          {"builtAt", i.builtAt},
          {"slurmPackage", i.slurmPackage},
          {"clusters", clusters}};
}

}  // namespace

void ApiServer::imageRoutes() {
  // The clusters the caller may see that run each build, by image name.
  auto usersOf = [this](const ImageInfo& image) {
    std::vector<std::string> out;
    if (auto all = store_.listClusters(); all.isOk())
      for (const auto& c : *all)
        if (caller().sees(c.project) && c.spec.image.name == image.ref.name &&
            c.status != ClusterStatus::kDeleting)
          out.push_back(c.spec.name);
    return out;
  };

  get("/api/v1/images", [this, usersOf](const httplib::Request&, httplib::Response& res) {
    if (options_.images == nullptr) return sendError(res, unavailable("this corrald has no image catalog"));
    auto all = options_.images->list();
    if (!all.isOk()) return sendError(res, all.status());
    json list = json::array();
    for (const auto& i : *all) list.push_back(imageView(i, usersOf(i)));
    sendJson(res, 200, {{"images", list}, {"default", options_.defaultImage}});
  });

  get(R"(/api/v1/images/([^/]+))", [this, usersOf](const httplib::Request& req, httplib::Response& res) {
    if (options_.images == nullptr) return sendError(res, unavailable("this corrald has no image catalog"));
    auto i = options_.images->find(req.matches[1]);
    if (!i.isOk()) return sendError(res, i.status());
    sendJson(res, 200, imageView(*i, usersOf(*i)));
  });

  auto answer = [this](httplib::Response& res, const std::string& name,
                       const StatusOr<ChangeResult>& after) {
    if (!after.isOk()) return sendError(res, after.status());
    sendChange(res, after->record, after->made, reconciler_.observedNodes(name));
  };

  post(kCluster + "/image", [this, answer](const httplib::Request& req, httplib::Response& res) {
    std::string name = req.matches[1];
    auto body = jsonBody(req);
    if (!body.isOk()) return sendError(res, body.status());
    if (Status s = rejectUnknownFields(*body, {"image"}); !s.isOk()) return sendError(res, s);
    auto img = body->find("image");
    if (img == body->end() || !img->is_string() || img->get<std::string>().empty())
      return sendError(res, invalidArgument("field \"image\" (an image's name) is required"));
    auto cluster = findCluster(name);
    if (!cluster.isOk()) return sendError(res, cluster.status());
    auto ref = resolveImage(img->get<std::string>());
    if (!ref.isOk()) return sendError(res, ref.status());
    auto after = change(
        name, Action::kSetImage, "set image " + ref->name + " (Slurm " + ref->slurmVersion + ")",
        false, false, [&](ClusterSpec& spec) -> Status {
          if (spec.image.id == ref->id) return Status::ok();
          // Refused before anything changes: Slurm's own rule for moving a
          // cluster's state and accounting to another release.
          RETURN_IF_ERROR(checkSlurmUpgrade(spec.image.slurmVersion, ref->slurmVersion)
                              .withContext("cannot move cluster \"" + name + "\" from " +
                                           spec.image.name + " to " + ref->name));
          spec.image = *ref;
          return Status::ok();
        });
    answer(res, name, after);
  });

  post(kCluster + "/workers/restart", [this, answer](const httplib::Request& req,
                                                             httplib::Response& res) {
    std::string name = req.matches[1];
    auto after = change(name, Action::kRestartWorkers,
                        "restart the workers (each once its jobs end)", false, true,
                        [&](ClusterSpec& spec) {
                          spec.workerGeneration += 1;
                          return Status::ok();
                        });
    answer(res, name, after);
  });
}

}  // namespace corral
