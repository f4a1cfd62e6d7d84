#pragma once

// The Enroot-compatible container runtime: settings, the containers of one
// user on one node, and starting one. The `enroot` binary (src/exe) is a thin
// CLI over this; the Pyxis-compatible SPANK plugin (src/spank) drives that
// binary and reads containers' configs through this header.
//
// A container lives in <dataPath>/<name>/:
//   config.json   the image's ImageConfig (env, workdir, entrypoint, cmd)
//   rootfs/       a full copy (made from a squashfs file), or
//   lower         a file naming a read-only unpacked image in the cache, with
//   upper/ work/  an overlay's writable layer (made from a registry image):
//                 creating one costs no copy, whatever the image's size.
//   mnt/          overlays: where `start` mounts the overlay, in its own
//                 private mount namespace (empty on the node).
// Hidden entries of <dataPath> (".create-…", ".remove-…", ".start-…") are
// the runtime's temporaries.

#include <map>
#include <string>
#include <vector>

#include "corral/status.h"
#include "image/image.h"

namespace corral::container {

// Enroot's settings, from /etc/enroot/enroot.conf (or $ENROOT_CONFIG_FILE)
// overridden by the environment, for one user. Values may use $(id -u),
// $(id -g), $UID, $HOME, $USER and ${NAME} of the environment.
struct Settings {
  std::string dataPath;     // ENROOT_DATA_PATH
  std::string cachePath;    // ENROOT_CACHE_PATH
  std::string runtimePath;  // ENROOT_RUNTIME_PATH
  std::string configPath;   // ENROOT_CONFIG_PATH (holds .credentials)
  bool mountHome = false;   // ENROOT_MOUNT_HOME
  bool writable = true;     // ENROOT_ROOTFS_WRITABLE
  bool remapRoot = false;   // ENROOT_REMAP_ROOT
  image::RegistryOptions registry;  // ENROOT_ALLOW_HTTP, CORRAL_HTTP_REGISTRIES, ENROOT_MAX_CONNECTIONS
};

struct Identity {
  unsigned uid = 0;
  unsigned gid = 0;
  std::string user;
  std::string home;
};

StatusOr<Settings> loadSettings(const Identity& who, const std::map<std::string, std::string>& env,
                                const std::string& configFile = "/etc/enroot/enroot.conf");

// One mount into a container: a bind of a node path, a fresh tmpfs, or the
// removal of what is mounted at `target` (Pyxis' "umount:").
enum class MountKind { kBind, kTmpfs, kUmount };

struct Mount {
  MountKind kind = MountKind::kBind;
  std::string source;  // Binds: a path on the node (absolute, or relative to the cwd).
  std::string target;  // In the container: absolute, or relative to its root.
  bool readOnly = false;
  bool recursive = true;
  // Flags added to the bind mount (the node's own nosuid/nodev/noexec are
  // always kept).
  bool noSuid = false;
  bool noDev = false;
  bool noExec = false;
  bool unbindable = false;  // "unbindable"/"runbindable": propagation.
  std::string data;         // tmpfs: its options ("size=1G,huge=within_size").
};

// Pyxis' --container-mounts: "SRC[:DST[:FLAGS]][,…]" with FLAGS joined by '+'
// (ro, rw, rbind, bind, nosuid, nodev, noexec, unbindable, propagation
// flags; for tmpfs also its own options such as size= or huge=). SRC is an
// absolute path, a relative one ("./data", resolved against the caller's
// working directory), "tmpfs" or "umount"; DST is absolute or relative to
// the container's root, and defaults to SRC. Validates the syntax only;
// start() checks that sources exist.
StatusOr<std::vector<Mount>> parseMountList(const std::string& list);

// What Pyxis' --container-unshare takes: "net", "ipc", "uts", joined by ','.
struct Unshare {
  bool net = false;
  bool ipc = false;
  bool uts = false;
  bool any() const { return net || ipc || uts; }
};
StatusOr<Unshare> parseUnshare(const std::string& list);

// The environment a container's processes get for the GPUs they may use
// (device minors, e.g. {2,3}): NVIDIA_VISIBLE_DEVICES=2,3 and
// CUDA_VISIBLE_DEVICES=0,1 (only those devices exist inside); "void" and
// no CUDA_VISIBLE_DEVICES devices when empty.
std::map<std::string, std::string> gpuEnvironment(const std::vector<int>& gpus);

// Parses a Slurm GPU list ("0,1", "0-3", "2,5-6") into minors.
StatusOr<std::vector<int>> parseGpuList(const std::string& list);

bool exists(const Settings& s, const std::string& name);
StatusOr<image::ImageConfig> config(const Settings& s, const std::string& name);


// ---------------------------------------------------------------------------
// Additions for the `enroot` CLI and its tests. Everything below runs as the
// calling user; nothing needs privileges beyond unprivileged user namespaces.

// Container names: 1-128 of [A-Za-z0-9_.+-], not starting with '.' (hidden
// names are the runtime's temporaries), never "/" or "..".
Status validateName(const std::string& name);

// Enroot's default names. For `import`: "[user+][registry+]repo[+tag].sqsh"
// with '/' turned into '+' (Docker Hub's registry and "library/" are left
// out, as Enroot does). For `create`: a squashfs file's name without its
// .sqsh/.squashfs extension, or the import name without ".sqsh".
std::string defaultImportFile(const std::string& uri);
std::string defaultContainerName(const std::string& image);

enum class Kind { kCopy, kOverlay };

// What `list` shows.
struct ContainerInfo {
  std::string name;
  Kind kind = Kind::kCopy;
  std::string path;   // <dataPath>/<name>
  std::string lower;  // Overlay containers: the cached rootfs they are made from.
  long long createdUnix = 0;
};

// `enroot import`: pulls `uri` into the cache and writes a squashfs of it to
// `output` (default: defaultImportFile(uri) in the current directory), with
// the image's config at /.corral/config.json and its environment appended to
// /etc/environment. Fails, writing nothing, when `output` exists. Returns the
// file written.
StatusOr<std::string> importImage(const Settings& s, const std::string& uri,
                                  const std::string& output,
                                  const image::ProgressFn& progress = {});

// `enroot create`: `image` is a squashfs file (copied: <name>/rootfs) or a
// registry reference (`docker://…`, pulled into the cache: an overlay). An
// existing `name` is a Conflict unless `force`, which replaces it. Atomic: a
// failure leaves nothing behind. Returns the container's name.
StatusOr<std::string> create(const Settings& s, const std::string& image, const std::string& name,
                             bool force, const image::ProgressFn& progress = {});

StatusOr<std::vector<ContainerInfo>> list(const Settings& s);
StatusOr<ContainerInfo> inspect(const Settings& s, const std::string& name);

// Removes a container (its overlay's mode-000 work dirs included).
Status remove(const Settings& s, const std::string& name);

// `enroot export`: a squashfs of the container's merged filesystem, with its
// config at /.corral/config.json. Fails, writing nothing, when `output`
// exists, unless `force`: then it is replaced at once (a rename), so that a
// reader never sees half a file.
Status exportContainer(const Settings& s, const std::string& name, const std::string& output,
                       bool force = false);

struct StartOptions {
  bool root = false;       // Map the caller to uid/gid 0 (also Settings::remapRoot).
  bool writable = false;   // Read-write rootfs (also Settings::writable).
  bool readOnly = false;   // Read-only rootfs, whatever the settings say.
  std::vector<Mount> mounts;
  // "NAME" keeps the caller's NAME (or its absence) over the image's;
  // "NAME=VALUE" sets it.
  std::vector<std::string> env;
  bool gpusGiven = false;  // Without --gpus no GPU device is bound and no GPU env set.
  std::vector<int> gpus;
  std::string workdir;     // Overrides the image's (relative: to the container's root).
  Unshare unshare;         // Namespaces of its own besides user and mount.
  // With holdFd: run the image's entrypoint once, as a container's first
  // process would, and report the environment it leaves and what it wrote.
  bool entrypoint = false;
  int holdFd = -1;         // See `start`.
  std::vector<std::string> command;  // Empty: the image's entrypoint+cmd, else /bin/sh.
};

// What a holder (start with holdFd) reports on its descriptor when ready:
// "ready" and, after a space, this as one line of JSON.
struct HolderReport {
  std::vector<std::string> env;  // The entrypoint's environment ("K=V"); empty without one.
  std::string entrypointLog;     // What the entrypoint wrote.
};
std::string holderReportLine(const HolderReport& r);
// Parses a holder's answer: its report, or the error it sent ("error: …").
StatusOr<HolderReport> parseHolderAnswer(const std::string& answer);

// The holders of `name` that are running on this node (their pids, oldest
// first), from the records holders leave in the runtime path; stale records
// are ignored.
std::vector<int> runningHolders(const Settings& s, const std::string& name);
// Every running holder of the user on this node, by container name.
std::map<std::string, std::vector<int>> allRunningHolders(const Settings& s);

// Whether process `pid` has a namespace of `kind` ("net", "ipc", "user"…)
// other than the caller's (false when either cannot be read).
bool hasOwnNamespace(int pid, const char* kind);

// `enroot exec PID COMMAND…`: joins the namespaces of the container whose
// holder (or any process in it) is `pid` and execs `command` there with
// the caller's environment. Returns only on failure.
Status execInContainer(int pid, const std::vector<std::string>& command);

// Records the calling holder of `name` in the runtime path (opened as
// `runtimeDirFd` before the container's mounts hid it), for runningHolders.
Status recordHolder(const Settings& s, int runtimeDirFd, const std::string& name);
// Removes the record of holder `pid` (which its killer calls once it is gone).
void forgetHolder(const Settings& s, int pid);

// Installs the seccomp filter Enroot gives containers: chown, setuid,
// setgroups and their relatives succeed without doing anything, so that
// package managers run as a remapped root (which owns only one uid).
Status installIdFakingFilter();

// Starts a container in this process: a new user and mount namespace, the
// rootfs with /proc, /sys, /dev, the node's /etc/hosts, /etc/hostname and
// /etc/resolv.conf, the GPUs' devices and the user's mounts, then
// pivot_root. `target` is a container name or a squashfs file (unpacked into
// a temporary container that a helper process removes when this one ends).
// On success it exec()s the command and never returns; with `holdFd` >= 0 it
// writes "ready …" (holderReportLine) to that fd instead and sleeps until killed (SIGKILL when
// its parent dies), so that others can setns() into its namespaces. Returns
// only on failure. Must be called single-threaded.
Status start(const Settings& s, const std::string& target, const StartOptions& options,
             const std::map<std::string, std::string>& callerEnv, const Identity& who);

// The container's environment: `callerEnv`, overridden by the image's `env`
// except for names in `overrides` ("NAME" keeps the caller's, "NAME=VALUE"
// sets), then the GPU environment when `gpus` is given, and a default PATH
// when none is set. Sorted "KEY=VALUE" lines.
std::vector<std::string> containerEnvironment(const std::map<std::string, std::string>& callerEnv,
                                              const std::vector<std::string>& imageEnv,
                                              const std::vector<std::string>& overrides,
                                              const std::vector<int>* gpus);

// Which entries of the node's /dev (names, as listed) a container with
// `gpus` gets: nvidiaN for exactly those minors, plus nvidiactl,
// nvidia-uvm, nvidia-uvm-tools, nvidia-modeset and nvidia-caps when present
// (the shared ones only when `gpus` is non-empty). Never another nvidiaM.
std::vector<std::string> selectGpuDevices(const std::vector<std::string>& devEntries,
                                          const std::vector<int>& gpus);

// Parses a boolean setting as Enroot does: y/yes/1/true and n/no/0/false.
StatusOr<bool> parseBool(const std::string& key, const std::string& value);

}  // namespace corral::container
