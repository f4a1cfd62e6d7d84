#pragma once

// File-system helpers of the container runtime. Errors carry the path and
// the errno text.

#include <string>
#include <vector>

#include "corral/status.h"

namespace corral::container {

// "PATH: strerror(errno)", for messages.
std::string errnoText(const std::string& what, int err);

// mkdir -p with `mode` for the directories it creates.
Status makeDirs(const std::string& path, unsigned mode);

// Removes `path` and everything under it, making directories writable first
// (images hold 0555 and overlays mode-000 directories). Does not follow
// symlinks. A missing `path` is OK.
Status removeTree(const std::string& path);

// Writes `content` to `path` through a temporary file and a rename.
Status writeFileAtomic(const std::string& path, const std::string& content, unsigned mode = 0644);

// A short random suffix for temporary names.
std::string randomSuffix();

bool pathExists(const std::string& path);  // lstat succeeds.
bool isDirectory(const std::string& path);  // stat says directory.

// Entries of a directory, without "." and "..", sorted.
StatusOr<std::vector<std::string>> listDirectory(const std::string& path);

}  // namespace corral::container
