#pragma once

// The API server's URL paths for a kind of resource: core resources live
// under /api/v1, the others under /apis/GROUP/VERSION, namespaced ones under
// namespaces/NS. Pure functions.

#include <string>
#include <utility>
#include <vector>

namespace corral::kube {

// A kind of resource as the API names it in a path.
struct ResourceType {
  std::string group;    // "" for the core group.
  std::string version;  // "v1", "v1beta1".
  std::string plural;   // "secrets", "nodesets".
  bool namespaced = true;
};

// The kinds corral's Kubernetes runtime uses.
namespace resources {
inline const ResourceType kSecrets{"", "v1", "secrets"};
inline const ResourceType kConfigMaps{"", "v1", "configmaps"};
inline const ResourceType kServices{"", "v1", "services"};
inline const ResourceType kPods{"", "v1", "pods"};
inline const ResourceType kEvents{"", "v1", "events"};
inline const ResourceType kPersistentVolumeClaims{"", "v1", "persistentvolumeclaims"};
inline const ResourceType kServiceAccounts{"", "v1", "serviceaccounts"};
inline const ResourceType kNamespaces{"", "v1", "namespaces", false};
inline const ResourceType kStatefulSets{"apps", "v1", "statefulsets"};
inline const ResourceType kControllers{"slinky.slurm.net", "v1beta1", "controllers"};
inline const ResourceType kAccountings{"slinky.slurm.net", "v1beta1", "accountings"};
inline const ResourceType kNodeSets{"slinky.slurm.net", "v1beta1", "nodesets"};
inline const ResourceType kLoginSets{"slinky.slurm.net", "v1beta1", "loginsets"};
}  // namespace resources

// The path of the collection of `type` in namespace `ns` (or in every
// namespace, and always for a cluster-scoped type, when `ns` is empty):
// "/api/v1/namespaces/NS/secrets", "/apis/apps/v1/statefulsets".
std::string collectionPath(const ResourceType& type, const std::string& ns);

// The path of the object `name` of that collection, and of its
// `subresource` ("status", "scale") when given:
// "/apis/slinky.slurm.net/v1beta1/namespaces/NS/nodesets/NAME/status".
// Segments are percent-encoded, so no name can reach another path.
std::string objectPath(const ResourceType& type, const std::string& ns, const std::string& name,
                       const std::string& subresource = "");

using QueryParams = std::vector<std::pair<std::string, std::string>>;

// `path` with `params` appended, percent-encoded, after '?' (or '&' when
// `path` already has a query). Empty values are left out.
std::string withQuery(const std::string& path, const QueryParams& params);

}  // namespace corral::kube
