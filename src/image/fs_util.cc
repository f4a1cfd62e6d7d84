#include "image/fs_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace corral::image {

Status fileError(const std::string& what, int err) {
  if (err == ENOSPC || err == EDQUOT) return internalError("no space left on device while " + what);
  return internalError(what + ": " + std::strerror(err));
}

Status makeDirs(const std::string& path) {
  if (path.empty()) return Status::ok();
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    size_t next = path.find('/', pos + 1);
    cur = path.substr(0, next);
    pos = next;
    if (cur.empty() || cur == "/") continue;
    if (mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) {
      return fileError("creating directory " + cur, errno);
    }
  }
  if (!isDirectory(path)) return internalError("creating directory " + path + ": not a directory");
  return Status::ok();
}

namespace {

// Removes everything inside the directory open as `dirFd`; closes it.
Status removeContents(int dirFd, const std::string& shown) {
  DIR* d = fdopendir(dirFd);
  if (d == nullptr) {
    int e = errno;
    close(dirFd);
    return fileError("removing " + shown, e);
  }
  Status result;
  while (dirent* ent = readdir(d)) {
    std::string name = ent->d_name;
    if (name == "." || name == "..") continue;
    result = removeTreeAt(dirfd(d), name, shown + "/" + name);
    if (!result.isOk()) break;
  }
  closedir(d);
  return result;
}

}  // namespace

Status removeTreeAt(int dirFd, const std::string& name, const std::string& shown) {
  if (unlinkat(dirFd, name.c_str(), 0) == 0 || errno == ENOENT) return Status::ok();
  if (errno != EISDIR && errno != EPERM) return fileError("removing " + shown, errno);
  struct stat st;
  if (fstatat(dirFd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Status::ok();
  if (!S_ISDIR(st.st_mode)) return fileError("removing " + shown, EPERM);
  // Without u+rwx we could neither list nor empty it.
  if ((st.st_mode & 0700) != 0700) fchmodat(dirFd, name.c_str(), st.st_mode | 0700, 0);
  int sub = openat(dirFd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub < 0) return fileError("removing " + shown, errno);
  RETURN_IF_ERROR(removeContents(sub, shown));
  if (unlinkat(dirFd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return fileError("removing " + shown, errno);
  }
  return Status::ok();
}

Status removeTree(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::ok();
    return fileError("removing " + path, errno);
  }
  if (!S_ISDIR(st.st_mode)) {
    if (unlink(path.c_str()) != 0 && errno != ENOENT) return fileError("removing " + path, errno);
    return Status::ok();
  }
  if ((st.st_mode & 0700) != 0700) chmod(path.c_str(), st.st_mode | 0700);
  int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return fileError("removing " + path, errno);
  RETURN_IF_ERROR(removeContents(fd, path));
  if (rmdir(path.c_str()) != 0 && errno != ENOENT) return fileError("removing " + path, errno);
  return Status::ok();
}

Status writeFileAtomic(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) return fileError("writing " + path, errno);
  int err = writeAll(fd, content.data(), content.size());
  if (err == 0 && fchmod(fd, 0644) != 0) err = errno;
  if (err == 0 && fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    unlink(tmp.c_str());
    return fileError("writing " + path, err);
  }
  return Status::ok();
}

bool isDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool pathExists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

int writeAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

std::string scratchDir() {
  const char* t = std::getenv("TMPDIR");
  if (t != nullptr && *t != '\0') return t;
  return "/var/tmp";
}

}  // namespace corral::image
