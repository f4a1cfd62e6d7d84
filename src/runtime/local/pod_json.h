#pragma once

// The file that `LocalRuntime` hands to `corral-pod`: a `PodSpec` whose mount
// sources are already absolute host paths, plus where the pod lives on the
// host, which image is its root and which host ids its user namespace maps.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "corral/runtime.h"
#include "corral/status.h"

namespace corral {

// Host ids a user namespace maps: id k inside is `base + k` outside.
struct IdRange {
  uint32_t base = 0;
  uint32_t count = 0;
  bool operator==(const IdRange&) const = default;
};

struct LaunchSpec {
  PodSpec pod;
  std::string netnsPath;    // /run/netns/<name>; the pod joins it.
  std::string podDir;       // Host directory of this pod instance.
  std::string imageRootfs;  // Host directory of the image: the root's read-only layer.
  IdRange ids;              // The cluster's ids; pod root is `ids.base` on the host.
};

nlohmann::json launchSpecToJson(const LaunchSpec& spec);
StatusOr<LaunchSpec> launchSpecFromJson(const nlohmann::json& j);

}  // namespace corral
