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
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "common/files.h"
#include "runtime/local/pod_json.h"

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

bool writeFileAtomic(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = writeAll(fd, content);
  close(fd);
  return ok && rename(tmp.c_str(), path.c_str()) == 0;
}

std::string log(const std::string& msg) {
  std::string line = "corral-pod: " + msg + "\n";
  writeAll(2, line);
  return msg;
}

// ---- Filesystem view --------------------------------------------------------

// Where a pod sees corral's own binaries; daemons have it on PATH.

// The directory of this corral-pod (and corral-health beside it) on the host.
std::string ownBinDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "" : exe.parent_path().string();
}

std::string setupMount(const char* src, const std::string& dst, const char* type,
                       unsigned long flags, const char* data) {
  if (mount(src, dst.c_str(), type, flags, data) != 0)
    return errnoText(std::string("mount ") + (src ? src : "") + " on " + dst);
  return "";
}

std::string bindMount(const std::string& src, const std::string& dst, bool readOnly) {
  struct stat st;
  if (stat(src.c_str(), &st) != 0) return errnoText("mount source " + src);
  std::error_code ec;
  if (S_ISDIR(st.st_mode)) {
    fs::create_directories(dst, ec);
  } else if (!fs::exists(dst, ec)) {
    fs::create_directories(fs::path(dst).parent_path(), ec);
    int fd = open(dst.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
  }
  if (auto e = setupMount(src.c_str(), dst, nullptr, MS_BIND | MS_REC, nullptr); !e.empty())
    return e;
  if (readOnly) {
    return setupMount(nullptr, dst, nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_REC, nullptr);
  }
  return "";
}

std::string setupDev() {
  return setupMount("tmpfs", "/dev", "tmpfs", MS_NOSUID, "mode=755,size=65536k");
}

// A private /dev, as a container runtime would give: the host's harmless
// character devices, a new devpts instance, a memory-backed /dev/shm of its own
// and the pod's simulated GPUs (major 195, like the NVIDIA driver's nodes).
std::string populateDev(const std::string& hostDevCopy, int gpus) {
  // `hostDevCopy` is a bind of the host's /dev taken before /dev was covered.
  for (const char* d : {"null", "zero", "full", "random", "urandom", "tty", "fuse"}) {
    std::string src = hostDevCopy + "/" + d;
    if (access(src.c_str(), F_OK) != 0) continue;
    if (auto e = bindMount(src, std::string("/dev/") + d, false); !e.empty()) return e;
  }
  mkdir("/dev/pts", 0755);
  if (auto e = setupMount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
                          "newinstance,ptmxmode=0666,mode=0620");
      !e.empty())
    return e;
  symlink("pts/ptmx", "/dev/ptmx");
  mkdir("/dev/shm", 01777);
  if (auto e = setupMount("shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777"); !e.empty())
    return e;
  symlink("/proc/self/fd", "/dev/fd");
  symlink("/proc/self/fd/0", "/dev/stdin");
  symlink("/proc/self/fd/1", "/dev/stdout");
  symlink("/proc/self/fd/2", "/dev/stderr");
  for (int i = 0; i < gpus; ++i) {
    std::string p = "/dev/nvidia" + std::to_string(i);
    if (mknod(p.c_str(), S_IFCHR | 0666, makedev(195, i)) != 0) return errnoText("mknod " + p);
  }
  if (gpus > 0 && mknod("/dev/nvidiactl", S_IFCHR | 0666, makedev(195, 255)) != 0)
    return errnoText("mknod /dev/nvidiactl");
  return "";
}

// The pod's own root: a small tmpfs that holds each of the host's top-level
// directories as a recursive bind and its top-level symlinks (bin -> usr/bin)
// as symlinks. Mount points the pod adds (/shared, a volume's /pfs) are made
// in it rather than on the host's root, and a file written at the top level
// stays in the pod and goes with it.
std::string pivotToPodRoot(const LaunchSpec& spec) {
  const std::string root = spec.podDir + "/rootfs";
  std::error_code ec;
  fs::create_directories(root, ec);
  if (auto e = setupMount("tmpfs", root, "tmpfs", MS_NOSUID, "mode=755,size=16m"); !e.empty())
    return e;
  for (const auto& entry : fs::directory_iterator("/", ec)) {
    std::string name = entry.path().filename();
    std::string target = root + "/" + name;
    struct stat st;
    if (lstat(entry.path().c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      auto link = fs::read_symlink(entry.path(), ec);
      if (!ec && symlink(link.c_str(), target.c_str()) != 0) return errnoText("symlink " + target);
    } else if (S_ISDIR(st.st_mode)) {
      mkdir(target.c_str(), st.st_mode & 07777);
      if (auto e = setupMount(entry.path().c_str(), target, nullptr, MS_BIND | MS_REC, nullptr);
          !e.empty())
        return e;
    }
  }
  if (ec) return "listing /: " + ec.message();
  const std::string old = root + "/.corral-old-root";
  mkdir(old.c_str(), 0700);
  if (syscall(SYS_pivot_root, root.c_str(), old.c_str()) != 0) return errnoText("pivot_root");
  if (chdir("/") != 0) return errnoText("chdir /");
  umount2("/.corral-old-root", MNT_DETACH);
  rmdir("/.corral-old-root");
  return "";
}

std::string setupFilesystem(const LaunchSpec& spec) {
  if (auto e = setupMount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr); !e.empty())
    return e;
  // The copy of the host's mount table includes every other pod's
  // /run/netns/<name> binding. Holding them would keep other pods' network
  // namespaces alive after `ip netns del`, so drop them.
  {
    std::ifstream mi("/proc/self/mountinfo");
    std::string line;
    std::vector<std::string> netns;
    while (std::getline(mi, line)) {
      std::istringstream f(line);
      std::string id, parent, dev, root, point;
      if (f >> id >> parent >> dev >> root >> point && point.rfind("/run/netns/", 0) == 0)
        netns.push_back(point);
    }
    for (auto it = netns.rbegin(); it != netns.rend(); ++it) umount2(it->c_str(), MNT_DETACH);
  }
  if (auto e = pivotToPodRoot(spec); !e.empty()) return e;
  // corral's own binaries (corral-health), wherever the build lives, even
  // under a directory the pod gets a private copy of (/var/tmp, /root).
  if (std::string bin = ownBinDir(); !bin.empty()) {
    mkdir(kPodBinDir, 0755);
    if (auto e = bindMount(bin, kPodBinDir, true); !e.empty()) return e;
  }
  // Keep a handle on the host's /dev before covering it.
  const std::string hostDev = "/run/.corral-hostdev";
  for (const auto& dir : spec.pod.ephemeralDirs) {
    std::string src = ephemeralSource(spec.podDir, dir);
    if (auto e = bindMount(src, dir, false); !e.empty()) return e;
  }
  std::error_code ec;
  fs::create_directories(hostDev, ec);
  if (auto e = bindMount("/dev", hostDev, false); !e.empty()) return e;
  if (auto e = setupMount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
      !e.empty())
    return e;
  if (auto e = setupDev(); !e.empty()) return e;
  if (auto e = populateDev(hostDev, spec.pod.gpus); !e.empty()) return e;
  umount2(hostDev.c_str(), MNT_DETACH);
  rmdir(hostDev.c_str());
  for (const auto& m : spec.pod.mounts) {
    if (auto e = bindMount(m.source, m.target, m.readOnly); !e.empty()) return e;
  }
  for (const auto& d : spec.pod.setupDirs) {
    fs::create_directories(d, ec);
    if (ec) return "mkdir " + d + ": " + ec.message();
  }
  return "";
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

pid_t spawnDaemon(const DaemonSpec& spec, const std::string& podDir) {
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
                                       "CORRAL_POD_DIR=" + podDir,
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
  explicit Supervisor(LaunchSpec spec) : spec_(std::move(spec)) {
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
    std::string path = spec_.podDir + "/" + kPodRestartFile;
    auto text = readFile(path);
    unlink(path.c_str());
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
        d.pid = spawnDaemon(d.spec, spec_.podDir);
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
    writeFileAtomic(spec_.podDir + "/" + kPodStatusFile, text);
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

  LaunchSpec spec_;
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

std::string ephemeralSource(const std::string& podDir, const std::string& target) {
  std::string flat = target;
  for (auto& c : flat)
    if (c == '/') c = '_';
  return podDir + "/fs/" + flat;
}

int podStartCommand(const std::string& specPath) {
  std::ifstream in(specPath);
  if (!in) {
    log("cannot read " + specPath);
    return 1;
  }
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) {
    log("malformed " + specPath);
    return 1;
  }
  auto parsed = launchSpecFromJson(j);
  if (!parsed.isOk()) {
    log(parsed.status().message());
    return 1;
  }
  LaunchSpec spec = std::move(parsed).value();

  // Create the ephemeral directories on the host side before entering the
  // pod, so that they are fresh for this pod instance.
  std::error_code ec;
  for (const auto& dir : spec.pod.ephemeralDirs) {
    std::string src = ephemeralSource(spec.podDir, dir);
    fs::create_directories(src, ec);
    // /tmp and /var/tmp are everyone's, sticky, as on any Linux machine.
    bool sticky = dir == "/tmp" || dir == "/var/tmp";
    chmod(src.c_str(), sticky ? 01777 : (dir == "/root" ? 0700 : 0755));
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
    std::string msg;
    char buf[512];
    ssize_t n;
    while ((n = read(report[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
      if (n > 0) msg.append(buf, static_cast<size_t>(n));
    close(report[0]);
    int st = 0;
    waitpid(a, &st, 0);
    if (msg.rfind("ok", 0) == 0) return 0;
    writeAll(2, msg.empty() ? "corral-pod: the pod did not start\n" : msg);
    return 1;
  }

  // First child: detach from the caller (new session, stdio to the pod log).
  close(report[0]);
  setsid();
  std::string logPath = spec.podDir + "/" + kPodLogFile;
  int lfd = open(logPath.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int nul = open("/dev/null", O_RDONLY);
  dup2(nul, 0);
  if (lfd >= 0) dup2(lfd, 1), dup2(lfd, 2);
  auto fail = [&](const std::string& why) {
    writeAll(report[1], "corral-pod: " + why + "\n");
    _exit(1);
  };
  pid_t b = fork();
  if (b < 0) fail(errnoText("fork"));
  if (b > 0) _exit(0);

  // Second child: the launcher, which waits on the pod's PID 1.
  int nsfd = open(spec.netnsPath.c_str(), O_RDONLY | O_CLOEXEC);
  if (nsfd < 0) fail(errnoText("open " + spec.netnsPath));
  if (setns(nsfd, CLONE_NEWNET) != 0) fail(errnoText("setns " + spec.netnsPath));
  close(nsfd);
  cpu_set_t allowedCpus;
  sched_getaffinity(0, sizeof allowedCpus, &allowedCpus);
  pinToCpuWithLowestNamespaceId();
  if (unshare(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID) != 0)
    fail(errnoText("unshare"));
  sched_setaffinity(0, sizeof allowedCpus, &allowedCpus);
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, nullptr);
  pid_t c = fork();
  if (c < 0) fail(errnoText("fork"));
  if (c > 0) {
    // Record PID 1's host PID with its start time, so a reused PID is never
    // mistaken for this pod.
    // PID 1's command line names this pod's spec file, which is how
    // `LocalRuntime` tells this pod from an unrelated process that reused
    // the PID.
    writeFileAtomic(spec.podDir + "/" + kPodPidFile, std::to_string(c) + "\n");
    close(report[1]);
    prctl(PR_SET_NAME, "corral-pod-wait");
    int st = 0;
    while (waitpid(c, &st, 0) < 0 && errno == EINTR) {
    }
    _exit(0);
  }

  // PID 1 of the pod.
  prctl(PR_SET_NAME, "corral-pod");
  if (sethostname(spec.pod.name.c_str(), spec.pod.name.size()) != 0) fail(errnoText("sethostname"));
  if (auto e = setupFilesystem(spec); !e.empty()) fail(e);
  writeAll(report[1], "ok\n");
  close(report[1]);
  log("pod " + spec.pod.cluster + "/" + spec.pod.name + " started");
  Supervisor sup(std::move(spec));
  _exit(sup.run());
}

}  // namespace corral
