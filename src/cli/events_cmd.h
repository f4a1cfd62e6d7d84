#pragma once

// `corral events NAME [--node N] [--revision R]`.

#include <string>

#include "cli/client.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/output.h"
#include "corral/status.h"

namespace corral {

void addEventsCommand(CLI::App& app, Command& chosen);

// Which of the cluster's events to show (all, by default).
struct EventSelection {
  std::string node;
  int64_t revision = 0;
};

Status showEvents(ApiClient& api, CliContext& ctx, const std::string& name,
                  const EventSelection& only, OutputFormat format);

}  // namespace corral
