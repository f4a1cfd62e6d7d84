#include "runtime/local/pod_root.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "common/beneath.h"
#include "common/fs.h"

namespace corral {
namespace {

Status sysError(const std::string& what) {
  return internalError(what + ": " + std::strerror(errno));
}

Status writeProc(const std::string& path, const std::string& text) {
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) return sysError("cannot open " + path);
  if (write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    return sysError("cannot write " + path);
  return Status::ok();
}

// A detached copy of the mount at `source` (a directory or a file), shown
// through the id mapping of `usernsFd`, so that host id k appears as pod
// id k: the image's root-owned files are the pod root's, and files a pod
// writes on a volume land on the host with the ids they have inside.
// Not recursive: mounts below `source` on the host are not carried in.
// Everything but the image is mounted nosuid: a setuid file on shared
// storage would otherwise lift anyone who runs it to the id of whoever made
// it, in every cluster the volume is attached to.
StatusOr<UniqueFd> idmappedClone(const std::string& source, int usernsFd, bool readOnly,
                                 bool allowSetuid = false) {
  UniqueFd tree(open_tree(AT_FDCWD, source.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
  if (!tree.valid()) return sysError("cannot open " + source + " for mounting");
  struct mount_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NODEV | (readOnly ? MOUNT_ATTR_RDONLY : 0) |
                  (allowSetuid ? 0 : MOUNT_ATTR_NOSUID);
  attr.userns_fd = static_cast<uint64_t>(usernsFd);
  if (mount_setattr(tree.get(), "", AT_EMPTY_PATH, &attr, sizeof attr) != 0) {
    int e = errno;
    std::string hint = e == EINVAL ? " (does its file system support idmapped mounts?)" : "";
    errno = e;
    return sysError("cannot map the owners of " + source + hint);
  }
  return tree;
}

Status attach(int treeFd, int targetFd, const std::string& target) {
  if (move_mount(treeFd, "", targetFd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
    return sysError("cannot mount on " + target);
  return Status::ok();
}

// A mount point for a directory or a file at `target` inside `rootFd`,
// made by the caller (the pod's root) where it is missing.
StatusOr<UniqueFd> mountPoint(int rootFd, const std::string& target, bool directory) {
  ASSIGN_OR_RETURN(int fd, openInRoot(rootFd, target, directory ? Create::kDirectory : Create::kFile));
  return UniqueFd(fd);
}

Status mountTmpfs(const std::string& target, unsigned long flags, const std::string& options) {
  if (mount("tmpfs", target.c_str(), "tmpfs", flags, options.c_str()) != 0)
    return sysError("cannot mount a tmpfs on " + target);
  return Status::ok();
}

Status makeDir(const std::string& path, mode_t mode, uid_t uid) {
  if (mkdir(path.c_str(), mode) != 0 && errno != EEXIST) return sysError("cannot create " + path);
  if (chown(path.c_str(), uid, uid) != 0 || chmod(path.c_str(), mode) != 0)
    return sysError("cannot set the owner of " + path);
  return Status::ok();
}

// The pod's /dev: a small tmpfs with the harmless character devices, the
// simulated GPUs (major 195, as the NVIDIA driver's nodes; opening one fails,
// which is what Slurm needs of them) and a /dev/shm of its own. Made here,
// by host root, because a user namespace may not create device nodes.
Status populateDev(const std::string& dev, int gpus, uid_t podRoot) {
  RETURN_IF_ERROR(mountTmpfs(dev, MS_NOSUID | MS_NOEXEC,
                             "mode=755,size=1m,nr_inodes=4096,uid=" + std::to_string(podRoot) +
                                 ",gid=" + std::to_string(podRoot)));
  struct Node {
    std::string name;
    unsigned major, minor;
  };
  std::vector<Node> nodes = {{"null", 1, 3},    {"zero", 1, 5}, {"full", 1, 7},
                             {"random", 1, 8},  {"urandom", 1, 9}, {"tty", 5, 0}};
  for (int i = 0; i < gpus; ++i) nodes.push_back({"nvidia" + std::to_string(i), 195, static_cast<unsigned>(i)});
  if (gpus > 0) nodes.push_back({"nvidiactl", 195, 255});
  for (const auto& n : nodes) {
    std::string p = dev + "/" + n.name;
    if (mknod(p.c_str(), S_IFCHR | 0666, makedev(n.major, n.minor)) != 0)
      return sysError("cannot create /dev/" + n.name);
    if (chown(p.c_str(), podRoot, podRoot) != 0 || chmod(p.c_str(), 0666) != 0)
      return sysError("cannot set the owner of /dev/" + n.name);
  }
  for (auto [link, to] : std::vector<std::pair<const char*, const char*>>{
           {"ptmx", "pts/ptmx"}, {"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"},
           {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"}, {"core", "/proc/kcore"}}) {
    if (std::string(link) == "core") continue;
    if (symlink(to, (dev + "/" + link).c_str()) != 0) return sysError(std::string("cannot link /dev/") + link);
  }
  RETURN_IF_ERROR(makeDir(dev + "/pts", 0755, podRoot));
  RETURN_IF_ERROR(makeDir(dev + "/shm", 01777, podRoot));
  return mountTmpfs(dev + "/shm", MS_NOSUID | MS_NODEV,
                    "mode=1777,uid=" + std::to_string(podRoot) + ",gid=" + std::to_string(podRoot));
}

// Mounts are attached parents first, so that /shared is in place before a
// volume mounted inside it.
std::vector<const Mount*> inAttachOrder(const std::vector<Mount>& mounts) {
  std::vector<const Mount*> out;
  for (const auto& m : mounts) out.push_back(&m);
  std::stable_sort(out.begin(), out.end(), [](const Mount* a, const Mount* b) {
    return std::count(a->target.begin(), a->target.end(), '/') <
           std::count(b->target.begin(), b->target.end(), '/');
  });
  return out;
}

// Relative to the pod directory, which is the working directory of the
// launcher and of PID 1 (the pod's root may not search the host's
// directories above it).
std::string stagedPath(size_t index) { return std::string(kPodStageDir) + "/m" + std::to_string(index); }

// Stages `source` idmapped at `at` (a directory or file made here).
Status stageOne(const std::string& source, bool readOnly, int usernsFd, const std::string& at) {
  bool dir = isDirectory(source);
  if (dir) {
    if (mkdir(at.c_str(), 0755) != 0) return sysError("cannot create " + at);
  } else {
    UniqueFd f(open(at.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (!f.valid()) return sysError("cannot create " + at);
  }
  ASSIGN_OR_RETURN(UniqueFd tree, idmappedClone(source, usernsFd, readOnly));
  UniqueFd target(open(at.c_str(), O_PATH | O_CLOEXEC));
  if (!target.valid()) return sysError("cannot open " + at);
  return attach(tree.get(), target.get(), at);
}

// Attaches the mount staged at `staged` to `target` in the root `rootFd`:
// a clone of it, so that the pod may unmount it later (a detached volume)
// while its read-only flag stays locked.
Status attachStaged(const std::string& staged, int rootFd, const Mount& m) {
  UniqueFd tree(open_tree(AT_FDCWD, staged.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
  if (!tree.valid()) return sysError("cannot clone the staged mount for " + m.target);
  struct stat st;
  if (fstat(tree.get(), &st) != 0) return sysError("cannot stat the staged mount for " + m.target);
  ASSIGN_OR_RETURN(UniqueFd target, mountPoint(rootFd, m.target, S_ISDIR(st.st_mode)));
  return attach(tree.get(), target.get(), m.target);
}

Status becomeRootOf(int usernsFd) {
  if (setns(usernsFd, CLONE_NEWUSER) != 0) return sysError("cannot join the pod's user namespace");
  if (setgroups(0, nullptr) != 0) return sysError("cannot drop supplementary groups");
  if (setresgid(0, 0, 0) != 0 || setresuid(0, 0, 0) != 0)
    return sysError("cannot become the pod's root");
  return Status::ok();
}

// Runs `fn` in a child process and returns its status; the child's
// namespace changes never reach the caller.
Status inChild(const std::function<Status()>& fn) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return sysError("pipe");
  pid_t pid = fork();
  if (pid < 0) return sysError("fork");
  if (pid == 0) {
    close(fds[0]);
    Status s = fn();
    std::string msg = s.isOk() ? "" : s.message();
    (void)!write(fds[1], msg.data(), msg.size());
    _exit(s.isOk() ? 0 : 1);
  }
  close(fds[1]);
  std::string msg;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) msg.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return Status::ok();
  return internalError(msg.empty() ? "the mount helper failed" : msg);
}

// A namespace of the pod whose PID 1 is `pid`, opened while we are still the
// host's root (PID 1 is not the pod root's to inspect).
StatusOr<UniqueFd> namespaceOf(int pid, const char* ns) {
  std::string path = "/proc/" + std::to_string(pid) + "/ns/" + ns;
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return sysError("cannot open " + path);
  return fd;
}

}  // namespace

StatusOr<UniqueFd> createUserNamespace(const IdRange& ids) {
  int ready[2], done[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return sysError("pipe");
  if (pipe2(done, O_CLOEXEC) != 0) {
    close(ready[0]);
    close(ready[1]);
    return sysError("pipe");
  }
  pid_t pid = fork();
  if (pid < 0) return sysError("fork");
  if (pid == 0) {
    close(ready[0]);
    close(done[1]);
    char c = unshare(CLONE_NEWUSER) == 0 ? 'y' : 'n';
    (void)!write(ready[1], &c, 1);
    // Stay until the parent holds the namespace.
    (void)!read(done[0], &c, 1);
    _exit(0);
  }
  close(ready[1]);
  close(done[0]);
  char c = 0;
  bool created = read(ready[0], &c, 1) == 1 && c == 'y';
  close(ready[0]);
  Status s;
  UniqueFd ns;
  if (!created) {
    s = internalError("cannot create a user namespace (see /proc/sys/user/max_user_namespaces)");
  } else {
    std::string map = "0 " + std::to_string(ids.base) + " " + std::to_string(ids.count) + "\n";
    std::string proc = "/proc/" + std::to_string(pid);
    // setgroups stays "allow": slurmstepd, sshd and su set groups for every
    // job and login, and only the host's root (us) writes the gid map.
    s = writeProc(proc + "/uid_map", map);
    if (s.isOk()) s = writeProc(proc + "/gid_map", map);
    if (s.isOk()) {
      ns.reset(open((proc + "/ns/user").c_str(), O_RDONLY | O_CLOEXEC));
      if (!ns.valid()) s = sysError("cannot open the new user namespace");
    }
  }
  close(done[1]);
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (!s.isOk()) return s;
  return ns;
}

Status stageRoot(const LaunchSpec& spec, int usernsFd) {
  const uid_t podRoot = spec.ids.base;
  const std::string root = spec.podDir + "/" + kPodRootDir;
  const std::string lower = spec.podDir + "/" + kPodLowerDir;
  const std::string upper = spec.podDir + "/" + kPodUpperDir;
  const std::string work = spec.podDir + "/" + kPodWorkDir;
  const std::string stage = spec.podDir + "/" + kPodStageDir;
  if (chdir(spec.podDir.c_str()) != 0) return sysError("cannot enter " + spec.podDir);
  // 0711: PID 1, as the pod's root, reaches the root and the staged mounts
  // by name, and nothing else here.
  for (const auto& d : {root, lower, work, stage})
    if (mkdir(d.c_str(), 0711) != 0 && errno != EEXIST) return sysError("cannot create " + d);
  // The writable layer's top is the pod's "/": owned by the pod's root.
  RETURN_IF_ERROR(makeDir(upper, 0755, podRoot));

  ASSIGN_OR_RETURN(UniqueFd image, idmappedClone(spec.imageRootfs, usernsFd, true, /*allowSetuid=*/true));
  UniqueFd lowerFd(open(lower.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!lowerFd.valid()) return sysError("cannot open " + lower);
  RETURN_IF_ERROR(attach(image.get(), lowerFd.get(), lower));
  // Relative to the pod directory (the working directory): the pod's
  // mount table then names no host path.
  std::string options = std::string("lowerdir=") + kPodLowerDir + ",upperdir=" + kPodUpperDir +
                        ",workdir=" + kPodWorkDir;
  if (mount("overlay", root.c_str(), "overlay", 0, options.c_str()) != 0)
    return sysError("cannot mount the pod's root (" + options + ")");

  // What the pod gets from the host's side: devices, a sysfs of its own
  // network namespace (read-only), a tmpfs /run.
  UniqueFd rootFd(open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!rootFd.valid()) return sysError("cannot open " + root);
  for (const char* d : {"/dev", "/sys", "/run", "/proc"})
    RETURN_IF_ERROR(mountPoint(rootFd.get(), d, true).status());
  RETURN_IF_ERROR(populateDev(root + "/dev", spec.pod.gpus, podRoot));
  if (mount("sysfs", (root + "/sys").c_str(), "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
            nullptr) != 0)
    return sysError("cannot mount /sys");
  // No cgroup of the host's is the pod's to see or change: an empty,
  // read-only /sys/fs/cgroup (Slurm's slurmd wants one mounted; see the
  // renderer's cgroup.conf for what it is told to do with it).
  RETURN_IF_ERROR(mountTmpfs(root + "/sys/fs/cgroup", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                             "mode=755,size=4k"));
  RETURN_IF_ERROR(mountTmpfs(root + "/run", MS_NOSUID | MS_NODEV,
                             "mode=755,size=256m,uid=" + std::to_string(podRoot) +
                                 ",gid=" + std::to_string(podRoot)));

  // Everything the spec mounts, staged outside the root for PID 1 to attach.
  RETURN_IF_ERROR(mountTmpfs(stage, MS_NOSUID | MS_NODEV, "mode=711,size=64k"));
  for (size_t i = 0; i < spec.pod.mounts.size(); ++i) {
    const Mount& m = spec.pod.mounts[i];
    RETURN_IF_ERROR(stageOne(m.source, m.readOnly, usernsFd, stagedPath(i)));
  }
  return Status::ok();
}

Status becomePodRoot(int usernsFd) {
  RETURN_IF_ERROR(becomeRootOf(usernsFd));
  if (unshare(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWCGROUP) != 0)
    return sysError("cannot create the pod's namespaces");
  return Status::ok();
}

Status enterRoot(const LaunchSpec& spec) {
  const std::string root = kPodRootDir;  // The working directory is the pod directory.
  // A bind of the root onto itself: pivot_root needs a mount of our own.
  if (mount(root.c_str(), root.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
    return sysError("cannot bind the pod's root");
  UniqueFd rootFd(open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!rootFd.valid()) return sysError("cannot open " + root);
  std::vector<size_t> order;
  for (const Mount* m : inAttachOrder(spec.pod.mounts))
    order.push_back(static_cast<size_t>(m - spec.pod.mounts.data()));
  for (size_t i : order)
    RETURN_IF_ERROR(attachStaged(stagedPath(i), rootFd.get(), spec.pod.mounts[i]));
  // /proc of the pod's PID namespace, mounted while the host's is still
  // in view (the kernel wants a fully visible one to exist).
  if (mount("proc", (root + "/proc").c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    return sysError("cannot mount /proc");
  if (mount("devpts", (root + "/dev/pts").c_str(), "devpts", MS_NOSUID | MS_NOEXEC,
            "newinstance,ptmxmode=0666,mode=0620,gid=5") != 0)
    return sysError("cannot mount /dev/pts");
  if (chdir(root.c_str()) != 0) return sysError("cannot enter the pod's root");
  if (syscall(SYS_pivot_root, ".", ".") != 0) return sysError("pivot_root");
  // The old root (the host's tree, and the staged mounts in it) is
  // stacked on ".": detach all of it.
  if (umount2(".", MNT_DETACH) != 0) return sysError("cannot detach the host's root");
  if (chdir("/") != 0) return sysError("chdir /");
  for (const auto& d : spec.pod.setupDirs) {
    ASSIGN_OR_RETURN(UniqueFd fd, mountPoint(AT_FDCWD, d, true));
    (void)fd;
  }
  return Status::ok();
}

Status attachLiveMount(const LaunchSpec& spec, int pid, const Mount& m) {
  return inChild([&]() -> Status {
    ASSIGN_OR_RETURN(UniqueFd ns, namespaceOf(pid, "user"));
    ASSIGN_OR_RETURN(UniqueFd mntns, namespaceOf(pid, "mnt"));
    // As at a pod's start: stage the idmapped mount in a namespace of our
    // own, then let the copy the kernel makes for the pod's root lock its
    // read-only flag.
    if (unshare(CLONE_NEWNS) != 0) return sysError("unshare");
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      return sysError("cannot make the mounts private");
    const std::string stage = spec.podDir + "/" + kPodStageDir;
    if (mkdir(stage.c_str(), 0700) != 0 && errno != EEXIST) return sysError("cannot create " + stage);
    RETURN_IF_ERROR(mountTmpfs(stage, MS_NOSUID | MS_NODEV, "mode=711,size=64k"));
    // Relative from here on: the pod's root may not search the host's
    // directories above the pod directory.
    if (chdir(stage.c_str()) != 0) return sysError("cannot enter " + stage);
    const std::string staged = "live";
    RETURN_IF_ERROR(stageOne(m.source, m.readOnly, ns.get(), staged));
    RETURN_IF_ERROR(becomeRootOf(ns.get()));
    if (unshare(CLONE_NEWNS) != 0) return sysError("unshare");
    UniqueFd tree(open_tree(AT_FDCWD, staged.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
    if (!tree.valid()) return sysError("cannot clone the staged mount for " + m.target);
    struct stat st;
    if (fstat(tree.get(), &st) != 0) return sysError("cannot stat the staged mount");
    // Now the pod's root, in the pod's mount namespace: the mount point
    // is made with its rights and resolved in its view.
    if (setns(mntns.get(), CLONE_NEWNS) != 0) return sysError("cannot join the pod's mount namespace");
    ASSIGN_OR_RETURN(UniqueFd target, mountPoint(AT_FDCWD, m.target, S_ISDIR(st.st_mode)));
    return attach(tree.get(), target.get(), m.target);
  });
}

Status detachLiveMount(const LaunchSpec& spec, int pid, const std::string& target) {
  (void)spec;
  return inChild([&]() -> Status {
    ASSIGN_OR_RETURN(UniqueFd ns, namespaceOf(pid, "user"));
    ASSIGN_OR_RETURN(UniqueFd mntns, namespaceOf(pid, "mnt"));
    RETURN_IF_ERROR(becomeRootOf(ns.get()));
    if (setns(mntns.get(), CLONE_NEWNS) != 0) return sysError("cannot join the pod's mount namespace");
    if (umount2(target.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) != 0 && errno != EINVAL && errno != ENOENT)
      return sysError("cannot unmount " + target);
    rmdir(target.c_str());  // Only if empty: it was made for this mount.
    return Status::ok();
  });
}

}  // namespace corral
