#pragma once

// `corral cluster create|list|get|delete|history|scale|reconfigure|set-keys|
// terminate|clone`.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/output.h"
#include "cli/ssh_keys.h"
#include "cli/waiting.h"
#include "corral/spec.h"
#include "corral/status.h"

namespace corral {

// `corral cluster create`'s flags. Counts start at `ClusterSpec`'s defaults and
// are sent as given: the server, not the CLI, decides what is too many.
struct CreateOptions {
  std::string name;
  std::string image;  // "": corrald's default.
  int gpuNodes = ClusterSpec{}.gpuNodes;
  int gpusPerNode = ClusterSpec{}.gpusPerNode;
  int cpuNodes = ClusterSpec{}.cpuNodes;
  std::vector<std::string> sshKeyFiles;  // Empty: corral's own key.
  // Container jobs (ClusterSpec::containers).
  bool registry = false;
  std::string imageCache;
  std::vector<std::string> insecureRegistries;
  std::string project;  // "": the caller's first project.
  bool wait = false;
  int timeoutSeconds = 600;
  OutputFormat format = OutputFormat::kTable;
};

struct DeleteOptions {
  std::string name;
  bool wait = false;
  int timeoutSeconds = 600;
};

// `corral cluster scale`. A count that is not given keeps its current value.
struct ScaleOptions {
  std::string name;
  std::optional<int> gpuNodes;
  std::optional<int> cpuNodes;
  bool force = false;
  ChangeWait wait;
  OutputFormat format = OutputFormat::kTable;
};

// `corral cluster terminate` and `corral cluster clone`.
struct TerminateOptions {
  std::string name;
  bool wait = false;
  int timeoutSeconds = 600;
  OutputFormat format = OutputFormat::kTable;
};

struct CloneOptions {
  std::string name;
  std::string newName;
  std::string image;  // "": the source's image.
  bool wait = false;
  int timeoutSeconds = 600;
  OutputFormat format = OutputFormat::kTable;
};

// `corral cluster reconfigure`, `set-keys`, `set-image` and `restart-workers`.
struct ClusterChangeOptions {
  std::string name;
  std::string image;  // For set-image.
  std::vector<std::string> sshKeyFiles;  // For set-keys.
  ChangeWait wait;
  OutputFormat format = OutputFormat::kTable;
};

// Adds `cluster` and its subcommands to `app`; the one the user picks sets
// `chosen`, which must outlive `app`'s parse.
void addClusterCommands(CLI::App& app, Command& chosen);

// The ClusterCreate body for `options` and the public `keys` to install.
Json buildCreateRequest(const CreateOptions& options, const std::vector<std::string>& keys);

// The scale body: only the counts given, and "force" when set.
Json buildScaleRequest(const ScaleOptions& options);

Status clusterCreate(ApiClient& api, CliContext& ctx, const CreateOptions& options);
Status clusterList(ApiClient& api, CliContext& ctx, OutputFormat format);
Status clusterGet(ApiClient& api, CliContext& ctx, const std::string& name, OutputFormat format);
Status clusterDelete(ApiClient& api, CliContext& ctx, const DeleteOptions& options);
Status clusterHistory(ApiClient& api, CliContext& ctx, const std::string& name,
                      OutputFormat format);
Status clusterScale(ApiClient& api, CliContext& ctx, const ScaleOptions& options);
Status clusterReconfigure(ApiClient& api, CliContext& ctx, const ClusterChangeOptions& options);
Status clusterSetKeys(ApiClient& api, CliContext& ctx, const ClusterChangeOptions& options);
Status clusterTerminate(ApiClient& api, CliContext& ctx, const TerminateOptions& options);
Status clusterClone(ApiClient& api, CliContext& ctx, const CloneOptions& options);

}  // namespace corral
