#pragma once

// What a `corral` command needs from the world besides corrald: where to
// print, what time it is, where the user's home is and how to hand the
// terminal over to ssh. Bundled so that unit tests can run whole commands
// without touching the real terminal, clock or home directory.

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "corral/clock.h"
#include "corral/status.h"

namespace corral {

struct CliContext {
  std::ostream* out = nullptr;  // Results: tables, JSON, summaries.
  std::ostream* err = nullptr;  // Progress lines and `error: …` messages.
  Clock* clock = nullptr;       // Polling interval, timeouts and ages.
  // The user's home directory; the SSH key and the known_hosts cache live
  // under it.
  std::string home;
  // Whether stdin is a terminal: decides ssh's `-t` and `BatchMode`.
  bool stdinIsTty = false;
  // Replaces the process with `argv` (looked up in PATH). Returns only on
  // failure. Production uses `execvp`; tests record the argv instead.
  std::function<Status(const std::vector<std::string>& argv)> exec;
};

// The context `runCli(argc, argv)` uses: std::cout/std::cerr, the system
// clock, $HOME (or the password database), isatty(0) and `execvp`. The result
// refers to process-wide singletons; it must not outlive `main`.
CliContext processContext();

// The user's home directory: $HOME when set and non-empty, else the password
// database's entry for the current user, else "".
std::string homeDirectory();

}  // namespace corral
