#include "cli/node_cmd.h"

#include <cstdlib>
#include <memory>
#include <ostream>
#include <vector>

#include "cli/waiting.h"

namespace corral {
namespace {

// The XID numbers the health agent accepts (see inject-xid's API).
constexpr int kMinXid = 1;
constexpr int kMaxXid = 999;

const CLI::Validator kXidNumber(
    [](std::string& s) {
      char* end = nullptr;
      long v = std::strtol(s.c_str(), &end, 10);
      bool ok = !s.empty() && end != nullptr && *end == '\0' && v >= kMinXid && v <= kMaxXid;
      return ok ? std::string()
                : "must be an XID number from " + std::to_string(kMinXid) + " to " +
                      std::to_string(kMaxXid) + ", not " + s;
    },
    "1-999", "xid-number");

std::string timeText(const Json& j) {
  const Json& t = jsonChild(j, "time");
  if (!t.is_number_integer() && !t.is_number_unsigned()) return "-";
  return formatLocalTime(t.get<int64_t>());
}

// The node's XIDs, oldest first, as the API sends them.
const Json& xidsOf(const Json& node) { return jsonChild(node, "xids"); }

std::string xidTable(const Json& xids) {
  std::vector<std::vector<std::string>> rows = {
      {"TIME", "XID", "PCI", "CLASS", "ACTION", "DESCRIPTION"}};
  for (const Json& x : xids) {
    rows.push_back({timeText(x), jsonIntText(x, "code"), orNone(jsonString(x, "pci")),
                    orNone(jsonString(x, "class")), orNone(jsonString(x, "action")),
                    jsonString(x, "description")});
  }
  return renderTable(rows);
}

CLI::App* addNodeCommand(CLI::App* noun, Command& chosen, const std::string& verb,
                         const std::string& help, bool takesNode,
                         Status (*run)(ApiClient&, CliContext&, const NodeOptions&),
                         std::shared_ptr<NodeOptions> o) {
  CLI::App* cmd = noun->add_subcommand(verb, help);
  addNameArgument(cmd, &o->cluster, "CLUSTER", "Cluster name");
  if (takesNode) addNameArgument(cmd, &o->node, "NODE", "Node's Slurm name, e.g. slinky-0");
  cmd->callback([o, run, &chosen] {
    chosen = [o, run](ApiClient& api, CliContext& ctx) { return run(api, ctx, *o); };
  });
  return cmd;
}

}  // namespace

void addNodeCommands(CLI::App& app, Command& chosen) {
  CLI::App* noun = app.add_subcommand("node", "Inspect, reboot and test a cluster's nodes");
  noun->require_subcommand(1);

  {
    auto o = std::make_shared<NodeOptions>();
    CLI::App* cmd = addNodeCommand(noun, chosen, "list",
                                   "List a cluster's nodes with their Slurm state and health",
                                   false, nodeList, o);
    addOutputOption(cmd, &o->format);
  }
  {
    auto o = std::make_shared<NodeOptions>();
    CLI::App* cmd = addNodeCommand(
        noun, chosen, "get", "Show a node, its GPU XIDs and what happened to it", true, nodeGet, o);
    addOutputOption(cmd, &o->format);
  }
  {
    auto o = std::make_shared<NodeOptions>();
    CLI::App* cmd =
        addNodeCommand(noun, chosen, "reboot", "Reboot a node by recreating it; its jobs are lost",
                       true, nodeReboot, o);
    addChangeWaitOptions(cmd, &o->wait);
    addOutputOption(cmd, &o->format);
  }
  {
    auto o = std::make_shared<NodeOptions>();
    CLI::App* cmd = addNodeCommand(
        noun, chosen, "inject-xid",
        "Write a simulated GPU XID into a GPU node's kernel log, to test what happens next", true,
        nodeInjectXid, o);
    cmd->add_option("CODE", o->xid, "The XID number, e.g. 79 (GPU has fallen off the bus)")
        ->required()
        ->check(kXidNumber);
    addOutputOption(cmd, &o->format);
  }
}

std::string nodeHealthText(const Json& node) {
  std::string health = jsonString(node, "health");
  if (health.empty()) health = "unknown";
  const Json* newest = nullptr;
  const Json* newestHardware = nullptr;
  const Json& xids = xidsOf(node);
  if (xids.is_array()) {
    for (const Json& x : xids) {
      if (!x.is_object()) continue;
      newest = &x;
      if (jsonString(x, "class") == "hardware") newestHardware = &x;
    }
  }
  if (health == "GPU XID") {
    const Json* cause = newestHardware != nullptr ? newestHardware : newest;
    return cause == nullptr ? health : health + " " + jsonIntText(*cause, "code");
  }
  if (newestHardware != nullptr)
    return health + "; GPU XID " + jsonIntText(*newestHardware, "code");
  if (newest != nullptr) return health + "; XID " + jsonIntText(*newest, "code");
  return health;
}

std::string nodeListTable(const Json& body) {
  const Json& nodes = jsonChild(body, "nodes");
  if (!nodes.is_array() || nodes.empty()) return "No nodes yet.\n";
  std::vector<std::vector<std::string>> rows = {{"NODE", "STATE", "REASON", "GPUS", "HEALTH"}};
  for (const Json& n : nodes) {
    rows.push_back({nodeDisplayName(n), orNone(jsonString(n, "state")),
                    orNone(jsonString(n, "reason")), jsonIntText(n, "gpus"), nodeHealthText(n)});
  }
  return renderTable(rows);
}

std::string nodeDetail(const Json& node) {
  std::string out = renderFields({
      {"Node", nodeDisplayName(node)},
      {"Group", orNone(jsonString(node, "group"))},
      {"Address", orNone(jsonString(node, "address"))},
      {"GPUs", jsonIntText(node, "gpus")},
      {"State", orNone(jsonString(node, "state"))},
      {"Reason", orNone(jsonString(node, "reason"))},
      {"Health", nodeHealthText(node)},
      {"Reboots", jsonIntText(node, "reboots")},
  });
  const Json& xids = xidsOf(node);
  if (!xids.is_array() || xids.empty()) {
    out += "XIDs:       none\n";
  } else {
    out += "\nXIDs:\n" + xidTable(xids);
  }
  const Json& history = jsonChild(node, "history");
  if (!history.is_array() || history.empty()) {
    out += "History:    none\n";
  } else {
    out += "\nHistory:\n" + eventsTable(Json{{"events", history}});
  }
  return out;
}

std::string injectedXidText(const Json& answer, const std::string& cluster,
                            const std::string& node) {
  std::string name = jsonString(answer, "node", node);
  return "wrote to " + name + "'s kernel log: " + jsonString(answer, "line", "?") +
         "\n"
         "hardware XIDs (48, 63, 64, 74, 79, 92, 94, 95, …) drain the node within a second; "
         "application XIDs (13, 31, 43, …) are only reported; watch it with: "
         "corral node get " +
         cluster + " " + name + "\n";
}

Status nodeList(ApiClient& api, CliContext& ctx, const NodeOptions& options) {
  ASSIGN_OR_RETURN(Json body, api.listNodes(options.cluster));
  *ctx.out << (options.format == OutputFormat::kJson ? renderJson(body) : nodeListTable(body));
  return Status::ok();
}

Status nodeGet(ApiClient& api, CliContext& ctx, const NodeOptions& options) {
  ASSIGN_OR_RETURN(Json node, api.getNode(options.cluster, options.node));
  *ctx.out << (options.format == OutputFormat::kJson ? renderJson(node) : nodeDetail(node));
  return Status::ok();
}

Status nodeReboot(ApiClient& api, CliContext& ctx, const NodeOptions& options) {
  ASSIGN_OR_RETURN(Json answer, api.rebootNode(options.cluster, options.node));
  FollowOptions follow = followOptions(options.wait, options.format);
  RETURN_IF_ERROR(followChange(api, ctx, options.cluster, answer, follow));
  if (!follow.wait || !changeMade(answer)) return Status::ok();

  // The reboot is done; say how Slurm sees the node now.
  std::ostream& human = humanStream(ctx, options.format);
  std::string hint = "see: corral node get " + options.cluster + " " + options.node;
  StatusOr<Json> node = api.getNode(options.cluster, options.node);
  if (!node.isOk()) {
    // The reboot itself succeeded; failing the command now would say otherwise.
    *ctx.err << "warning: cannot read the node's state: " << node.status().message() << "; " << hint
             << "\n";
    return Status::ok();
  }
  std::string state = jsonString(*node, "state");
  std::string reason = jsonString(*node, "reason");
  if (state.empty()) {
    human << "node " << nodeDisplayName(*node)
          << " rebooted; Slurm has not reported its state yet; " << hint << "\n";
  } else {
    human << "node " << nodeDisplayName(*node) << " is " << state
          << (reason.empty() ? "" : " (" + reason + ")") << "\n";
  }
  return Status::ok();
}

Status nodeInjectXid(ApiClient& api, CliContext& ctx, const NodeOptions& options) {
  ASSIGN_OR_RETURN(Json answer, api.injectXid(options.cluster, options.node, options.xid));
  *ctx.out << (options.format == OutputFormat::kJson
                   ? renderJson(answer)
                   : injectedXidText(answer, options.cluster, options.node));
  return Status::ok();
}

}  // namespace corral
