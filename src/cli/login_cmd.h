#pragma once

// `corral login restart` and `corral controller restart`: recreate a
// cluster's login node or controller, each as a change of its own (a new
// revision), e.g. when logins hang.

#include <CLI/CLI.hpp>
#include <string>

#include "cli/client.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/output.h"
#include "corral/status.h"

namespace corral {

// Adds `login` and `controller` and their `restart` subcommands to `app`; the one the user picks sets
// `chosen`, which must outlive `app`'s parse.
void addLoginCommands(CLI::App& app, Command& chosen);

Status loginRestart(ApiClient& api, CliContext& ctx, const std::string& cluster,
                    const ChangeWait& wait, OutputFormat format);

}  // namespace corral
