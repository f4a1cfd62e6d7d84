#include "cli/ssh_cmd.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "cli/output.h"
#include "cli/ssh_keys.h"

namespace corral {
namespace {

bool fileExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// `mkdir -p` with mode 0700 for the directories it creates.
Status makeDirs(const std::string& dir) {
  if (dir.empty()) return Status::ok();
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    std::string prefix = dir.substr(0, pos);
    if (prefix.empty()) continue;
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return internalError("cannot create " + prefix + ": " + std::strerror(errno));
    }
  }
  return Status::ok();
}

// ssh splits an -o value at whitespace (UserKnownHostsFile takes a list), so a
// path with a space must be double-quoted.
std::string sshOptionPath(const std::string& path) {
  if (path.find_first_of(" \t") == std::string::npos) return path;
  return "\"" + path + "\"";
}

}  // namespace

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string knownHostsLine(const std::string& address, int port, const std::string& hostKey) {
  std::string host = port == 22 ? address : "[" + address + "]:" + std::to_string(port);
  return host + " " + hostKey;
}

StatusOr<std::vector<std::string>> buildSshArgv(const Json& cluster,
                                                const std::vector<std::string>& command,
                                                const SshArgvOptions& options) {
  const Json& login = jsonChild(cluster, "login");
  std::string address = jsonString(login, "address");
  if (address.empty()) {
    return failedPrecondition("cluster \"" + jsonString(cluster, "name") +
                              "\" has no login address yet");
  }
  int64_t port = jsonInt(login, "port", 22);
  std::vector<std::string> argv = {
      "ssh",
      "-o",
      "UserKnownHostsFile=" + sshOptionPath(options.knownHostsFile),
      "-o",
      "StrictHostKeyChecking=yes",
      "-o",
      "LogLevel=ERROR",
      "-o",
      std::string("BatchMode=") + (options.stdinIsTty ? "no" : "yes"),
  };
  if (!options.identityFile.empty()) {
    argv.insert(argv.end(), {"-i", options.identityFile});
  }
  if (command.empty() && options.stdinIsTty) argv.push_back("-t");
  if (port != 22 && port > 0) argv.insert(argv.end(), {"-p", std::to_string(port)});
  // "--" ends ssh's options: without it ssh would parse a command argument
  // that starts with "-" as one of its own.
  argv.push_back("--");
  argv.push_back("root@" + address);
  // One argument is a command line for the login node's shell, as with plain
  // `ssh host 'sinfo; squeue'`; several are an argv, each word passed through
  // exactly (`corral ssh demo -- sh -c 'echo $HOSTNAME'`).
  if (command.size() == 1) {
    argv.push_back(command[0]);
  } else {
    for (const auto& arg : command) argv.push_back(shellQuote(arg));
  }
  return argv;
}

Status writePrivateFile(const std::string& path, const std::string& content) {
  size_t slash = path.rfind('/');
  if (slash != std::string::npos) RETURN_IF_ERROR(makeDirs(path.substr(0, slash)));
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return internalError("cannot write " + tmp + ": " + std::strerror(errno));
  // The umask cannot widen 0600, but a leftover file from an earlier run may
  // have other bits; make it exactly 0600.
  bool ok = ::fchmod(fd, 0600) == 0;
  size_t done = 0;
  while (ok && done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    done += static_cast<size_t>(n);
  }
  int savedErrno = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    savedErrno = errno;
  }
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    savedErrno = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    return internalError("cannot write " + path + ": " + std::strerror(savedErrno));
  }
  return Status::ok();
}

void addSshCommand(CLI::App& app, Command& chosen) {
  struct Options {
    std::string name;
    std::vector<std::string> command;
    std::string identity;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("ssh", "Log in to a cluster's login node as root");
  addNameArgument(cmd, &o->name);
  cmd->add_option("-i,--identity", o->identity,
                  "Private key to log in with (default: corral's, ~/.ssh/corral_ed25519)")
      ->type_name("FILE");
  cmd->add_option("CMD", o->command, "Command to run instead of a login shell");
  cmd->footer(
      "Put -- before CMD so that its options stay its own, e.g.:\n"
      "  corral ssh demo -- sinfo -N -l");
  cmd->callback([o, &chosen] {
    chosen = [o](ApiClient& api, CliContext& c) {
      return sshToCluster(api, c, o->name, o->command, o->identity);
    };
  });
}

Status sshToCluster(ApiClient& api, CliContext& ctx, const std::string& name,
                    const std::vector<std::string>& command, const std::string& identityFile) {
  if (!identityFile.empty() && !fileExists(identityFile)) {
    return invalidArgument("-i " + identityFile + ": no such key file");
  }
  ASSIGN_OR_RETURN(Json cluster, api.getCluster(name));
  std::string status = jsonString(cluster, "status");
  if (status != "Running") {
    return failedPrecondition("cluster \"" + name + "\" is " +
                              (status.empty() ? "in an unknown state" : status) +
                              "; ssh needs Running");
  }
  const Json& login = jsonChild(cluster, "login");
  std::string address = jsonString(login, "address");
  std::string hostKey = jsonString(login, "hostKey");
  if (address.empty() || hostKey.empty()) {
    return failedPrecondition("cluster \"" + name +
                              "\" has no login address or host key yet; try again shortly");
  }
  // One line, or the file would vouch for hosts corrald never named.
  if (address.find_first_of("\r\n \t") != std::string::npos ||
      hostKey.find_first_of("\r\n") != std::string::npos) {
    return internalError("corrald sent a malformed login address or host key for cluster \"" +
                         name + "\"");
  }
  if (ctx.home.empty()) {
    return failedPrecondition("cannot find your home directory; set HOME");
  }
  SshArgvOptions options;
  // The name is percent-encoded so that it is always one file name.
  options.knownHostsFile = ctx.home + "/.cache/corral/known_hosts-" + percentEncode(name);
  // -i names the key (one given with --ssh-key at create, say); else the
  // key corral made, if there is one; else ssh's own defaults.
  std::string key = corralKeyPath(ctx.home);
  if (!identityFile.empty()) {
    options.identityFile = identityFile;
  } else if (fileExists(key)) {
    options.identityFile = key;
  }
  options.stdinIsTty = ctx.stdinIsTty;
  RETURN_IF_ERROR(writePrivateFile(
      options.knownHostsFile,
      knownHostsLine(address, static_cast<int>(jsonInt(login, "port", 22)), hostKey) + "\n"));
  ASSIGN_OR_RETURN(std::vector<std::string> argv, buildSshArgv(cluster, command, options));
  return ctx.exec(argv);
}

}  // namespace corral
