#include "cli/login_cmd.h"

#include <memory>

#include "cli/waiting.h"

namespace corral {

void addLoginCommands(CLI::App& app, Command& chosen) {
  CLI::App* noun = app.add_subcommand("login", "Manage a cluster's login node");
  noun->require_subcommand(1);

  struct Options {
    std::string cluster;
    ChangeWait wait;
    OutputFormat format = OutputFormat::kTable;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd =
      noun->add_subcommand("restart", "Restart a cluster's login node by recreating it");
  addNameArgument(cmd, &o->cluster, "CLUSTER", "Cluster name");
  addChangeWaitOptions(cmd, &o->wait);
  addOutputOption(cmd, &o->format);
  cmd->callback([o, &chosen] {
    chosen = [o](ApiClient& api, CliContext& ctx) {
      return loginRestart(api, ctx, o->cluster, o->wait, o->format);
    };
  });
}

Status loginRestart(ApiClient& api, CliContext& ctx, const std::string& cluster,
                    const ChangeWait& wait, OutputFormat format) {
  ASSIGN_OR_RETURN(Json answer, api.restartLogin(cluster));
  return followChange(api, ctx, cluster, answer, {!wait.noWait, wait.timeoutSeconds, format, ""});
}

}  // namespace corral
