#pragma once

// The one end-to-end harness: it owns a real corrald (its own data directory,
// port and subnet pool), runs the real `corral` CLI against it, and on
// teardown deletes every cluster and checks that nothing is left behind. Like
// HTCondor's `ornithology.Condor`, every e2e test goes through it.

#include <string>
#include <vector>

#include "corral/process.h"

namespace corral::e2e {

struct Leftovers {
  std::vector<std::string> items;  // Human-readable descriptions.
  bool empty() const { return items.empty(); }
  std::string describe() const;
};

class Harness {
 public:
  Harness();
  ~Harness();

  // Starts corrald and waits until it answers /healthz. `extraArgs` (set
  // before `start`) are added to corrald's command line.
  void start();
  void setExtraArgs(std::vector<std::string> args) { extraArgs_ = std::move(args); }
  // Stops corrald with `signal` (SIGTERM or SIGKILL) and waits for it to exit.
  void stop(int signal);
  bool running() const { return pid_ > 0; }

  // Runs the CLI: `corral --server <url> ARGS…`.
  ProcessResult corral(const std::vector<std::string>& args, int timeoutSeconds = 300);
  // Runs `corral ssh CLUSTER -- COMMAND` (one command line for the login shell).
  ProcessResult ssh(const std::string& cluster, const std::string& command,
                    int timeoutSeconds = 120);
  // Runs COMMAND (a shell line) inside a pod of a cluster as its root, as
  // corrald would.
  ProcessResult podExec(const std::string& cluster, const std::string& pod,
                        const std::string& command);
  // The host PID of a pod's PID 1, or 0.
  int podPid(const std::string& cluster, const std::string& pod) const;
  // The cluster image the clusters of this harness get unless a test names
  // one: $CORRAL_E2E_IMAGE, else corrald's default.
  static std::string image();

  // Runs `corrald admin --data-dir <dir> ARGS…` (accounts and tokens).
  ProcessResult admin(const std::vector<std::string>& args);
  // The admin token every `corral` run of the harness uses (CORRAL_TOKEN).
  const std::string& token() const { return token_; }

  std::string url() const;
  const std::string& dataDir() const { return dataDir_; }
  const std::string& home() const { return home_; }
  std::string sshPublicKeyFile() const { return home_ + "/.ssh/corral_ed25519.pub"; }

  // Everything of `cluster` still on the host: network namespaces, bridges,
  // veths, processes, mounts and files.
  Leftovers leftoversOf(const std::string& cluster, const std::string& subnet) const;

 private:
  std::string dataDir_;
  std::string home_;
  std::string pool_;
  int port_ = 0;
  int pid_ = 0;
  std::string token_;
  std::vector<std::string> extraArgs_;
};

// The binaries under test, from the build tree.
std::string binary(const std::string& name);

// `s` without trailing newlines and spaces: a command's one-line answer.
std::string trim(std::string s);

}  // namespace corral::e2e
