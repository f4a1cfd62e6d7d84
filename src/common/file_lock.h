#pragma once

// `FileLock`: an exclusive flock(2) held until destruction. Locks taken
// through separate opens conflict even within one process, so this
// serialises threads as well as processes (and nodes sharing a volume whose
// file system honours flock).

#include <string>

#include "corral/status.h"

namespace corral {

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

}  // namespace corral
