// `ImageConfig` as corral stores it next to an unpacked root filesystem.

#include <nlohmann/json.hpp>

#include "image/image.h"

namespace corral::image {

std::string toJson(const ImageConfig& c) {
  nlohmann::json j;
  j["env"] = c.env;
  j["workdir"] = c.workdir;
  j["entrypoint"] = c.entrypoint;
  j["cmd"] = c.cmd;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {

Status stringList(const nlohmann::json& j, const char* key, std::vector<std::string>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::ok();
  if (!it->is_array())
    return invalidArgument(std::string("image config: '") + key + "' is not a list");
  for (const auto& v : *it) {
    if (!v.is_string()) {
      return invalidArgument(std::string("image config: '") + key + "' holds a non-string");
    }
    out.push_back(v.get<std::string>());
  }
  return Status::ok();
}

}  // namespace

StatusOr<ImageConfig> imageConfigFromJson(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return invalidArgument("image config: not valid JSON");
  if (!j.is_object()) return invalidArgument("image config: not a JSON object");
  ImageConfig c;
  RETURN_IF_ERROR(stringList(j, "env", c.env));
  RETURN_IF_ERROR(stringList(j, "entrypoint", c.entrypoint));
  RETURN_IF_ERROR(stringList(j, "cmd", c.cmd));
  auto wd = j.find("workdir");
  if (wd != j.end() && !wd->is_null()) {
    if (!wd->is_string()) return invalidArgument("image config: 'workdir' is not a string");
    c.workdir = wd->get<std::string>();
  }
  return c;
}

}  // namespace corral::image
