#pragma once

// `corral config get|set|unset|diff|params`: the slurm.conf parameters a
// cluster's users may set, on top of corral's own.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/output.h"
#include "corral/status.h"

namespace corral {

struct ConfigOptions {
  std::string cluster;
  std::vector<std::string> settings;  // "Key=Value" to set (set, diff).
  std::vector<std::string> keys;      // Keys to remove (unset).
  ChangeWait wait;
  OutputFormat format = OutputFormat::kTable;
};

// Adds `config` and its subcommands to `app`; the one the user picks sets
// `chosen`, which must outlive `app`'s parse.
void addConfigCommands(CLI::App& app, Command& chosen);

// The PATCH (and diff) body {"set": {Key: Value}, "unset": [Key]}; each part
// only when it has entries. A setting without '=' is InvalidArgument.
StatusOr<Json> buildConfigChange(const std::vector<std::string>& settings,
                                 const std::vector<std::string>& unset);

// `corral config diff`'s text: the diff or "no change", then whether the
// change restarts slurmctld.
std::string configDiffText(const Json& body);

Status configGet(ApiClient& api, CliContext& ctx, const ConfigOptions& options);
Status configSet(ApiClient& api, CliContext& ctx, const ConfigOptions& options);
Status configUnset(ApiClient& api, CliContext& ctx, const ConfigOptions& options);
Status configDiff(ApiClient& api, CliContext& ctx, const ConfigOptions& options);
Status configParams(ApiClient& api, CliContext& ctx, OutputFormat format);

}  // namespace corral
