#include "common/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace corral {
namespace {

constexpr int kMaxDepth = 4096;

Status removeAt(int dirFd, const std::string& name, const std::string& shown, int depth) {
  if (depth > kMaxDepth) return internalError("cannot remove " + shown + ": nested too deeply");
  struct stat st;
  if (fstatat(dirFd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Status::ok();
    return fileError("removing " + shown, errno);
  }
  if (!S_ISDIR(st.st_mode)) {
    if (unlinkat(dirFd, name.c_str(), 0) != 0 && errno != ENOENT) {
      return fileError("removing " + shown, errno);
    }
    return Status::ok();
  }
  // Without u+rwx it could be neither listed nor emptied.
  if ((st.st_mode & 0700) != 0700) fchmodat(dirFd, name.c_str(), (st.st_mode & 07777) | 0700, 0);
  int fd = openat(dirFd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return fileError("removing " + shown, errno);
  DIR* d = fdopendir(fd);
  if (!d) {
    int e = errno;
    close(fd);
    return fileError("removing " + shown, e);
  }
  std::vector<std::string> names;
  while (struct dirent* ent = readdir(d)) {
    std::string n = ent->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  Status result;
  for (const auto& n : names) {
    Status one = removeAt(dirfd(d), n, shown + "/" + n, depth + 1);
    if (!one.isOk() && result.isOk()) result = one;
  }
  closedir(d);
  if (!result.isOk()) return result;
  if (unlinkat(dirFd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return fileError("removing " + shown, errno);
  }
  return Status::ok();
}

}  // namespace

std::string errnoText(const std::string& what, int err) { return what + ": " + std::strerror(err); }

Status fileError(const std::string& what, int err) {
  if (err == ENOSPC || err == EDQUOT) return internalError("no space left on device while " + what);
  return internalError(errnoText(what, err));
}

Status makeDirs(const std::string& path, unsigned mode) {
  if (path.empty()) return Status::ok();
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    std::string prefix = path.substr(0, pos);
    if (prefix.empty() || prefix == "/") continue;
    if (mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST) {
      return fileError("creating directory " + prefix, errno);
    }
  }
  if (!isDirectory(path)) return internalError("creating directory " + path + ": not a directory");
  return Status::ok();
}

Status removeTreeAt(int dirFd, const std::string& name, const std::string& shown) {
  return removeAt(dirFd, name, shown, 0);
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
    return fileError("removing " + path, errno);
  }
  Status st = removeAt(fd, name, p, 0);
  close(fd);
  return st;
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

Status writeFileAtomic(const std::string& path, const std::string& content, unsigned mode) {
  std::string tmp = path + ".tmp-" + randomSuffix();
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return fileError("writing " + path, errno);
  int err = writeAll(fd, content.data(), content.size());
  if (err == 0 && fchmod(fd, mode) != 0) err = errno;
  if (err == 0 && fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    unlink(tmp.c_str());
    return fileError("writing " + path, err);
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

std::string scratchDir() {
  const char* t = std::getenv("TMPDIR");
  if (t != nullptr && *t != '\0') return t;
  return "/var/tmp";
}

}  // namespace corral
