#include "container/namespaces.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/fs.h"

namespace corral::container {
namespace {

Status writeProcFile(const std::string& path, const std::string& content) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return internalError(errnoText("cannot open " + path, errno));
  ssize_t n = write(fd, content.data(), content.size());
  int e = errno;
  close(fd);
  if (n != static_cast<ssize_t>(content.size())) {
    return internalError(errnoText("cannot write " + path, n < 0 ? e : EIO));
  }
  return Status::ok();
}

// Escapes what overlayfs' option parser treats specially.
std::string overlayEscape(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == '\\' || c == ',' || c == ':') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

Status enterUserNamespace(bool asRoot) {
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
    int e = errno;
    std::string hint;
    if (e == EPERM || e == ENOSPC || e == EUSERS) {
      hint = " (are unprivileged user namespaces enabled? see /proc/sys/user/max_user_namespaces)";
    } else if (e == EINVAL) {
      hint = " (the process must be single-threaded)";
    }
    return internalError(errnoText("cannot create a user namespace", e) + hint);
  }
  RETURN_IF_ERROR(writeProcFile("/proc/self/setgroups", "deny"));
  std::string inside = asRoot ? "0" : std::to_string(uid);
  RETURN_IF_ERROR(writeProcFile("/proc/self/uid_map", inside + " " + std::to_string(uid) + " 1\n"));
  inside = asRoot ? "0" : std::to_string(gid);
  RETURN_IF_ERROR(writeProcFile("/proc/self/gid_map", inside + " " + std::to_string(gid) + " 1\n"));
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return internalError(errnoText("cannot make the mounts private", errno));
  }
  return Status::ok();
}

std::string fdPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

Status bindMount(const std::string& source, const std::string& target, bool recursive) {
  unsigned long flags = MS_BIND | (recursive ? MS_REC : 0);
  if (mount(source.c_str(), target.c_str(), nullptr, flags, nullptr) != 0) {
    return internalError(errnoText("cannot bind-mount " + source, errno));
  }
  return Status::ok();
}

Status makeReadOnly(const std::string& path, bool recursive, bool noSuid, bool noDev, bool noExec,
                    bool readOnly) {
  struct mount_attr attr;
  std::memset(&attr, 0, sizeof attr);
  if (readOnly) attr.attr_set |= MOUNT_ATTR_RDONLY;
  if (noSuid) attr.attr_set |= MOUNT_ATTR_NOSUID;
  if (noDev) attr.attr_set |= MOUNT_ATTR_NODEV;
  if (noExec) attr.attr_set |= MOUNT_ATTR_NOEXEC;
  if (attr.attr_set == 0) return Status::ok();
  unsigned flags = recursive ? AT_RECURSIVE : 0;
  if (syscall(SYS_mount_setattr, AT_FDCWD, path.c_str(), flags, &attr, sizeof attr) == 0) {
    return Status::ok();
  }
  if (errno != ENOSYS) return internalError(errnoText("cannot make " + path + " read-only", errno));
  // Older kernels: a bind remount, repeating the flags the node locked (a
  // user namespace may not clear them) so that the remount is allowed.
  struct statvfs sv;
  if (statvfs(path.c_str(), &sv) != 0) {
    return internalError(errnoText("cannot make " + path + " read-only", errno));
  }
  unsigned long ms = MS_REMOUNT | MS_BIND | (readOnly ? MS_RDONLY : 0);
  if ((sv.f_flag & ST_NOSUID) || noSuid) ms |= MS_NOSUID;
  if ((sv.f_flag & ST_NODEV) || noDev) ms |= MS_NODEV;
  if ((sv.f_flag & ST_NOEXEC) || noExec) ms |= MS_NOEXEC;
  if (!readOnly && (sv.f_flag & ST_RDONLY)) ms |= MS_RDONLY;
  if (mount(nullptr, path.c_str(), nullptr, ms, nullptr) != 0) {
    return internalError(errnoText("cannot make " + path + " read-only", errno));
  }
  return Status::ok();
}

Status mountOverlay(const std::vector<std::string>& lowers, const std::string& upper,
                    const std::string& work, const std::string& target) {
  std::string opts = "lowerdir=";
  for (size_t i = 0; i < lowers.size(); ++i) {
    if (i) opts += ":";
    opts += overlayEscape(lowers[i]);
  }
  if (!upper.empty()) {
    opts += ",upperdir=" + overlayEscape(upper) + ",workdir=" + overlayEscape(work);
  }
  opts += ",userxattr";
  if (mount("overlay", target.c_str(), "overlay", 0, opts.c_str()) != 0) {
    int e = errno;
    std::string msg = errnoText("cannot mount the container's overlay filesystem", e);
    if (e == EINVAL || e == EPERM) {
      msg += " (the data path " + (upper.empty() ? target : upper) +
             " must be on a file system that can hold an overlay's upper layer, e.g. ext4, xfs"
             " or tmpfs, with a kernel of 5.11 or later)";
    }
    return internalError(msg);
  }
  return Status::ok();
}

Status pivotInto(const std::string& root) {
  if (chdir(root.c_str()) != 0) return internalError(errnoText("cannot enter " + root, errno));
  if (syscall(SYS_pivot_root, ".", ".") != 0) {
    return internalError(errnoText("cannot pivot_root into " + root, errno));
  }
  if (umount2(".", MNT_DETACH) != 0) {
    return internalError(errnoText("cannot detach the node's root", errno));
  }
  if (chdir("/") != 0) return internalError(errnoText("cannot enter /", errno));
  return Status::ok();
}

Status runInPrivateNamespace(const std::function<Status()>& fn) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return internalError(errnoText("pipe", errno));
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    return internalError(errnoText("fork", e));
  }
  if (pid == 0) {
    close(fds[0]);
    Status st = enterUserNamespace(/*asRoot=*/true);
    if (st.isOk()) st = fn();
    std::string msg = st.isOk() ? "" : std::string(1, static_cast<char>('0' + static_cast<int>(st.code()))) + st.message();
    if (!msg.empty()) {
      ssize_t ignored = write(fds[1], msg.data(), msg.size());
      (void)ignored;
    }
    _exit(st.isOk() ? 0 : 1);
  }
  close(fds[1]);
  std::string msg;
  char buf[4096];
  while (true) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    msg.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::ok();
  if (!msg.empty()) return Status(static_cast<Code>(msg[0] - '0'), msg.substr(1));
  return internalError("the namespace helper process failed (status " + std::to_string(status) +
                       ")");
}

}  // namespace corral::container
