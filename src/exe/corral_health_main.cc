// corral-health: the node health agent that runs in every worker pod. See
// src/health/agent.h.

#include <signal.h>
#include <time.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>

#include "common/log.h"
#include "common/signals.h"
#include "corral/clock.h"
#include "corral/process.h"
#include "health/agent.h"

int main(int argc, char** argv) {
  using namespace corral;
  const char* podDir = std::getenv("CORRAL_POD_DIR");
  bool inPod = podDir != nullptr && podDir[0] != '\0';

  CLI::App app{"corral-health: watches a worker's GPUs and slurmd, drains the node on a GPU XID"};
  HealthAgentOptions options;
  options.kmsgPath = inPod ? std::string(podDir) + "/kmsg" : "/dev/kmsg";
  options.reportPath = inPod ? std::string(podDir) + "/health.json" : "/run/corral-health.json";
  int intervalMs = static_cast<int>(options.interval.count());
  bool verbose = false;
  app.add_option("--node", options.nodeName, "the Slurm node name of this worker")->required();
  app.add_option("--kmsg", options.kmsgPath,
                 "kernel log to follow: /dev/kmsg, or a file lines are appended to "
                 "(default: $CORRAL_POD_DIR/kmsg, else /dev/kmsg)")
      ->capture_default_str();
  app.add_option("--report", options.reportPath,
                 "where the JSON health report goes "
                 "(default: $CORRAL_POD_DIR/health.json, else /run/corral-health.json)")
      ->capture_default_str();
  app.add_option("--interval-ms", intervalMs, "milliseconds between checks")
      ->check(CLI::Range(10, 60000))
      ->capture_default_str();
  app.add_flag("-v,--verbose", verbose, "log debug messages");
  CLI11_PARSE(app, argc, argv);
  if (verbose) setLogLevel(LogLevel::kDebug);
  if (options.nodeName.empty() || options.nodeName.find_first_of(" \t\n=,") != std::string::npos) {
    LOG_ERROR("--node must be a Slurm node name (no spaces, '=' or ','), not \"" << options.nodeName
                                                                                 << "\"");
    return 2;
  }
  options.interval = std::chrono::milliseconds(intervalMs);

  // Signals are taken synchronously between ticks, so a tick (and the
  // scontrol it may be running) is never cut short and the report is never
  // left half-written.
  sigset_t stopSignals = blockStopSignals();

  HealthAgent agent(options, realProcessRunner(), realClock());
  LOG_INFO("corral-health watching node " << options.nodeName << ": kernel log " << options.kmsgPath
                                          << ", report " << options.reportPath);
  while (true) {
    agent.tick();
    timespec wait{};
    wait.tv_sec = intervalMs / 1000;
    wait.tv_nsec = static_cast<long>(intervalMs % 1000) * 1000000L;
    int sig = sigtimedwait(&stopSignals, nullptr, &wait);
    if (sig == SIGTERM || sig == SIGINT) {
      LOG_INFO("corral-health stopping on signal " << sig);
      return 0;
    }
    // EAGAIN: the interval passed; EINTR: another signal; both mean tick again.
  }
}
