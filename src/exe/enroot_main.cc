// enroot: the Enroot-compatible container runtime of corral's pods. A thin
// CLI over src/container/container.h; the Pyxis-compatible SPANK plugin
// drives it.

#include <pwd.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "container/container.h"

extern char** environ;

namespace {

using namespace corral;
namespace ct = corral::container;

constexpr const char* kVersion = "3.4.1+corral.0.1.0";

int fail(const Status& st, int holdFd = -1) {
  std::string msg = st.message().empty() ? st.toString() : st.message();
  if (holdFd >= 0) {
    std::string line = "error: " + msg + "\n";
    ssize_t n = write(holdFd, line.data(), line.size());
    (void)n;
  }
  std::fprintf(stderr, "enroot: error: %s\n", msg.c_str());
  return 1;
}

std::map<std::string, std::string> environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

ct::Identity identity() {
  ct::Identity who;
  who.uid = getuid();
  who.gid = getgid();
  std::vector<char> buf(16384);
  struct passwd pw, *res = nullptr;
  if (getpwuid_r(who.uid, &pw, buf.data(), buf.size(), &res) == 0 && res) {
    who.user = res->pw_name;
    who.home = res->pw_dir;
  }
  return who;
}

void progress(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

const char* kStartUsage =
    "Usage: enroot start [options] NAME|SQUASHFS [COMMAND [ARG...]]\n"
    "\n"
    "Options:\n"
    "  -r, --root               map the user to root in the container\n"
    "  -w, --rw                 make the container's root file system writable\n"
    "      --ro                 make it read-only, whatever the settings say\n"
    "  -m, --mount SRC[:DST[:FLAGS]]  bind a node path into the container (FLAGS: ro, rw, bind,\n"
    "                           rbind, nosuid, nodev, noexec, joined by '+')\n"
    "  -e, --env NAME[=VALUE]   keep the caller's NAME, or set NAME, over the image's\n"
    "      --gpus LIST          GPU minors to expose (\"0,1\", \"0-3\")\n"
    "      --workdir DIR        working directory in the container\n"
    "      --unshare LIST       namespaces of its own besides user and mount: net, ipc, uts\n"
    "      --entrypoint         (with --hold-fd) run the image's entrypoint first and report\n"
    "                           the environment it leaves\n"
    "      --hold-fd N          set up, write \"ready\" to fd N, and wait to be joined\n";

// An argument split into the option it names and the value written into it,
// if any: `--name=value`, or `-mVALUE` and `-eVALUE` for the short options
// that take one.
struct OptionWord {
  std::string name;
  std::optional<std::string> value;
};

// A flag of `enroot start`: the options it turns on.
struct StartFlag {
  std::vector<std::string> names;
  std::vector<bool ct::StartOptions::*> sets;
};

// An option of `enroot start` that takes a value, and what it does with it.
struct StartValueOption {
  std::vector<std::string> names;
  Status (*apply)(const std::string& value, ct::StartOptions& o);
};

Status setUnshare(const std::string& v, ct::StartOptions& o) {
  ASSIGN_OR_RETURN(o.unshare, ct::parseUnshare(v));
  return Status::ok();
}

Status addMounts(const std::string& v, ct::StartOptions& o) {
  ASSIGN_OR_RETURN(std::vector<ct::Mount> mounts, ct::parseMountList(v));
  o.mounts.insert(o.mounts.end(), mounts.begin(), mounts.end());
  return Status::ok();
}

Status addEnv(const std::string& v, ct::StartOptions& o) {
  if (v.empty() || v[0] == '=') {
    return invalidArgument("--env needs NAME or NAME=VALUE, got \"" + v + "\"");
  }
  o.env.push_back(v);
  return Status::ok();
}

Status setGpus(const std::string& v, ct::StartOptions& o) {
  ASSIGN_OR_RETURN(o.gpus, ct::parseGpuList(v));
  o.gpusGiven = true;
  return Status::ok();
}

Status setWorkdir(const std::string& v, ct::StartOptions& o) {
  if (v.empty()) return invalidArgument("--workdir needs a directory");
  o.workdir = v;
  return Status::ok();
}

Status setHoldFd(const std::string& v, ct::StartOptions& o) {
  char* end = nullptr;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || n < 0 || n > 1 << 20) {
    return invalidArgument("--hold-fd needs a file descriptor number, got \"" + v + "\"");
  }
  o.holdFd = static_cast<int>(n);
  return Status::ok();
}

const StartFlag kStartFlags[] = {
    {{"-r", "--root"}, {&ct::StartOptions::root}},
    {{"-w", "--rw"}, {&ct::StartOptions::writable}},
    {{"-rw", "-wr"}, {&ct::StartOptions::root, &ct::StartOptions::writable}},
    {{"--ro"}, {&ct::StartOptions::readOnly}},
    {{"--entrypoint"}, {&ct::StartOptions::entrypoint}},
};

const StartValueOption kStartValueOptions[] = {
    {{"-m", "--mount"}, addMounts},   {{"-e", "--env"}, addEnv},
    {{"--gpus"}, setGpus},            {{"--workdir"}, setWorkdir},
    {{"--unshare"}, setUnshare},      {{"--hold-fd"}, setHoldFd},
};

template <typename Option, size_t N>
const Option* findOption(const Option (&table)[N], const std::string& name) {
  for (const Option& option : table) {
    for (const std::string& n : option.names) {
      if (n == name) return &option;
    }
  }
  return nullptr;
}

OptionWord splitOptionWord(const std::string& a) {
  if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
    return {a.substr(0, a.find('=')), a.substr(a.find('=') + 1)};
  }
  if (a[1] != '-' && a.size() > 2 && findOption(kStartValueOptions, a.substr(0, 2))) {
    return {a.substr(0, 2), a.substr(2)};
  }
  return {a, std::nullopt};
}

// What `enroot start`'s arguments ask for.
struct StartArgs {
  ct::StartOptions options;
  size_t target = 0;  // Where the container's name (or squashfs file) stands in the arguments.
  bool help = false;  // -h or --help: print the usage, start nothing.
};

// Reads the options before the target into `parsed`. On an error `parsed`
// keeps what came before it, --hold-fd included, so the error can reach the
// holder's reader.
Status parseStartArgs(const std::vector<std::string>& args, StartArgs& parsed) {
  size_t& i = parsed.target;
  for (i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.size() < 2 || a[0] != '-') break;
    OptionWord word = splitOptionWord(a);
    if (word.name == "-h" || word.name == "--help") {
      parsed.help = true;
      return Status::ok();
    }
    if (const StartFlag* flag = findOption(kStartFlags, word.name)) {
      for (bool ct::StartOptions::*member : flag->sets) parsed.options.*member = true;
      continue;
    }
    const StartValueOption* option = findOption(kStartValueOptions, word.name);
    if (!option) {
      return invalidArgument("unknown option " + a + " for start (see `enroot start --help`)");
    }
    if (!word.value) {
      if (i + 1 >= args.size()) return invalidArgument("option " + word.name + " needs a value");
      word.value = args[++i];
    }
    RETURN_IF_ERROR(option->apply(*word.value, parsed.options));
  }
  return Status::ok();
}

int startCommand(const ct::Settings* settings, const Status& settingsError,
                 const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                 const ct::Identity& who) {
  StartArgs parsed;
  Status err = parseStartArgs(args, parsed);
  ct::StartOptions& o = parsed.options;
  if (!err.isOk()) return fail(err, o.holdFd);
  if (parsed.help) {
    std::fputs(kStartUsage, stdout);
    return 0;
  }
  if (!settings) return fail(settingsError, o.holdFd);
  if (parsed.target >= args.size()) {
    return fail(invalidArgument("start needs a container name or squashfs file"), o.holdFd);
  }
  std::string target = args[parsed.target];
  o.command.assign(args.begin() + static_cast<long>(parsed.target) + 1, args.end());
  Status st = ct::start(*settings, target, o, env, who);
  return fail(st, o.holdFd);
}

std::string formatTime(long long t) {
  time_t tt = static_cast<time_t>(t);
  struct tm tm;
  localtime_r(&tt, &tm);
  char buf[64];
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

// What the chosen subcommand does once the settings are loaded: its exit
// status. Set by the subcommand's CLI11 callback.
using Action = std::function<int(const ct::Settings&)>;

void addImport(CLI::App& app, Action& chosen) {
  struct Options {
    std::string output, uri;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("import", "pull an image into a squashfs file");
  cmd->add_option("-o,--output", o->output, "the squashfs file to write");
  cmd->add_option("URI", o->uri, "docker://[USER@][REGISTRY#]IMAGE[:TAG]")->required();
  cmd->callback([o, &chosen] {
    chosen = [o](const ct::Settings& s) {
      auto out = ct::importImage(s, o->uri, o->output, progress);
      if (!out.isOk()) return fail(out.status());
      std::fprintf(stderr, "Wrote %s\n", out->c_str());
      return 0;
    };
  });
}

void addCreate(CLI::App& app, Action& chosen) {
  struct Options {
    std::string name, image;
    bool force = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("create", "create a container from a squashfs file or an image");
  cmd->add_option("-n,--name", o->name, "the container's name");
  cmd->add_flag("-f,--force", o->force, "replace a container of the same name");
  cmd->add_option("IMAGE", o->image, "a squashfs file, or docker://… to pull")->required();
  cmd->callback([o, &chosen] {
    chosen = [o](const ct::Settings& s) {
      auto name = ct::create(s, o->image, o->name, o->force, progress);
      return name.isOk() ? 0 : fail(name.status());
    };
  });
}

void addExec(CLI::App& app, Action& chosen) {
  auto pid = std::make_shared<int>(0);
  auto* cmd = app.add_subcommand("exec", "run a command in a running container");
  cmd->add_option("PID", *pid, "a process of the container (`enroot list -f`)")->required();
  // Everything after PID is the command's, options included.
  cmd->prefix_command();
  cmd->callback([pid, cmd, &chosen] {
    chosen = [pid, cmd](const ct::Settings&) {
      std::vector<std::string> command = cmd->remaining();
      if (command.empty()) return fail(invalidArgument("exec needs a command after the PID"));
      return fail(ct::execInContainer(*pid, command));
    };
  });
}

// As Enroot's `list -f`: the name, then the pid of each running instance.
int listFancy(const ct::Settings& s, const std::vector<ct::ContainerInfo>& all) {
  auto running = ct::allRunningHolders(s);
  std::printf("%-32s %-8s %-8s %-19s %s\n", "NAME", "PID", "KIND", "CREATED", "IMAGE");
  for (const auto& c : all) {
    bool overlay = c.kind == ct::Kind::kOverlay;
    std::vector<int> pids = running.count(c.name) ? running[c.name] : std::vector<int>{};
    std::string pidText = pids.empty() ? "-" : std::to_string(pids.front());
    std::printf("%-32s %-8s %-8s %-19s %s\n", c.name.c_str(), pidText.c_str(),
                overlay ? "overlay" : "copy", formatTime(c.createdUnix).c_str(),
                overlay ? c.lower.c_str() : "-");
    for (size_t k = 1; k < pids.size(); ++k) {
      std::printf("%-32s %-8d\n", "", pids[k]);
    }
  }
  return 0;
}

void addList(CLI::App& app, Action& chosen) {
  auto fancy = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("list", "list containers");
  cmd->add_flag("-f,--fancy", *fancy, "show details");
  cmd->callback([fancy, &chosen] {
    chosen = [fancy](const ct::Settings& s) {
      auto all = ct::list(s);
      if (!all.isOk()) return fail(all.status());
      if (*fancy) return listFancy(s, *all);
      for (const auto& c : *all) std::printf("%s\n", c.name.c_str());
      return 0;
    };
  });
}

// Removes each container in `names`, asking first on a terminal unless
// `force`; 1 if any removal failed.
int removeContainers(const ct::Settings& s, const std::vector<std::string>& names, bool force) {
  int rc = 0;
  for (const auto& n : names) {
    if (!force && isatty(0)) {
      std::fprintf(stderr, "Do you really want to delete %s? [y/N] ", n.c_str());
      std::string answer;
      std::getline(std::cin, answer);
      if (answer != "y" && answer != "Y" && answer != "yes") continue;
    }
    Status st = ct::remove(s, n);
    if (!st.isOk()) rc = fail(st);
  }
  return rc;
}

void addRemove(CLI::App& app, Action& chosen) {
  struct Options {
    bool force = false;
    std::vector<std::string> names;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("remove", "remove containers");
  cmd->add_flag("-f,--force", o->force, "do not ask");
  cmd->add_option("NAME", o->names, "containers")->required();
  cmd->callback([o, &chosen] {
    chosen = [o](const ct::Settings& s) { return removeContainers(s, o->names, o->force); };
  });
}

void addExport(CLI::App& app, Action& chosen) {
  struct Options {
    std::string output, name;
    bool force = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("export", "write a container to a squashfs file");
  cmd->add_option("-o,--output", o->output, "the squashfs file to write");
  cmd->add_flag("-f,--force", o->force, "replace the file if it exists");
  cmd->add_option("NAME", o->name, "the container")->required();
  cmd->callback([o, &chosen] {
    chosen = [o](const ct::Settings& s) {
      Status st = ct::exportContainer(s, o->name, o->output, o->force);
      return st.isOk() ? 0 : fail(st);
    };
  });
}

}  // namespace

int main(int argc, char** argv) {
  auto env = environment();
  auto who = identity();
  auto settings = ct::loadSettings(who, env);

  // `start` is parsed by hand: everything after the container is the command's.
  if (argc >= 2 && std::string(argv[1]) == "start") {
    std::vector<std::string> args(argv + 2, argv + argc);
    return startCommand(settings.isOk() ? &*settings : nullptr, settings.status(), args, env, who);
  }

  CLI::App app{"enroot: corral's Enroot-compatible container runtime"};
  app.require_subcommand(1);
  app.add_subcommand("version", "show the version")->callback([] {
    std::printf("%s\n", kVersion);
  });
  app.add_subcommand("start", "start a container (see `enroot start --help`)");
  Action chosen;
  addImport(app, chosen);
  addCreate(app, chosen);
  addExec(app, chosen);
  addList(app, chosen);
  addRemove(app, chosen);
  addExport(app, chosen);

  CLI11_PARSE(app, argc, argv);
  if (app.got_subcommand("version")) return 0;
  if (!settings.isOk()) return fail(settings.status());
  return chosen ? chosen(*settings) : 0;
}
