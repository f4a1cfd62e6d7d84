#include "cli/cli.h"

#include <pwd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include "cli/cluster_cmd.h"
#include "cli/events_cmd.h"
#include "cli/ssh_cmd.h"

namespace corral {
namespace {

constexpr const char* kVersion = "0.1.0";


Status execProcess(const std::vector<std::string>& argv) {
  // Whatever is buffered would be lost when the process image is replaced.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  int e = errno;
  if (e == ENOENT) {
    return failedPrecondition("cannot run " + argv[0] + ": not found in PATH; install the " +
                              "OpenSSH client");
  }
  return internalError("cannot run " + argv[0] + ": " + std::strerror(e));
}

OutputFormat parseFormat(const std::string& s) {
  return s == "json" ? OutputFormat::kJson : OutputFormat::kTable;
}

CLI::Option* addOutputOption(CLI::App* cmd, std::string* format) {
  return cmd->add_option("-o,--output", *format, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
}

// CLI11's own PositiveNumber prints its upper bound as a 300-digit number.
const CLI::Validator kPositiveSeconds(
    [](std::string& s) {
      char* end = nullptr;
      long v = std::strtol(s.c_str(), &end, 10);
      bool ok = !s.empty() && end != nullptr && *end == '\0' && v > 0;
      return ok ? std::string() : "must be a positive number of seconds, not " + s;
    },
    "SECONDS>0", "positive-seconds");

CLI::Option* addNameArgument(CLI::App* cmd, std::string* name) {
  // An empty name would address the collection instead of a cluster.
  return cmd->add_option("NAME", *name, "Cluster name")
      ->required()
      ->check(CLI::Validator(
          [](std::string& s) { return s.empty() ? std::string("must not be empty") : ""; }, "",
          "non-empty"));
}

int runCliOrThrow(const std::vector<std::string>& args, CliContext& ctx) {
  CLI::App app{"corral: real Slurm clusters on this machine, managed through corrald", "corral"};
  // Lets global flags such as --server follow the subcommand too.
  app.fallthrough();
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("corral ") + kVersion);

  std::string server = kDefaultServer;
  app.add_option("--server", server, "URL of corrald")
      ->envname("CORRAL_SERVER")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& s) {
            StatusOr<ServerUrl> url = parseServerUrl(s);
            return url.isOk() ? std::string() : url.status().message();
          },
          "", "server-url"));

  CLI::App* cluster = app.add_subcommand("cluster", "Create, list, inspect and delete clusters");
  cluster->require_subcommand(1);

  CreateOptions create;
  std::string createFormat = "table";
  CLI::App* createCmd = cluster->add_subcommand("create", "Create a cluster");
  addNameArgument(createCmd, &create.name);
  createCmd->add_option("--gpu-nodes", create.gpuNodes, "Number of GPU nodes")
      ->capture_default_str();
  createCmd->add_option("--gpus-per-node", create.gpusPerNode, "GPUs on each GPU node")
      ->capture_default_str();
  createCmd->add_option("--cpu-nodes", create.cpuNodes, "Number of CPU-only nodes")
      ->capture_default_str();
  createCmd
      ->add_option("--ssh-key", create.sshKeyFiles,
                   "OpenSSH public key file for root on the login node; may repeat "
                   "(default: ~/.ssh/corral_ed25519.pub, created if missing)")
      ->type_name("FILE")
      // One file per --ssh-key, so that NAME after it is not taken for a file.
      ->allow_extra_args(false);
  createCmd->add_flag("--wait", create.wait, "Wait until the cluster is Running or Failed");
  createCmd->add_option("--timeout", create.timeoutSeconds, "Seconds --wait waits")
      ->check(kPositiveSeconds)
      ->capture_default_str();
  addOutputOption(createCmd, &createFormat);

  std::string listFormat = "table";
  CLI::App* listCmd = cluster->add_subcommand("list", "List clusters");
  addOutputOption(listCmd, &listFormat);

  std::string getName;
  std::string getFormat = "table";
  CLI::App* getCmd = cluster->add_subcommand("get", "Show a cluster and its nodes");
  addNameArgument(getCmd, &getName);
  addOutputOption(getCmd, &getFormat);

  DeleteOptions del;
  CLI::App* deleteCmd = cluster->add_subcommand("delete", "Delete a cluster");
  addNameArgument(deleteCmd, &del.name);
  deleteCmd->add_flag("--wait", del.wait, "Wait until the cluster is gone");
  deleteCmd->add_option("--timeout", del.timeoutSeconds, "Seconds --wait waits")
      ->check(kPositiveSeconds)
      ->capture_default_str();

  std::string eventsName;
  std::string eventsFormat = "table";
  CLI::App* eventsCmd = app.add_subcommand("events", "Show what happened to a cluster");
  addNameArgument(eventsCmd, &eventsName);
  addOutputOption(eventsCmd, &eventsFormat);

  std::string sshName;
  std::vector<std::string> sshCommand;
  CLI::App* sshCmd = app.add_subcommand("ssh", "Log in to a cluster's login node as root");
  addNameArgument(sshCmd, &sshName);
  sshCmd->add_option("CMD", sshCommand, "Command to run instead of a login shell");
  sshCmd->footer(
      "Put -- before CMD so that its options stay its own, e.g.:\n"
      "  corral ssh demo -- sinfo -N -l");

  CLI::App* versionCmd = app.add_subcommand("version", "Print corral's version");

  // CLI11 answers an unknown command with "A subcommand is required", which
  // hides the real mistake; name it instead.
  {
    CLI::App* level = &app;
    std::string path = "corral";
    for (size_t i = 1; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a == "--") break;
      if (a == "--server") {
        ++i;
        continue;
      }
      if (!a.empty() && a[0] == '-') continue;
      if (level->get_subcommands({}).empty()) break;
      CLI::App* next = nullptr;
      for (CLI::App* c : level->get_subcommands({}))
        if (c->check_name(a)) next = c;
      if (next == nullptr) {
        std::string known;
        for (const CLI::App* c : level->get_subcommands({}))
          known += (known.empty() ? "" : ", ") + c->get_name();
        *ctx.err << "error: unknown command \"" << path << " " << a << "\"; the commands are: "
                 << known << "\n";
        return 2;
      }
      level = next;
      path += " " + a;
    }
  }

  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    // Help and --version exit 0; every other parse problem is a usage error.
    int code = app.exit(e, *ctx.out, *ctx.err);
    return code == 0 ? 0 : 2;
  }

  if (versionCmd->parsed()) {
    *ctx.out << "corral " << kVersion << "\n";
    return 0;
  }

  StatusOr<ServerUrl> url = parseServerUrl(server);
  if (!url.isOk()) {
    *ctx.err << url.status().message() << "\n";
    return 2;
  }
  ApiClient api(*url);
  Status st;
  if (createCmd->parsed()) {
    create.format = parseFormat(createFormat);
    st = clusterCreate(api, ctx, create);
  } else if (listCmd->parsed()) {
    st = clusterList(api, ctx, parseFormat(listFormat));
  } else if (getCmd->parsed()) {
    st = clusterGet(api, ctx, getName, parseFormat(getFormat));
  } else if (deleteCmd->parsed()) {
    st = clusterDelete(api, ctx, del);
  } else if (eventsCmd->parsed()) {
    st = showEvents(api, ctx, eventsName, parseFormat(eventsFormat));
  } else if (sshCmd->parsed()) {
    st = sshToCluster(api, ctx, sshName, sshCommand);
  }
  ctx.out->flush();
  if (!st.isOk()) {
    *ctx.err << "error: " << st.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

std::string homeDirectory() {
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return home;
  struct passwd pw {};
  struct passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (getpwuid_r(::getuid(), &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr &&
      found->pw_dir != nullptr) {
    return found->pw_dir;
  }
  return "";
}

CliContext processContext() {
  Clock& clock = realClock();
  CliContext ctx;
  ctx.out = &std::cout;
  ctx.err = &std::cerr;
  ctx.clock = &clock;
  ctx.home = homeDirectory();
  ctx.stdinIsTty = ::isatty(STDIN_FILENO) == 1;
  ctx.exec = execProcess;
  return ctx;
}

int runCli(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  CliContext ctx = processContext();
  return runCli(args, ctx);
}

int runCli(const std::vector<std::string>& args, CliContext& ctx) {
  try {
    return runCliOrThrow(args, ctx);
  } catch (const std::exception& e) {
    *ctx.err << "error: internal: " << e.what() << "\n";
  } catch (...) {
    *ctx.err << "error: internal: unknown exception\n";
  }
  return 1;
}

}  // namespace corral
