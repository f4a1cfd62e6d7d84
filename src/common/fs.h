#pragma once

// Filesystem helpers any part may use (the image library, the container
// runtime, …): directories made and removed whatever their modes, files
// replaced atomically, listings. Errors carry the path and the errno text.

#include <cstddef>
#include <string>
#include <vector>

#include "corral/status.h"

namespace corral {

// "WHAT: strerror(err)", for messages.
std::string errnoText(const std::string& what, int err);

// An Internal error for a failed filesystem operation: "WHAT: strerror", or
// "no space left on device while WHAT" for ENOSPC and EDQUOT.
Status fileError(const std::string& what, int err);

// mkdir -p with `mode` for the directories it creates; an error if `path`
// ends up not being a directory.
Status makeDirs(const std::string& path, unsigned mode = 0755);

// Removes `path` and everything under it, making directories writable
// first (images hold 0555 and overlays mode-000 directories). Never follows
// symlinks. A missing `path` is OK.
Status removeTree(const std::string& path);
// The same for `name` in the directory open as `dirFd`; `shown` is its path
// for messages.
Status removeTreeAt(int dirFd, const std::string& name, const std::string& shown);

// Replaces `path` with `content` (mode `mode`) through a temporary file,
// fsync and a rename: a reader sees the old file or the whole new one.
Status writeFileAtomic(const std::string& path, const std::string& content, unsigned mode = 0644);

// Writes all of `data` to `fd`, retrying short writes; 0 or an errno.
int writeAll(int fd, const void* data, size_t size);

// Twelve random hex digits, for temporary names.
std::string randomSuffix();

bool pathExists(const std::string& path);   // lstat succeeds.
bool isDirectory(const std::string& path);  // stat says directory.

// Entries of a directory, without "." and "..", sorted. NotFound if it is
// missing.
StatusOr<std::vector<std::string>> listDirectory(const std::string& path);

// Where large temporary files go: $TMPDIR, else /var/tmp (not /tmp, often
// a small tmpfs).
std::string scratchDir();

}  // namespace corral
