#pragma once

// Slurm's jobs as the API shows them (docs/api.md "Jobs and metrics"), read
// from Slurm's own JSON output: `squeue --json` for the queue and
// `sacct --json` for history. Pure parsing, no I/O.
//
// The parsers accept the shapes of Slurm 22.05 (plain numbers) and of later
// releases, which wrap numbers as {"set", "infinite", "number"} objects, so
// an upgrade of the nodes does not blank the console.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "corral/status.h"

namespace corral {

struct Job {
  int64_t id = 0;
  int64_t arrayJobId = 0;                // 0: not part of an array.
  std::optional<int64_t> arrayTaskId;    // Set for one task of an array.
  std::string name;
  std::string user;
  std::string partition;
  std::string state;   // PENDING, RUNNING, COMPLETED, FAILED, …
  std::string reason;  // Why it is pending, or None.
  std::string nodes;   // Hostlist, "" while pending.
  int64_t nodeCount = 0;
  int64_t cpus = 0;
  std::string tres;  // e.g. "cpu=2,node=2,billing=2,gres/gpu=4"
  int64_t submitTime = 0;  // Unix seconds; 0: not yet.
  int64_t startTime = 0;
  int64_t endTime = 0;
  std::string timeLimit;  // [D-]HH:MM:SS or UNLIMITED.
  std::string workDir;
  std::string command;
  std::string exitCode;  // "status:signal", e.g. "0:0", "3:0".
  std::string stdoutPath;
};

// Whether a job in `state` is over (history, not queue).
bool jobFinished(const std::string& state);

// Where a batch job's output goes: Slurm's --output pattern with %j, %x,
// %u, %A, %a and %% filled in, relative to the job's working directory
// ("slurm-%j.out" when none was given).
std::string expandOutputPattern(const std::string& pattern, const Job& job);

// Parses `squeue --json` output. InvalidArgument if it is not Slurm's JSON.
StatusOr<std::vector<Job>> parseSqueueJson(const std::string& text);

// Parses `sacct --json` output (jobs only; steps are ignored).
StatusOr<std::vector<Job>> parseSacctJson(const std::string& text);

// Slurm 22.05's `sacct --json` reports every exit code as 0 ("SUCCESS"),
// even of a FAILED job; its text output is right. Sets each job's `exitCode`
// from `sacct -X -n -P -o JobIDRaw,ExitCode` output ("3|3:0" lines).
void applySacctExitCodes(std::vector<Job>& jobs, const std::string& parsable);
inline const std::vector<std::string> kSacctExitCodeArgs = {"-X", "-n", "-P", "-o", "JobIDRaw,ExitCode"};

// Minutes (Slurm's time_limit) as [D-]HH:MM:SS; negative or absent is UNLIMITED.
std::string formatTimeLimit(std::optional<int64_t> minutes);

// Filters of GET …/jobs. Empty members match everything.
struct JobFilter {
  std::vector<std::string> states;  // Upper case; a job matches any.
  std::string user;
  std::string partition;
  std::string text;  // Substring of the name or the id.
  bool matches(const Job& job) const;
};

}  // namespace corral
