#include "cli/config_cmd.h"

#include <memory>
#include <ostream>

#include "cli/waiting.h"

namespace corral {
namespace {

// A subcommand that takes a cluster's name and `-o`, running `run`.
CLI::App* addConfigCommand(CLI::App* noun, Command& chosen, const std::string& verb,
                           const std::string& help, std::shared_ptr<ConfigOptions> o,
                           Status (*run)(ApiClient&, CliContext&, const ConfigOptions&)) {
  CLI::App* cmd = noun->add_subcommand(verb, help);
  addNameArgument(cmd, &o->cluster, "CLUSTER", "Cluster name");
  addOutputOption(cmd, &o->format);
  cmd->callback([o, run, &chosen] {
    chosen = [o, run](ApiClient& api, CliContext& ctx) { return run(api, ctx, *o); };
  });
  return cmd;
}

void addSettingsArgument(CLI::App* cmd, ConfigOptions* o, bool required) {
  CLI::Option* opt = cmd->add_option("SETTINGS", o->settings, "slurm.conf parameters as Key=Value")
                         ->type_name("Key=Value")
                         ->check(keyValueValidator());
  if (required) opt->required();
}

}  // namespace

void addConfigCommands(CLI::App& app, Command& chosen) {
  CLI::App* noun = app.add_subcommand("config", "Show and change a cluster's slurm.conf settings");
  noun->require_subcommand(1);

  addConfigCommand(noun, chosen, "get", "Show the slurm.conf settings made with config set",
                   std::make_shared<ConfigOptions>(), configGet);
  {
    auto o = std::make_shared<ConfigOptions>();
    CLI::App* cmd =
        addConfigCommand(noun, chosen, "set", "Set slurm.conf parameters", o, configSet);
    addSettingsArgument(cmd, o.get(), true);
    addChangeWaitOptions(cmd, &o->wait);
    cmd->footer(
        "Example: corral config set demo MaxJobCount=5000 SchedulerType=sched/backfill\n"
        "See which parameters corral lets you set: corral config params");
  }
  {
    auto o = std::make_shared<ConfigOptions>();
    CLI::App* cmd = addConfigCommand(
        noun, chosen, "unset", "Remove settings, so that corral's defaults apply", o, configUnset);
    cmd->add_option("KEYS", o->keys, "slurm.conf parameter names")->type_name("KEY")->required();
    addChangeWaitOptions(cmd, &o->wait);
  }
  {
    auto o = std::make_shared<ConfigOptions>();
    CLI::App* cmd = addConfigCommand(
        noun, chosen, "diff",
        "Show how slurm.conf would change: with Key=Value, by those settings; without, by the "
        "cluster's revision that is not applied yet",
        o, configDiff);
    addSettingsArgument(cmd, o.get(), false);
  }
  {
    auto format = std::make_shared<OutputFormat>(OutputFormat::kTable);
    CLI::App* cmd =
        noun->add_subcommand("params", "List the slurm.conf and partition parameters you may set");
    addOutputOption(cmd, format.get());
    cmd->callback([format, &chosen] {
      chosen = [format](ApiClient& api, CliContext& ctx) {
        return configParams(api, ctx, *format);
      };
    });
  }
}

StatusOr<Json> buildConfigChange(const std::vector<std::string>& settings,
                                 const std::vector<std::string>& unset) {
  Json body = Json::object();
  for (const auto& arg : settings) {
    ASSIGN_OR_RETURN(auto kv, parseKeyValue(arg));
    body["set"][kv.first] = kv.second;
  }
  if (!unset.empty()) body["unset"] = unset;
  return body;
}

std::string configDiffText(const Json& body) {
  std::string diff = jsonString(body, "diff");
  std::string out = diff.empty() ? "no change\n" : diff;
  if (!out.empty() && out.back() != '\n') out += "\n";
  const Json& restarts = jsonChild(body, "restartsSlurmctld");
  if (restarts.is_boolean() && restarts.get<bool>()) out += "this change restarts slurmctld\n";
  return out;
}

Status configGet(ApiClient& api, CliContext& ctx, const ConfigOptions& options) {
  ASSIGN_OR_RETURN(Json body, api.getConfig(options.cluster));
  *ctx.out << (options.format == OutputFormat::kJson ? renderJson(body) : configLines(body));
  return Status::ok();
}

Status configSet(ApiClient& api, CliContext& ctx, const ConfigOptions& options) {
  ASSIGN_OR_RETURN(Json body, buildConfigChange(options.settings, {}));
  ASSIGN_OR_RETURN(Json answer, api.changeConfig(options.cluster, body));
  return followChange(api, ctx, options.cluster, answer,
                      followOptions(options.wait, options.format));
}

Status configUnset(ApiClient& api, CliContext& ctx, const ConfigOptions& options) {
  ASSIGN_OR_RETURN(Json body, buildConfigChange({}, options.keys));
  ASSIGN_OR_RETURN(Json answer, api.changeConfig(options.cluster, body));
  return followChange(api, ctx, options.cluster, answer,
                      followOptions(options.wait, options.format));
}

Status configDiff(ApiClient& api, CliContext& ctx, const ConfigOptions& options) {
  ASSIGN_OR_RETURN(Json body, buildConfigChange(options.settings, {}));
  ASSIGN_OR_RETURN(Json answer, api.diffConfig(options.cluster, body));
  *ctx.out << (options.format == OutputFormat::kJson ? renderJson(answer) : configDiffText(answer));
  return Status::ok();
}

Status configParams(ApiClient& api, CliContext& ctx, OutputFormat format) {
  ASSIGN_OR_RETURN(Json body, api.slurmParams());
  *ctx.out << (format == OutputFormat::kJson ? renderJson(body) : slurmParamsTable(body));
  return Status::ok();
}

}  // namespace corral
