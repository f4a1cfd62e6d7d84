#pragma once

// The file that `LocalRuntime` hands to `corral-pod`: a `PodSpec` whose mount
// sources are already absolute host paths, plus where the pod lives on the host.

#include <nlohmann/json.hpp>
#include <string>

#include "corral/runtime.h"
#include "corral/status.h"

namespace corral {

struct LaunchSpec {
  PodSpec pod;
  std::string netnsPath;  // /run/netns/<name>; the pod joins it.
  std::string podDir;     // Host directory of this pod instance.
};

nlohmann::json launchSpecToJson(const LaunchSpec& spec);
StatusOr<LaunchSpec> launchSpecFromJson(const nlohmann::json& j);

}  // namespace corral
