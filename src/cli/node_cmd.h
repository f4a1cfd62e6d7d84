#pragma once

// `corral node list|get|reboot|inject-xid`: a cluster's nodes as Slurm and
// their health agents see them. A reboot is a change of the cluster (a new
// revision); injecting an XID writes a simulated GPU fault into a node's
// kernel log, where its health agent finds it.

#include <CLI/CLI.hpp>
#include <string>

#include "cli/client.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/output.h"
#include "corral/status.h"

namespace corral {

struct NodeOptions {
  std::string cluster;
  std::string node;  // The Slurm name, e.g. slinky-0.
  int xid = 0;       // inject-xid: the XID number.
  ChangeWait wait;
  OutputFormat format = OutputFormat::kTable;
};

// Adds `node` and its subcommands to `app`; the one the user picks sets
// `chosen`, which must outlive `app`'s parse.
void addNodeCommands(CLI::App& app, Command& chosen);

// A node's HEALTH cell: corrald's verdict ("ok", "GPU XID", "slurmd not
// running", "unknown") with the XID behind it, e.g. "GPU XID 79": the newest
// hardware XID, else the newest of any kind ("ok; XID 13"). Empty health
// reads "unknown".
std::string nodeHealthText(const Json& node);

// `corral node list`: NODE STATE REASON GPUS HEALTH, the node named as the
// console names it ("corral_node_1 (slinky-0)").
std::string nodeListTable(const Json& body);

// `corral node get`: the node's fields, then its XIDs (TIME XID PCI CLASS
// ACTION DESCRIPTION) and its history (corrald's events about it).
std::string nodeDetail(const Json& node);

// What `corral node inject-xid` prints: the line written and what happens
// next.
std::string injectedXidText(const Json& answer, const std::string& cluster,
                            const std::string& node);

Status nodeList(ApiClient& api, CliContext& ctx, const NodeOptions& options);
Status nodeGet(ApiClient& api, CliContext& ctx, const NodeOptions& options);
Status nodeReboot(ApiClient& api, CliContext& ctx, const NodeOptions& options);
Status nodeInjectXid(ApiClient& api, CliContext& ctx, const NodeOptions& options);

}  // namespace corral
