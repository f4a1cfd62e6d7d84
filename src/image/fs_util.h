#pragma once

// File-system helpers shared by the blob cache, the layer unpacker and push.
// Internal to corral_image.

#include <string>

#include "corral/status.h"

namespace corral::image {

// An error for a failed system call on behalf of `what` ("writing blob …"):
// "no space left on device while <what>" for ENOSPC/EDQUOT, otherwise
// "<what>: <strerror>".
Status fileError(const std::string& what, int err);

// `mkdir -p`.
Status makeDirs(const std::string& path);

// `rm -rf` that never follows symbolic links and copes with directories
// without write permission. A missing `path` is not an error.
Status removeTree(const std::string& path);

// Removes `name` (a file, or a directory tree) inside the directory open as
// `dirFd`, never following symbolic links. `shown` names it in errors.
Status removeTreeAt(int dirFd, const std::string& name, const std::string& shown);

// Writes `content` to `path` through a temporary file in the same directory,
// fsync and rename, so that readers see the old file or the whole new one.
Status writeFileAtomic(const std::string& path, const std::string& content);

bool isDirectory(const std::string& path);
bool pathExists(const std::string& path);

// An exclusive flock(2) held until destruction. Locks taken through separate
// opens conflict even within one process, so this serialises threads as well
// as processes (and nodes sharing a volume whose file system honours flock).
class FileLock {
 public:
  // Blocks until the lock on `path` (created if missing) is ours.
  static StatusOr<FileLock> acquire(const std::string& path);
  FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Closes a file descriptor on destruction.
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_;
};

// Writes all of `data` to `fd`, retrying on EINTR and short writes; returns
// the errno of a failure or 0.
int writeAll(int fd, const void* data, size_t size);

// A directory for short-lived scratch files ($TMPDIR, else /var/tmp).
std::string scratchDir();

}  // namespace corral::image
