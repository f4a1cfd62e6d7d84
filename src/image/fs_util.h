#pragma once

// File-system helpers shared by the blob cache, the layer unpacker and push.
// Internal to corral_image.

#include <string>

#include "common/file_lock.h"
#include "common/unique_fd.h"
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

// Writes all of `data` to `fd`, retrying on EINTR and short writes; returns
// the errno of a failure or 0.
int writeAll(int fd, const void* data, size_t size);

// A directory for short-lived scratch files ($TMPDIR, else /var/tmp).
std::string scratchDir();

}  // namespace corral::image
