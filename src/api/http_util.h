#pragma once

// Helpers shared by the API's route files: JSON responses, errors in the
// API's error shape, request bodies and the JSON view of a cluster.

#include <httplib.h>

#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "corral/spec.h"
#include "corral/status.h"
#include "reconcile/reconciler.h"

namespace corral {

inline constexpr size_t kMaxRequestBody = 1 << 20;

void sendJson(httplib::Response& res, int status, const nlohmann::json& body);

// {"error": {"code": "InvalidArgument", "message": "…"}} with the code's
// HTTP status.
void sendError(httplib::Response& res, const Status& s);

// The request body as a JSON object; InvalidArgument otherwise. An empty
// body is an empty object when `emptyIsObject`.
StatusOr<nlohmann::json> jsonBody(const httplib::Request& req, bool emptyIsObject = false);

// The query's event filter: `node` and `revision` (a positive integer;
// InvalidArgument otherwise).
StatusOr<EventFilter> eventFilterOf(const httplib::Request& req);

// InvalidArgument naming the first member of `body` not in `known`.
Status rejectUnknownFields(const nlohmann::json& body, std::initializer_list<const char*> known);

// A change's answer: 202 {"change": {"revision", "made", "message", extra…},
// "cluster": Cluster} when a revision was stored, 200 when nothing changed.
void sendChange(httplib::Response& res, const ClusterRecord& record, bool made,
                const std::map<std::string, NodeObservation>& observed,
                const nlohmann::json& extra = nlohmann::json::object());

// The API's `Cluster` (docs/api.md), with the actions its status allows.
nlohmann::json clusterView(const ClusterRecord& r,
                           const std::map<std::string, NodeObservation>& observed);

}  // namespace corral
