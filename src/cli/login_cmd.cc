#include "cli/login_cmd.h"

#include <memory>

#include "cli/waiting.h"

namespace corral {

namespace {

// `corral NOUN restart CLUSTER`, which recreates one pod as a change.
void addRestart(CLI::App& app, Command& chosen, const char* nounName, const char* nounHelp,
                const char* help, StatusOr<Json> (ApiClient::*call)(const std::string&)) {
  CLI::App* noun = app.add_subcommand(nounName, nounHelp);
  noun->require_subcommand(1);

  struct Options {
    std::string cluster;
    ChangeWait wait;
    OutputFormat format = OutputFormat::kTable;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = noun->add_subcommand("restart", help);
  addNameArgument(cmd, &o->cluster, "CLUSTER", "Cluster name");
  addChangeWaitOptions(cmd, &o->wait);
  addOutputOption(cmd, &o->format);
  cmd->callback([o, &chosen, call] {
    chosen = [o, call](ApiClient& api, CliContext& ctx) -> Status {
      ASSIGN_OR_RETURN(Json answer, (api.*call)(o->cluster));
      return followChange(api, ctx, o->cluster, answer,
                          {!o->wait.noWait, o->wait.timeoutSeconds, o->format, ""});
    };
  });
}

}  // namespace

void addLoginCommands(CLI::App& app, Command& chosen) {
  addRestart(app, chosen, "login", "Manage a cluster's login node",
             "Recreate the login node: its local files (/root, /tmp) go, /shared, volumes and "
             "login users' homes stay",
             &ApiClient::restartLogin);
  addRestart(app, chosen, "controller", "Manage a cluster's controller",
             "Recreate the controller pod: slurmctld saves the queue and reads it back; "
             "running jobs keep running",
             &ApiClient::restartController);
}

Status loginRestart(ApiClient& api, CliContext& ctx, const std::string& cluster,
                    const ChangeWait& wait, OutputFormat format) {
  ASSIGN_OR_RETURN(Json answer, api.restartLogin(cluster));
  return followChange(api, ctx, cluster, answer, {!wait.noWait, wait.timeoutSeconds, format, ""});
}

}  // namespace corral
