#include "image/manifest.h"

#include <nlohmann/json.hpp>

#include "image/sha256.h"

namespace corral::image {
namespace {

using nlohmann::json;

StatusOr<json> parseObject(const std::string& body, const std::string& what) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return internalError("the registry sent a " + what + " that is not a JSON object");
  }
  return j;
}

std::string stringField(const json& j, const char* key) {
  auto it = j.find(key);
  return (it != j.end() && it->is_string()) ? it->get<std::string>() : std::string();
}

StatusOr<Descriptor> parseDescriptor(const json& j, const std::string& what) {
  if (!j.is_object()) return internalError("manifest: " + what + " is not an object");
  Descriptor d;
  d.mediaType = stringField(j, "mediaType");
  d.digest = stringField(j, "digest");
  if (!isSha256Digest(d.digest)) {
    return internalError("manifest: " + what + " has an unsupported or invalid digest '" +
                         d.digest.substr(0, 80) + "'");
  }
  auto size = j.find("size");
  if (size != j.end() && size->is_number_integer()) d.size = size->get<int64_t>();
  return d;
}

Status stringList(const json& obj, const char* key, std::vector<std::string>& out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return Status::ok();
  if (it->is_string()) {  // Some old images hold Cmd as a plain string.
    out = {"/bin/sh", "-c", it->get<std::string>()};
    return Status::ok();
  }
  if (!it->is_array()) return internalError(std::string("image config: ") + key + " is not a list");
  for (const auto& v : *it) {
    if (!v.is_string())
      return internalError(std::string("image config: ") + key + " holds a non-string");
    out.push_back(v.get<std::string>());
  }
  return Status::ok();
}

}  // namespace

StatusOr<ManifestKind> manifestKind(const std::string& body, const std::string& contentType) {
  std::string type = contentType.substr(0, contentType.find(';'));
  while (!type.empty() && type.back() == ' ') type.pop_back();
  if (type == kDockerManifestList || type == kOciIndex) return ManifestKind::kIndex;
  if (type == kDockerManifest || type == kOciManifest) return ManifestKind::kImage;
  ASSIGN_OR_RETURN(json j, parseObject(body, "manifest"));
  std::string mediaType = stringField(j, "mediaType");
  if (mediaType == kDockerManifestList || mediaType == kOciIndex) return ManifestKind::kIndex;
  if (mediaType == kDockerManifest || mediaType == kOciManifest) return ManifestKind::kImage;
  auto schema = j.find("schemaVersion");
  if (schema != j.end() && schema->is_number() && schema->get<int>() == 1) {
    return failedPrecondition(
        "the registry only offers this image as a schema 1 manifest, which is not supported; "
        "push it again with a current Docker or OCI tool");
  }
  if (j.contains("manifests")) return ManifestKind::kIndex;
  if (j.contains("layers") && j.contains("config")) return ManifestKind::kImage;
  return internalError("the registry sent a manifest of unknown type '" +
                       (mediaType.empty() ? type : mediaType) + "'");
}

StatusOr<std::string> pickLinuxAmd64(const std::string& body, const std::string& refText) {
  ASSIGN_OR_RETURN(json j, parseObject(body, "manifest list"));
  auto list = j.find("manifests");
  if (list == j.end() || !list->is_array()) {
    return internalError("the registry sent a manifest list without 'manifests'");
  }
  std::string available;
  for (const auto& m : *list) {
    if (!m.is_object()) continue;
    auto platform = m.find("platform");
    if (platform == m.end() || !platform->is_object()) continue;
    std::string os = stringField(*platform, "os");
    std::string arch = stringField(*platform, "architecture");
    if (os == "linux" && arch == "amd64") {
      ASSIGN_OR_RETURN(Descriptor d, parseDescriptor(m, "the linux/amd64 entry"));
      return d.digest;
    }
    if (os != "unknown") available += (available.empty() ? "" : ", ") + os + "/" + arch;
  }
  return notFound("image " + refText + " has no linux/amd64 variant" +
                  (available.empty() ? std::string() : " (it has: " + available + ")"));
}

StatusOr<Manifest> parseManifest(const std::string& body) {
  ASSIGN_OR_RETURN(json j, parseObject(body, "manifest"));
  Manifest m;
  auto config = j.find("config");
  if (config == j.end()) return internalError("the registry sent a manifest without 'config'");
  ASSIGN_OR_RETURN(m.config, parseDescriptor(*config, "the config"));
  auto layers = j.find("layers");
  if (layers == j.end() || !layers->is_array()) {
    return internalError("the registry sent a manifest without 'layers'");
  }
  for (size_t i = 0; i < layers->size(); ++i) {
    ASSIGN_OR_RETURN(Descriptor d, parseDescriptor((*layers)[i], "layer " + std::to_string(i + 1)));
    m.layers.push_back(std::move(d));
  }
  return m;
}

StatusOr<ImageConfig> parseImageConfigBlob(const std::string& body) {
  ASSIGN_OR_RETURN(json j, parseObject(body, "image config"));
  ImageConfig c;
  auto cfg = j.find("config");
  if (cfg == j.end() || cfg->is_null()) return c;  // An image may have no config at all.
  if (!cfg->is_object()) return internalError("image config: 'config' is not an object");
  RETURN_IF_ERROR(stringList(*cfg, "Env", c.env));
  RETURN_IF_ERROR(stringList(*cfg, "Entrypoint", c.entrypoint));
  RETURN_IF_ERROR(stringList(*cfg, "Cmd", c.cmd));
  c.workdir = stringField(*cfg, "WorkingDir");
  return c;
}

std::string makeConfigBlob(const ImageConfig& config, const std::vector<std::string>& diffIds) {
  json cfg = json::object();
  if (!config.env.empty()) cfg["Env"] = config.env;
  if (!config.workdir.empty()) cfg["WorkingDir"] = config.workdir;
  if (!config.entrypoint.empty()) cfg["Entrypoint"] = config.entrypoint;
  if (!config.cmd.empty()) cfg["Cmd"] = config.cmd;
  json j;
  j["architecture"] = "amd64";
  j["os"] = "linux";
  j["config"] = cfg;
  j["rootfs"] = {{"type", "layers"}, {"diff_ids", diffIds}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string makeManifest(const Descriptor& config, const std::vector<Descriptor>& layers) {
  auto desc = [](const Descriptor& d) {
    return json{{"mediaType", d.mediaType}, {"size", d.size}, {"digest", d.digest}};
  };
  json j;
  j["schemaVersion"] = 2;
  j["mediaType"] = kDockerManifest;
  j["config"] = desc(config);
  j["layers"] = json::array();
  for (const auto& l : layers) j["layers"].push_back(desc(l));
  return j.dump(3, ' ', false, json::error_handler_t::replace);
}

}  // namespace corral::image
