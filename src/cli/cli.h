#pragma once

// The `corral` command line: a thin client of corrald's REST API (docs/api.md).
// `runCli` parses the arguments, talks to corrald and returns the process exit
// code: 0 on success, 1 when corrald or the machine reports an error, 2 when
// the command line itself is wrong.

#include <string>
#include <vector>

#include "cli/context.h"

namespace corral {

// Runs `corral` with the process's own streams, clock and environment.
int runCli(int argc, char** argv);

// Runs `corral` with `args` (args[0] is the program name) against `ctx`; what
// production and the tests share. Never throws.
int runCli(const std::vector<std::string>& args, CliContext& ctx);

}  // namespace corral
