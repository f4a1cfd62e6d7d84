// The API's storage, node and login-user routes (docs/api.md): volumes that
// outlive clusters and their attachments, node listing with health, node
// reboot and XID injection, and login users. Changes to a cluster go through
// `ApiServer::change`, so each is a revision like any other.

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "api/http_util.h"
#include "api/server.h"
#include "health/report.h"
#include "common/log.h"
#include "model/spec_json.h"
#include "common/text.h"
#include "model/validation.h"

namespace corral {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kCluster = R"(/api/v1/clusters/([^/]+))";

bool validVolumeType(const std::string& t) {
  for (const char* v : kVolumeTypes)
    if (t == v) return true;
  return false;
}

// A --source must be an existing directory that is not part of the host's
// own system or of corral's data.
Status checkVolumeSource(const std::string& source, const std::string& dataDir) {
  std::error_code ec;
  if (source.empty() || source[0] != '/')
    return invalidArgument("--source must be an absolute path, not " + quoteForMessage(source));
  fs::path canonical = fs::canonical(source, ec);
  if (ec || !fs::is_directory(canonical))
    return invalidArgument("--source " + quoteForMessage(source) + " is not an existing directory");
  std::string c = canonical.string();
  for (const char* bad : {"/", "/bin", "/boot", "/dev", "/etc", "/lib", "/lib64", "/proc", "/root",
                          "/run", "/sbin", "/sys", "/usr", "/var", "/tmp"}) {
    std::string b = bad;
    bool inside = c == b || (b != "/" && c.rfind(b + "/", 0) == 0 && b != "/var");
    if (inside) return invalidArgument("--source " + c + " is part of the host's system");
  }
  if (!dataDir.empty() && (c == dataDir || c.rfind(dataDir + "/", 0) == 0 ||
                           dataDir.rfind(c + "/", 0) == 0))
    return invalidArgument("--source " + c + " overlaps corrald's data directory " + dataDir);
  return Status::ok();
}

std::string rootList(const std::vector<std::string>& roots) {
  std::string out;
  for (const auto& r : roots) out += (out.empty() ? "" : ", ") + r;
  return out.empty() ? "none" : out;
}

// Host directories are the operator's: only an admin may name one, and only
// under a root the operator allowed.
Status checkSourceAllowed(const Caller& who, const std::string& source,
                          const std::vector<std::string>& roots) {
  if (!who.admin)
    return permissionDenied("only an administrator may back a volume with an existing host "
                            "directory (--source); leave --source out and corral makes a "
                            "managed volume");
  std::error_code ec;
  std::string c = fs::weakly_canonical(source, ec).string();
  if (!underVolumeSourceRoot(c, roots))
    return permissionDenied("--source " + quoteForMessage(c) +
                            " is not under a directory this corrald lets volumes use (" +
                            rootList(roots) + "; corrald --volume-source-root DIR adds one)");
  return Status::ok();
}

std::string nodeOf(const ClusterRecord& r, const std::string& node) {
  for (const auto& n : r.nodes)
    if (n.name == node) return n.name;
  return "";
}

}  // namespace

bool underVolumeSourceRoot(const std::string& path, const std::vector<std::string>& roots) {
  for (const auto& r : roots)
    if (path == r || path.rfind(r + "/", 0) == 0) return true;
  return false;
}

Status checkVolumeSourceRoot(const std::string& root, const std::string& dataDir) {
  RETURN_IF_ERROR(checkVolumeSource(root, dataDir));
  std::error_code ec;
  if (fs::canonical(root, ec).string() == "/var")
    return invalidArgument("--volume-source-root /var is part of the host's system");
  return Status::ok();
}

void ApiServer::nodeRoutes() {
  auto answer = [this](httplib::Response& res, const std::string& name,
                       const StatusOr<ChangeResult>& after) {
    if (!after.isOk()) return sendError(res, after.status());
    sendChange(res, after->record, after->made, reconciler_.observedNodes(name));
  };

  // ---- Volumes -------------------------------------------------------------

  auto usersOf = [this](const std::string& volume) -> StatusOr<std::vector<std::string>> {
    ASSIGN_OR_RETURN(std::vector<ClusterRecord> all, store_.listClusters());
    std::vector<std::string> out;
    for (const auto& c : all)
      for (const auto& a : c.spec.volumes)
        // A volume is attached only within its project, so its users are
        // the caller's to see; the check keeps that true for old data.
        if (caller().sees(c.project))
        if (a.volume == volume) out.push_back(c.spec.name + ":" + a.path);
    return out;
  };

  get("/api/v1/volumes", [this, usersOf](const httplib::Request&, httplib::Response& res) {
    auto all = store_.listVolumes();
    if (!all.isOk()) return sendError(res, all.status());
    json list = json::array();
    for (const auto& v : *all) {
      if (!caller().sees(v.project)) continue;
      json j = volumeToJson(v);
      auto users = usersOf(v.name);
      j["attachedTo"] = users.isOk() ? json(*users) : json::array();
      list.push_back(j);
    }
    sendJson(res, 200, {{"volumes", list}});
  });

  post("/api/v1/volumes", [this](const httplib::Request& req, httplib::Response& res) {
    auto body = jsonBody(req);
    if (!body.isOk()) return sendError(res, body.status());
    for (auto it = body->begin(); it != body->end(); ++it)
      if (it.key() != "name" && it.key() != "type" && it.key() != "source" && it.key() != "project")
        return sendError(res, invalidArgument("unknown field \"" + it.key() + "\""));
    for (const char* key : {"name", "type", "source", "project"})
      if (body->contains(key) && !(*body)[key].is_string())
        return sendError(res, invalidArgument(std::string("field \"") + key + "\" must be a string"));
    Volume v;
    v.name = body->value("name", "");
    v.type = body->value("type", "pfs");
    std::string source = body->value("source", "");
    auto project = projectFor(body->value("project", ""));
    if (!project.isOk()) return sendError(res, project.status());
    v.project = *project;
    if (Status s = validateClusterName(v.name); !s.isOk())
      return sendError(res, invalidArgument("invalid volume name " + quoteForMessage(v.name) +
                                            ": use lowercase letters, digits and '-'"));
    if (!validVolumeType(v.type))
      return sendError(res, invalidArgument("--type must be pfs, sfs, weka or dataset, not " +
                                            quoteForMessage(v.type)));
    if (auto taken = store_.getVolume(v.name); taken.isOk())
      return sendError(res, caller().sees(taken->project)
                                ? conflict("a volume named \"" + v.name + "\" already exists")
                                : conflict("the volume name \"" + v.name +
                                           "\" is not available; choose another"));
    v.createdAt = clock_.unixMillis() / 1000;
    if (source.empty()) {
      // Storage of the runtime's (a directory here, a PVC on Kubernetes).
      auto where = reconciler_.runtime().createVolume(v.name);
      if (!where.isOk()) return sendError(res, where.status());
      v.hostPath = *where;
      v.managed = true;
    } else {
      if (Status s = checkSourceAllowed(caller(), source, options_.volumeSourceRoots); !s.isOk())
        return sendError(res, s);
      if (Status s = checkVolumeSource(source, options_.dataDir); !s.isOk()) return sendError(res, s);
      v.hostPath = fs::canonical(source).string();
      v.managed = false;
    }
    auto created = store_.createVolume(v);
    if (!created.isOk() && created.status().code() == Code::kConflict)
      created = conflict("the volume name \"" + v.name + "\" is not available; choose another");
    if (!created.isOk()) {
      if (v.managed) (void)reconciler_.runtime().deleteVolume(v.name);
      return sendError(res, created.status());
    }
    sendJson(res, 201, volumeToJson(*created));
  });

  get(R"(/api/v1/volumes/([^/]+))", [this, usersOf](const httplib::Request& req,
                                                            httplib::Response& res) {
    auto v = findVolume(req.matches[1]);
    if (!v.isOk()) return sendError(res, v.status());
    json j = volumeToJson(*v);
    auto users = usersOf(v->name);
    j["attachedTo"] = users.isOk() ? json(*users) : json::array();
    sendJson(res, 200, j);
  });

  del(R"(/api/v1/volumes/([^/]+))", [this, usersOf](const httplib::Request& req,
                                                               httplib::Response& res) {
    auto v = findVolume(req.matches[1]);
    if (!v.isOk()) return sendError(res, v.status());
    auto users = usersOf(v->name);
    if (!users.isOk()) return sendError(res, users.status());
    if (!users->empty()) {
      std::string list;
      for (const auto& u : *users) list += (list.empty() ? "" : ", ") + u;
      return sendError(res, failedPrecondition("volume \"" + v->name + "\" is attached to " + list +
                                               "; detach it first"));
    }
    if (Status s = store_.deleteVolume(v->name); !s.isOk()) return sendError(res, s);
    if (v->managed) {
      if (Status s = reconciler_.runtime().deleteVolume(v->name); !s.isOk())
        LOG_WARN("volume " << v->name << ": " << s.message());
    }
    sendJson(res, 200, volumeToJson(*v));
  });

  post(kCluster + "/volumes", [this, answer](const httplib::Request& req,
                                                    httplib::Response& res) {
    std::string name = req.matches[1];
    auto body = jsonBody(req);
    if (!body.isOk()) return sendError(res, body.status());
    for (auto it = body->begin(); it != body->end(); ++it)
      if (it.key() != "volume" && it.key() != "path")
        return sendError(res, invalidArgument("unknown field \"" + it.key() + "\""));
    if (!body->contains("volume") || !(*body)["volume"].is_string() || !body->contains("path") ||
        !(*body)["path"].is_string())
      return sendError(res, invalidArgument("give the volume's name and the --path to mount it at"));
    auto v = findVolume((*body)["volume"].get<std::string>());
    if (!v.isOk()) return sendError(res, v.status());
    auto cluster = findCluster(name);
    if (!cluster.isOk()) return sendError(res, cluster.status());
    if (cluster->project != v->project)
      return sendError(res, failedPrecondition("volume \"" + v->name + "\" belongs to project \"" +
                                               v->project + "\" and cluster \"" + name +
                                               "\" to \"" + cluster->project +
                                               "\"; a volume is attached within its project"));
    if (!v->managed && !underVolumeSourceRoot(v->hostPath, options_.volumeSourceRoots))
      return sendError(res, permissionDenied(
                                "volume \"" + v->name + "\" is backed by the host directory " +
                                v->hostPath + ", which is not under a directory this corrald lets "
                                "volumes use (" + rootList(options_.volumeSourceRoots) +
                                "); an administrator must allow it (corrald --volume-source-root)"));
    std::string path = (*body)["path"];
    auto after = change(name, Action::kVolumes,
                        "attach volume " + v->name + " at " + path, false, false,
                        [&](ClusterSpec& spec) {
                          spec.volumes.push_back(
                              {v->name, path, v->hostPath, v->type == "dataset"});
                          return Status::ok();
                        });
    answer(res, name, after);
  });

  del(kCluster + "/volumes/([^/]+)", [this, answer](const httplib::Request& req,
                                                              httplib::Response& res) {
    std::string name = req.matches[1], volume = req.matches[2];
    auto after = change(name, Action::kVolumes, "detach volume " + volume, false, false,
                        [&](ClusterSpec& spec) {
                          for (auto it = spec.volumes.begin(); it != spec.volumes.end(); ++it) {
                            if (it->volume != volume) continue;
                            spec.volumes.erase(it);
                            return Status::ok();
                          }
                          return notFound("volume \"" + volume + "\" is not attached to \"" +
                                          name + "\"");
                        });
    answer(res, name, after);
  });

  // ---- Nodes ---------------------------------------------------------------

  auto nodeView = [this](const ClusterRecord& r, const NodeRecord& n,
                         const std::map<std::string, NodeObservation>& observed) {
    json v = nodeToJson(n);
    v["gpus"] = n.group == kGpuGroup ? r.spec.gpusPerNode : 0;
    auto it = observed.find(n.name);
    v["state"] = it == observed.end() ? "" : it->second.state;
    v["reason"] = it == observed.end() ? "" : it->second.reason;
    // The report is written inside the pod, where a cluster's users could
    // write it too: parseHealthReport takes only what has the expected shape.
    auto report = parseHealthReport(reconciler_.healthReport(r.spec.name, n.name));
    std::string health = report ? report->summary() : "unknown";
    json xids = json::array();
    if (report) {
      for (const auto& x : report->xids) {
        xids.push_back({{"time", x.time}, {"code", x.code}, {"pci", x.pci}, {"class", x.cls},
                        {"description", x.description}, {"action", x.action}, {"line", x.line}});
      }
    }
    v["health"] = health;
    v["xids"] = xids;
    auto gen = r.spec.nodeGenerations.find(n.name);
    v["reboots"] = gen == r.spec.nodeGenerations.end() ? 0 : gen->second;
    return v;
  };

  get(kCluster + "/nodes", [this, nodeView](const httplib::Request& req,
                                                   httplib::Response& res) {
    auto r = findCluster(req.matches[1]);
    if (!r.isOk()) return sendError(res, r.status());
    auto observed = reconciler_.observedNodes(r->spec.name);
    json list = json::array();
    for (const auto& n : r->nodes) list.push_back(nodeView(*r, n, observed));
    sendJson(res, 200, {{"nodes", list}});
  });

  get(kCluster + "/nodes/([^/]+)", [this, nodeView](const httplib::Request& req,
                                                           httplib::Response& res) {
    auto r = findCluster(req.matches[1]);
    if (!r.isOk()) return sendError(res, r.status());
    std::string node = req.matches[2];
    for (const auto& n : r->nodes) {
      if (n.name != node) continue;
      json v = nodeView(*r, n, reconciler_.observedNodes(r->spec.name));
      // The node's history: XIDs, restarts and reboots recorded as events.
      json history = json::array();
      auto events = store_.findEvents(r->spec.name, 1000, EventFilter{node, 0});
      if (events.isOk())
        for (const auto& e : *events) history.push_back(eventToJson(e));
      v["history"] = history;
      return sendJson(res, 200, v);
    }
    sendError(res, notFound("cluster \"" + r->spec.name + "\" has no node named " +
                            quoteForMessage(node)));
  });

  post(kCluster + "/nodes/([^/]+)/reboot", [this, answer](const httplib::Request& req,
                                                                 httplib::Response& res) {
    std::string name = req.matches[1], node = req.matches[2];
    auto r = findCluster(name);
    if (!r.isOk()) return sendError(res, r.status());
    if (nodeOf(*r, node).empty())
      return sendError(res, notFound("cluster \"" + name + "\" has no node named " +
                                     quoteForMessage(node)));
    auto after = change(name, Action::kNodes, "reboot node " + node, false, true,
                        [&](ClusterSpec& spec) {
                          spec.nodeGenerations[node] += 1;
                          return Status::ok();
                        });
    answer(res, name, after);
  });

  post(kCluster + "/nodes/([^/]+)/inject-xid", [this](const httplib::Request& req,
                                                             httplib::Response& res) {
    std::string name = req.matches[1], node = req.matches[2];
    auto r = findCluster(name);
    if (!r.isOk()) return sendError(res, r.status());
    if (Status s = checkAction(Action::kNodes, name, r->status); !s.isOk()) return sendError(res, s);
    if (nodeOf(*r, node).empty())
      return sendError(res, notFound("cluster \"" + name + "\" has no node named " +
                                     quoteForMessage(node)));
    auto body = jsonBody(req);
    if (!body.isOk()) return sendError(res, body.status());
    if (Status s = rejectUnknownFields(*body, {"code"}); !s.isOk()) return sendError(res, s);
    auto code = body->find("code");
    if (code == body->end() || !code->is_number_integer() || code->get<int64_t>() < 1 ||
        code->get<int64_t>() > 999)
      return sendError(res, invalidArgument("field \"code\" must be an XID number from 1 to 999"));
    bool gpuNode = false;
    for (const auto& n : r->nodes) gpuNode = gpuNode || (n.name == node && n.group == kGpuGroup);
    if (!gpuNode) return sendError(res, invalidArgument(node + " has no GPUs"));
    auto line = reconciler_.injectXid(name, node, static_cast<int>(code->get<int64_t>()));
    if (!line.isOk()) return sendError(res, line.status());
    sendJson(res, 202, {{"node", node}, {"line", *line}});
  });

  // ---- Login users -----------------------------------------------------------

  get(kCluster + "/users", [this](const httplib::Request& req, httplib::Response& res) {
    auto r = findCluster(req.matches[1]);
    if (!r.isOk()) return sendError(res, r.status());
    json list = json::array();
    for (const auto& u : r->spec.users)
      list.push_back({{"name", u.name},
                      {"uid", u.uid},
                      {"home", "/shared/home/" + u.name},
                      {"sshKeys", u.sshKeys.size()}});
    sendJson(res, 200, {{"users", list}});
  });

  post(kCluster + "/users", [this, answer](const httplib::Request& req,
                                                  httplib::Response& res) {
    std::string name = req.matches[1];
    auto body = jsonBody(req);
    if (!body.isOk()) return sendError(res, body.status());
    for (auto it = body->begin(); it != body->end(); ++it)
      if (it.key() != "name" && it.key() != "sshKeys")
        return sendError(res, invalidArgument("unknown field \"" + it.key() + "\""));
    LoginUser user;
    if (!body->contains("name") || !(*body)["name"].is_string())
      return sendError(res, invalidArgument("field \"name\" (the user's login name) is required"));
    user.name = (*body)["name"];
    if (body->contains("sshKeys")) {
      const json& keys = (*body)["sshKeys"];
      if (!keys.is_array())
        return sendError(res, invalidArgument("field \"sshKeys\" must be an array of strings"));
      for (const auto& k : keys) {
        if (!k.is_string())
          return sendError(res, invalidArgument("field \"sshKeys\" must be an array of strings"));
        user.sshKeys.push_back(k.get<std::string>());
      }
    }
    auto after = change(name, Action::kUsers, "add login user " + user.name, false, false,
                        [&](ClusterSpec& spec) {
                          for (const auto& u : spec.users)
                            if (u.name == user.name)
                              return conflict("user \"" + user.name + "\" already exists");
                          // A uid is never given twice on a cluster, so files a removed
                          // user left on shared storage never become someone else's.
                          ASSIGN_OR_RETURN(int64_t seq, store_.nextSequence("login-uid/" + name));
                          if (seq > 10000) return failedPrecondition("this cluster has used all its uids");
                          user.uid = kFirstLoginUid + static_cast<int>(seq) - 1;
                          spec.users.push_back(user);
                          return Status::ok();
                        });
    answer(res, name, after);
  });

  del(kCluster + "/users/([^/]+)", [this, answer](const httplib::Request& req,
                                                            httplib::Response& res) {
    std::string name = req.matches[1], user = req.matches[2];
    auto after = change(name, Action::kUsers, "remove login user " + user, false, false,
                        [&](ClusterSpec& spec) {
                          for (auto it = spec.users.begin(); it != spec.users.end(); ++it) {
                            if (it->name != user) continue;
                            spec.users.erase(it);
                            return Status::ok();
                          }
                          return notFound("cluster \"" + name + "\" has no login user " +
                                          quoteForMessage(user));
                        });
    answer(res, name, after);
  });
}

}  // namespace corral
