// slurm.conf (docs/api.md, "Configuration"): the parameters users may set,
// a cluster's settings and what its rendered slurm.conf says in effect, a
// change to them, and what a change would do to the rendered files. The
// settings' logic is src/slurm/cluster_config.h's.

#include "api/http_util.h"
#include "api/server.h"
#include "cluster/pods.h"
#include "model/diff.h"
#include "slurm/cluster_config.h"
#include "slurm/renderer.h"
#include "slurm/slurm_params.h"

namespace corral {

using nlohmann::json;

namespace {

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

// {"set": {Key: Value}, "unset": [Key]}; an empty body changes nothing.
StatusOr<ConfigChange> readConfigChange(const httplib::Request& req) {
  ASSIGN_OR_RETURN(json body, jsonBody(req, {"set", "unset"}, {.emptyIsObject = true}));
  ConfigChange change;
  if (auto set = body.find("set"); set != body.end()) {
    if (!set->is_object()) return invalidArgument("field \"set\" must be an object of strings");
    for (auto kv = set->begin(); kv != set->end(); ++kv) {
      if (!kv->is_string()) return invalidArgument("field \"set." + kv.key() + "\" must be a string");
      change.set[kv.key()] = kv->get<std::string>();
    }
  }
  RETURN_IF_ERROR(readStrings(body, "unset", &change.unset));
  return change;
}

}  // namespace

void ApiServer::listSlurmParams(const httplib::Request&, httplib::Response& res) {
  json conf = json::array(), part = json::array();
  for (const auto& d : slurmConfParams()) conf.push_back(paramDefToJson(d));
  for (const auto& d : partitionParams()) part.push_back(paramDefToJson(d));
  sendJson(res, 200, {{"slurmConf", conf}, {"partition", part}});
}

void ApiServer::getConfig(const httplib::Request& req, httplib::Response& res) {
  auto r = findCluster(req.matches[1]);
  if (!r.isOk()) return sendError(res, r.status());
  json effective = json::object();
  if (auto rendered = renderCluster(*r); rendered.isOk()) effective = effectiveSlurmConf(rendered->files);
  sendJson(res, 200,
           {{"slurmConf", r->spec.slurmConf},
            {"effective", effective},
            {"revision", r->revision},
            {"appliedRevision", r->appliedRevision}});
}

void ApiServer::setConfig(const httplib::Request& req, httplib::Response& res) {
  std::string name = req.matches[1];
  auto wanted = readConfigChange(req);
  if (!wanted.isOk()) return sendError(res, wanted.status());
  if (wanted->empty())
    return sendError(res, invalidArgument("nothing to change: give Key=Value settings to set "
                                          "or keys to unset"));
  auto after = change(name, Action::kConfig, "config " + describeConfigChange(*wanted), false, false,
                      [&](ClusterSpec& spec) { return applyConfigChange(*wanted, spec); });
  answerChange(res, name, after);
}

// What applying the cluster's desired revision, plus the change in the body
// if any, would do to the files rendered for its applied revision.
void ApiServer::diffConfig(const httplib::Request& req, httplib::Response& res) {
  std::string name = req.matches[1];
  auto wanted = readConfigChange(req);
  if (!wanted.isOk()) return sendError(res, wanted.status());
  auto r = findCluster(name);
  if (!r.isOk()) return sendError(res, r.status());
  auto next = withConfigChange(*r, *wanted);
  if (!next.isOk()) return sendError(res, next.status());
  ClusterRecord applied = *r;
  if (auto history = store_.listRevisions(name); history.isOk())
    for (const auto& rev : *history)
      if (rev.number == r->appliedRevision) applied.spec = rev.spec;
  auto before = renderCluster(applied);
  auto after = renderCluster(*next);
  if (!before.isOk() || !after.isOk())
    return sendError(res, before.isOk() ? after.status() : before.status());
  sendJson(res, 200,
           {{"diff", unifiedDiff(before->files, after->files)},
            {"restartsSlurmctld", controllerRestartKey(applied) != controllerRestartKey(*next)}});
}

}  // namespace corral
