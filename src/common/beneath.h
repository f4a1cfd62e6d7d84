#pragma once

// Files inside a directory tree that someone else controls: a pod's writable
// layer, its agent directory, a cluster's shared storage. A pod's root may
// have put symbolic links, FIFOs or huge files there, so every path is
// resolved with openat2(RESOLVE_IN_ROOT) — ".." and symlinks cannot leave the
// tree — and every read is bounded. corrald runs as root on the host; these
// are the only ways it touches pod-writable files.

#include <string>

#include "corral/status.h"

namespace corral {

// An O_PATH descriptor of `path` resolved inside `rootFd` as if it were "/".
// With `create`, missing components are made (mode 0755, owned by whoever
// calls), and a last component that is a directory (kDirectory) or an empty
// file (kFile). NotFound when it does not exist and `create` is kNo. The
// caller owns the descriptor.
enum class Create { kNo, kDirectory, kFile };
StatusOr<int> openInRoot(int rootFd, const std::string& path, Create create);

// The last `maxBytes` bytes (all of it when shorter) of the regular file
// `path` inside `root`. NotFound if it is missing; InvalidArgument if it is
// not a regular file (a FIFO never blocks the caller).
StatusOr<std::string> readFileBeneath(const std::string& root, const std::string& path,
                                      size_t maxBytes);

// Appends `text` to the regular file `path` inside `root`, creating it with
// `mode` (owned by the caller). Refuses anything but a regular file.
Status appendFileBeneath(const std::string& root, const std::string& path,
                         const std::string& text, int mode = 0644);

// Creates `path` inside `root` (and missing parents, mode 0755, owned by the
// caller) and sets its owner and mode, never following a symbolic link: a
// login user's home on shared storage.
Status prepareDirectoryBeneath(const std::string& root, const std::string& path, int uid,
                               int gid, int mode);

}  // namespace corral
