#pragma once

// `corral partition list|create|update|delete`: a cluster's own Slurm
// partitions (corral manages `all`, the group partitions and the platform's).

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/output.h"
#include "corral/status.h"

namespace corral {

struct PartitionOptions {
  std::string cluster;
  std::string name;
  std::string nodes;                  // A Slurm hostlist; "" keeps it (update).
  std::vector<std::string> settings;  // "Key=Value" partition options to set.
  std::vector<std::string> unset;     // Option keys to remove (update).
  bool force = false;                 // Delete even with jobs in the partition.
  ChangeWait wait;
  OutputFormat format = OutputFormat::kTable;
};

// Adds `partition` and its subcommands to `app`; the one the user picks sets
// `chosen`, which must outlive `app`'s parse.
void addPartitionCommands(CLI::App& app, Command& chosen);

// The POST body for `partition create`: {"name", "nodes", "options"}.
StatusOr<Json> buildPartitionCreate(const PartitionOptions& options);

// The PUT body for `partition update`: the partition as `list` (a GET
// /partitions answer) shows it, with `options`' nodes, settings and unsets
// applied. Keys match case-insensitively and keep the spelling corrald uses.
// Fails when the partition is missing or managed by corral, when an unset key
// is not set, or when one key is both set and unset.
StatusOr<Json> mergePartitionUpdate(const Json& list, const PartitionOptions& options);

Status partitionList(ApiClient& api, CliContext& ctx, const std::string& cluster,
                     OutputFormat format);
Status partitionCreate(ApiClient& api, CliContext& ctx, const PartitionOptions& options);
Status partitionUpdate(ApiClient& api, CliContext& ctx, const PartitionOptions& options);
Status partitionDelete(ApiClient& api, CliContext& ctx, const PartitionOptions& options);

}  // namespace corral
