// `start`: a container's namespaces, mounts and pivot_root, then exec.

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/files.h"
#include "common/text.h"
#include "container/container.h"
#include "container/fs_util.h"
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
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      dup2(devnull, 0);
      dup2(devnull, 1);
      dup2(devnull, 2);
    }
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
    if (errno == ENOENT) return notFound("mount source does not exist: " + source);
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

Status mountDev(int rootFd, const std::vector<std::string>& gpuDevices) {
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
  if (mkdir((d + "/shm").c_str(), 01777) != 0 ||
      mount("tmpfs", (d + "/shm").c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0) {
    return internalError(errnoText("cannot mount a tmpfs at /dev/shm", errno));
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
}

Status setUp(const Settings& s, const Prepared& p, const StartOptions& o, const Identity& who,
             const std::vector<std::string>& gpuDevices, bool asRoot, bool writable) {
  RETURN_IF_ERROR(enterUserNamespace(asRoot));
  if (o.holdFd >= 0) prctl(PR_SET_PDEATHSIG, SIGKILL);

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
  RETURN_IF_ERROR(mountDev(root.get(), gpuDevices));
  for (const char* f : {"/etc/hosts", "/etc/hostname", "/etc/resolv.conf"}) {
    struct stat st;
    if (stat(f, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    Status b = bindInto(root.get(), f, f, false, false);
    (void)b;  // A read-only image without /etc/hosts simply keeps its own.
  }
  for (const auto& m : o.mounts) {
    RETURN_IF_ERROR(
        bindInto(root.get(), m.source, m.target, m.recursive, m.readOnly, m.noSuid, m.noDev, m.noExec));
  }
  if (s.mountHome && !who.home.empty() && isDirectory(who.home)) {
    RETURN_IF_ERROR(bindInto(root.get(), who.home, who.home, true, false));
  }
  if (writable && !asRoot) addUser(root.get(), who);
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

}  // namespace

Status start(const Settings& s, const std::string& target, const StartOptions& o,
             const std::map<std::string, std::string>& callerEnv, const Identity& who) {
  pid_t parent = getppid();
  // Everything that can be checked on the node's side first, for plain errors.
  for (const auto& m : o.mounts) {
    if (!pathExists(m.source)) return notFound("mount source does not exist: " + m.source);
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
  bool writable = o.writable || s.writable;
  std::vector<std::string> env =
      containerEnvironment(callerEnv, p.config.env, o.env, o.gpusGiven ? &o.gpus : nullptr);

  RETURN_IF_ERROR(setUp(s, p, o, who, gpuDevices, asRoot, writable));

  if (o.holdFd >= 0) {
    if (getppid() != parent) _exit(1);  // The parent died before PDEATHSIG was armed.
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    const char ready[] = "ready\n";
    ssize_t n = write(o.holdFd, ready, sizeof ready - 1);
    close(o.holdFd);
    if (n != static_cast<ssize_t>(sizeof ready - 1)) _exit(1);
    // Do not keep the caller's pipes open: it may read them to the end.
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) {
      dup2(devnull, 0);
      dup2(devnull, 1);
      dup2(devnull, 2);
    }
    while (true) pause();
  }

  std::vector<std::string> argv = o.command;
  if (argv.empty()) {
    argv = p.config.entrypoint;
    argv.insert(argv.end(), p.config.cmd.begin(), p.config.cmd.end());
  }
  if (argv.empty()) argv = {"/bin/sh"};
  clearenv();
  for (const auto& kv : env) {
    size_t eq = kv.find('=');
    setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
  }
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  execvp(args[0], args.data());
  int e = errno;
  return notFound(errnoText("cannot run " + quoteForMessage(argv[0]) + " in the container", e));
}

}  // namespace corral::container
