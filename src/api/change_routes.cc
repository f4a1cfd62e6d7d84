// The API's changes to a cluster (docs/api.md, "Changes"). Each one writes a
// new revision of the cluster's spec and asks the reconciler to apply it;
// the answer (202) carries the revision so that a client can follow it to
// Applied or Failed in the cluster's history.

#include <set>

#include <sstream>

#include "api/http_util.h"
#include "api/server.h"
#include "store/update.h"
#include "model/diff.h"
#include "common/text.h"
#include "model/spec_json.h"
#include "model/validation.h"
#include "slurm/hostlist.h"
#include "cluster/pods.h"
#include "slurm/renderer.h"
#include "slurm/settings.h"
#include "slurm/slurm_params.h"

namespace corral {

using nlohmann::json;

namespace {

const std::string kCluster = R"(/api/v1/clusters/([^/]+))";

json paramDefToJson(const ParamDef& d) {
  static const char* types[] = {"int",  "bool",    "enum",        "enumList", "time",
                                "path", "options", "tresWeights", "nameList"};
  json j = {{"name", d.name},
            {"type", types[static_cast<int>(d.type)]},
            {"needsRestart", d.needsRestart},
            {"help", d.help}};
  if (d.type == ParamType::kInt) {
    j["min"] = d.min;
    j["max"] = d.max;
    j["allowUnlimited"] = d.allowUnlimited;
  }
  if (!d.values.empty()) j["values"] = d.values;
  return j;
}

// "Key=Value" strings or an object {Key: Value} into a map.
Status readSettings(const json& body, const char* field, std::map<std::string, std::string>* out) {
  auto it = body.find(field);
  if (it == body.end()) return Status::ok();
  if (!it->is_object())
    return invalidArgument(std::string("field \"") + field + "\" must be an object of strings");
  for (auto kv = it->begin(); kv != it->end(); ++kv) {
    if (!kv->is_string())
      return invalidArgument(std::string("field \"") + field + "." + kv.key() + "\" must be a string");
    (*out)[kv.key()] = kv->get<std::string>();
  }
  return Status::ok();
}

Status readNames(const json& body, const char* field, std::vector<std::string>* out) {
  auto it = body.find(field);
  if (it == body.end()) return Status::ok();
  if (!it->is_array())
    return invalidArgument(std::string("field \"") + field + "\" must be an array of strings");
  for (const auto& v : *it) {
    if (!v.is_string())
      return invalidArgument(std::string("field \"") + field + "\" must be an array of strings");
    out->push_back(v.get<std::string>());
  }
  return Status::ok();
}

// Applies `set` and `unset` to the spec's slurm.conf settings; keys are
// matched case-insensitively and checked by normalizeSlurmSettings later.
Status editConfig(ClusterSpec& spec, const std::map<std::string, std::string>& set,
                  const std::vector<std::string>& unset) {
  for (const auto& key : unset) {
    const ParamDef* def = findSlurmConfParam(key);
    std::string canonical = def ? def->name : key;
    if (!spec.slurmConf.erase(canonical))
      return invalidArgument(quoteForMessage(key) + " is not set; `corral config get` lists what is");
  }
  for (const auto& [key, value] : set) {
    const ParamDef* def = findSlurmConfParam(key);
    if (def == nullptr)
      return invalidArgument(quoteForMessage(key) +
                             " is not a slurm.conf parameter corral lets users set; see "
                             "`corral config params`");
    spec.slurmConf[def->name] = value;
  }
  return Status::ok();
}

// "MinJobAge=60 unset KillWait", with the parameters' canonical names.
std::string describeSettings(const std::map<std::string, std::string>& set,
                             const std::vector<std::string>& unset) {
  auto canonical = [](const std::string& k) {
    const ParamDef* d = findSlurmConfParam(k);
    return d ? d->name : k;
  };
  std::string out;
  for (const auto& [k, v] : set) out += (out.empty() ? "" : " ") + canonical(k) + "=" + v;
  for (const auto& k : unset) out += (out.empty() ? "unset " : " unset ") + canonical(k);
  return out;
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

void ApiServer::changeRoutes() {
  // Answers a change request: 202 with the revision, 200 when nothing changed.
  auto answer = [this](httplib::Response& res, const std::string& name,
                       const StatusOr<ChangeResult>& after, json extra = json::object()) {
    if (!after.isOk()) return sendError(res, after.status());
    sendChange(res, after->record, after->made, reconciler_.observedNodes(name), extra);
  };

  get(kCluster + "/revisions", [this](const httplib::Request& req, httplib::Response& res) {
    auto r = findCluster(req.matches[1]);
    if (!r.isOk()) return sendError(res, r.status());
    auto history = store_.listRevisions(r->spec.name);
    if (!history.isOk()) return sendError(res, history.status());
    json list = json::array();
    for (const auto& rev : *history) list.push_back(revisionToJson(rev));
    sendJson(res, 200, {{"revisions", list}, {"appliedRevision", r->appliedRevision}});
  });

  post(kCluster + "/scale", [this, answer](const httplib::Request& req,
                                                  httplib::Response& res) {
    std::string name = req.matches[1];
    auto body = jsonBody(req);
    if (!body.isOk()) return sendError(res, body.status());
    if (Status s = rejectUnknownFields(*body, {"gpuNodes", "cpuNodes", "force"}); !s.isOk())
      return sendError(res, s);
    auto current = findCluster(name);
    if (!current.isOk()) return sendError(res, current.status());
    ClusterSpec next = current->spec;
    for (const char* f : {"gpuNodes", "cpuNodes"}) {
      auto it = body->find(f);
      if (it == body->end()) continue;
      if (!it->is_number_integer())
        return sendError(res, invalidArgument(std::string("field \"") + f + "\" must be an integer"));
      int64_t v = it->get<int64_t>();
      // Checked here, before any node is planned for it: a million would
      // cost seconds of CPU only to be refused by validation.
      int64_t max = std::string(f) == "gpuNodes" ? kMaxGpuNodes : kMaxCpuNodes;
      if (v < 0 || v > max)
        return sendError(res, invalidArgument(std::string(std::string(f) == "gpuNodes" ? "--gpu-nodes"
                                                                                        : "--cpu-nodes") +
                                              " (field \"" + f + "\") must be from 0 to " +
                                              std::to_string(max)));
      (std::string(f) == "gpuNodes" ? next.gpuNodes : next.cpuNodes) = static_cast<int>(v);
    }
    if (body->contains("force") && !(*body)["force"].is_boolean())
      return sendError(res, invalidArgument("field \"force\" must be true or false"));
    bool force = body->value("force", false);
    auto emptied = partitionsEmptiedBy(current->spec, next);
    std::vector<std::string> removed;
    {
      auto after = nodeNamesOf(next);
      std::set<std::string> keep(after.begin(), after.end());
      for (const auto& n : nodeNamesOf(current->spec))
        if (!keep.count(n)) removed.push_back(n);
    }
    json jobs = json::array();
    if (!removed.empty() && current->status == ClusterStatus::kRunning) {
      auto running = reconciler_.jobsOn(name, {"-w", compressHostlist(removed)});
      if (running.isOk())
        for (const auto& j : *running) jobs.push_back(j);
    }
    auto count = [](int n, const char* what) {
      return std::to_string(n) + " " + what + (n == 1 ? " node" : " nodes");
    };
    std::string message = "scale to " + count(next.gpuNodes, "GPU") + " and " +
                          count(next.cpuNodes, "CPU");
    if (force) message += " (--force)";
    auto after = change(name, Action::kScale, message, force, false, [&](ClusterSpec& spec) {
      spec.gpuNodes = next.gpuNodes;
      spec.cpuNodes = next.cpuNodes;
      prunePartitionNodes(spec);
      return Status::ok();
    });
    json shrunk = json::array();
    if (after.isOk()) {
      for (const auto& before : current->spec.partitions)
        for (const auto& now : after->record.spec.partitions)
          if (now.name == before.name && now.nodes != before.nodes && !now.nodes.empty())
            shrunk.push_back(before.name + ": " + before.nodes + " -> " + now.nodes);
    }
    json extra = {{"removedNodes", removed.empty() ? "" : compressHostlist(removed)},
                  {"emptiedPartitions", emptied},
                  {"shrunkPartitions", shrunk},
                  {"jobsOnRemovedNodes", jobs},
                  {"jobsWillBe", jobs.empty() ? "none" : force ? "cancelled" : "waited for"}};
    answer(res, name, after, extra);
  });

  get(kCluster + "/partitions", [this](const httplib::Request& req, httplib::Response& res) {
    auto r = findCluster(req.matches[1]);
    if (!r.isOk()) return sendError(res, r.status());
    json list = json::array();
    bool userDefault = false;
    for (const auto& p : r->spec.partitions) {
      auto d = p.options.find("Default");
      userDefault = userDefault || (d != p.options.end() && d->second == "YES");
    }
    auto platform = [&](const std::string& n, const std::string& nodes, bool isDefault) {
      list.push_back({{"name", n},
                      {"nodes", nodes},
                      {"managedBy", "corral"},
                      {"default", isDefault},
                      {"options", {{"MaxTime", "INFINITE"}}}});
    };
    std::vector<std::string> gpu, cpu;
    for (const auto& n : nodeNamesOf(r->spec))
      (n.rfind(kGpuGroup, 0) == 0 ? gpu : cpu).push_back(n);
    platform("all", "ALL", !userDefault);
    if (!gpu.empty()) platform(kGpuGroup, compressHostlist(gpu), false);
    if (!cpu.empty()) platform(kCpuGroup, compressHostlist(cpu), false);
    for (const auto& n : r->platformPartitions) platform(n, "ALL", false);
    for (const auto& p : r->spec.partitions) {
      json v = partitionToJson(p);
      v["managedBy"] = "user";
      auto d = p.options.find("Default");
      v["default"] = d != p.options.end() && d->second == "YES";
      list.push_back(v);
    }
    sendJson(res, 200,
             {{"partitions", list},
              {"userPartitions", r->spec.partitions.size()},
              {"limit", kMaxUserPartitions}});
  });

  auto readPartition = [](const httplib::Request& req, bool named) -> StatusOr<PartitionSpec> {
    ASSIGN_OR_RETURN(json body, jsonBody(req));
    ASSIGN_OR_RETURN(PartitionSpec p, partitionFromJson(body, /*strict=*/true));
    if (!named) p.name = req.matches[2];
    if (p.nodes.empty())
      return invalidArgument("a partition needs nodes, as a Slurm hostlist such as slinky-[0-1,5]");
    return p;
  };

  post(kCluster + "/partitions", [this, answer, readPartition](const httplib::Request& req,
                                                                      httplib::Response& res) {
    std::string name = req.matches[1];
    auto p = readPartition(req, true);
    if (!p.isOk()) return sendError(res, p.status());
    auto after = change(name, Action::kPartitions, "create partition " + p->name, false, false,
                        [&](ClusterSpec& spec) {
                          for (const auto& q : spec.partitions)
                            if (q.name == p->name)
                              return conflict("partition \"" + p->name + "\" already exists");
                          if (spec.partitions.size() >= static_cast<size_t>(kMaxUserPartitions))
                            return invalidArgument(
                                "a cluster can have at most " + std::to_string(kMaxUserPartitions) +
                                " partitions of its own; delete one first");
                          spec.partitions.push_back(*p);
                          return Status::ok();
                        });
    answer(res, name, after);
  });

  put(kCluster + "/partitions/([^/]+)", [this, answer, readPartition](
                                                   const httplib::Request& req,
                                                   httplib::Response& res) {
    std::string name = req.matches[1];
    auto p = readPartition(req, false);
    if (!p.isOk()) return sendError(res, p.status());
    if (p->name != std::string(req.matches[2]))
      return sendError(res, invalidArgument("a partition cannot be renamed; create a new one"));
    auto after = change(name, Action::kPartitions, "update partition " + p->name, false, false,
                        [&](ClusterSpec& spec) {
                          for (auto& q : spec.partitions) {
                            if (q.name != p->name) continue;
                            q = *p;
                            return Status::ok();
                          }
                          for (const auto& r : reservedPartitionNames({}))
                            if (r == p->name)
                              return invalidArgument("partition \"" + p->name +
                                                     "\" is managed by corral and cannot be "
                                                     "changed");
                          return notFound("no partition named \"" + p->name + "\"");
                        });
    answer(res, name, after);
  });

  del(kCluster + "/partitions/([^/]+)", [this, answer](const httplib::Request& req,
                                                                 httplib::Response& res) {
    std::string name = req.matches[1], partition = req.matches[2];
    bool force = req.get_param_value("force") == "true";
    auto current = findCluster(name);
    if (!current.isOk()) return sendError(res, current.status());
    json jobs = json::array();
    bool exists = false;
    for (const auto& q : current->spec.partitions) exists = exists || q.name == partition;
    if (exists && current->status == ClusterStatus::kRunning) {
      auto queued = reconciler_.jobsOn(name, {"-p", partition});
      if (queued.isOk())
        for (const auto& j : *queued) jobs.push_back(j);
      if (!jobs.empty() && !force)
        return sendError(res, failedPrecondition(
                                  "partition \"" + partition + "\" has " +
                                  std::to_string(jobs.size()) +
                                  " pending or running jobs; wait for them, or delete with "
                                  "--force (running jobs keep running; pending ones are left "
                                  "without a partition and fail)"));
    }
    auto after = change(name, Action::kPartitions, "delete partition " + partition, false, false,
                        [&](ClusterSpec& spec) {
                          for (auto it = spec.partitions.begin(); it != spec.partitions.end(); ++it) {
                            if (it->name != partition) continue;
                            spec.partitions.erase(it);
                            return Status::ok();
                          }
                          for (const auto& r : reservedPartitionNames(current->platformPartitions))
                            if (r == partition)
                              return invalidArgument("partition \"" + partition +
                                                     "\" is managed by corral and cannot be "
                                                     "deleted");
                          return notFound("no partition named \"" + partition + "\"");
                        });
    answer(res, name, after, {{"jobsInPartition", jobs}});
  });

  get("/api/v1/slurm-params", [](const httplib::Request&, httplib::Response& res) {
    json conf = json::array(), part = json::array();
    for (const auto& d : slurmConfParams()) conf.push_back(paramDefToJson(d));
    for (const auto& d : partitionParams()) part.push_back(paramDefToJson(d));
    sendJson(res, 200, {{"slurmConf", conf}, {"partition", part}});
  });

  get(kCluster + "/config", [this](const httplib::Request& req, httplib::Response& res) {
    auto r = findCluster(req.matches[1]);
    if (!r.isOk()) return sendError(res, r.status());
    // What the rendered slurm.conf says: corral's defaults with the user's
    // settings over them (node and partition lines left out).
    json effective = json::object();
    if (auto rendered = renderCluster(*r); rendered.isOk()) {
      auto conf = rendered->files.find("etc/slurm/slurm.conf");
      std::istringstream lines(conf == rendered->files.end() ? "" : conf->second.content);
      std::string line;
      while (std::getline(lines, line)) {
        auto eq = line.find('=');
        if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
        std::string key = line.substr(0, eq);
        if (key == "NodeName" || key == "PartitionName" || key == "DownNodes" ||
            key == "NodeSet")
          continue;
        effective[key] = line.substr(eq + 1);
      }
    }
    sendJson(res, 200,
             {{"slurmConf", r->spec.slurmConf},
              {"effective", effective},
              {"revision", r->revision},
              {"appliedRevision", r->appliedRevision}});
  });

  // {"set": {Key: Value}, "unset": [Key]}.
  auto readConfigChange = [](const httplib::Request& req, std::map<std::string, std::string>* set,
                             std::vector<std::string>* unset) -> Status {
    ASSIGN_OR_RETURN(json body, jsonBody(req, /*emptyIsObject=*/true));
    RETURN_IF_ERROR(rejectUnknownFields(body, {"set", "unset"}));
    RETURN_IF_ERROR(readSettings(body, "set", set));
    return readNames(body, "unset", unset);
  };

  patch(kCluster + "/config", [this, answer, readConfigChange](const httplib::Request& req,
                                                                      httplib::Response& res) {
    std::string name = req.matches[1];
    std::map<std::string, std::string> set;
    std::vector<std::string> unset;
    if (Status s = readConfigChange(req, &set, &unset); !s.isOk()) return sendError(res, s);
    if (set.empty() && unset.empty())
      return sendError(res, invalidArgument("nothing to change: give Key=Value settings to set "
                                            "or keys to unset"));
    auto after = change(name, Action::kConfig, "config " + describeSettings(set, unset), false,
                        false, [&](ClusterSpec& spec) { return editConfig(spec, set, unset); });
    answer(res, name, after);
  });

  // What applying the cluster's desired revision, plus the change in the
  // body if any, would do to the rendered files.
  post(kCluster + "/config/diff", [this, readConfigChange](const httplib::Request& req,
                                                                  httplib::Response& res) {
    std::string name = req.matches[1];
    std::map<std::string, std::string> set;
    std::vector<std::string> unset;
    if (Status s = readConfigChange(req, &set, &unset); !s.isOk()) return sendError(res, s);
    auto r = findCluster(name);
    if (!r.isOk()) return sendError(res, r.status());
    ClusterRecord next = *r;
    if (Status s = editConfig(next.spec, set, unset); !s.isOk()) return sendError(res, s);
    if (Status s = normalizeSlurmSettings(next.spec, r->platformPartitions); !s.isOk())
      return sendError(res, s);
    ClusterRecord applied = *r;
    auto history = store_.listRevisions(name);
    if (history.isOk())
      for (const auto& rev : *history)
        if (rev.number == r->appliedRevision) applied.spec = rev.spec;
    auto planned = planNodes(next.spec, next.subnet, r->nodes);
    if (!planned.isOk()) return sendError(res, planned.status());
    next.nodes = *planned;
    auto before = renderCluster(applied);
    auto after = renderCluster(next);
    if (!before.isOk() || !after.isOk())
      return sendError(res, before.isOk() ? after.status() : before.status());
    std::string diff;
    for (const auto& [path, file] : after->files) {
      auto old = before->files.find(path);
      diff += unifiedDiff(old == before->files.end() ? "" : old->second.content, file.content,
                          "a/" + path, "b/" + path);
    }
    sendJson(res, 200,
             {{"diff", diff},
              {"restartsSlurmctld", controllerRestartKey(applied) != controllerRestartKey(next)}});
  });

  put(kCluster + "/ssh-keys", [this, answer](const httplib::Request& req,
                                                    httplib::Response& res) {
    std::string name = req.matches[1];
    auto body = jsonBody(req);
    if (!body.isOk()) return sendError(res, body.status());
    std::vector<std::string> keys;
    if (Status s = rejectUnknownFields(*body, {"sshKeys"}); !s.isOk()) return sendError(res, s);
    if (Status s = readNames(*body, "sshKeys", &keys); !s.isOk()) return sendError(res, s);
    if (keys.empty())
      return sendError(res, invalidArgument("give at least one --ssh-key; without one nobody "
                                            "could log in"));
    auto after = change(name, Action::kSetKeys,
                        "set " + std::to_string(keys.size()) +
                            (keys.size() == 1 ? " SSH key" : " SSH keys") + " for root",
                        false, false,
                        [&](ClusterSpec& spec) {
                          spec.sshKeys = keys;
                          return Status::ok();
                        });
    answer(res, name, after);
  });

  post(kCluster + "/login/restart", [this, answer](const httplib::Request& req,
                                                          httplib::Response& res) {
    std::string name = req.matches[1];
    auto after = change(name, Action::kLoginRestart, "restart the login service", false, true,
                        [&](ClusterSpec& spec) {
                          spec.loginGeneration += 1;
                          return Status::ok();
                        });
    answer(res, name, after);
  });

  post(kCluster + "/controller/restart", [this, answer](const httplib::Request& req,
                                                               httplib::Response& res) {
    std::string name = req.matches[1];
    auto after = change(name, Action::kControllerRestart, "restart the controller", false, true,
                        [&](ClusterSpec& spec) {
                          spec.controllerGeneration += 1;
                          return Status::ok();
                        });
    answer(res, name, after);
  });

  post(kCluster + "/reconfigure", [this, answer](const httplib::Request& req,
                                                        httplib::Response& res) {
    std::string name = req.matches[1];
    auto r = findCluster(name);
    if (!r.isOk()) return sendError(res, r.status());
    if (r->status == ClusterStatus::kCreating) {
      event(name, "ReconfigureRequested",
            "reconfigure requested while creating: another creation pass", r->revision);
      reconciler_.enqueue(name);
      sendChange(res, *r, false, {});
      res.status = 202;  // A creation pass was asked for, though no revision was made.
      return;
    }
    auto after = change(name, Action::kReconfigure,
                        "reconfigure: apply revision " + std::to_string(r->revision) + " again",
                        false, true, [](ClusterSpec&) { return Status::ok(); });
    answer(res, name, after);
  });

  post(kCluster + "/terminate", [this](const httplib::Request& req, httplib::Response& res) {
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
    return sendJson(res, 202, clusterView(*stored, {}));
  });

  post(kCluster + "/clone", [this](const httplib::Request& req, httplib::Response& res) {
    std::string name = req.matches[1];
    auto body = jsonBody(req);
    if (!body.isOk()) return sendError(res, body.status());
    if (Status s = rejectUnknownFields(*body, {"name", "image"}); !s.isOk()) return sendError(res, s);
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
    auto created = createCluster(spec, r->project, "clone of \"" + name + "\" (revision " +
                                                       std::to_string(r->revision) + ")");
    if (!created.isOk()) return sendError(res, created.status());
    sendJson(res, 201, clusterView(*created, {}));
  });
}

}  // namespace corral
