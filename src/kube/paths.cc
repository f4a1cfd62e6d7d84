#include "kube/paths.h"

#include "common/text.h"

namespace corral::kube {

std::string collectionPath(const ResourceType& type, const std::string& ns) {
  std::string path = type.group.empty() ? "/api/" + type.version
                                        : "/apis/" + type.group + "/" + type.version;
  if (type.namespaced && !ns.empty()) path += "/namespaces/" + percentEncode(ns);
  return path + "/" + type.plural;
}

std::string objectPath(const ResourceType& type, const std::string& ns, const std::string& name,
                       const std::string& subresource) {
  std::string path = collectionPath(type, ns) + "/" + percentEncode(name);
  if (!subresource.empty()) path += "/" + percentEncode(subresource);
  return path;
}

std::string withQuery(const std::string& path, const QueryParams& params) {
  std::string out = path;
  char sep = path.find('?') == std::string::npos ? '?' : '&';
  for (const auto& [key, value] : params) {
    if (value.empty()) continue;
    out += sep + percentEncode(key) + "=" + percentEncode(value);
    sep = '&';
  }
  return out;
}

}  // namespace corral::kube
