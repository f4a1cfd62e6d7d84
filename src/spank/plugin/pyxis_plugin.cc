// The Pyxis-compatible SPANK plugin: loaded by srun, sbatch and salloc (to
// add and check the --container-* options) and by slurmstepd (to put a step's
// tasks into a container). All decisions are in src/spank/options.h; this
// file moves values between Slurm and that logic and runs the Enroot-
// compatible runtime (`enroot`, src/exe/enroot_main.cc) as the job's user.
//
// Per step and node: user_init creates the container (unless a named one
// exists) and starts one holder process (`enroot start --hold-fd`) that owns
// the container's user and mount namespaces; every task joins them in
// task_init, so the node's tasks share one container. exit stops the holder
// and removes an unnamed container; job_epilog removes the job's named ones.

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/child.h"
#include "container/container.h"
#include "common/fs.h"
#include "image/image.h"
#include "slurm/hostlist.h"
#include "spank/devices.h"
#include "spank/options.h"

// spank.h declares the hooks (slurm_spank_init, …) before its own
// extern "C" block: include it whole as C.
extern "C" {
#include <slurm/spank.h>
}

// plugin_name, plugin_type and plugin_version: release_stamp.cc.

namespace {

using namespace corral;

constexpr uint32_t kBatchStep = 0xfffffffb;  // SLURM_BATCH_SCRIPT
constexpr int kHoldFd = 3;

// The plugin's state for this process (srun, or one step's slurmstepd).
struct State {
  spank::Options options;
  spank::PluginArgs args;
  bool argsOk = true;
  // Remote: the step's container.
  bool active = false;
  // Why the step's container could not be made. Reported by user_init, and
  // made the tasks' failure in task_init: srun 22.05 exits 0 when a step
  // fails in user_init, so the tasks exit 1 instead of running uncontained.
  std::string setupError;
  std::string name;
  pid_t holder = 0;
  bool ownHolder = false;
  bool createdContainer = false;  // This step made it (removed if it fails).
  std::string workdir;
  bool homeAtRoot = false;  // --container-mount-home under remap-root: $HOME is /root.
  std::string cwd;  // The job's working directory on the node ($PWD).
  std::vector<std::string> imageEnv;  // The image's, or what its entrypoint left.
  std::map<std::string, std::string> gpuEnv;
  container::Identity who;
  std::vector<gid_t> groups;
  std::vector<std::string> jobEnv;
  container::Settings settings;
};
State g;

int optionCallback(int val, const char* optarg, int /*remote*/) {
  const auto& table = spank::optionTable();
  if (val < 0 || static_cast<size_t>(val) >= table.size()) return -1;
  Status s = spank::setOption(g.options, table[val].id, optarg ? optarg : "");
  if (!s.isOk()) {
    slurm_error("pyxis: %s", s.message().c_str());
    return -1;
  }
  return 0;
}

std::vector<spank_option>& spankOptions() {
  static std::vector<spank_option> opts = [] {
    std::vector<spank_option> v;
    int i = 0;
    for (const auto& o : spank::optionTable()) {
      v.push_back({const_cast<char*>(o.name), const_cast<char*>(o.arginfo),
                   const_cast<char*>(o.usage), o.arginfo ? 1 : 0, i++, optionCallback});
    }
    return v;
  }();
  return opts;
}

std::string getenvJob(spank_t sp, const char* name) {
  std::vector<char> buf(8192);
  if (spank_getenv(sp, name, buf.data(), static_cast<int>(buf.size())) != ESPANK_SUCCESS)
    return "";
  return buf.data();
}

std::map<std::string, std::string> processEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

std::vector<std::string> jobEnvironment(spank_t sp) {
  char** env = nullptr;
  std::vector<std::string> out;
  if (spank_get_item(sp, S_JOB_ENV, &env) == ESPANK_SUCCESS)
    for (char** e = env; e && *e; ++e) out.emplace_back(*e);
  return out;
}

std::map<std::string, std::string> toMap(const std::vector<std::string>& env) {
  std::map<std::string, std::string> m;
  for (const auto& kv : env) {
    auto eq = kv.find('=');
    if (eq != std::string::npos) m[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return m;
}

// Relative paths the user gave (mount sources, --container-save) are the
// job's working directory's, as they would be for a command of the job.
void enterJobDirectory() {
  if (g.cwd.empty() || chdir(g.cwd.c_str()) != 0) {
    if (chdir("/") != 0) _exit(126);
  }
}

// In a forked child of slurmstepd (euid the user's, real uid root): become
// the job's user for good.
void becomeUser() {
  if (seteuid(0) != 0) _exit(126);
  if (setgroups(g.groups.size(), g.groups.data()) != 0) _exit(126);
  if (setresgid(g.who.gid, g.who.gid, g.who.gid) != 0) _exit(126);
  if (setresuid(g.who.uid, g.who.uid, g.who.uid) != 0) _exit(126);
}

std::vector<char*> cstrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void resetChild() {
  sigset_t all;
  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  for (int s = 1; s < NSIG; ++s) signal(s, SIG_DFL);
}

// In a forked child whose descriptors are set: becomes the job's user in
// the job's directory and runs `argv` with the job's environment. A failure
// is written to `errorFd` after `prefix`.
[[noreturn]] void execJobCommand(std::vector<std::string>& argv, int errorFd, const char* prefix) {
  becomeUser();
  enterJobDirectory();
  auto args = cstrings(argv);
  auto envs = g.jobEnv;
  auto envp = cstrings(envs);
  execve(argv[0].c_str(), args.data(), envp.data());
  dprintf(errorFd, "%scannot run %s: %s\n", prefix, argv[0].c_str(), strerror(errno));
  _exit(127);
}

// In a forked child: runs `argv` as the job's user with stdout and stderr
// on `out`, stdin on /dev/null.
[[noreturn]] void execAsUser(std::vector<std::string>& argv, int out) {
  dup2(out, 1);
  dup2(out, 2);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, 0);
  execJobCommand(argv, 2, "");
}

// Everything until end of file; closes `fd`.
std::string readAll(int fd) {
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) text.append(buf, n);
  close(fd);
  return text;
}

// Runs `argv` as the job's user and returns its exit status; its stdout and
// stderr together in `output`.
int runAsUser(std::vector<std::string> argv, std::string& output) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    resetChild();
    execAsUser(argv, p[1]);
  }
  close(p[1]);
  output += readAll(p[0]);
  int status = 0;
  pid_t w;
  while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (w < 0) {
    output += std::string("waiting for ") + argv[0] + ": " + strerror(errno);
    return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  output += argv[0] + " was killed by signal " + std::to_string(WTERMSIG(status));
  return 128 + WTERMSIG(status);
}

// Runs `argv` as the job's user outside slurmstepd's process tree (a setsid
// grandchild re-parented to the pod's init), so that proctrack/linuxproc's
// sweep at the step's end does not kill it; waits for it to finish and
// returns what it wrote. For the step's end: removing or saving a container.
std::string runDetachedAsUser(std::vector<std::string> argv) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return std::string("pipe: ") + strerror(errno);
  pid_t pid = fork();
  if (pid < 0) return std::string("fork: ") + strerror(errno);
  if (pid == 0) {
    resetChild();
    setsid();
    if (fork() != 0) _exit(0);
    execAsUser(argv, p[1]);
  }
  close(p[1]);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  std::string output;
  output += readAll(p[0]);
  return output;
}

// What to tell the user from the runtime's output: its error lines (not
// its progress), else its last line.
std::string lastLines(const std::string& text) {
  std::istringstream in(text);
  std::string errors, last;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    last = line;
    for (const char* prefix : {"enroot: error: ", "error: "})
      if (line.rfind(prefix, 0) == 0) errors += (errors.empty() ? "" : "; ") + line.substr(strlen(prefix));
  }
  return errors.empty() ? last : errors;
}

// Starts the holder; its pid once it reports "ready", and its report.
StatusOr<pid_t> startHolder(std::vector<std::string> argv, container::HolderReport& report) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return internalError(std::string("pipe: ") + strerror(errno));
  pid_t pid = fork();
  if (pid < 0) return internalError(std::string("fork: ") + strerror(errno));
  if (pid == 0) {
    resetChild();
    // Its errors come back on the hold descriptor; nothing else is the user's.
    stdioToDevNull();
    if (p[1] != kHoldFd) {
      dup2(p[1], kHoldFd);
    } else {
      fcntl(kHoldFd, F_SETFD, 0);
    }
    execJobCommand(argv, kHoldFd, "error: ");
  }
  close(p[1]);
  std::string answer;
  char buf[1024];
  ssize_t n;
  while ((n = read(p[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) answer.append(buf, n);
    if (answer.find('\n') != std::string::npos) break;
  }
  close(p[0]);
  auto parsed = container::parseHolderAnswer(answer);
  if (parsed.isOk()) {
    report = *parsed;
    return pid;
  }
  kill(pid, SIGKILL);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  return failedPrecondition(lastLines(parsed.status().message()));
}

// Joining a running container: it must already have the namespaces asked for.
Status checkAttach(pid_t pid, const container::Unshare& want) {
  const struct {
    bool wanted;
    const char* kind;
    const char* option;
    const char* what;
  } checks[] = {{want.net, "net", "net", "network"},
                {want.ipc, "ipc", "ipc", "IPC"},
                {want.uts, "uts", "uts", "UTS"}};
  for (const auto& c : checks) {
    if (c.wanted && !container::hasOwnNamespace(pid, c.kind))
      return failedPrecondition(std::string("--container-unshare=") + c.option +
                                " requested but the container is not in a separate " + c.what +
                                " namespace");
  }
  return Status::ok();
}

// The job's user; with `settings`, also their runtime settings (which makes
// their data and cache directories: only ever as the user, never as root).
Status identify(spank_t sp, bool settings = true) {
  uid_t uid;
  gid_t gid;
  if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS)
    return internalError("cannot read the job's user");
  g.who.uid = uid;
  g.who.gid = gid;
  gid_t* gids = nullptr;
  int ngids = 0;
  g.groups.clear();
  if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &gids, &ngids) == ESPANK_SUCCESS)
    g.groups.assign(gids, gids + ngids);
  struct passwd pw, *res = nullptr;
  std::vector<char> buf(16384);
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &res) == 0 && res) {
    g.who.user = pw.pw_name;
    g.who.home = pw.pw_dir;
  }
  if (!settings) return Status::ok();
  auto loaded = container::loadSettings(g.who, toMap(g.jobEnv));
  if (!loaded.isOk()) return loaded.status();
  g.settings = *loaded;
  return Status::ok();
}

int fail(const std::string& what) {
  slurm_error("pyxis: %s", what.c_str());
  return -1;
}

// The GPUs Slurm gave this step, as device minors ("0,1"); "" for none.
std::string stepGpus(spank_t sp) {
  std::string gpus = getenvJob(sp, "SLURM_STEP_GPUS");
  if (gpus.empty()) gpus = getenvJob(sp, "SLURM_JOB_GPUS");
  if (gpus.empty()) gpus = getenvJob(sp, "CUDA_VISIBLE_DEVICES");
  return gpus == "NoDevFiles" ? "" : gpus;
}

// Prints what the image's entrypoint wrote, line by line, to the user.
void showEntrypointLog(const std::string& log) {
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) slurm_spank_log("%s", line.c_str());
}

// Mounts the step needs besides the user's: PMIx's, and for sbatch the
// batch script, which runs inside, at its own path.
std::vector<std::string> stepMounts(spank_t sp, const std::map<std::string, std::string>& jobEnv,
                                    uint32_t job, uint32_t step) {
  std::vector<std::string> mounts;
  for (const auto& m : spank::pmixMounts(jobEnv, job, step)) {
    if (isDirectory(m.substr(0, m.find(':')))) mounts.push_back(m);
  }
  if (step == kBatchStep) {
    int argc = 0;
    char** argv = nullptr;
    if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) == ESPANK_SUCCESS && argc > 0)
      mounts.push_back(std::string(argv[0]) + ":" + argv[0] + ":ro");
  }
  return mounts;
}

// A running container of that name (another step's) is joined (g.holder),
// unless the name says :no_exec or :create; :exec insists on one.
Status attachIfRunning(const spank::Resolved& r) {
  auto mode = g.options.nameMode;
  if (g.options.name.empty() || (mode != spank::NameMode::kAuto && mode != spank::NameMode::kExec))
    return Status::ok();
  auto running = container::runningHolders(g.settings, g.name);
  if (running.empty()) {
    if (mode == spank::NameMode::kExec)
      return failedPrecondition("--container-name " + g.options.name +
                                ":exec: no running container of that name in this job");
    return Status::ok();
  }
  g.holder = running.front();
  g.ownHolder = false;
  RETURN_IF_ERROR(checkAttach(g.holder, r.unshare));
  if (!g.options.mounts.empty())
    slurm_spank_log("pyxis: ignoring --container-mounts when attaching to a running container");
  return Status::ok();
}

// Makes the step's container unless it exists (an error for :create).
Status createIfMissing(const spank::Resolved& r) {
  bool exists = container::exists(g.settings, g.name);
  if (exists && g.options.nameMode == spank::NameMode::kCreate)
    return failedPrecondition("--container-name " + g.options.name +
                              ":create: a container of that name already exists in this job");
  if (exists) return Status::ok();
  if (g.options.image.empty())
    return invalidArgument("--container-name " + g.options.name +
                           ": no such container yet, and no --container-image to make it from");
  std::string out;
  int rc = runAsUser(spank::createCommand(g.args, r, g.name), out);
  if (rc != 0) {
    // Pyxis' words, which users' scripts and log searches look for.
    bool file = image::isSquashfsPath(g.options.image);
    return failedPrecondition(
        (file ? "failed to create container from " : "failed to import docker image: ") +
        g.options.image + ": " + lastLines(out));
  }
  g.createdContainer = true;
  return Status::ok();
}

// Starts this step's holder of the container; an unnamed container this
// step made goes with a holder that failed.
Status startStepHolder(const spank::Resolved& r, const std::string& gpus, const std::string& home,
                       const std::vector<std::string>& extraMounts) {
  container::HolderReport report;
  auto pid = startHolder(spank::startCommand(g.args, r, g.name, kHoldFd, gpus, home, extraMounts),
                         report);
  if (!pid.isOk()) {
    if (g.createdContainer && g.options.name.empty()) {
      std::string out;
      runAsUser({g.args.runtimePath, "remove", "--force", g.name}, out);
    }
    return pid.status();
  }
  g.holder = *pid;
  g.ownHolder = true;
  if (!report.env.empty()) g.imageEnv = report.env;
  if (r.entrypointLog) showEntrypointLog(report.entrypointLog);
  return Status::ok();
}

// The step's container: a running one of the same name to join, or one
// made (if need be) and started by a holder of this step.
Status prepareStep(spank_t sp) {
  uint32_t job = 0, step = 0;
  spank_get_item(sp, S_JOB_ID, &job);
  spank_get_item(sp, S_JOB_STEPID, &step);
  auto r = spank::resolve(g.options, g.args);
  g.homeAtRoot = r.mountHome && r.remapRoot;
  g.name = spank::containerName(g.options, job, step);
  auto jobEnv = toMap(g.jobEnv);
  g.cwd = jobEnv.count("PWD") ? jobEnv["PWD"] : "";

  RETURN_IF_ERROR(attachIfRunning(r));
  if (g.holder == 0) RETURN_IF_ERROR(createIfMissing(r));

  auto cfg = container::config(g.settings, g.name);
  if (!cfg.isOk()) return cfg.status();
  g.imageEnv = cfg->env;
  g.workdir = !g.options.workdir.empty() ? g.options.workdir
              : !cfg->workdir.empty()    ? cfg->workdir
                                         : "/";
  // The GPUs Slurm gave this step (none: the container sees none).
  std::string gpus = stepGpus(sp);
  auto list = container::parseGpuList(gpus);
  g.gpuEnv = container::gpuEnvironment(list.isOk() ? *list : std::vector<int>{});

  if (g.holder == 0) {
    std::string home = jobEnv.count("HOME") && !jobEnv["HOME"].empty() ? jobEnv["HOME"] : g.who.home;
    RETURN_IF_ERROR(startStepHolder(r, gpus, home, stepMounts(sp, jobEnv, job, step)));
  }
  g.active = true;
  return Status::ok();
}

// The step's first node, for torch.distributed's MASTER_ADDR.
std::string firstNode(const std::map<std::string, std::string>& env) {
  auto it = env.find("SLURM_STEP_NODELIST");
  if (it == env.end()) it = env.find("SLURM_JOB_NODELIST");
  if (it == env.end()) return "";
  auto hosts = expandHostlist(it->second);
  return hosts.isOk() && !hosts->empty() ? hosts->front() : "";
}

}  // namespace

extern "C" {

// Every task that is not in a container (those get their /dev from the
// runtime): a /dev with only the step's GPUs, before it becomes the user.
int slurm_spank_task_init_privileged(spank_t sp, int, char**) {
  if (!spank_remote(sp) || g.active || !g.setupError.empty()) return 0;
  auto list = container::parseGpuList(stepGpus(sp));
  Status s = spank::narrowGpuDevices(list.isOk() ? *list : std::vector<int>{});
  if (!s.isOk()) return fail("limiting the task to its GPUs: " + s.message());
  return 0;
}

int slurm_spank_init(spank_t sp, int ac, char** av) {
  std::vector<std::string> args(av, av + ac);
  auto a = spank::parsePluginArgs(args);
  if (!a.isOk()) {
    g.argsOk = false;
    return fail(a.status().message());
  }
  g.args = *a;
  for (auto& o : spankOptions()) {
    if (spank_option_register(sp, &o) != ESPANK_SUCCESS)
      return fail(std::string("cannot register --") + o.name);
  }
  return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int, char**) {
  if (spank_remote(sp)) return 0;
  spank_context_t ctx = spank_context();
  if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR) return 0;
  // srun, sbatch, salloc: check the PYXIS_* defaults now, before a job is
  // made, so that a mistake costs nothing.
  spank::Options copy = g.options;
  Status s = spank::applyEnvironmentDefaults(copy, processEnvironment());
  if (!s.isOk()) return fail(s.message());
  if (ctx == S_CTX_ALLOCATOR && copy.any() && !g.args.sbatchSupport)
    return fail("--container-* options are not supported with sbatch/salloc on this cluster");
  return 0;
}

int slurm_spank_user_init(spank_t sp, int, char**) {
  if (!spank_remote(sp)) return 0;
  g.jobEnv = jobEnvironment(sp);
  Status s = spank::applyEnvironmentDefaults(g.options, toMap(g.jobEnv));
  if (!s.isOk()) return fail(s.message());
  if (g.options.image.empty() && g.options.name.empty()) return 0;
  uint32_t step = 0;
  spank_get_item(sp, S_JOB_STEPID, &step);
  if (step == kBatchStep && !g.args.sbatchSupport) return 0;
  Status s2 = identify(sp);
  if (s2.isOk()) s2 = prepareStep(sp);
  if (!s2.isOk()) {
    g.setupError = s2.message();
    fail(g.setupError);
  }
  return 0;
}

int slurm_spank_task_init(spank_t sp, int, char**) {
  if (!g.setupError.empty()) return -1;
  if (!g.active) return 0;
  // The task's own environment (PMIx's and Slurm's per-task variables).
  auto taskEnv = toMap(jobEnvironment(sp));
  std::string base = "/proc/" + std::to_string(g.holder) + "/ns/";
  int userns = open((base + "user").c_str(), O_RDONLY | O_CLOEXEC);
  int mntns = open((base + "mnt").c_str(), O_RDONLY | O_CLOEXEC);
  if (userns < 0 || mntns < 0) return fail("the container is gone: " + std::string(strerror(errno)));
  // Namespaces the container has of its own besides user and mount.
  std::vector<std::pair<int, int>> others;
  for (auto [kind, flag] : {std::pair{"ipc", CLONE_NEWIPC}, std::pair{"uts", CLONE_NEWUTS},
                            std::pair{"net", CLONE_NEWNET}}) {
    if (!container::hasOwnNamespace(g.holder, kind)) continue;
    int fd = open((base + kind).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(std::string("the container's ") + kind + " namespace: " + strerror(errno));
    others.emplace_back(fd, flag);
  }
  if (setns(userns, CLONE_NEWUSER) != 0)
    return fail(std::string("joining the container's user namespace: ") + strerror(errno));
  if (setns(mntns, CLONE_NEWNS) != 0)
    return fail(std::string("joining the container's mount namespace: ") + strerror(errno));
  close(userns);
  close(mntns);
  for (auto [fd, flag] : others) {
    if (setns(fd, flag) != 0)
      return fail(std::string("joining the container's namespaces: ") + strerror(errno));
    close(fd);
  }
  // setns() left us at the container's root: a relative workdir is its.
  if (chdir(g.workdir.c_str()) != 0)
    return fail("working directory " + g.workdir + " in the container: " + strerror(errno));
  auto env = spank::taskEnvironment(g.imageEnv, g.options.env, g.gpuEnv, taskEnv, firstNode(taskEnv));
  if (g.homeAtRoot) env.set["HOME"] = "/root";  // As Enroot's home hook.
  for (const auto& k : env.unset) spank_unsetenv(sp, k.c_str());
  for (const auto& [k, v] : env.set) spank_setenv(sp, k.c_str(), v.c_str(), 1);
  // Steps that the batch script starts are not in this container unless
  // they ask for one themselves.
  for (const auto& [k, v] : taskEnv) {
    if (k.find("SPANK_OPTION_pyxis_") != std::string::npos) spank_unsetenv(sp, k.c_str());
  }
  // As Enroot's containers: chown and set*id succeed without effect, so that
  // package managers work as a remapped root that owns one uid.
  Status filter = container::installIdFakingFilter();
  if (!filter.isOk()) return fail(filter.message());
  return 0;
}

int slurm_spank_exit(spank_t sp, int, char**) {
  if (!spank_remote(sp) || !g.active) return 0;
  g.active = false;
  if (g.ownHolder && g.holder > 0) {
    kill(g.holder, SIGKILL);
    while (waitpid(g.holder, nullptr, 0) < 0 && errno == EINTR) {
    }
    // The record is under the user's runtime path, which the user's own
    // environment chose: remove it as the user, never as root.
    pid_t child = fork();
    if (child == 0) {
      resetChild();
      becomeUser();
      container::forgetHolder(g.settings, g.holder);
      _exit(0);
    }
    while (child > 0 && waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (!g.options.save.empty()) {
    // A relative path is the job's working directory's (the runtime runs there).
    std::string out = runDetachedAsUser(spank::exportCommand(g.args, g.name, g.options.save));
    if (out.find("error") != std::string::npos)
      slurm_error("pyxis: saving the container to %s: %s", g.options.save.c_str(),
                  lastLines(out).c_str());
  }
  if (g.options.name.empty()) {
    std::string out = runDetachedAsUser({g.args.runtimePath, "remove", "--force", g.name});
    if (!out.empty())
      slurm_error("pyxis: removing container %s: %s", g.name.c_str(), lastLines(out).c_str());
  }
  return 0;
}

// The job's named containers go with the job (and any unnamed one a killed
// step left).
int slurm_spank_job_epilog(spank_t sp, int ac, char** av) {
  uint32_t job = 0;
  if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS) return 0;
  // slurm_spank_init is not called in the epilog's context.
  auto a = spank::parsePluginArgs(std::vector<std::string>(av, av + ac));
  if (!a.isOk()) return fail(a.status().message());
  g.args = *a;
  g.jobEnv = {"PATH=/usr/bin:/bin"};
  if (!identify(sp, /*settings=*/false).isOk()) return 0;
  g.jobEnv.push_back("HOME=" + g.who.home);
  g.jobEnv.push_back("USER=" + g.who.user);
  // The epilog runs as root: list and remove as the user, with their settings.
  std::string names;
  if (runAsUser({g.args.runtimePath, "list"}, names) != 0) return 0;
  std::istringstream in(names);
  for (std::string n; std::getline(in, n);) {
    if (!spank::isJobContainer(n, job)) continue;
    std::string out;
    if (runAsUser({g.args.runtimePath, "remove", "--force", n}, out) != 0)
      slurm_error("pyxis: removing container %s: %s", n.c_str(), lastLines(out).c_str());
  }
  return 0;
}

}  // extern "C"
