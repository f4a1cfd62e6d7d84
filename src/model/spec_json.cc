#include "model/spec_json.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace corral {

namespace {

using nlohmann::json;

struct StatusNameEntry {
  ClusterStatus status;
  const char* name;
};

// The seed's "Cluster Statuses" table, in lifecycle order.
constexpr StatusNameEntry kStatusNames[] = {
    {ClusterStatus::kCreating, "Creating"},     {ClusterStatus::kRunning, "Running"},
    {ClusterStatus::kFailed, "Failed"},         {ClusterStatus::kTerminating, "Terminating"},
    {ClusterStatus::kTerminated, "Terminated"}, {ClusterStatus::kDeleting, "Deleting"},
    {ClusterStatus::kDeleted, "Deleted"},
};

std::string field(const std::string& path) { return "field \"" + path + "\""; }

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Levenshtein distance, used only to suggest the field a typo meant.
size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

enum class IntParse { kOk, kNotInteger, kOutOfRange };

// JSON has one number type, so 4.0 is as much an integer as 4; what must be
// rejected is a fractional value or something that is not a number at all
// (nlohmann's `is_number()` is false for booleans and strings).
IntParse toInt64(const json& v, int64_t* out) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return IntParse::kOutOfRange;
    }
    *out = static_cast<int64_t>(u);
    return IntParse::kOk;
  }
  if (v.is_number_integer()) {
    *out = v.get<int64_t>();
    return IntParse::kOk;
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (!std::isfinite(d) || std::trunc(d) != d) return IntParse::kNotInteger;
    // 2^63 is exactly representable as a double; anything at or past it is not an int64.
    if (d < -9223372036854775808.0 || d >= 9223372036854775808.0) return IntParse::kOutOfRange;
    *out = static_cast<int64_t>(d);
    return IntParse::kOk;
  }
  return IntParse::kNotInteger;
}

// Reads the members of one JSON object, naming each by its path ("spec.gpuNodes",
// "nodes[2].name") in error messages so that the user can find the culprit.
class ObjectReader {
 public:
  ObjectReader(const json& object, std::string prefix, bool strict)
      : object_(object), prefix_(std::move(prefix)), strict_(strict) {}

  std::string path(const char* key) const { return prefix_ + key; }

  // The member `key`, or nullptr when it is absent. A null counts as absent
  // only when not strict; in strict mode the typed readers reject it.
  const json* find(const char* key) const {
    auto it = object_.find(key);
    if (it == object_.end()) return nullptr;
    if (it->is_null() && !strict_) return nullptr;
    return &*it;
  }

  Status readString(const char* key, std::string* out) const {
    const json* v = find(key);
    if (v == nullptr) return Status::ok();
    if (!v->is_string()) return invalidArgument(field(path(key)) + " must be a string");
    *out = v->get_ref<const std::string&>();
    return Status::ok();
  }

  Status readBool(const char* key, bool* out) const {
    const json* v = find(key);
    if (v == nullptr) return Status::ok();
    if (!v->is_boolean()) return invalidArgument(field(path(key)) + " must be a boolean");
    *out = v->get<bool>();
    return Status::ok();
  }

  Status readInt64(const char* key, int64_t* out) const {
    const json* v = find(key);
    if (v == nullptr) return Status::ok();
    switch (toInt64(*v, out)) {
      case IntParse::kOk:
        return Status::ok();
      case IntParse::kOutOfRange:
        return invalidArgument(field(path(key)) + " must be an integer that fits in 64 bits");
      case IntParse::kNotInteger:
        break;
    }
    return invalidArgument(field(path(key)) + " must be an integer");
  }

  Status readInt(const char* key, int* out) const {
    const json* v = find(key);
    if (v == nullptr) return Status::ok();
    int64_t wide = 0;
    IntParse parsed = toInt64(*v, &wide);
    if (parsed == IntParse::kNotInteger) {
      return invalidArgument(field(path(key)) + " must be an integer");
    }
    if (parsed == IntParse::kOutOfRange || wide < std::numeric_limits<int>::min() ||
        wide > std::numeric_limits<int>::max()) {
      return invalidArgument(field(path(key)) + " must be an integer from " +
                             std::to_string(std::numeric_limits<int>::min()) + " to " +
                             std::to_string(std::numeric_limits<int>::max()));
    }
    *out = static_cast<int>(wide);
    return Status::ok();
  }

  Status readStringArray(const char* key, std::vector<std::string>* out) const {
    const json* v = find(key);
    if (v == nullptr) return Status::ok();
    if (!v->is_array()) return invalidArgument(field(path(key)) + " must be an array of strings");
    std::vector<std::string> values;
    values.reserve(v->size());
    for (size_t i = 0; i < v->size(); ++i) {
      const json& item = (*v)[i];
      if (!item.is_string()) {
        return invalidArgument(field(path(key) + "[" + std::to_string(i) + "]") +
                               " must be a string");
      }
      values.push_back(item.get_ref<const std::string&>());
    }
    *out = std::move(values);
    return Status::ok();
  }

  Status readStringMap(const char* key, std::map<std::string, std::string>* out) const {
    const json* v = find(key);
    if (v == nullptr) return Status::ok();
    if (!v->is_object())
      return invalidArgument(field(path(key)) + " must be an object of strings");
    std::map<std::string, std::string> values;
    for (auto it = v->begin(); it != v->end(); ++it) {
      if (!it->is_string())
        return invalidArgument(field(path(key) + "." + it.key()) + " must be a string");
      values[it.key()] = it->get_ref<const std::string&>();
    }
    *out = std::move(values);
    return Status::ok();
  }

  // Rejects the first member not in `known`, suggesting the known field it
  // most resembles.
  Status rejectUnknown(std::initializer_list<const char*> known) const {
    return rejectUnknownFields(object_, known, /*suggest=*/true, prefix_);
  }

 private:
  const json& object_;
  std::string prefix_;
  bool strict_;
};

StatusOr<PartitionSpec> partitionAt(const json& j, const std::string& prefix, bool strict) {
  if (!j.is_object())
    return invalidArgument(field(prefix.substr(0, prefix.size() - 1)) + " must be an object");
  ObjectReader r(j, prefix, strict);
  if (strict) RETURN_IF_ERROR(r.rejectUnknown({"name", "nodes", "options"}));
  PartitionSpec p;
  RETURN_IF_ERROR(r.readString("name", &p.name));
  RETURN_IF_ERROR(r.readString("nodes", &p.nodes));
  RETURN_IF_ERROR(r.readStringMap("options", &p.options));
  return p;
}

StatusOr<VolumeAttachment> attachmentAt(const json& j, const std::string& prefix) {
  if (!j.is_object())
    return invalidArgument(field(prefix.substr(0, prefix.size() - 1)) + " must be an object");
  ObjectReader r(j, prefix, /*strict=*/false);
  VolumeAttachment a;
  RETURN_IF_ERROR(r.readString("volume", &a.volume));
  RETURN_IF_ERROR(r.readString("path", &a.path));
  RETURN_IF_ERROR(r.readString("hostPath", &a.hostPath));
  RETURN_IF_ERROR(r.readBool("readOnly", &a.readOnly));
  return a;
}

// An image is named by a string in a request ("image": "debian13-slurm24.11")
// and stored as {"name", "id", "slurmVersion"}.
StatusOr<ImageRef> imageAt(const json& j, const std::string& prefix) {
  if (j.is_string()) return ImageRef{j.get<std::string>(), "", ""};
  if (!j.is_object())
    return invalidArgument(field(prefix.substr(0, prefix.size() - 1)) +
                           " must be an image name (a string)");
  ObjectReader r(j, prefix, /*strict=*/false);
  ImageRef ref;
  RETURN_IF_ERROR(r.readString("name", &ref.name));
  RETURN_IF_ERROR(r.readString("id", &ref.id));
  RETURN_IF_ERROR(r.readString("slurmVersion", &ref.slurmVersion));
  return ref;
}

StatusOr<ContainerSettings> containersAt(const json& j, const std::string& prefix) {
  if (!j.is_object())
    return invalidArgument(field(prefix.substr(0, prefix.size() - 1)) + " must be an object");
  ObjectReader r(j, prefix, /*strict=*/true);
  RETURN_IF_ERROR(r.rejectUnknown({"registry", "cachePath", "insecureRegistries"}));
  ContainerSettings c;
  RETURN_IF_ERROR(r.readBool("registry", &c.registry));
  RETURN_IF_ERROR(r.readString("cachePath", &c.cachePath));
  RETURN_IF_ERROR(r.readStringArray("insecureRegistries", &c.insecureRegistries));
  return c;
}

StatusOr<LoginUser> userAt(const json& j, const std::string& prefix) {
  if (!j.is_object())
    return invalidArgument(field(prefix.substr(0, prefix.size() - 1)) + " must be an object");
  ObjectReader r(j, prefix, /*strict=*/false);
  LoginUser u;
  RETURN_IF_ERROR(r.readString("name", &u.name));
  RETURN_IF_ERROR(r.readInt("uid", &u.uid));
  RETURN_IF_ERROR(r.readStringArray("sshKeys", &u.sshKeys));
  return u;
}

// Reads an array member with `item` for each element.
template <typename T, typename F>
Status readArray(const ObjectReader& r, const char* key, std::vector<T>* out, F item) {
  const json* v = r.find(key);
  if (v == nullptr) return Status::ok();
  if (!v->is_array()) return invalidArgument(field(r.path(key)) + " must be an array");
  std::vector<T> values;
  for (size_t i = 0; i < v->size(); ++i) {
    ASSIGN_OR_RETURN(T value, item((*v)[i], r.path(key) + "[" + std::to_string(i) + "]."));
    values.push_back(std::move(value));
  }
  *out = std::move(values);
  return Status::ok();
}

StatusOr<ClusterSpec> specAt(const json& j, const std::string& prefix, bool strict) {
  if (!j.is_object()) {
    if (prefix.empty()) return invalidArgument("cluster spec must be a JSON object");
    return invalidArgument(field(prefix.substr(0, prefix.size() - 1)) + " must be an object");
  }
  ObjectReader r(j, prefix, strict);
  if (strict) {
    RETURN_IF_ERROR(r.rejectUnknown({"name", "image", "gpuNodes", "gpusPerNode", "cpuNodes", "sshKeys",
                                     "partitions", "slurmConf", "loginGeneration",
                                     "nodeGenerations", "volumes", "users",
                                     "controllerGeneration", "workerGeneration", "containers"}));
  }
  if (r.find("name") == nullptr) return invalidArgument(field(r.path("name")) + " is required");
  ClusterSpec spec;
  RETURN_IF_ERROR(r.readString("name", &spec.name));
  if (const json* img = r.find("image")) {
    ASSIGN_OR_RETURN(spec.image, imageAt(*img, r.path("image") + "."));
  }
  RETURN_IF_ERROR(r.readInt("gpuNodes", &spec.gpuNodes));
  RETURN_IF_ERROR(r.readInt("gpusPerNode", &spec.gpusPerNode));
  RETURN_IF_ERROR(r.readInt("cpuNodes", &spec.cpuNodes));
  RETURN_IF_ERROR(r.readStringArray("sshKeys", &spec.sshKeys));
  if (const json* parts = r.find("partitions")) {
    if (!parts->is_array()) return invalidArgument(field(r.path("partitions")) + " must be an array");
    for (size_t i = 0; i < parts->size(); ++i) {
      ASSIGN_OR_RETURN(PartitionSpec p,
                       partitionAt((*parts)[i], r.path("partitions") + "[" + std::to_string(i) + "].",
                                   strict));
      spec.partitions.push_back(std::move(p));
    }
  }
  RETURN_IF_ERROR(r.readStringMap("slurmConf", &spec.slurmConf));
  RETURN_IF_ERROR(r.readInt("loginGeneration", &spec.loginGeneration));
  RETURN_IF_ERROR(r.readInt("controllerGeneration", &spec.controllerGeneration));
  RETURN_IF_ERROR(r.readInt("workerGeneration", &spec.workerGeneration));
  if (const json* gens = r.find("nodeGenerations")) {
    if (!gens->is_object())
      return invalidArgument(field(r.path("nodeGenerations")) + " must be an object of integers");
    for (auto it = gens->begin(); it != gens->end(); ++it) {
      if (!it->is_number_integer())
        return invalidArgument(field(r.path("nodeGenerations") + "." + it.key()) +
                               " must be an integer");
      spec.nodeGenerations[it.key()] = it->get<int>();
    }
  }
  RETURN_IF_ERROR(readArray(r, "volumes", &spec.volumes, attachmentAt));
  RETURN_IF_ERROR(readArray(r, "users", &spec.users, userAt));
  if (const json* c = r.find("containers")) {
    ASSIGN_OR_RETURN(spec.containers, containersAt(*c, r.path("containers") + "."));
  }
  return spec;
}

StatusOr<NodeRecord> nodeAt(const json& j, const std::string& prefix) {
  if (!j.is_object()) {
    if (prefix.empty()) return invalidArgument("node must be a JSON object");
    return invalidArgument(field(prefix.substr(0, prefix.size() - 1)) + " must be an object");
  }
  ObjectReader r(j, prefix, /*strict=*/false);
  NodeRecord node;
  RETURN_IF_ERROR(r.readString("name", &node.name));
  RETURN_IF_ERROR(r.readString("group", &node.group));
  RETURN_IF_ERROR(r.readString("physicalId", &node.physicalId));
  RETURN_IF_ERROR(r.readString("address", &node.address));
  return node;
}

std::string statusChoices() {
  std::string out;
  for (const auto& entry : kStatusNames) {
    if (!out.empty()) out += ", ";
    out += entry.name;
  }
  return out;
}

StatusOr<ClusterRecord> recordAt(const json& j) {
  if (!j.is_object()) return invalidArgument("cluster record must be a JSON object");
  ObjectReader r(j, "", /*strict=*/false);
  ClusterRecord record;

  const json* spec = r.find("spec");
  if (spec == nullptr) return invalidArgument(field("spec") + " is required");
  ASSIGN_OR_RETURN(record.spec, specAt(*spec, "spec.", /*strict=*/false));

  // `name` duplicates `spec.name` for the API's readers; two different names
  // would mean the record was edited by hand, and neither can be trusted.
  std::string name = record.spec.name;
  RETURN_IF_ERROR(r.readString("name", &name));
  if (name != record.spec.name) {
    return invalidArgument(field("name") + " (\"" + name + "\") does not match " +
                           field("spec.name") + " (\"" + record.spec.name + "\")");
  }

  RETURN_IF_ERROR(r.readInt64("id", &record.id));
  RETURN_IF_ERROR(r.readInt64("revision", &record.revision));
  RETURN_IF_ERROR(r.readInt64("appliedRevision", &record.appliedRevision));
  std::string status = statusName(record.status);
  RETURN_IF_ERROR(r.readString("status", &status));
  std::optional<ClusterStatus> parsed = parseStatus(status);
  if (!parsed) {
    return invalidArgument(field("status") + " must be one of " + statusChoices() + ", not \"" +
                           status + "\"");
  }
  record.status = *parsed;
  RETURN_IF_ERROR(r.readString("phase", &record.phase));
  RETURN_IF_ERROR(r.readString("reason", &record.reason));
  RETURN_IF_ERROR(r.readString("subnet", &record.subnet));
  // Clusters made before projects existed belong to the default one.
  record.project = kDefaultProject;
  RETURN_IF_ERROR(r.readString("project", &record.project));

  if (const json* login = r.find("login")) {
    if (!login->is_object()) return invalidArgument(field("login") + " must be an object");
    ObjectReader lr(*login, "login.", /*strict=*/false);
    RETURN_IF_ERROR(lr.readString("address", &record.loginAddress));
    RETURN_IF_ERROR(lr.readString("hostKey", &record.loginHostKey));
  }

  if (const json* nodes = r.find("nodes")) {
    if (!nodes->is_array()) return invalidArgument(field("nodes") + " must be an array");
    record.nodes.reserve(nodes->size());
    for (size_t i = 0; i < nodes->size(); ++i) {
      ASSIGN_OR_RETURN(NodeRecord node, nodeAt((*nodes)[i], "nodes[" + std::to_string(i) + "]."));
      record.nodes.push_back(std::move(node));
    }
  }

  RETURN_IF_ERROR(r.readStringArray("platformPartitions", &record.platformPartitions));
  RETURN_IF_ERROR(r.readString("changeAuthor", &record.changeAuthor));
  RETURN_IF_ERROR(r.readString("changeMessage", &record.changeMessage));
  RETURN_IF_ERROR(r.readBool("changeForce", &record.changeForce));
  RETURN_IF_ERROR(r.readBool("changeRollback", &record.changeRollback));
  RETURN_IF_ERROR(r.readString("controllerConfigKey", &record.controllerConfigKey));
  RETURN_IF_ERROR(r.readInt64("createdAt", &record.createdAt));
  RETURN_IF_ERROR(r.readInt64("updatedAt", &record.updatedAt));
  RETURN_IF_ERROR(r.readInt64("version", &record.version));
  RETURN_IF_ERROR(r.readInt64("statusVersion", &record.statusVersion));
  return record;
}

StatusOr<Event> eventAt(const json& j) {
  if (!j.is_object()) return invalidArgument("event must be a JSON object");
  ObjectReader r(j, "", /*strict=*/false);
  Event event;
  RETURN_IF_ERROR(r.readInt64("id", &event.id));
  RETURN_IF_ERROR(r.readString("cluster", &event.cluster));
  RETURN_IF_ERROR(r.readInt64("time", &event.time));
  RETURN_IF_ERROR(r.readString("type", &event.type));
  RETURN_IF_ERROR(r.readString("reason", &event.reason));
  RETURN_IF_ERROR(r.readString("message", &event.message));
  RETURN_IF_ERROR(r.readString("node", &event.node));
  RETURN_IF_ERROR(r.readInt64("revision", &event.revision));
  return event;
}

// The readers above check every type before reading, so nlohmann should never
// throw; this keeps the no-exceptions promise should that ever be wrong.
template <typename F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const json::exception& e) {
    return internalError(std::string("unexpected JSON error: ") + e.what());
  }
}

}  // namespace

Status rejectUnknownFields(const json& object, std::initializer_list<const char*> known, bool suggest,
                           const std::string& prefix) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string& key = it.key();
    bool isKnown = std::any_of(known.begin(), known.end(), [&](const char* k) { return key == k; });
    if (isKnown) continue;
    std::string message = "unknown " + field(prefix + key);
    if (!suggest) return invalidArgument(message);
    const char* best = nullptr;
    size_t bestDistance = 3;  // Suggest only close matches.
    for (const char* k : known) {
      size_t d = editDistance(lower(key), lower(k));
      if (d < bestDistance) {
        bestDistance = d;
        best = k;
      }
    }
    if (best != nullptr) message += "; did you mean \"" + prefix + best + "\"?";
    return invalidArgument(message);
  }
  return Status::ok();
}

const char* revisionStateName(RevisionState s) {
  switch (s) {
    case RevisionState::kPending:
      return "Pending";
    case RevisionState::kApplied:
      return "Applied";
    case RevisionState::kFailed:
      return "Failed";
    case RevisionState::kSuperseded:
      return "Superseded";
  }
  return "Unknown";
}

std::optional<RevisionState> parseRevisionState(const std::string& s) {
  for (auto state : {RevisionState::kPending, RevisionState::kApplied, RevisionState::kFailed,
                     RevisionState::kSuperseded})
    if (s == revisionStateName(state)) return state;
  return std::nullopt;
}

const char* statusName(ClusterStatus s) {
  for (const auto& entry : kStatusNames) {
    if (entry.status == s) return entry.name;
  }
  return "Unknown";
}

std::optional<ClusterStatus> parseStatus(const std::string& s) {
  for (const auto& entry : kStatusNames) {
    if (s == entry.name) return entry.status;
  }
  return std::nullopt;
}

nlohmann::json partitionToJson(const PartitionSpec& p) {
  return json{{"name", p.name}, {"nodes", p.nodes}, {"options", p.options}};
}

nlohmann::json specToJson(const ClusterSpec& spec) {
  json parts = json::array();
  for (const auto& p : spec.partitions) parts.push_back(partitionToJson(p));
  json volumes = json::array();
  for (const auto& v : spec.volumes)
    volumes.push_back(
        {{"volume", v.volume}, {"path", v.path}, {"hostPath", v.hostPath}, {"readOnly", v.readOnly}});
  json users = json::array();
  for (const auto& u : spec.users)
    users.push_back({{"name", u.name}, {"uid", u.uid}, {"sshKeys", u.sshKeys}});
  return json{{"name", spec.name},
              {"image",
               {{"name", spec.image.name}, {"id", spec.image.id}, {"slurmVersion", spec.image.slurmVersion}}},
              {"gpuNodes", spec.gpuNodes},
              {"gpusPerNode", spec.gpusPerNode},
              {"cpuNodes", spec.cpuNodes},
              {"sshKeys", spec.sshKeys},
              {"partitions", parts},
              {"slurmConf", spec.slurmConf},
              {"loginGeneration", spec.loginGeneration},
              {"controllerGeneration", spec.controllerGeneration},
              {"nodeGenerations", spec.nodeGenerations},
              {"workerGeneration", spec.workerGeneration},
              {"volumes", volumes},
              {"users", users},
              {"containers",
               {{"registry", spec.containers.registry},
                {"cachePath", spec.containers.cachePath},
                {"insecureRegistries", spec.containers.insecureRegistries}}}};
}

nlohmann::json volumeToJson(const Volume& v) {
  return json{{"name", v.name},
              {"type", v.type},
              {"hostPath", v.hostPath},
              {"managed", v.managed},
              {"createdAt", v.createdAt},
              {"project", v.project}};
}

StatusOr<Volume> volumeFromJson(const nlohmann::json& j) {
  return guarded([&]() -> StatusOr<Volume> {
    if (!j.is_object()) return invalidArgument("volume must be a JSON object");
    ObjectReader r(j, "", /*strict=*/false);
    Volume v;
    RETURN_IF_ERROR(r.readString("name", &v.name));
    RETURN_IF_ERROR(r.readString("type", &v.type));
    RETURN_IF_ERROR(r.readString("hostPath", &v.hostPath));
    RETURN_IF_ERROR(r.readBool("managed", &v.managed));
    RETURN_IF_ERROR(r.readInt64("createdAt", &v.createdAt));
    // Volumes made before projects existed belong to the default one.
    v.project = kDefaultProject;
    RETURN_IF_ERROR(r.readString("project", &v.project));
    return v;
  });
}

StatusOr<PartitionSpec> partitionFromJson(const nlohmann::json& json, bool strict) {
  return guarded([&] { return partitionAt(json, "", strict); });
}

nlohmann::json revisionToJson(const Revision& r) {
  return json{{"revision", r.number},     {"author", r.author},
              {"message", r.message},     {"createdAt", r.createdAt},
              {"state", revisionStateName(r.state)}, {"error", r.error},
              {"rollback", r.rollback},   {"spec", specToJson(r.spec)}};
}

StatusOr<ClusterSpec> specFromJson(const nlohmann::json& json, bool strict) {
  return guarded([&] { return specAt(json, "", strict); });
}

nlohmann::json nodeToJson(const NodeRecord& node) {
  return json{{"name", node.name},
              {"group", node.group},
              {"physicalId", node.physicalId},
              {"address", node.address}};
}

StatusOr<NodeRecord> nodeFromJson(const nlohmann::json& json) {
  return guarded([&] { return nodeAt(json, ""); });
}

nlohmann::json eventToJson(const Event& event) {
  json j{{"id", event.id},     {"cluster", event.cluster}, {"time", event.time},
         {"type", event.type}, {"reason", event.reason},   {"message", event.message}};
  if (!event.node.empty()) j["node"] = event.node;
  if (event.revision != 0) j["revision"] = event.revision;
  return j;
}

StatusOr<Event> eventFromJson(const nlohmann::json& json) {
  return guarded([&] { return eventAt(json); });
}

nlohmann::json recordToJson(const ClusterRecord& record) {
  json nodes = json::array();
  for (const NodeRecord& node : record.nodes) nodes.push_back(nodeToJson(node));
  return json{{"id", record.id},
              {"name", record.spec.name},
              {"project", record.project},
              {"status", statusName(record.status)},
              {"phase", record.phase},
              {"reason", record.reason},
              {"revision", record.revision},
              {"appliedRevision", record.appliedRevision},
              {"spec", specToJson(record.spec)},
              {"subnet", record.subnet},
              {"login", json{{"address", record.loginAddress}, {"hostKey", record.loginHostKey}}},
              {"nodes", std::move(nodes)},
              {"platformPartitions", record.platformPartitions},
              {"changeAuthor", record.changeAuthor},
              {"changeMessage", record.changeMessage},
              {"changeForce", record.changeForce},
              {"changeRollback", record.changeRollback},
              {"controllerConfigKey", record.controllerConfigKey},
              {"createdAt", record.createdAt},
              {"updatedAt", record.updatedAt},
              {"version", record.version},
              {"statusVersion", record.statusVersion}};
}

namespace {

// Which of `recordToJson`'s members belong to which part of the record (see
// `copyRecordPart`); `updatedAt` belongs to both and is kept by the store
// beside them.
constexpr const char* kSpecMembers[] = {"id", "name", "project", "revision", "spec",
                                        "platformPartitions", "changeAuthor", "changeMessage",
                                        "changeForce", "changeRollback", "createdAt", "version"};
constexpr const char* kStatusMembers[] = {"status", "phase", "reason", "appliedRevision",
                                          "subnet", "login", "nodes", "controllerConfigKey",
                                          "statusVersion"};

}  // namespace

nlohmann::json recordPartToJson(const ClusterRecord& record, RecordPart part) {
  json all = recordToJson(record);
  if (part == RecordPart::kAll) return all;
  json out = json::object();
  auto keep = [&](const auto& members) {
    for (const char* m : members) out[m] = all[m];
  };
  if (part == RecordPart::kSpec) keep(kSpecMembers);
  if (part == RecordPart::kStatus) keep(kStatusMembers);
  return out;
}

StatusOr<ClusterRecord> recordFromParts(const nlohmann::json& spec, const nlohmann::json& status) {
  if (!spec.is_object()) return invalidArgument("the record's spec part must be a JSON object");
  if (!status.is_object()) return invalidArgument("the record's status part must be a JSON object");
  json merged = spec;
  for (const char* m : kStatusMembers) {
    if (auto it = status.find(m); it != status.end()) merged[m] = *it;
  }
  return recordFromJson(merged);
}

StatusOr<ClusterRecord> recordFromJson(const nlohmann::json& json) {
  return guarded([&] { return recordAt(json); });
}

nlohmann::json accountToJson(const Account& a) {
  return json{{"name", a.name}, {"admin", a.admin}, {"projects", a.projects},
              {"createdAt", a.createdAt}};
}

StatusOr<Account> accountFromJson(const nlohmann::json& j) {
  return guarded([&]() -> StatusOr<Account> {
    if (!j.is_object()) return invalidArgument("account must be a JSON object");
    ObjectReader r(j, "", /*strict=*/false);
    Account a;
    RETURN_IF_ERROR(r.readString("name", &a.name));
    RETURN_IF_ERROR(r.readBool("admin", &a.admin));
    RETURN_IF_ERROR(r.readStringArray("projects", &a.projects));
    RETURN_IF_ERROR(r.readInt64("createdAt", &a.createdAt));
    return a;
  });
}

}  // namespace corral
