#pragma once

// `corral ssh NAME [-- CMD ARGS…]`: ssh to a cluster's login node as root,
// trusting exactly the host key corrald recorded for it.

#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/command.h"
#include "cli/context.h"
#include "corral/status.h"

namespace corral {

void addSshCommand(CLI::App& app, Command& chosen);

// `s` in single quotes for a POSIX shell; an embedded ' becomes '\''. ssh
// joins its command arguments with spaces and hands the result to the remote
// shell, so quoting each one is what makes that shell see the argv as given.
std::string shellQuote(const std::string& s);

// The known_hosts line for a login node: "ADDR KEY", or "[ADDR]:PORT KEY"
// when the port is not 22, as ssh looks it up.
std::string knownHostsLine(const std::string& address, int port, const std::string& hostKey);

struct SshArgvOptions {
  std::string knownHostsFile;
  std::string identityFile;  // Empty: let ssh choose.
  bool stdinIsTty = false;
};

// The ssh command line for `cluster` (a Cluster answer) running `command`
// (empty: an interactive shell). Fails when the cluster has no login address.
StatusOr<std::vector<std::string>> buildSshArgv(const Json& cluster,
                                                const std::vector<std::string>& command,
                                                const SshArgvOptions& options);

// Writes `content` to `path` with mode 0600, creating its directories (0700)
// and replacing the file atomically.
Status writePrivateFile(const std::string& path, const std::string& content);

// Looks the cluster up, checks that it is Running, writes its known_hosts file
// under `<home>/.cache/corral` and replaces the process with ssh. Returns only
// when something stopped it from starting ssh.
Status sshToCluster(ApiClient& api, CliContext& ctx, const std::string& name,
                    const std::vector<std::string>& command,
                    const std::string& identityFile = "");

}  // namespace corral
