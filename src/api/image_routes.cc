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

// The clusters `caller` may see that run an image, by its name.
std::vector<std::string> clustersOn(Store& store, const Caller& caller, const ImageInfo& image) {
  std::vector<std::string> out;
  if (auto all = store.listClusters(); all.isOk())
    for (const auto& c : *all)
      if (caller.sees(c.project) && c.spec.image.name == image.ref.name &&
          c.status != ClusterStatus::kDeleting)
        out.push_back(c.spec.name);
  return out;
}

Status noCatalog() { return unavailable("this corrald has no image catalog"); }

}  // namespace

void ApiServer::listImages(const httplib::Request&, httplib::Response& res) {
  if (options_.images == nullptr) return sendError(res, noCatalog());
  auto all = options_.images->list();
  if (!all.isOk()) return sendError(res, all.status());
  json list = json::array();
  for (const auto& i : *all) list.push_back(imageView(i, clustersOn(store_, caller(), i)));
  sendJson(res, 200, {{"images", list}, {"default", options_.defaultImage}});
}

void ApiServer::getImage(const httplib::Request& req, httplib::Response& res) {
  if (options_.images == nullptr) return sendError(res, noCatalog());
  auto i = options_.images->find(req.matches[1]);
  if (!i.isOk()) return sendError(res, i.status());
  sendJson(res, 200, imageView(*i, clustersOn(store_, caller(), *i)));
}

void ApiServer::setImage(const httplib::Request& req, httplib::Response& res) {
  std::string name = req.matches[1];
  auto body = jsonBody(req, {"image"});
  if (!body.isOk()) return sendError(res, body.status());
  auto img = body->find("image");
  if (img == body->end() || !img->is_string() || img->get<std::string>().empty())
    return sendError(res, invalidArgument("field \"image\" (an image's name) is required"));
  auto cluster = findCluster(name);
  if (!cluster.isOk()) return sendError(res, cluster.status());
  auto ref = resolveImage(img->get<std::string>());
  if (!ref.isOk()) return sendError(res, ref.status());
  auto after = change(
      name, Action::kSetImage, "set image " + ref->name + " (Slurm " + ref->slurmVersion + ")", false,
      false, [&](ClusterSpec& spec) -> Status {
        if (spec.image.id == ref->id) return Status::ok();
        // Refused before anything changes: Slurm's own rule for moving a
        // cluster's state and accounting to another release.
        RETURN_IF_ERROR(checkSlurmUpgrade(spec.image.slurmVersion, ref->slurmVersion)
                            .withContext("cannot move cluster \"" + name + "\" from " +
                                         spec.image.name + " to " + ref->name));
        spec.image = *ref;
        return Status::ok();
      });
  answerChange(res, name, after);
}

void ApiServer::restartWorkers(const httplib::Request& req, httplib::Response& res) {
  bumpGeneration(req, res, Action::kRestartWorkers, "restart the workers (each once its jobs end)",
                 &ClusterSpec::workerGeneration);
}

}  // namespace corral
