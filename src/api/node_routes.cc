// A cluster's nodes (docs/api.md, "Nodes"): each with what Slurm and its
// health agent last reported, one node's history, a reboot (a change that
// recreates its pod) and a simulated GPU fault (an XID written where the
// driver would).

#include "api/http_util.h"
#include "api/server.h"
#include "common/text.h"
#include "health/report.h"
#include "model/spec_json.h"

namespace corral {

using nlohmann::json;

namespace {

bool hasNode(const ClusterRecord& r, const std::string& node) {
  for (const auto& n : r.nodes)
    if (n.name == node) return true;
  return false;
}

Status noSuchNode(const std::string& cluster, const std::string& node) {
  return notFound("cluster \"" + cluster + "\" has no node named " + quoteForMessage(node));
}

// `nodeView` with the node's health: the XIDs its agent found, and how
// often it was rebooted.
json nodeWithHealth(Reconciler& reconciler, const ClusterRecord& r, const NodeRecord& n,
                    const std::map<std::string, NodeObservation>& observed) {
  json v = nodeView(r, n, observed);
  // The report is written inside the pod, where a cluster's users could
  // write it too: parseHealthReport takes only what has the expected shape.
  auto report = parseHealthReport(reconciler.healthReport(r.spec.name, n.name));
  json xids = json::array();
  if (report) {
    for (const auto& x : report->xids) {
      xids.push_back({{"time", x.time}, {"code", x.code}, {"pci", x.pci}, {"class", x.cls},
                      {"description", x.description}, {"action", x.action}, {"line", x.line}});
    }
  }
  v["health"] = report ? report->summary() : "unknown";
  v["xids"] = xids;
  auto gen = r.spec.nodeGenerations.find(n.name);
  v["reboots"] = gen == r.spec.nodeGenerations.end() ? 0 : gen->second;
  return v;
}

}  // namespace

void ApiServer::listNodes(const httplib::Request& req, httplib::Response& res) {
  auto r = findCluster(req.matches[1]);
  if (!r.isOk()) return sendError(res, r.status());
  auto observed = reconciler_.observedNodes(r->spec.name);
  json list = json::array();
  for (const auto& n : r->nodes) list.push_back(nodeWithHealth(reconciler_, *r, n, observed));
  sendJson(res, 200, {{"nodes", list}});
}

void ApiServer::getNode(const httplib::Request& req, httplib::Response& res) {
  auto r = findCluster(req.matches[1]);
  if (!r.isOk()) return sendError(res, r.status());
  std::string node = req.matches[2];
  for (const auto& n : r->nodes) {
    if (n.name != node) continue;
    json v = nodeWithHealth(reconciler_, *r, n, reconciler_.observedNodes(r->spec.name));
    // The node's history: XIDs, restarts and reboots recorded as events.
    json history = json::array();
    if (auto events = store_.findEvents(r->spec.name, 1000, EventFilter{node, 0}); events.isOk())
      for (const auto& e : *events) history.push_back(eventToJson(e));
    v["history"] = history;
    return sendJson(res, 200, v);
  }
  sendError(res, noSuchNode(r->spec.name, node));
}

void ApiServer::rebootNode(const httplib::Request& req, httplib::Response& res) {
  std::string name = req.matches[1], node = req.matches[2];
  auto r = findCluster(name);
  if (!r.isOk()) return sendError(res, r.status());
  if (!hasNode(*r, node)) return sendError(res, noSuchNode(name, node));
  auto after = change(name, Action::kNodes, "reboot node " + node, false, true, [&](ClusterSpec& spec) {
    spec.nodeGenerations[node] += 1;
    return Status::ok();
  });
  answerChange(res, name, after);
}

void ApiServer::injectXid(const httplib::Request& req, httplib::Response& res) {
  std::string name = req.matches[1], node = req.matches[2];
  auto r = findCluster(name);
  if (!r.isOk()) return sendError(res, r.status());
  if (Status s = checkAction(Action::kNodes, name, r->status); !s.isOk()) return sendError(res, s);
  if (!hasNode(*r, node)) return sendError(res, noSuchNode(name, node));
  auto body = jsonBody(req, {"code"});
  if (!body.isOk()) return sendError(res, body.status());
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
}

}  // namespace corral
