// `start`: a container's namespaces, mounts and pivot_root, then exec.

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "common/child.h"
#include "common/files.h"
#include "common/text.h"
#include "container/container.h"
#include "common/fs.h"
#include "container/namespaces.h"

namespace corral::container {
namespace {

// Closes a descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

// What `start` runs: a container's root and config.
struct Prepared {
  Kind kind = Kind::kCopy;
  std::string dir;        // <data>/<name> or the temporary one.
  std::string lower;      // Overlays.
  std::string mountPoint;  // Where the root is assembled.
  image::ImageConfig config;
};

bool looksLikeFile(const std::string& target) {
  auto ends = [&](const std::string& e) {
    return target.size() >= e.size() && target.compare(target.size() - e.size(), e.size(), e) == 0;
  };
  return target.find('/') != std::string::npos || ends(".sqsh") || ends(".squashfs");
}

// Removes `dir` once the process `pid` has ended: a grandchild, out of the
// caller's session and descriptors, watching a pidfd.
Status spawnJanitor(const std::string& dir) {
  pid_t parent = getpid();
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, parent, 0));
  if (pidfd < 0) return internalError(errnoText("pidfd_open", errno));
  pid_t child = fork();
  if (child < 0) {
    int e = errno;
    close(pidfd);
    return internalError(errnoText("fork", e));
  }
  if (child == 0) {
    if (fork() != 0) _exit(0);
    setsid();
    stdioToDevNull();
    for (int fd = 3; fd < 1024; ++fd) {
      if (fd != pidfd) close(fd);
    }
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    if (chdir("/") != 0) _exit(1);
    struct pollfd p = {pidfd, POLLIN, 0};
    while (poll(&p, 1, -1) < 0 && errno == EINTR) {
    }
    Status st = removeTree(dir);
    _exit(st.isOk() ? 0 : 1);
  }
  close(pidfd);
  int status;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return Status::ok();
}

StatusOr<Prepared> prepare(const Settings& s, const std::string& target) {
  Prepared p;
  if (validateName(target).isOk() && exists(s, target)) {
    ASSIGN_OR_RETURN(ContainerInfo info, inspect(s, target));
    ASSIGN_OR_RETURN(p.config, config(s, target));
    p.kind = info.kind;
    p.dir = info.path;
    p.lower = info.lower;
  } else if (looksLikeFile(target)) {
    struct stat st;
    if (stat(target.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return notFound("no such container or squashfs file: " + quoteForMessage(target));
    }
    // A temporary copy, removed when this process (the container) ends.
    p.dir = s.dataPath + "/.start-" + randomSuffix();
    if (mkdir(p.dir.c_str(), 0700) != 0) {
      return internalError(errnoText("cannot create " + p.dir, errno));
    }
    Status st2 = spawnJanitor(p.dir);
    if (st2.isOk()) st2 = image::unsquash(target, p.dir + "/rootfs");
    if (!st2.isOk()) {
      Status ignored = removeTree(p.dir);
      (void)ignored;
      return st2;
    }
    auto text = readFile(p.dir + "/rootfs/.corral/config.json");
    if (text.isOk()) {
      auto c = image::imageConfigFromJson(*text);
      if (c.isOk()) p.config = *c;
    }
  } else {
    return notFound("no such container: " + quoteForMessage(target) + " (see `enroot list`)");
  }
  if (p.kind == Kind::kOverlay) {
    p.mountPoint = p.dir + "/mnt";
    if (mkdir(p.mountPoint.c_str(), 0755) != 0 && errno != EEXIST) {
      return internalError(errnoText("cannot create " + p.mountPoint, errno));
    }
    if (!isDirectory(p.lower)) {
      return failedPrecondition("the image of container " + quoteForMessage(target) + " (" +
                                p.lower +
                                ") is gone from the cache: create the container again");
    }
  } else {
    p.mountPoint = p.dir + "/rootfs";
  }
  return p;
}

// Binds the node's `source` at `target` inside the root, creating the target.
Status bindInto(int rootFd, const std::string& source, const std::string& target, bool recursive,
                bool readOnly, bool noSuid = false, bool noDev = false, bool noExec = false) {
  struct stat st;
  if (stat(source.c_str(), &st) != 0) {
    if (errno == ENOENT) return notFound("mount source path does not exist: " + source);
    return internalError(errnoText("cannot use mount source " + source, errno));
  }
  auto fd = openInRoot(rootFd, target, S_ISDIR(st.st_mode) ? Create::kDirectory : Create::kFile);
  if (!fd.isOk()) return fd.status().withContext("cannot mount " + source + " at " + target);
  Fd hold(*fd);
  Status m = bindMount(source, fdPath(hold.get()), recursive);
  if (!m.isOk()) return m.withContext("at " + target);
  if (readOnly || noSuid || noDev || noExec) {
    // Reopen: the descriptor names what was under the new mount.
    auto top = openInRoot(rootFd, target, Create::kNo);
    if (!top.isOk()) return top.status();
    Fd topFd(*top);
    Status r = makeReadOnly(fdPath(topFd.get()), recursive, noSuid, noDev, noExec, readOnly);
    if (!r.isOk()) return r.withContext("at " + target);
  }
  return Status::ok();
}

// Whether a relative mount destination climbs out of the container's root
// ("../home"): refused, as Enroot does, rather than quietly kept inside.
bool escapesRoot(const std::string& target) {
  if (target.empty() || target[0] == '/') return false;
  int depth = 0;
  size_t pos = 0;
  while (pos <= target.size()) {
    size_t slash = target.find('/', pos);
    std::string part = target.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
    if (part == "..") {
      if (--depth < 0) return true;
    } else if (!part.empty() && part != ".") {
      ++depth;
    }
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
  return false;
}

// One entry of the user's mounts: a bind, a tmpfs, or an umount.
Status applyMount(int rootFd, const Mount& m) {
  if (escapesRoot(m.target)) {
    return invalidArgument("mount destination " + m.target +
                           " leaves the container's root: " + std::strerror(EXDEV));
  }
  std::string target = m.target[0] == '/' ? m.target : "/" + m.target;
  if (m.kind == MountKind::kBind) {
    RETURN_IF_ERROR(
        bindInto(rootFd, m.source, target, m.recursive, m.readOnly, m.noSuid, m.noDev, m.noExec));
  } else if (m.kind == MountKind::kTmpfs) {
    auto fd = openInRoot(rootFd, target, Create::kDirectory);
    if (!fd.isOk()) return fd.status().withContext("cannot mount a tmpfs at " + target);
    Fd hold(*fd);
    unsigned long flags = MS_NOSUID | MS_NODEV;
    if (m.readOnly) flags |= MS_RDONLY;
    if (m.noExec) flags |= MS_NOEXEC;
    if (mount("tmpfs", fdPath(hold.get()).c_str(), "tmpfs", flags, m.data.c_str()) != 0) {
      return invalidArgument(errnoText("cannot mount a tmpfs at " + target +
                                           (m.data.empty() ? "" : " with " + m.data),
                                       errno));
    }
  } else {
    auto fd = openInRoot(rootFd, target, Create::kNo);
    if (!fd.isOk()) return fd.status().withContext("cannot unmount " + target);
    Fd hold(*fd);
    if (umount2(fdPath(hold.get()).c_str(), MNT_DETACH) != 0) {
      return invalidArgument(errnoText("cannot unmount " + target, errno));
    }
    return Status::ok();
  }
  if (m.unbindable) {
    auto top = openInRoot(rootFd, target, Create::kNo);
    if (!top.isOk()) return top.status();
    Fd topFd(*top);
    if (mount(nullptr, fdPath(topFd.get()).c_str(), nullptr, MS_UNBINDABLE, nullptr) != 0) {
      return internalError(errnoText("cannot make " + target + " unbindable", errno));
    }
  }
  return Status::ok();
}

// The namespaces asked for besides user and mount; a new network namespace
// gets its loopback up, and nothing else.
Status unshareMore(const Unshare& u) {
  int flags = (u.net ? CLONE_NEWNET : 0) | (u.ipc ? CLONE_NEWIPC : 0) | (u.uts ? CLONE_NEWUTS : 0);
  if (flags == 0) return Status::ok();
  if (unshare(flags) != 0) return internalError(errnoText("cannot unshare namespaces", errno));
  if (!u.net) return Status::ok();
  int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return internalError(errnoText("socket", errno));
  struct ifreq ifr {};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  int rc = ioctl(sock, SIOCGIFFLAGS, &ifr);
  if (rc == 0) {
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    rc = ioctl(sock, SIOCSIFFLAGS, &ifr);
  }
  int e = errno;
  close(sock);
  if (rc != 0) return internalError(errnoText("cannot bring up the container's loopback", e));
  return Status::ok();
}

Status mountDev(int rootFd, const std::vector<std::string>& gpuDevices, bool ownIpc) {
  ASSIGN_OR_RETURN(int rawDev, openInRoot(rootFd, "/dev", Create::kDirectory));
  Fd dev(rawDev);
  if (mount("tmpfs", fdPath(dev.get()).c_str(), "tmpfs", MS_NOSUID, "mode=755,size=65536k") != 0) {
    return internalError(errnoText("cannot mount a tmpfs at /dev", errno));
  }
  ASSIGN_OR_RETURN(rawDev, openInRoot(rootFd, "/dev", Create::kNo));
  dev.reset(rawDev);
  std::string d = fdPath(dev.get());
  for (const char* node : {"null", "zero", "full", "random", "urandom", "tty"}) {
    std::string host = std::string("/dev/") + node;
    if (!pathExists(host)) continue;
    RETURN_IF_ERROR(bindInto(rootFd, host, host, false, false));
  }
  for (const auto& g : gpuDevices) {
    std::string host = "/dev/" + g;
    RETURN_IF_ERROR(bindInto(rootFd, host, host, true, false));
  }
  if (mkdir((d + "/pts").c_str(), 0755) != 0) {
    return internalError(errnoText("cannot create /dev/pts", errno));
  }
  if (mount("devpts", (d + "/pts").c_str(), "devpts", MS_NOSUID | MS_NOEXEC,
            "newinstance,ptmxmode=0666,mode=0620") != 0) {
    // Some kernels refuse devpts in a user namespace: share the node's.
    RETURN_IF_ERROR(bindInto(rootFd, "/dev/pts", "/dev/pts", true, false));
  }
  if (symlink("pts/ptmx", (d + "/ptmx").c_str()) != 0) {
    return internalError(errnoText("cannot create /dev/ptmx", errno));
  }
  // POSIX shared memory and message queues: the node's, unless the
  // container has an IPC namespace of its own.
  if (!ownIpc && isDirectory("/dev/shm")) {
    RETURN_IF_ERROR(bindInto(rootFd, "/dev/shm", "/dev/shm", false, false));
  } else if (mkdir((d + "/shm").c_str(), 01777) != 0 ||
             mount("tmpfs", (d + "/shm").c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0) {
    return internalError(errnoText("cannot mount a tmpfs at /dev/shm", errno));
  }
  if (!ownIpc && isDirectory("/dev/mqueue")) {
    RETURN_IF_ERROR(bindInto(rootFd, "/dev/mqueue", "/dev/mqueue", false, false));
  } else if (ownIpc) {
    if (mkdir((d + "/mqueue").c_str(), 01777) != 0 ||
        mount("mqueue", (d + "/mqueue").c_str(), "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              nullptr) != 0) {
      return internalError(errnoText("cannot mount /dev/mqueue", errno));
    }
  }
  const char* links[][2] = {{"/proc/self/fd", "fd"},
                            {"/proc/self/fd/0", "stdin"},
                            {"/proc/self/fd/1", "stdout"},
                            {"/proc/self/fd/2", "stderr"}};
  for (auto& l : links) {
    if (symlink(l[0], (d + "/" + l[1]).c_str()) != 0) {
      return internalError(errnoText(std::string("cannot create /dev/") + l[1], errno));
    }
  }
  return Status::ok();
}

// Adds the caller to the container's /etc/passwd and /etc/group when
// missing, so that `id` and shells have a name for them. Best effort.
void addUser(int rootFd, const Identity& who) {
  auto add = [&](const std::string& path, unsigned id, int idField, const std::string& line) {
    auto fd = openInRoot(rootFd, path, Create::kNo);
    if (!fd.isOk()) return;
    Fd hold(*fd);
    auto text = readFile(fdPath(hold.get()));
    if (!text.isOk()) return;
    size_t pos = 0;
    const std::string& t = *text;
    while (pos < t.size()) {
      size_t nl = t.find('\n', pos);
      std::string l = t.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      pos = nl == std::string::npos ? t.size() : nl + 1;
      size_t f = 0;
      for (int i = 0; i < idField && f != std::string::npos; ++i) {
        f = l.find(':', f);
        if (f != std::string::npos) ++f;
      }
      if (f == std::string::npos) continue;
      if (l.substr(f, l.find(':', f) - f) == std::to_string(id)) return;
    }
    int w = open(fdPath(hold.get()).c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (w < 0) return;
    std::string out = (!t.empty() && t.back() != '\n' ? "\n" : "") + line + "\n";
    ssize_t n = write(w, out.data(), out.size());
    (void)n;
    close(w);
  };
  std::string user = who.user.empty() ? "user" + std::to_string(who.uid) : who.user;
  std::string home = who.home.empty() ? "/" : who.home;
  add("/etc/passwd", who.uid, 2,
      user + ":x:" + std::to_string(who.uid) + ":" + std::to_string(who.gid) + ":" + user + ":" +
          home + ":/bin/sh");
  std::string group;
  std::vector<char> buf(16384);
  struct group gr, *res = nullptr;
  if (getgrgid_r(who.gid, &gr, buf.data(), buf.size(), &res) == 0 && res) group = res->gr_name;
  if (group.empty()) group = "group" + std::to_string(who.gid);
  add("/etc/group", who.gid, 2, group + ":x:" + std::to_string(who.gid) + ":");
  // And a shadow entry, as Enroot's shadow hook makes (pwck): PAM's account
  // check (sshd in a container, su) refuses a user it has none for.
  auto shadow = openInRoot(rootFd, "/etc/shadow", Create::kNo);
  if (!shadow.isOk()) return;
  Fd hold(*shadow);
  auto text = readFile(fdPath(hold.get()));
  if (!text.isOk() || text->rfind(user + ":", 0) == 0 || text->find("\n" + user + ":") != std::string::npos)
    return;
  int w = open(fdPath(hold.get()).c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (w < 0) return;
  std::string line = (!text->empty() && text->back() != '\n' ? "\n" : "") + user + ":*:" +
                     std::to_string(time(nullptr) / 86400) + ":0:99999:7:::\n";
  ssize_t n = write(w, line.data(), line.size());
  (void)n;
  close(w);
}

// Enroot's apt fix: a remapped root owns one uid, so apt's switch to its
// `_apt` sandbox user (which the seccomp filter fakes) would fail its own
// check ("Could not switch group"); apt is told to stay root. Debian-based
// images only; best effort.
void keepAptAsRoot(int rootFd) {
  auto debian = openInRoot(rootFd, "/etc/debian_version", Create::kNo);
  if (!debian.isOk()) return;
  close(*debian);
  auto dir = openInRoot(rootFd, "/etc/apt/apt.conf.d", Create::kDirectory);
  if (!dir.isOk()) return;
  Fd hold(*dir);
  int fd = openat(hold.get(), "enroot", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const char text[] = "APT::Sandbox::User \"root\";\n";
  ssize_t n = write(fd, text, sizeof text - 1);
  (void)n;
  close(fd);
}

Status setUp(const Settings& s, const Prepared& p, const StartOptions& o, const Identity& who,
             const std::vector<std::string>& gpuDevices, bool asRoot, bool writable) {
  RETURN_IF_ERROR(enterUserNamespace(asRoot));
  if (o.holdFd >= 0) prctl(PR_SET_PDEATHSIG, SIGKILL);
  RETURN_IF_ERROR(unshareMore(o.unshare));

  if (p.kind == Kind::kOverlay) {
    RETURN_IF_ERROR(mountOverlay({p.lower}, p.dir + "/upper", p.dir + "/work", p.mountPoint));
  } else {
    RETURN_IF_ERROR(bindMount(p.mountPoint, p.mountPoint, false));
  }
  int raw = open(p.mountPoint.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (raw < 0) return internalError(errnoText("cannot open " + p.mountPoint, errno));
  Fd root(raw);

  RETURN_IF_ERROR(bindInto(root.get(), "/proc", "/proc", true, false));
  RETURN_IF_ERROR(bindInto(root.get(), "/sys", "/sys", true, true));
  RETURN_IF_ERROR(mountDev(root.get(), gpuDevices, o.unshare.ipc));
  for (const char* f : {"/etc/hosts", "/etc/hostname", "/etc/resolv.conf"}) {
    struct stat st;
    if (stat(f, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    Status b = bindInto(root.get(), f, f, false, false);
    (void)b;  // A read-only image without /etc/hosts simply keeps its own.
  }
  if (s.mountHome && !who.home.empty() && isDirectory(who.home)) {
    RETURN_IF_ERROR(bindInto(root.get(), who.home, asRoot ? "/root" : who.home, true, false));
  }
  // In the order given: an "umount:" entry undoes what came before it.
  for (const auto& m : o.mounts) RETURN_IF_ERROR(applyMount(root.get(), m));
  if (writable && !asRoot) addUser(root.get(), who);
  if (asRoot) keepAptAsRoot(root.get());
  if (!writable) {
    RETURN_IF_ERROR(makeReadOnly(fdPath(root.get()), false).withContext("container root"));
  }
  RETURN_IF_ERROR(pivotInto(p.mountPoint));
  std::string workdir = !o.workdir.empty() ? o.workdir : p.config.workdir;
  if (workdir.empty()) workdir = "/";
  if (chdir(workdir.c_str()) != 0) {
    return failedPrecondition(errnoText("cannot enter the working directory " + workdir, errno));
  }
  return Status::ok();
}

// The environment an entrypoint starts with: the image's, the caller's
// identity variables, and only the caller's variables named in `env`.
std::vector<std::string> entrypointEnvironment(const std::map<std::string, std::string>& callerEnv,
                                               const Prepared& p, const StartOptions& o) {
  std::map<std::string, std::string> minimal;
  for (const char* k : {"HOME", "USER", "LOGNAME", "TERM"}) {
    if (auto it = callerEnv.find(k); it != callerEnv.end()) minimal[k] = it->second;
  }
  for (const auto& e : o.env) {
    std::string k = e.substr(0, e.find('='));
    if (auto it = callerEnv.find(k); it != callerEnv.end()) minimal[k] = it->second;
  }
  return containerEnvironment(minimal, p.config.env, o.env, o.gpusGiven ? &o.gpus : nullptr);
}

// Replaces this process with `argv` in `env`; returns only why it could not.
Status execWith(std::vector<std::string> argv, const std::vector<std::string>& env) {
  clearenv();
  for (const auto& kv : env) {
    size_t eq = kv.find('=');
    setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
  }
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  execvp(args[0], args.data());
  return notFound(errnoText("cannot run " + quoteForMessage(argv[0]) + " in the container", errno));
}

// Runs the image's entrypoint as a container's first process, with a
// command that stops itself once the entrypoint has handed over to it, and
// reports the environment the entrypoint left and what it wrote.
StatusOr<HolderReport> runEntrypoint(const Prepared& p, const std::vector<std::string>& env,
                                     bool asRoot) {
  HolderReport report;
  if (p.config.entrypoint.empty()) return report;
  int log = static_cast<int>(syscall(SYS_memfd_create, "entrypoint-log", MFD_CLOEXEC));
  if (log < 0) return internalError(errnoText("memfd_create", errno));
  Fd logFd(log);
  std::vector<std::string> argv = p.config.entrypoint;
  argv.insert(argv.end(), {"/bin/sh", "-c", "kill -STOP $$; exit 0"});
  pid_t child = fork();
  if (child < 0) return internalError(errnoText("fork", errno));
  if (child == 0) {
    dup2(log, 1);
    dup2(log, 2);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    if (asRoot && !installIdFakingFilter().isOk()) _exit(126);
    Status failed = execWith(argv, env);
    std::fprintf(stderr, "enroot: error: %s\n", failed.message().c_str());
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, WUNTRACED) < 0 && errno == EINTR) {
  }
  std::string logText;
  auto readLog = [&] {
    lseek(log, 0, SEEK_SET);
    char buf[4096];
    ssize_t n;
    while ((n = read(log, buf, sizeof buf)) > 0 && logText.size() < (1u << 20)) logText.append(buf, n);
  };
  if (!WIFSTOPPED(status)) {
    readLog();
    std::string why = WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                        : "was killed by signal " + std::to_string(WTERMSIG(status));
    std::string tail = logText;
    while (!tail.empty() && std::isspace(static_cast<unsigned char>(tail.back()))) tail.pop_back();
    if (tail.size() > 2000) tail = tail.substr(tail.size() - 2000);
    return failedPrecondition("the image's entrypoint " + why + " before running the command" +
                              (tail.empty() ? "" : ": " + tail) +
                              " (if the image has an unusual entrypoint, try --no-container-entrypoint)");
  }
  auto environ = readFile("/proc/" + std::to_string(child) + "/environ");
  kill(child, SIGKILL);
  while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
  }
  readLog();
  if (!environ.isOk()) return environ.status().withContext("the entrypoint's environment");
  size_t pos = 0;
  while (pos < environ->size()) {
    size_t nul = environ->find('\0', pos);
    if (nul == std::string::npos) nul = environ->size();
    if (nul > pos) report.env.push_back(environ->substr(pos, nul - pos));
    pos = nul + 1;
  }
  report.entrypointLog = logText;
  return report;
}

// A holder: records itself, says it is ready (with what the entrypoint
// left), and waits to be killed while others join its namespaces.
[[noreturn]] void hold(const Settings& s, const std::string& target, const StartOptions& o,
                       const HolderReport& report, int runtimeDirFd) {
  signal(SIGINT, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  Status rec = recordHolder(s, runtimeDirFd, target);
  (void)rec;  // Only `enroot list -f` and later steps' joins need it.
  if (runtimeDirFd >= 0) close(runtimeDirFd);
  std::string line = holderReportLine(report);
  ssize_t n = write(o.holdFd, line.data(), line.size());
  close(o.holdFd);
  if (n != static_cast<ssize_t>(line.size())) _exit(1);
  // Do not keep the caller's pipes open: it may read them to the end.
  stdioToDevNull();
  while (true) pause();
}

}  // namespace

Status start(const Settings& s, const std::string& target, const StartOptions& given,
             const std::map<std::string, std::string>& callerEnv, const Identity& who) {
  pid_t parent = getppid();
  StartOptions o = given;
  // Everything that can be checked on the node's side first, for plain
  // errors; relative sources are the caller's working directory's.
  for (auto& m : o.mounts) {
    if (m.kind != MountKind::kBind) continue;
    if (!pathExists(m.source)) return notFound("mount source path does not exist: " + m.source);
    if (m.source[0] != '/') {
      char* real = realpath(m.source.c_str(), nullptr);
      if (!real) return notFound(errnoText("mount source " + m.source, errno));
      m.source = real;
      free(real);
    }
  }
  std::vector<std::string> gpuDevices;
  if (o.gpusGiven && !o.gpus.empty()) {
    auto dev = listDirectory("/dev");
    // A GPU without a device node on this node is left out; the
    // environment still names it, as Slurm allocated it.
    if (dev.isOk()) gpuDevices = selectGpuDevices(*dev, o.gpus);
  }
  ASSIGN_OR_RETURN(Prepared p, prepare(s, target));
  bool asRoot = o.root || s.remapRoot;
  bool writable = !o.readOnly && (o.writable || s.writable);
  std::vector<std::string> env =
      containerEnvironment(callerEnv, p.config.env, o.env, o.gpusGiven ? &o.gpus : nullptr);
  int runtimeDirFd = -1;
  if (o.holdFd >= 0 && makeDirs(s.runtimePath, 0700).isOk()) {
    runtimeDirFd = open(s.runtimePath.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  }

  RETURN_IF_ERROR(setUp(s, p, o, who, gpuDevices, asRoot, writable));

  if (o.holdFd >= 0) {
    if (getppid() != parent) _exit(1);  // The parent died before PDEATHSIG was armed.
    HolderReport report;
    if (o.entrypoint) {
      ASSIGN_OR_RETURN(report, runEntrypoint(p, entrypointEnvironment(callerEnv, p, o), asRoot));
    }
    hold(s, target, o, report, runtimeDirFd);
  }

  std::vector<std::string> argv = o.command;
  if (argv.empty()) {
    argv = p.config.entrypoint;
    argv.insert(argv.end(), p.config.cmd.begin(), p.config.cmd.end());
  }
  if (argv.empty()) argv = {"/bin/sh"};
  if (asRoot) RETURN_IF_ERROR(installIdFakingFilter());
  return execWith(argv, env);
}

}  // namespace corral::container
