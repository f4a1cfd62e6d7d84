#include "runtime/local/pod_supervisor.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <nlohmann/json.hpp>

#include "common/files.h"
#include "runtime/local/pod_json.h"
#include "runtime/local/pod_root.h"

namespace fs = std::filesystem;

namespace corral {
namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

std::string errnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

bool writeAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Writes `name` in the directory `dirFd` through a temporary file and a
// rename, so that corrald reads the old content or the whole new one.
bool writeFileAt(int dirFd, const std::string& name, const std::string& content) {
  std::string tmp = name + ".tmp";
  int fd = openat(dirFd, tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return false;
  bool ok = writeAll(fd, content);
  close(fd);
  return ok && renameat(dirFd, tmp.c_str(), dirFd, name.c_str()) == 0;
}

std::string log(const std::string& msg) {
  std::string line = "corral-pod: " + msg + "\n";
  writeAll(2, line);
  return msg;
}

// The pod's network namespace belongs to the host's user namespace, so the
// pod's root cannot reconfigure it (no address spoofing on the cluster
// bridge). What it may still do there is said here: bind port 22 (sshd)
// and below, and ping.
Status configureNetworkNamespace() {
  for (auto [path, value] : {std::pair<const char*, const char*>{"/proc/sys/net/ipv4/ip_unprivileged_port_start", "0"},
                             {"/proc/sys/net/ipv4/ping_group_range", "0 2147483647"}}) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return internalError(errnoText(std::string("open ") + path));
    bool ok = writeAll(fd, value);
    close(fd);
    if (!ok) return internalError(errnoText(std::string("write ") + path));
  }
  return Status::ok();
}

// ---- Daemons ----------------------------------------------------------------

struct Daemon {
  DaemonSpec spec;
  pid_t pid = 0;
  bool ready = false;
  int restarts = 0;
  int lastExit = 0;
  bool restartRequested = false;  // Stopped on request: start again at once.
  SteadyTime startedAt{};
  SteadyTime restartAt{};
};

bool probeTcp(int port, const std::string& host = "127.0.0.1") {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) {
    close(fd);
    return false;
  }
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

bool probeUnix(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

bool probe(const Daemon& d) {
  if (d.spec.ready.tcpPort > 0) return probeTcp(d.spec.ready.tcpPort);
  if (!d.spec.ready.unixSocket.empty()) return probeUnix(d.spec.ready.unixSocket);
  return true;
}

pid_t spawnDaemon(const DaemonSpec& spec) {
  const std::string binDir = kPodBinDir;
  pid_t pid = fork();
  if (pid != 0) return pid;
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int s = 1; s < NSIG; ++s) signal(s, SIG_DFL);
  setsid();
  std::string logPath = "/var/log/corral-" + spec.name + ".log";
  int fd = open(logPath.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  int nul = open("/dev/null", O_RDONLY);
  if (nul >= 0) dup2(nul, 0);
  if (fd >= 0) {
    dup2(fd, 1);
    dup2(fd, 2);
  }
  for (int i = 3; i < 1024; ++i) close(i);
  chdir("/");
  std::vector<std::string> envStore = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" +
                                           (binDir.empty() ? "" : ":" + binDir),
                                       "CORRAL_POD_DIR=" + std::string(kPodAgentMount),
                                       "HOME=/root", "LANG=C.UTF-8"};
  for (const auto& [k, v] : spec.env) envStore.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : envStore) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  // execvpe searches the caller's PATH, not envp's: give it the daemon's.
  setenv("PATH", envStore[0].c_str() + 5, 1);
  execvpe(argv[0], argv.data(), envp.data());
  std::string msg = "exec " + spec.argv[0] + ": " + std::strerror(errno) + "\n";
  writeAll(2, msg);
  _exit(127);
}

class Supervisor {
 public:
  // `stateFd` is the pod's state directory on the host (see
  // pod_supervisor.h), opened before the pivot.
  Supervisor(LaunchSpec spec, int stateFd) : spec_(std::move(spec)), stateFd_(stateFd) {
    for (const auto& d : spec_.pod.daemons) daemons_.push_back(Daemon{d});
  }

  int run() {
    auto now = std::chrono::steady_clock::now();
    while (true) {
      now = std::chrono::steady_clock::now();
      reap(now);
      if (stopping_) break;
      advance(now);
      writeStatus();
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, SIGCHLD);
      sigaddset(&set, SIGTERM);
      sigaddset(&set, SIGINT);
      sigaddset(&set, SIGUSR1);
      timespec ts{0, 20 * 1000 * 1000};  // 20 ms: readiness probes are cheap.
      int sig = sigtimedwait(&set, nullptr, &ts);
      if (sig == SIGTERM || sig == SIGINT) stopping_ = true;
      if (sig == SIGUSR1) requestRestarts();
    }
    return shutdown();
  }

 private:
  void reap(SteadyTime now) {
    while (true) {
      int status = 0;
      pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid <= 0) break;
      for (auto& d : daemons_) {
        if (d.pid != pid) continue;
        d.pid = 0;
        d.ready = false;
        d.lastExit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (d.restartRequested) {
          d.restartRequested = false;
          d.restartAt = now;
          log("daemon " + d.spec.name + " stopped for a requested restart");
          continue;
        }
        d.restarts++;
        int backoffMs = 100 << std::min(d.restarts - 1, 5);
        d.restartAt = now + std::chrono::milliseconds(std::min(backoffMs, 3000));
        log("daemon " + d.spec.name + " exited with " + std::to_string(d.lastExit) +
            "; restarting in " + std::to_string(std::min(backoffMs, 3000)) + " ms");
        message_ = d.spec.name + " exited with status " + std::to_string(d.lastExit);
      }
    }
  }

  // SIGUSR1: stop the daemons named in the restart file; `reap` starts them
  // again without back-off. SIGTERM lets them save state (slurmctld does).
  void requestRestarts() {
    auto text = readRestartRequest();
    if (!text.isOk()) return;
    std::istringstream lines(*text);
    std::string name;
    while (std::getline(lines, name)) {
      for (auto& d : daemons_) {
        if (d.spec.name != name || d.pid <= 0) continue;
        log("restarting daemon " + name + " on request");
        d.restartRequested = true;
        kill(d.pid, SIGTERM);
      }
    }
  }

  // Starts the first daemon that is not running, once everything before it is
  // ready, and probes readiness of those that are starting.
  void advance(SteadyTime now) {
    for (auto& d : daemons_) {
      if (d.pid == 0) {
        if (now < d.restartAt) return;
        if (d.spec.startAfter.port > 0 && !probeTcp(d.spec.startAfter.port, d.spec.startAfter.host)) {
          message_ = d.spec.name + " waits for " + d.spec.startAfter.host + ":" +
                     std::to_string(d.spec.startAfter.port);
          return;
        }
        d.pid = spawnDaemon(d.spec);
        d.startedAt = now;
        d.ready = false;
        return;
      }
      if (!d.ready) {
        d.ready = probe(d);
        if (!d.ready) {
          if (now - d.startedAt > d.spec.ready.timeout) {
            message_ = d.spec.name + " not ready after " +
                       std::to_string(d.spec.ready.timeout.count() / 1000) + " s";
          }
          return;
        }
      }
    }
  }

  void writeStatus() {
    bool allReady = true;
    nlohmann::json ds = nlohmann::json::array();
    for (const auto& d : daemons_) {
      allReady = allReady && d.ready;
      ds.push_back({{"name", d.spec.name},
                    {"pid", d.pid},
                    {"ready", d.ready},
                    {"restarts", d.restarts},
                    {"lastExit", d.lastExit}});
    }
    nlohmann::json j = {{"ready", allReady}, {"message", allReady ? "" : message_}, {"daemons", ds}};
    std::string text = j.dump();
    if (text == lastStatus_) return;
    lastStatus_ = text;
    writeFileAt(stateFd_, kPodStatusFile, text);
  }

  int shutdown() {
    for (auto it = daemons_.rbegin(); it != daemons_.rend(); ++it)
      if (it->pid > 0) kill(-it->pid, SIGTERM), kill(it->pid, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      int status;
      pid_t p = waitpid(-1, &status, WNOHANG);
      if (p < 0 && errno == ECHILD) break;
      if (p <= 0) usleep(10000);
    }
    // Returning from PID 1 makes the kernel kill whatever is left.
    return 0;
  }

  StatusOr<std::string> readRestartRequest() {
    int fd = openat(stateFd_, kPodRestartFile, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return notFound("no restart request");
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    close(fd);
    unlinkat(stateFd_, kPodRestartFile, 0);
    return out;
  }

  LaunchSpec spec_;
  int stateFd_;
  std::vector<Daemon> daemons_;
  std::string message_ = "starting";
  std::string lastStatus_;
  bool stopping_ = false;
};

// The id the kernel gave the calling process's mount namespace, or 0 when the
// kernel does not say (before Linux 6.11).
uint64_t currentMountNamespaceId() {
  constexpr unsigned long kNsGetMntnsId = _IOR(0xb7, 0x5, uint64_t);
  int fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  uint64_t id = 0;
  if (ioctl(fd, kNsGetMntnsId, &id) != 0) id = 0;
  close(fd);
  return id;
}

// Linux refuses to bind-mount a mount-namespace file unless that namespace is
// newer (has a larger id) than the caller's — its guard against reference
// loops. Slurm's job_container/tmpfs relies on that bind for every job. Recent
// kernels hand out those ids in per-CPU batches, so a pod namespace created on
// the CPU with the higher batch is "newer" than jobs later created on the
// other CPU, and those jobs fail with "ns base mount failed". Creating the
// pod's namespace on the CPU whose batch is lowest keeps every later
// namespace newer than the pod's.
void pinToCpuWithLowestNamespaceId() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  int best = -1;
  uint64_t bestId = UINT64_MAX;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return;
    pid_t p = fork();
    if (p == 0) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      uint64_t id = 0;
      if (sched_setaffinity(0, sizeof one, &one) == 0 && unshare(CLONE_NEWNS) == 0)
        id = currentMountNamespaceId();
      (void)!write(fds[1], &id, sizeof id);
      _exit(0);
    }
    close(fds[1]);
    uint64_t id = 0;
    if (p > 0 && read(fds[0], &id, sizeof id) == sizeof id && id != 0 && id < bestId) {
      bestId = id;
      best = cpu;
    }
    close(fds[0]);
    if (p > 0) waitpid(p, nullptr, 0);
  }
  if (best < 0) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(best, &one);
  sched_setaffinity(0, sizeof one, &one);
}

}  // namespace

namespace {

// Reports a failure of the pod's start to `corral-pod start`'s caller
// through `reportFd`, and ends this process.
[[noreturn]] void failStart(int reportFd, const std::string& why) {
  writeAll(reportFd, "corral-pod: " + why + "\n");
  _exit(1);
}

void check(int reportFd, const Status& s) {
  if (!s.isOk()) failStart(reportFd, s.message());
}

// PID 1 of the pod, as the pod's root: the rest of the sandbox, then the
// daemons. Never returns.
[[noreturn]] void runPid1(LaunchSpec spec, int reportFd, int stateFd) {
  prctl(PR_SET_NAME, "corral-pod");
  if (sethostname(spec.pod.name.c_str(), spec.pod.name.size()) != 0)
    failStart(reportFd, errnoText("sethostname"));
  check(reportFd, enterRoot(spec));
  writeAll(reportFd, "ok\n");
  close(reportFd);
  log("pod " + spec.pod.cluster + "/" + spec.pod.name + " started");
  Supervisor sup(std::move(spec), stateFd);
  _exit(sup.run());
}

// The launcher (host root): builds the sandbox (pod_root.h), forks PID 1,
// records its PID and waits on it. Never returns.
[[noreturn]] void runLauncher(LaunchSpec spec, int reportFd) {
  std::string stateDir = spec.podDir + "/" + kPodStateDir;
  if (mkdir(stateDir.c_str(), 0700) != 0 && errno != EEXIST) failStart(reportFd, errnoText("mkdir " + stateDir));
  if (chown(stateDir.c_str(), spec.ids.base, spec.ids.base) != 0)
    failStart(reportFd, errnoText("chown " + stateDir));
  int stateFd = open(stateDir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (stateFd < 0) failStart(reportFd, errnoText("open " + stateDir));
  int nsfd = open(spec.netnsPath.c_str(), O_RDONLY | O_CLOEXEC);
  if (nsfd < 0) failStart(reportFd, errnoText("open " + spec.netnsPath));
  if (setns(nsfd, CLONE_NEWNET) != 0) failStart(reportFd, errnoText("setns " + spec.netnsPath));
  close(nsfd);
  check(reportFd, configureNetworkNamespace());
  if (unshare(CLONE_NEWNS) != 0) failStart(reportFd, errnoText("unshare"));
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    failStart(reportFd, errnoText("making the mounts private"));
  auto userns = createUserNamespace(spec.ids);
  check(reportFd, userns.status());
  check(reportFd, stageRoot(spec, userns->get()));
  cpu_set_t allowedCpus;
  sched_getaffinity(0, sizeof allowedCpus, &allowedCpus);
  pinToCpuWithLowestNamespaceId();
  check(reportFd, becomePodRoot(userns->get()));
  sched_setaffinity(0, sizeof allowedCpus, &allowedCpus);
  userns->reset();
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, nullptr);
  pid_t c = fork();
  if (c < 0) failStart(reportFd, errnoText("fork"));
  if (c == 0) runPid1(std::move(spec), reportFd, stateFd);
  // PID 1's command line names this pod's spec file, which is how
  // `LocalRuntime` tells this pod from an unrelated process that reused the
  // PID.
  writeFileAt(stateFd, kPodPidFile, std::to_string(c) + "\n");
  close(reportFd);
  prctl(PR_SET_NAME, "corral-pod-wait");
  int st = 0;
  while (waitpid(c, &st, 0) < 0 && errno == EINTR) {
  }
  _exit(0);
}

// What the pod's start reported ("ok", or why not), once every process
// that could report has closed the pipe.
std::string readReport(int fd) {
  std::string msg;
  char buf[512];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) msg.append(buf, static_cast<size_t>(n));
  close(fd);
  return msg;
}

}  // namespace

int podStartCommand(const std::string& specPath) {
  auto text = readFile(specPath);
  if (!text.isOk()) {
    log("cannot read " + specPath);
    return 1;
  }
  auto parsed = launchSpecFromJson(nlohmann::json::parse(*text, nullptr, false));
  if (!parsed.isOk()) {
    log(parsed.status().message());
    return 1;
  }
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    log(errnoText("pipe"));
    return 1;
  }
  pid_t a = fork();
  if (a < 0) {
    log(errnoText("fork"));
    return 1;
  }
  if (a > 0) {
    close(report[1]);
    std::string msg = readReport(report[0]);
    int st = 0;
    waitpid(a, &st, 0);
    if (msg.rfind("ok", 0) == 0) return 0;
    writeAll(2, msg.empty() ? "corral-pod: the pod did not start\n" : msg);
    return 1;
  }
  // First child: detach from the caller (new session, stdio to the pod
  // log), and leave the launcher to init.
  close(report[0]);
  setsid();
  std::string logPath = parsed->podDir + "/" + kPodLogFile;
  int lfd = open(logPath.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  int nul = open("/dev/null", O_RDONLY);
  dup2(nul, 0);
  if (lfd >= 0) dup2(lfd, 1), dup2(lfd, 2);
  pid_t b = fork();
  if (b < 0) failStart(report[1], errnoText("fork"));
  if (b > 0) _exit(0);
  runLauncher(std::move(parsed).value(), report[1]);
}

int podMountCommand(const std::string& specPath, const std::string& action,
                    const std::vector<std::string>& args) {
  auto text = readFile(specPath);
  if (!text.isOk()) {
    log(text.status().message());
    return 1;
  }
  auto parsed = launchSpecFromJson(nlohmann::json::parse(*text, nullptr, false));
  if (!parsed.isOk()) {
    log(parsed.status().message());
    return 1;
  }
  auto pidText = readFile(parsed->podDir + "/" + kPodStateDir + "/" + kPodPidFile);
  int pid = pidText.isOk() ? std::atoi(pidText->c_str()) : 0;
  if (pid <= 0) {
    log("pod " + parsed->pod.name + " is not running");
    return 1;
  }
  Status s;
  if (action == "mount" && args.size() == 3) {
    s = attachLiveMount(*parsed, pid, Mount{args[0], args[1], args[2] == "ro"});
  } else if (action == "umount" && args.size() == 1) {
    s = detachLiveMount(*parsed, pid, args[0]);
  } else {
    s = invalidArgument("usage: corral-pod mount SPEC SOURCE TARGET ro|rw | umount SPEC TARGET");
  }
  if (!s.isOk()) {
    log(s.message());
    return 1;
  }
  return 0;
}

}  // namespace corral
