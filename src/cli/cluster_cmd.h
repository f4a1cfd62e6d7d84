#pragma once

// `corral cluster create|list|get|delete`.

#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/context.h"
#include "cli/output.h"
#include "corral/spec.h"
#include "corral/status.h"

namespace corral {

// `corral cluster create`'s flags. Counts start at `ClusterSpec`'s defaults and
// are sent as given: the server, not the CLI, decides what is too many.
struct CreateOptions {
  std::string name;
  int gpuNodes = ClusterSpec{}.gpuNodes;
  int gpusPerNode = ClusterSpec{}.gpusPerNode;
  int cpuNodes = ClusterSpec{}.cpuNodes;
  std::vector<std::string> sshKeyFiles;  // Empty: corral's own key.
  bool wait = false;
  int timeoutSeconds = 600;
  OutputFormat format = OutputFormat::kTable;
};

struct DeleteOptions {
  std::string name;
  bool wait = false;
  int timeoutSeconds = 600;
};

// How often `--wait` asks corrald how a cluster is doing.
inline constexpr std::chrono::milliseconds kPollInterval{250};

// The ClusterCreate body for `options` and the public `keys` to install.
Json buildCreateRequest(const CreateOptions& options, const std::vector<std::string>& keys);

// The keys to send: every key of every `files` entry ("~/" expanded against
// `home`) in order, duplicates dropped; corral's own key when `files` is
// empty. Fails, naming the file, before anything is sent.
StatusOr<std::vector<std::string>> collectSshKeys(const std::vector<std::string>& files,
                                                  const std::string& home, std::ostream& err);

Status clusterCreate(ApiClient& api, CliContext& ctx, const CreateOptions& options);
Status clusterList(ApiClient& api, CliContext& ctx, OutputFormat format);
Status clusterGet(ApiClient& api, CliContext& ctx, const std::string& name, OutputFormat format);
Status clusterDelete(ApiClient& api, CliContext& ctx, const DeleteOptions& options);

}  // namespace corral
