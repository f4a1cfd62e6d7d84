#pragma once

// How each noun's file adds its subcommands to `corral`'s command line, and
// the flags and checks they share. A noun's `add…Commands` builds its CLI11
// subcommands and, through each one's callback, sets the `Command` that
// `runCli` runs once the whole command line has parsed.

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cli/client.h"
#include "cli/context.h"
#include "cli/output.h"
#include "cli/waiting.h"
#include "corral/status.h"

namespace corral {

// What the chosen subcommand does once corrald's address is known. Runs on
// the caller's thread; `api` and `ctx` outlive the call.
using Command = std::function<Status(ApiClient& api, CliContext& ctx)>;

// `-o table|json`, stored straight into `format`.
CLI::Option* addOutputOption(CLI::App* cmd, OutputFormat* format);

// A required, non-empty positional: a cluster's or partition's name. An
// empty name would address the collection instead of one thing.
CLI::Option* addNameArgument(CLI::App* cmd, std::string* name, const std::string& label = "NAME",
                             const std::string& help = "Cluster name");

// `--ssh-key FILE`, one file per flag, so that a name after it is not taken
// for a file.
CLI::Option* addSshKeyOption(CLI::App* cmd, std::vector<std::string>* files,
                             const std::string& help);

// `--timeout SECONDS` for a wait, positive.
CLI::Option* addTimeoutOption(CLI::App* cmd, int* seconds, const std::string& help);

// How a command that makes a change waits for it (see `followChange`).
struct ChangeWait {
  bool noWait = false;
  int timeoutSeconds = 600;
};

// `--no-wait` and `--timeout` for a change command.
void addChangeWaitOptions(CLI::App* cmd, ChangeWait* wait);

// How `followChange` follows a change made with `wait`'s flags, reporting
// in `format`.
FollowOptions followOptions(const ChangeWait& wait, OutputFormat format);

// Checks one "Key=Value" argument: a non-empty key before the first '='.
// Anything else is a usage error that says how to write it.
const CLI::Validator& keyValueValidator();

// Splits "Key=Value" at its first '='. Fails with InvalidArgument, in the same
// words as `keyValueValidator`, when there is no '=' or no key.
StatusOr<std::pair<std::string, std::string>> parseKeyValue(const std::string& arg);

// A failure that has been printed already: `runCli` exits 1 without printing
// another "error: …" line. Used where a command reports a failure as it
// happens (a change that failed, then its rollback) and has nothing to add.
Status alreadyReported();
bool isAlreadyReported(const Status& status);

}  // namespace corral
