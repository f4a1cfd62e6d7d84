#pragma once

// `corral events NAME`.

#include <string>

#include "cli/client.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/output.h"
#include "corral/status.h"

namespace corral {

void addEventsCommand(CLI::App& app, Command& chosen);

Status showEvents(ApiClient& api, CliContext& ctx, const std::string& name, OutputFormat format);

}  // namespace corral
