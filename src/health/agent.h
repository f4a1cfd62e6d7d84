#pragma once

// `HealthAgent`: the per-worker node health agent behind `corral-health`. It
// follows the kernel log for NVIDIA XID errors, drains the node in Slurm when
// a GPU fails, checks that slurmd is alive, and writes what it found to a JSON
// report that corrald reads.

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "corral/clock.h"
#include "corral/process.h"
#include "health/xid.h"

namespace corral {

struct HealthAgentOptions {
  std::string nodeName;  // The Slurm node this agent watches, e.g. "gpu-0".
  // A file that kernel log lines are appended to, or exactly "/dev/kmsg" for
  // the kernel's own ring buffer. A file is read from its start (so that a
  // line written before the agent started is not lost) and followed as it
  // grows; it may appear later, and when it shrinks or is replaced it is read
  // again from the start. "/dev/kmsg" is read from its end: messages older
  // than the agent are not acted upon.
  std::string kmsgPath;
  std::string reportPath;  // Where the JSON report goes; replaced atomically.
  std::string slurmdPidFile = "/run/slurmd.pid";
  // How often `corral-health` calls `HealthAgent::tick`.
  std::chrono::milliseconds interval{200};
};

// Whether the process whose pid `pidFile` holds is alive. Must not throw.
using ProcessAliveCheck = std::function<bool(const std::string& pidFile)>;

// The real check: reads `pidFile` and sends signal 0 to its pid. False when
// the file is missing or holds no positive pid, or no such process exists.
bool pidFileProcessAlive(const std::string& pidFile);

// Follows a kernel log source, returning only lines not returned before.
// Implementations are not thread-safe.
class KernelLogReader {
 public:
  virtual ~KernelLogReader() = default;
  // The complete lines (without their '\n') that arrived since the last call.
  // A source that cannot be read yet yields nothing; never throws.
  virtual std::vector<std::string> readNewLines() = 0;
};

// A reader for `path` with the semantics `HealthAgentOptions::kmsgPath`
// describes.
std::unique_ptr<KernelLogReader> openKernelLog(const std::string& path);

// How many XIDs the report keeps; older ones are dropped.
inline constexpr size_t kMaxReportedXids = 50;
// The report is rewritten at least this often, so that its "time" shows the
// agent is alive even when nothing changes.
inline constexpr std::chrono::milliseconds kReportRefresh{5000};
// A drain that failed (slurmctld unreachable, say) is retried this often.
inline constexpr std::chrono::milliseconds kDrainRetry{5000};

class HealthAgent {
 public:
  // `runner` runs `scontrol`; `clock` stamps the report and paces rewrites
  // and retries; both must outlive the agent. `slurmdAlive` is called once a
  // tick with `options.slurmdPidFile`.
  HealthAgent(HealthAgentOptions options, ProcessRunner& runner, Clock& clock,
              ProcessAliveCheck slurmdAlive = pidFileProcessAlive);
  // Uses `log` instead of opening `options.kmsgPath`.
  HealthAgent(HealthAgentOptions options, ProcessRunner& runner, Clock& clock,
              ProcessAliveCheck slurmdAlive, std::unique_ptr<KernelLogReader> log);

  // One pass: reads new kernel log lines, records their XIDs, drains the node
  // for a hardware XID (retrying a failed drain every `kDrainRetry`), checks
  // slurmd and writes the report if it changed or `kReportRefresh` passed.
  // Never throws; failures are logged and shown in the report. Not
  // thread-safe: call it from one thread.
  void tick();

  // The report as last built by `tick` (whether or not it was written).
  const std::string& lastReport() const { return lastReportText_; }
  // How many times the report file was written.
  int reportWrites() const { return reportWrites_; }

 private:
  struct Entry {
    int64_t time = 0;
    XidEvent event;
    XidClass cls = XidClass::kUnknown;
    std::string action;
    bool awaitingDrain = false;  // `action` says a drain is still to be retried.
  };

  void record(const XidEvent& e);
  void tryDrain();
  // "drained", "kept admin drain (…)" or an error; `done` is false for an error.
  std::string drain(const XidEvent& cause, bool& done);
  void writeReport();

  HealthAgentOptions options_;
  ProcessRunner& runner_;
  Clock& clock_;
  ProcessAliveCheck slurmdAlive_;
  std::unique_ptr<KernelLogReader> log_;

  std::deque<Entry> entries_;
  bool sawHardwareXid_ = false;
  // The hardware XID the next drain attempt names, while one is pending.
  std::optional<XidEvent> pendingDrain_;
  std::chrono::steady_clock::time_point nextDrainAttempt_{};

  std::string lastContent_;  // The report without its "time", as last written.
  std::string lastReportText_;
  std::optional<std::chrono::steady_clock::time_point> lastWrite_;
  std::string lastWriteError_;  // Logged once until it changes.
  int reportWrites_ = 0;
};

// Parses `scontrol show node NAME -o` into its State= and Reason= values; the
// reason loses the " [user@time]" Slurm appends. Empty strings when absent.
struct SlurmNodeState {
  std::string state;
  std::string reason;
};
SlurmNodeState parseScontrolNode(const std::string& oneLiner);

}  // namespace corral
