#pragma once

// JSON forms of the value types in `corral/spec.h`. The same functions serve
// the REST API (docs/api.md) and the store, so a cluster reads the same on the
// wire and on disk. None of them throws: parse errors come back as `Status`.

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

#include "corral/spec.h"
#include "corral/status.h"

namespace corral {

// {"name", "gpuNodes", "gpusPerNode", "cpuNodes", "sshKeys", "partitions",
//  "slurmConf", "loginGeneration"}.
nlohmann::json specToJson(const ClusterSpec& spec);

// Reads a spec. A missing field keeps `ClusterSpec`'s default, except `name`,
// which is required. Integers must be JSON numbers with an integral value that
// fits in an `int` (1.5, true and "4" are rejected; 4.0 is accepted as 4).
//
// `strict` is for request bodies: an unknown field or a null is then an
// InvalidArgument, because a misspelt field ("gpuNode") silently taking its
// default would create a cluster the user did not ask for. Without `strict`
// unknown fields and nulls are ignored, so that an older corral can read what
// a newer one wrote. A field of the wrong type is an error in both modes.
StatusOr<ClusterSpec> specFromJson(const nlohmann::json& json, bool strict);

// InvalidArgument naming the first member of the JSON object `object` (in
// key order, so the message is stable) that is not in `known`:
// `unknown field "X"`, and, when `suggest`, the known field within two edits
// of it that it most resembles: `unknown field "gpuNode"; did you mean
// "gpuNodes"?`. `prefix` is the object's path in messages ("partitions[0].").
// The strict readers below and the API's request bodies (`jsonBody`) refuse
// unknown fields with it.
Status rejectUnknownFields(const nlohmann::json& object, std::initializer_list<const char*> known,
                           bool suggest, const std::string& prefix = "");

// {"name", "nodes", "options": {Key: Value}}.
nlohmann::json partitionToJson(const PartitionSpec& partition);
StatusOr<PartitionSpec> partitionFromJson(const nlohmann::json& json, bool strict);

// {"revision", "author", "message", "createdAt", "state", "error", "rollback",
//  "spec"}.
nlohmann::json revisionToJson(const Revision& revision);

// {"name", "type", "hostPath", "managed", "createdAt", "project"}.
nlohmann::json volumeToJson(const Volume& volume);
StatusOr<Volume> volumeFromJson(const nlohmann::json& json);

// {"name", "group", "physicalId", "address"}.
nlohmann::json nodeToJson(const NodeRecord& node);
StatusOr<NodeRecord> nodeFromJson(const nlohmann::json& json);

// {"id", "cluster", "time", "type", "reason", "message"}, and "node" and
// "revision" where the event is about one.
nlohmann::json eventToJson(const Event& event);
StatusOr<Event> eventFromJson(const nlohmann::json& json);

// Every member of the record, shaped like the API's `Cluster` (docs/api.md):
// {"id", "name", "status", "phase", "reason", "revision", "appliedRevision",
//  "spec", "subnet", "login": {"address", "hostKey"}, "nodes", "createdAt",
//  "updatedAt", "version"}. The API adds what the record does not hold
// (`login.port`, a node's `gpus` and `state`).
nlohmann::json recordToJson(const ClusterRecord& record);

// The inverse of `recordToJson`: `recordFromJson(recordToJson(r))` equals `r`.
// `spec` is required; other missing members keep their defaults and unknown
// members are ignored, so records written by a newer corral still load.
StatusOr<ClusterRecord> recordFromJson(const nlohmann::json& json);

// One part of the record: `recordToJson`'s members that belong to it (kAll:
// every member), as `SqliteStore` keeps the two parts in two columns.
nlohmann::json recordPartToJson(const ClusterRecord& record, RecordPart part);
// The record from its two parts; a status member found in `spec` (a record
// written whole, before the parts were kept apart) gives way to `status`'s.
StatusOr<ClusterRecord> recordFromParts(const nlohmann::json& spec, const nlohmann::json& status);

// {"name", "admin", "projects", "createdAt"}.
nlohmann::json accountToJson(const Account& account);
StatusOr<Account> accountFromJson(const nlohmann::json& json);

}  // namespace corral
