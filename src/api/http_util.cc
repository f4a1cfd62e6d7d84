#include "api/http_util.h"

#include <charconv>

#include "model/actions.h"
#include "model/spec_json.h"

namespace corral {

using nlohmann::json;

void sendJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  // Replace, not throw on, invalid UTF-8 (a name in a request's path is
  // quoted back in error messages).
  res.set_content(body.dump(2, ' ', false, json::error_handler_t::replace) + "\n",
                  "application/json");
}

void sendError(httplib::Response& res, const Status& s) {
  sendJson(res, httpStatus(s.code()),
           {{"error", {{"code", codeName(s.code())}, {"message", s.message()}}}});
}

StatusOr<json> jsonBody(const httplib::Request& req, std::initializer_list<const char*> known,
                        BodyRules rules) {
  if (rules.emptyIsObject && req.body.empty()) return json::object();
  json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object())
    return invalidArgument("request body must be a JSON object");
  RETURN_IF_ERROR(rejectUnknownFields(body, known, rules.suggest));
  return body;
}

Status readStrings(const json& body, const char* field, std::vector<std::string>* out) {
  auto it = body.find(field);
  if (it == body.end()) return Status::ok();
  Status wrong = invalidArgument(std::string("field \"") + field + "\" must be an array of strings");
  if (!it->is_array()) return wrong;
  for (const auto& v : *it) {
    if (!v.is_string()) return wrong;
    out->push_back(v.get<std::string>());
  }
  return Status::ok();
}

StatusOr<EventFilter> eventFilterOf(const httplib::Request& req) {
  EventFilter filter;
  filter.node = req.get_param_value("node");
  if (req.has_param("revision")) {
    const std::string text = req.get_param_value("revision");
    int64_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || n < 1)
      return invalidArgument("query parameter \"revision\" must be a revision number (1 or more), not \"" +
                             text + "\"");
    filter.revision = n;
  }
  return filter;
}

void sendChange(httplib::Response& res, const ClusterRecord& record, bool made,
                const std::map<std::string, NodeObservation>& observed, const json& extra) {
  json change = {{"revision", record.revision},
                 {"made", made},
                 {"message", made ? record.changeMessage : "nothing to change"}};
  for (auto it = extra.begin(); it != extra.end(); ++it) change[it.key()] = *it;
  sendJson(res, made ? 202 : 200, {{"change", change}, {"cluster", clusterView(record, observed)}});
}

json nodeView(const ClusterRecord& r, const NodeRecord& node,
              const std::map<std::string, NodeObservation>& observed) {
  json v = nodeToJson(node);
  v["gpus"] = node.group == kGpuGroup ? r.spec.gpusPerNode : 0;
  auto it = observed.find(node.name);
  v["state"] = it == observed.end() ? "" : it->second.state;
  v["reason"] = it == observed.end() ? "" : it->second.reason;
  return v;
}

json clusterView(const ClusterRecord& r, const std::map<std::string, NodeObservation>& observed) {
  json nodes = json::array();
  for (const auto& n : r.nodes) nodes.push_back(nodeView(r, n, observed));
  json actions = json::object();
  for (Action a : allActions()) {
    Status s = checkAction(a, r.spec.name, r.status);
    actions[actionKey(a)] = s.isOk() ? json{{"allowed", true}}
                                     : json{{"allowed", false}, {"reason", s.message()}};
  }
  return {{"name", r.spec.name},
          {"project", r.project},
          {"status", statusName(r.status)},
          {"phase", r.phase},
          {"reason", r.reason},
          {"revision", r.revision},
          {"appliedRevision", r.appliedRevision},
          {"spec", specToJson(r.spec)},
          {"platformPartitions", r.platformPartitions},
          {"subnet", r.subnet},
          {"login", {{"address", r.loginAddress}, {"port", 22}, {"hostKey", r.loginHostKey}}},
          {"nodes", nodes},
          {"actions", actions},
          {"createdAt", r.createdAt},
          {"updatedAt", r.updatedAt}};
}

}  // namespace corral
