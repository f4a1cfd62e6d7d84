#include "cli/cli.h"

#include <pwd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <sstream>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include "cli/cluster_cmd.h"
#include "cli/command.h"
#include "cli/config_cmd.h"
#include "cli/events_cmd.h"
#include "cli/image_cmd.h"
#include "cli/login_cmd.h"
#include "cli/node_cmd.h"
#include "cli/partition_cmd.h"
#include "cli/ssh_cmd.h"
#include "cli/user_cmd.h"
#include "cli/volume_cmd.h"

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

// The token in the CLI's config file ($CORRAL_CONFIG, else
// ~/.config/corral/config.json: {"token": "corral_…"}); "" when there is no
// file. A file that exists but cannot be used is an error, not silence.
StatusOr<std::string> tokenFromConfig(const CliContext& ctx) {
  const char* env = std::getenv("CORRAL_CONFIG");
  std::string path = env != nullptr && env[0] != '\0' ? env
                     : ctx.home.empty()             ? ""
                                                    : ctx.home + "/.config/corral/config.json";
  if (path.empty()) return std::string();
  std::ifstream in(path);
  if (!in) return std::string();
  std::stringstream text;
  text << in.rdbuf();
  Json j = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return invalidArgument(path + " is not a JSON object; write {\"token\": \"corral_…\"}");
  auto t = j.find("token");
  if (t == j.end()) return std::string();
  if (!t->is_string()) return invalidArgument(path + ": \"token\" must be a string");
  return t->get<std::string>();
}

// corrald's address and the API token: options of `corral` itself.
struct GlobalOptions {
  std::string server = kDefaultServer;
  std::string token;
};

void addGlobalOptions(CLI::App& app, GlobalOptions& global) {
  app.add_option("--server", global.server, "URL of corrald")
      ->envname("CORRAL_SERVER")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& s) {
            StatusOr<ServerUrl> url = parseServerUrl(s);
            return url.isOk() ? std::string() : url.status().message();
          },
          "", "server-url"));
  app.add_option("--token", global.token,
                 "API token (default: $CORRAL_TOKEN, else \"token\" in $CORRAL_CONFIG or "
                 "~/.config/corral/config.json)")
      ->envname("CORRAL_TOKEN");
}

// The subcommands the command line names, one after the other.
std::string subcommandNames(CLI::App* parent) {
  std::string known;
  for (const CLI::App* c : parent->get_subcommands({}))
    known += (known.empty() ? "" : ", ") + c->get_name();
  return known;
}

// CLI11 answers an unknown or missing command with "A subcommand is
// required", which hides the real mistake; this names it and the choices
// instead. Returns whether it reported one.
bool reportCommandMistake(CLI::App& app, const std::vector<std::string>& args, std::ostream& err) {
  CLI::App* level = &app;
  std::string path = "corral";
  bool asksForHelp = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    if (a == "--server" || a == "--token") {
      ++i;
      continue;
    }
    if (a == "-h" || a == "--help" || a == "--version") asksForHelp = true;
    if (!a.empty() && a[0] == '-') continue;
    if (level->get_subcommands({}).empty()) break;
    CLI::App* next = nullptr;
    for (CLI::App* c : level->get_subcommands({}))
      if (c->check_name(a)) next = c;
    if (next == nullptr) {
      err << "error: unknown command \"" << path << " " << a
          << "\"; the commands are: " << subcommandNames(level) << "\n";
      return true;
    }
    level = next;
    path += " " + a;
  }
  if (!asksForHelp && !level->get_subcommands({}).empty()) {
    err << "error: \"" << path << "\" needs a command: " << subcommandNames(level)
        << "; see: " << path << " --help\n";
    return true;
  }
  return false;
}

// Runs the parsed command against corrald: its exit status.
int runCommand(const Command& chosen, GlobalOptions global, CliContext& ctx) {
  StatusOr<ServerUrl> url = parseServerUrl(global.server);
  if (!url.isOk()) {
    *ctx.err << url.status().message() << "\n";
    return 2;
  }
  ApiClient api(*url);
  if (global.token.empty()) {
    auto fromFile = tokenFromConfig(ctx);
    if (!fromFile.isOk()) {
      *ctx.err << "error: " << fromFile.status().message() << "\n";
      return 2;
    }
    global.token = *fromFile;
  }
  api.setToken(global.token);
  Status st = chosen ? chosen(api, ctx) : internalError("no command chosen");
  ctx.out->flush();
  if (!st.isOk()) {
    // A failure the command printed as it happened needs no second line.
    if (!isAlreadyReported(st)) *ctx.err << "error: " << st.message() << "\n";
    return 1;
  }
  return 0;
}

int runCliOrThrow(const std::vector<std::string>& args, CliContext& ctx) {
  CLI::App app{"corral: real Slurm clusters on this machine, managed through corrald", "corral"};
  // Lets global flags such as --server follow the subcommand too.
  app.fallthrough();
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("corral ") + kVersion);
  GlobalOptions global;
  addGlobalOptions(app, global);

  // The subcommand the user picked sets this from its CLI11 callback.
  Command chosen;
  addClusterCommands(app, chosen);
  addPartitionCommands(app, chosen);
  addConfigCommands(app, chosen);
  addLoginCommands(app, chosen);
  addVolumeCommands(app, chosen);
  addNodeCommands(app, chosen);
  addUserCommands(app, chosen);
  addImageCommands(app, chosen);
  addEventsCommand(app, chosen);
  addSshCommand(app, chosen);
  CLI::App* versionCmd = app.add_subcommand("version", "Print corral's version");

  if (reportCommandMistake(app, args, *ctx.err)) return 2;
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
  return runCommand(chosen, global, ctx);
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
