#pragma once

// `FakeProcessRunner`: the `ProcessRunner` contract scripted, for unit tests
// of what corral runs on the host (the local runtime's `ip`, `nft` and
// `corral-pod` sequences, the image builder's mmdebstrap). It records every
// command with its stdin, answers each program with a handler a test sets
// (default: exit 0, no output), and injects faults: the next run of a
// program (or of a command beginning with given arguments) exits with a given
// code and stderr, or cannot be started at all.
// Thread-safe; handlers run without the lock held.

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "corral/process.h"

namespace corral {

class FakeProcessRunner : public ProcessRunner {
 public:
  using Handler = std::function<ProcessResult(const std::vector<std::string>& argv,
                                              const ProcessOptions& options)>;
  struct Call {
    std::vector<std::string> argv;
    std::string input;
    std::string line() const;  // argv joined by spaces.
  };

  StatusOr<ProcessResult> run(const std::vector<std::string>& argv,
                              const ProcessOptions& options) override;

  // Answers every later run of `program` (argv[0]'s last path component).
  void on(const std::string& program, Handler handler);
  // The next run of `program` exits `exitCode` with `err` on stderr.
  void failNext(const std::string& program, int exitCode, std::string err);
  // The next run of `program` cannot be started (run() returns `status`).
  void refuseNext(const std::string& program, Status status);
  // The same for the next run whose argv starts with `argvPrefix` (its first
  // element a program, as above: {"ip", "netns", "add"}), when one program
  // runs several commands. Checked before the faults by program.
  void failNextMatching(std::vector<std::string> argvPrefix, int exitCode, std::string err);
  void refuseNextMatching(std::vector<std::string> argvPrefix, Status status);

  std::vector<Call> calls() const;
  // The command lines of `program`'s runs, in order.
  std::vector<std::string> linesOf(const std::string& program) const;
  // Every command line, in order, one per entry.
  std::vector<std::string> lines() const;

 private:
  // A fault for the next run matching `prefix`: `refusal` if set, else `result`.
  struct PrefixFault {
    std::vector<std::string> prefix;
    ProcessResult result;
    std::optional<Status> refusal;
  };

  static std::string programOf(const std::vector<std::string>& argv);
  static bool matches(const std::vector<std::string>& prefix, const std::vector<std::string>& argv);

  mutable std::mutex mu_;
  std::vector<Call> calls_;
  std::map<std::string, Handler> handlers_;
  std::map<std::string, ProcessResult> failures_;
  std::map<std::string, Status> refusals_;
  std::vector<PrefixFault> prefixFaults_;  // In the order they were set.
};

}  // namespace corral
