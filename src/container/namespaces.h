#pragma once

// Linux namespace and mount primitives of the container runtime, as plain
// functions. Each returns an error naming the operation, the path and the
// errno text. They act on the calling process, which must be
// single-threaded for `enterUserNamespace`.

#include <functional>
#include <string>
#include <vector>

#include "common/beneath.h"  // openInRoot, Create
#include "corral/status.h"

namespace corral::container {

// unshare(CLONE_NEWUSER|CLONE_NEWNS), setgroups=deny, and a uid/gid map of
// one entry: the caller's ids to themselves, or to 0 with `asRoot`. Then
// makes every mount private, so that nothing done here reaches the node.
Status enterUserNamespace(bool asRoot);

// "/proc/self/fd/N": a path for mount(2) that names what `fd` does.
std::string fdPath(int fd);

// A bind mount, recursive with `recursive`.
Status bindMount(const std::string& source, const std::string& target, bool recursive);

// Makes the mount at `path` read-only (and nosuid/nodev/noexec when asked),
// keeping the flags the node locked on it; with `recursive` its submounts
// too.
Status makeReadOnly(const std::string& path, bool recursive, bool noSuid = false,
                    bool noDev = false, bool noExec = false, bool readOnly = true);

// An overlay: `lowers` top first, `upper`/`work` empty for a read-only one.
// Uses `userxattr`, as unprivileged overlays must.
Status mountOverlay(const std::vector<std::string>& lowers, const std::string& upper,
                    const std::string& work, const std::string& target);

// pivot_root into `root` (a mount point), detaching the old root.
Status pivotInto(const std::string& root);

// Runs `fn` in a forked child inside a fresh user namespace (the caller
// mapped to root) and private mount namespace, and returns its status. The
// mounts it makes vanish with it.
Status runInPrivateNamespace(const std::function<Status()>& fn);

}  // namespace corral::container
