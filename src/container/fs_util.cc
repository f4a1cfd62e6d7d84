#include "container/fs_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace corral::container {
namespace {

// Removes `name` in `dirFd`; `shown` is its path for messages.
Status removeAt(int dirFd, const std::string& name, const std::string& shown, int depth) {
  if (depth > 4096) return internalError("cannot remove " + shown + ": nested too deeply");
  struct stat st;
  if (fstatat(dirFd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Status::ok();
    return internalError(errnoText("cannot remove " + shown, errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    if (unlinkat(dirFd, name.c_str(), 0) != 0 && errno != ENOENT) {
      return internalError(errnoText("cannot remove " + shown, errno));
    }
    return Status::ok();
  }
  if ((st.st_mode & 0700) != 0700) fchmodat(dirFd, name.c_str(), (st.st_mode & 07777) | 0700, 0);
  int fd = openat(dirFd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return internalError(errnoText("cannot remove " + shown, errno));
  DIR* d = fdopendir(fd);
  if (!d) {
    int e = errno;
    close(fd);
    return internalError(errnoText("cannot remove " + shown, e));
  }
  std::vector<std::string> names;
  while (struct dirent* ent = readdir(d)) {
    std::string n = ent->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  Status result;
  for (const auto& n : names) {
    Status st2 = removeAt(dirfd(d), n, shown + "/" + n, depth + 1);
    if (!st2.isOk() && result.isOk()) result = st2;
  }
  closedir(d);
  if (!result.isOk()) return result;
  if (unlinkat(dirFd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return internalError(errnoText("cannot remove " + shown, errno));
  }
  return Status::ok();
}

}  // namespace

std::string errnoText(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

Status makeDirs(const std::string& path, unsigned mode) {
  if (path.empty()) return invalidArgument("empty path");
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    std::string prefix = path.substr(0, pos);
    if (prefix.empty()) continue;
    if (mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST) {
      return internalError(errnoText("cannot create " + prefix, errno));
    }
  }
  if (!isDirectory(path)) return internalError("cannot create " + path + ": not a directory");
  return Status::ok();
}

Status removeTree(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.rfind('/');
  std::string parent = slash == std::string::npos ? "." : (slash == 0 ? "/" : p.substr(0, slash));
  std::string name = slash == std::string::npos ? p : p.substr(slash + 1);
  int fd = open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::ok();
    return internalError(errnoText("cannot remove " + path, errno));
  }
  Status st = removeAt(fd, name, p, 0);
  close(fd);
  return st;
}

Status writeFileAtomic(const std::string& path, const std::string& content, unsigned mode) {
  std::string tmp = path + ".tmp-" + randomSuffix();
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return internalError(errnoText("cannot write " + path, errno));
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      unlink(tmp.c_str());
      return internalError(errnoText("cannot write " + path, e));
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0 || rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    unlink(tmp.c_str());
    return internalError(errnoText("cannot write " + path, e));
  }
  return Status::ok();
}

std::string randomSuffix() {
  unsigned char bytes[6];
  if (getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    unsigned v = static_cast<unsigned>(getpid());
    std::memcpy(bytes, &v, sizeof v);
    bytes[4] = bytes[5] = 0;
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

bool pathExists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

bool isDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

StatusOr<std::vector<std::string>> listDirectory(const std::string& path) {
  DIR* d = opendir(path.c_str());
  if (!d) {
    if (errno == ENOENT) return notFound(errnoText("cannot list " + path, errno));
    return internalError(errnoText("cannot list " + path, errno));
  }
  std::vector<std::string> out;
  while (struct dirent* ent = readdir(d)) {
    std::string n = ent->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace corral::container
