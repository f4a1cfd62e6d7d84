#pragma once

// Helpers shared by the API's route files: JSON responses, errors in the
// API's error shape, request bodies and the JSON view of a cluster.

#include <httplib.h>

#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "corral/spec.h"
#include "corral/status.h"
#include "reconcile/reconciler.h"

namespace corral {

inline constexpr size_t kMaxRequestBody = 1 << 20;

void sendJson(httplib::Response& res, int status, const nlohmann::json& body);

// {"error": {"code": "InvalidArgument", "message": "…"}} with the code's
// HTTP status.
void sendError(httplib::Response& res, const Status& s);

// How `jsonBody` reads a body.
struct BodyRules {
  // An empty body is an empty object (for a request whose fields are all
  // optional).
  bool emptyIsObject = false;
  // An unknown field's message also names the known field it most resembles
  // (`rejectUnknownFields` in src/model/spec_json.h), as the partition
  // routes' messages always have.
  bool suggest = false;
};

// Every route that reads a request body reads it with this: a JSON object
// whose members are all in `known`. InvalidArgument otherwise: "request body
// must be a JSON object", or `unknown field "X"` for the first member (in key
// order) not in `known`.
StatusOr<nlohmann::json> jsonBody(const httplib::Request& req, std::initializer_list<const char*> known,
                                  BodyRules rules = {});

// The member `field` of a request body, an array of strings, appended to
// `out`; nothing when it is absent. InvalidArgument otherwise.
Status readStrings(const nlohmann::json& body, const char* field, std::vector<std::string>* out);

// The query's event filter: `node` and `revision` (a positive integer;
// InvalidArgument otherwise).
StatusOr<EventFilter> eventFilterOf(const httplib::Request& req);

// A change's answer: 202 {"change": {"revision", "made", "message", extra…},
// "cluster": Cluster} when a revision was stored, 200 when nothing changed.
void sendChange(httplib::Response& res, const ClusterRecord& record, bool made,
                const std::map<std::string, NodeObservation>& observed,
                const nlohmann::json& extra = nlohmann::json::object());

// The API's view of one node: its record, GPUs, and the state and reason
// Slurm last reported for it (`observed`; empty when unknown).
nlohmann::json nodeView(const ClusterRecord& r, const NodeRecord& node,
                        const std::map<std::string, NodeObservation>& observed);

// The API's `Cluster` (docs/api.md), with the actions its status allows.
nlohmann::json clusterView(const ClusterRecord& r,
                           const std::map<std::string, NodeObservation>& observed);

}  // namespace corral
