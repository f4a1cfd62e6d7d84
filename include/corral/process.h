#pragma once

// `ProcessRunner`: how corral runs host commands (ip, nsenter, ssh-keygen, …).
// An interface so that unit tests can script the answers.

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "corral/status.h"

namespace corral {

struct ProcessResult {
  int exitCode = -1;  // -1 when killed by a signal or timed out.
  bool timedOut = false;
  std::string out;
  std::string err;
};

struct ProcessOptions {
  std::string input;  // Written to the child's stdin, then closed.
  std::chrono::milliseconds timeout{30000};
  std::map<std::string, std::string> env;  // Added to the inherited environment.
  // Called with each line of stdout and stderr as it arrives (without its
  // newline), from the thread that called `run`: progress of a long command.
  std::function<void(const std::string& line)> onLine;
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Runs `argv` (argv[0] is looked up in PATH) to completion. Fails only when
  // the process cannot be started; a non-zero exit is reported in the result.
  // Thread-safe.
  virtual StatusOr<ProcessResult> run(const std::vector<std::string>& argv,
                                      const ProcessOptions& options = {}) = 0;
};

// The real runner; belongs to corral and must never be deleted.
ProcessRunner& realProcessRunner();

// Reaps exited children that `ProcessRunner` is not waiting for: pod
// launchers re-parented to corrald, which is a child subreaper so that no
// zombie outlives a pod. Returns how many were reaped. Thread-safe.
int reapOrphanedChildren();

// Runs `argv` and turns a non-zero exit into an Internal error that quotes the
// command and its stderr.
StatusOr<std::string> runChecked(ProcessRunner& runner, const std::vector<std::string>& argv,
                                 const ProcessOptions& options = {});

}  // namespace corral
