#include "common/beneath.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "common/fs.h"
#include "common/unique_fd.h"

namespace corral {
namespace {

int openat2Resolve(int dirFd, const std::string& path, int flags, unsigned long long resolve,
                   int mode = 0) {
  struct open_how how;
  std::memset(&how, 0, sizeof how);
  how.flags = static_cast<unsigned long long>(flags) | O_CLOEXEC;
  how.resolve = resolve;
  if (flags & O_CREAT) how.mode = static_cast<unsigned long long>(mode);
  int fd;
  do {
    fd = static_cast<int>(syscall(SYS_openat2, dirFd, path.c_str(), &how, sizeof how));
  } while (fd < 0 && errno == EAGAIN);
  return fd;
}

std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos < path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(pos, slash - pos);
    if (!part.empty() && part != ".") parts.push_back(part);
    pos = slash + 1;
  }
  return parts;
}

// `openInRoot` with a choice of resolve flags.
StatusOr<int> openResolved(int rootFd, const std::string& path, Create create,
                           unsigned long long resolve) {
  std::vector<std::string> parts = components(path);
  std::string prefix = "/";
  int fd = openat2Resolve(rootFd, prefix, O_PATH | O_DIRECTORY, resolve);
  if (fd < 0) return internalError(errnoText("cannot open the root directory", errno));
  for (size_t i = 0; i < parts.size(); ++i) {
    bool last = i + 1 == parts.size();
    std::string next = prefix + (prefix == "/" ? "" : "/") + parts[i];
    int nfd = openat2Resolve(rootFd, next, O_PATH, resolve);
    if (nfd < 0 && errno == ENOENT && create != Create::kNo && parts[i] != "..") {
      bool dir = !last || create == Create::kDirectory;
      int rc;
      if (dir) {
        rc = mkdirat(fd, parts[i].c_str(), 0755);
      } else {
        rc = openat(fd, parts[i].c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                    0644);
        if (rc >= 0) close(rc);
      }
      if (rc < 0 && errno != EEXIST) {
        int e = errno;
        close(fd);
        return internalError(errnoText("cannot create " + next, e));
      }
      nfd = openat2Resolve(rootFd, next, O_PATH, resolve);
    }
    int e = errno;
    close(fd);
    if (nfd < 0) {
      if (e == ENOENT) return notFound(next + " does not exist");
      if (e == ELOOP) return invalidArgument(next + " is a symbolic link");
      return internalError(errnoText("cannot open " + next, e));
    }
    fd = nfd;
    prefix = next;
  }
  return fd;
}

StatusOr<UniqueFd> openRoot(const std::string& root) {
  UniqueFd fd(open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) return notFound(root + " does not exist");
    return internalError(errnoText("cannot open " + root, errno));
  }
  return fd;
}

// A regular file opened for `flags` beneath `rootFd`, never blocking on a
// FIFO and never following a symlink out of the tree.
StatusOr<UniqueFd> openRegular(int rootFd, const std::string& path, int flags, int mode) {
  UniqueFd fd(openat2Resolve(rootFd, path, flags | O_NONBLOCK | O_NOCTTY,
                             RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, mode));
  if (!fd.valid()) {
    if (errno == ENOENT) return notFound(path + " does not exist");
    return unavailable(errnoText("cannot open " + path, errno));
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    return invalidArgument(path + " is not a regular file");
  return fd;
}

}  // namespace

StatusOr<int> openInRoot(int rootFd, const std::string& path, Create create) {
  return openResolved(rootFd, path, create, RESOLVE_IN_ROOT);
}

StatusOr<std::string> readFileBeneath(const std::string& root, const std::string& path,
                                      size_t maxBytes) {
  ASSIGN_OR_RETURN(UniqueFd dir, openRoot(root));
  ASSIGN_OR_RETURN(UniqueFd fd, openRegular(dir.get(), path, O_RDONLY, 0));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return unavailable(errnoText("cannot stat " + path, errno));
  off_t start = st.st_size > static_cast<off_t>(maxBytes) ? st.st_size - static_cast<off_t>(maxBytes) : 0;
  std::string out;
  char buf[65536];
  while (out.size() < maxBytes) {
    size_t want = std::min(sizeof buf, maxBytes - out.size());
    ssize_t n = pread(fd.get(), buf, want, start + static_cast<off_t>(out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return unavailable(errnoText("cannot read " + path, errno));
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Status appendFileBeneath(const std::string& root, const std::string& path,
                         const std::string& text, int mode) {
  ASSIGN_OR_RETURN(UniqueFd dir, openRoot(root));
  ASSIGN_OR_RETURN(UniqueFd fd, openRegular(dir.get(), path, O_WRONLY | O_APPEND | O_CREAT, mode));
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = write(fd.get(), text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return unavailable(errnoText("cannot append to " + path, errno));
    off += static_cast<size_t>(n);
  }
  return Status::ok();
}

Status prepareDirectoryBeneath(const std::string& root, const std::string& path, int uid,
                               int gid, int mode) {
  ASSIGN_OR_RETURN(UniqueFd dir, openRoot(root));
  ASSIGN_OR_RETURN(int raw, openResolved(dir.get(), path, Create::kDirectory,
                                         RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS));
  UniqueFd fd(raw);
  struct stat st;
  if (fstat(fd.get(), &st) != 0 || !S_ISDIR(st.st_mode))
    return invalidArgument(path + " is not a directory");
  if (fchownat(fd.get(), "", static_cast<uid_t>(uid), static_cast<gid_t>(gid),
               AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
    return internalError(errnoText("cannot set the owner of " + path, errno));
  // fchmod does not take O_PATH descriptors; the /proc link names this very
  // directory, whatever its path has become meanwhile.
  std::string self = "/proc/self/fd/" + std::to_string(fd.get());
  if (chmod(self.c_str(), static_cast<mode_t>(mode)) != 0)
    return internalError(errnoText("cannot set the mode of " + path, errno));
  return Status::ok();
}

}  // namespace corral
