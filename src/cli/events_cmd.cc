#include "cli/events_cmd.h"

#include <memory>
#include <ostream>

namespace corral {

void addEventsCommand(CLI::App& app, Command& chosen) {
  struct Options {
    std::string name;
    EventSelection only;
    OutputFormat format = OutputFormat::kTable;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("events", "Show what happened to a cluster");
  addNameArgument(cmd, &o->name);
  cmd->add_option("--node", o->only.node, "Only the events about this node (e.g. slinky-0)");
  cmd->add_option("--revision", o->only.revision, "Only the events about this revision")
      ->check(CLI::PositiveNumber);
  addOutputOption(cmd, &o->format);
  cmd->callback([o, &chosen] {
    chosen = [o](ApiClient& api, CliContext& c) {
      return showEvents(api, c, o->name, o->only, o->format);
    };
  });
}

Status showEvents(ApiClient& api, CliContext& ctx, const std::string& name,
                  const EventSelection& only, OutputFormat format) {
  ASSIGN_OR_RETURN(Json body, api.listEvents(name, only.node, only.revision));
  *ctx.out << (format == OutputFormat::kJson ? renderJson(body) : eventsTable(body));
  return Status::ok();
}

}  // namespace corral
