// Volumes and their attachments (docs/api.md, "Volumes"). What a volume may
// be, who may make one and where it may be attached is `Volumes`'
// (src/api/volumes.h); attaching and detaching are changes to the cluster.

#include "api/http_util.h"
#include "api/server.h"
#include "model/spec_edits.h"
#include "model/spec_json.h"

namespace corral {

using nlohmann::json;

namespace {

// A volume with the clusters it is attached to (an empty list when they
// cannot be read).
json volumeWithAttachments(const Volume& v, const StatusOr<std::vector<std::string>>& attachments) {
  json j = volumeToJson(v);
  j["attachedTo"] = attachments.isOk() ? json(*attachments) : json::array();
  return j;
}

}  // namespace

void ApiServer::listVolumes(const httplib::Request&, httplib::Response& res) {
  auto all = store_.listVolumes();
  if (!all.isOk()) return sendError(res, all.status());
  json list = json::array();
  for (const auto& v : *all)
    if (caller().sees(v.project))
      list.push_back(volumeWithAttachments(v, volumes_.attachments(caller(), v.name)));
  sendJson(res, 200, {{"volumes", list}});
}

void ApiServer::createVolume(const httplib::Request& req, httplib::Response& res) {
  auto body = jsonBody(req, {"name", "type", "source", "project"});
  if (!body.isOk()) return sendError(res, body.status());
  for (const char* key : {"name", "type", "source", "project"})
    if (body->contains(key) && !(*body)[key].is_string())
      return sendError(res, invalidArgument(std::string("field \"") + key + "\" must be a string"));
  auto project = projectFor(body->value("project", ""));
  if (!project.isOk()) return sendError(res, project.status());
  auto created = volumes_.create(caller(), body->value("name", ""), body->value("type", "pfs"),
                                 body->value("source", ""), *project);
  if (!created.isOk()) return sendError(res, created.status());
  sendJson(res, 201, volumeToJson(*created));
}

void ApiServer::getVolume(const httplib::Request& req, httplib::Response& res) {
  auto v = findVolume(req.matches[1]);
  if (!v.isOk()) return sendError(res, v.status());
  sendJson(res, 200, volumeWithAttachments(*v, volumes_.attachments(caller(), v->name)));
}

void ApiServer::deleteVolume(const httplib::Request& req, httplib::Response& res) {
  auto v = findVolume(req.matches[1]);
  if (!v.isOk()) return sendError(res, v.status());
  if (Status s = volumes_.remove(caller(), *v); !s.isOk()) return sendError(res, s);
  sendJson(res, 200, volumeToJson(*v));
}

void ApiServer::attachVolume(const httplib::Request& req, httplib::Response& res) {
  std::string name = req.matches[1];
  auto body = jsonBody(req, {"volume", "path"});
  if (!body.isOk()) return sendError(res, body.status());
  if (!body->contains("volume") || !(*body)["volume"].is_string() || !body->contains("path") ||
      !(*body)["path"].is_string())
    return sendError(res, invalidArgument("give the volume's name and the --path to mount it at"));
  auto v = findVolume((*body)["volume"].get<std::string>());
  if (!v.isOk()) return sendError(res, v.status());
  auto cluster = findCluster(name);
  if (!cluster.isOk()) return sendError(res, cluster.status());
  if (Status s = volumes_.checkAttachable(*v, *cluster); !s.isOk()) return sendError(res, s);
  std::string path = (*body)["path"];
  auto after = change(name, Action::kVolumes, "attach volume " + v->name + " at " + path, false, false,
                      [&](ClusterSpec& spec) {
                        addAttachment(spec, *v, path);
                        return Status::ok();
                      });
  answerChange(res, name, after);
}

void ApiServer::detachVolume(const httplib::Request& req, httplib::Response& res) {
  removeNamed(req, res, Action::kVolumes, "detach volume", removeAttachment);
}

}  // namespace corral
