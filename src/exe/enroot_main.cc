// enroot: the Enroot-compatible container runtime of corral's pods. A thin
// CLI over src/container/container.h; the Pyxis-compatible SPANK plugin
// drives it.

#include <pwd.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
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

int startCommand(const ct::Settings* settings, const Status& settingsError,
                 const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                 const ct::Identity& who) {
  ct::StartOptions o;
  size_t i = 0;
  auto value = [&](const std::string& opt, std::string& out) -> Status {
    if (i + 1 >= args.size()) return invalidArgument("option " + opt + " needs a value");
    out = args[++i];
    return Status::ok();
  };
  Status err;
  for (; i < args.size() && err.isOk(); ++i) {
    std::string a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.size() < 2 || a[0] != '-') break;
    std::string opt = a, v;
    bool inlineValue = false;
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
      opt = a.substr(0, a.find('='));
      v = a.substr(a.find('=') + 1);
      inlineValue = true;
    } else if (a[1] != '-' && a.size() > 2 && (a[1] == 'm' || a[1] == 'e')) {
      opt = a.substr(0, 2);
      v = a.substr(2);
      inlineValue = true;
    }
    auto need = [&]() {
      if (!inlineValue) err = value(opt, v);
      return err.isOk();
    };
    if (opt == "-r" || opt == "--root") {
      o.root = true;
    } else if (opt == "-w" || opt == "--rw") {
      o.writable = true;
    } else if (opt == "--ro") {
      o.readOnly = true;
    } else if (opt == "--entrypoint") {
      o.entrypoint = true;
    } else if (opt == "--unshare") {
      if (!need()) break;
      auto u = ct::parseUnshare(v);
      if (!u.isOk()) {
        err = u.status();
        break;
      }
      o.unshare = *u;
    } else if (opt == "-rw" || opt == "-wr") {
      o.root = o.writable = true;
    } else if (opt == "-m" || opt == "--mount") {
      if (!need()) break;
      auto m = ct::parseMountList(v);
      if (!m.isOk()) {
        err = m.status();
        break;
      }
      o.mounts.insert(o.mounts.end(), m->begin(), m->end());
    } else if (opt == "-e" || opt == "--env") {
      if (!need()) break;
      if (v.empty() || v[0] == '=') {
        err = invalidArgument("--env needs NAME or NAME=VALUE, got \"" + v + "\"");
        break;
      }
      o.env.push_back(v);
    } else if (opt == "--gpus") {
      if (!need()) break;
      auto g = ct::parseGpuList(v);
      if (!g.isOk()) {
        err = g.status();
        break;
      }
      o.gpusGiven = true;
      o.gpus = *g;
    } else if (opt == "--workdir") {
      if (!need()) break;
      if (v.empty()) {
        err = invalidArgument("--workdir needs a directory");
        break;
      }
      o.workdir = v;
    } else if (opt == "--hold-fd") {
      if (!need()) break;
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 0 || n > 1 << 20) {
        err = invalidArgument("--hold-fd needs a file descriptor number, got \"" + v + "\"");
        break;
      }
      o.holdFd = static_cast<int>(n);
    } else if (opt == "-h" || opt == "--help") {
      std::fputs(kStartUsage, stdout);
      return 0;
    } else {
      err = invalidArgument("unknown option " + a + " for start (see `enroot start --help`)");
    }
  }
  if (!err.isOk()) return fail(err, o.holdFd);
  if (!settings) return fail(settingsError, o.holdFd);
  if (i >= args.size()) {
    return fail(invalidArgument("start needs a container name or squashfs file"), o.holdFd);
  }
  std::string target = args[i];
  o.command.assign(args.begin() + static_cast<long>(i) + 1, args.end());
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

  std::string importOutput, importUri;
  auto* imp = app.add_subcommand("import", "pull an image into a squashfs file");
  imp->add_option("-o,--output", importOutput, "the squashfs file to write");
  imp->add_option("URI", importUri, "docker://[USER@][REGISTRY#]IMAGE[:TAG]")->required();

  std::string createName, createImage;
  bool createForce = false;
  auto* cr = app.add_subcommand("create", "create a container from a squashfs file or an image");
  cr->add_option("-n,--name", createName, "the container's name");
  cr->add_flag("-f,--force", createForce, "replace a container of the same name");
  cr->add_option("IMAGE", createImage, "a squashfs file, or docker://… to pull")->required();

  int execPid = 0;
  auto* exe = app.add_subcommand("exec", "run a command in a running container");
  exe->add_option("PID", execPid, "a process of the container (`enroot list -f`)")->required();
  // Everything after PID is the command's, options included.
  exe->prefix_command();
  bool fancy = false;
  auto* ls = app.add_subcommand("list", "list containers");
  ls->add_flag("-f,--fancy", fancy, "show details");

  bool removeForce = false;
  std::vector<std::string> removeNames;
  auto* rm = app.add_subcommand("remove", "remove containers");
  rm->add_flag("-f,--force", removeForce, "do not ask");
  rm->add_option("NAME", removeNames, "containers")->required();

  std::string exportOutput, exportName;
  auto* ex = app.add_subcommand("export", "write a container to a squashfs file");
  ex->add_option("-o,--output", exportOutput, "the squashfs file to write");
  bool exportForce = false;
  ex->add_flag("-f,--force", exportForce, "replace the file if it exists");
  ex->add_option("NAME", exportName, "the container")->required();

  CLI11_PARSE(app, argc, argv);
  if (app.got_subcommand("version")) return 0;
  if (!settings.isOk()) return fail(settings.status());
  const ct::Settings& s = *settings;

  if (imp->parsed()) {
    auto out = ct::importImage(s, importUri, importOutput, progress);
    if (!out.isOk()) return fail(out.status());
    std::fprintf(stderr, "Wrote %s\n", out->c_str());
    return 0;
  }
  if (cr->parsed()) {
    auto name = ct::create(s, createImage, createName, createForce, progress);
    if (!name.isOk()) return fail(name.status());
    return 0;
  }
  if (ls->parsed()) {
    auto all = ct::list(s);
    if (!all.isOk()) return fail(all.status());
    if (!fancy) {
      for (const auto& c : *all) std::printf("%s\n", c.name.c_str());
      return 0;
    }
    // As Enroot's: the name, then the pid of each running instance.
    auto running = ct::allRunningHolders(s);
    std::printf("%-32s %-8s %-8s %-19s %s\n", "NAME", "PID", "KIND", "CREATED", "IMAGE");
    for (const auto& c : *all) {
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
  if (rm->parsed()) {
    int rc = 0;
    for (const auto& n : removeNames) {
      if (!removeForce && isatty(0)) {
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
  if (exe->parsed()) {
    std::vector<std::string> cmd = exe->remaining();
    if (cmd.empty()) return fail(invalidArgument("exec needs a command after the PID"));
    return fail(ct::execInContainer(execPid, cmd));
  }
  if (ex->parsed()) {
    Status st = ct::exportContainer(s, exportName, exportOutput, exportForce);
    if (!st.isOk()) return fail(st);
    return 0;
  }
  return 0;
}
