#pragma once

// What a Pyxis user asks for, parsed and checked without Slurm: the
// --container-* options of srun, sbatch and salloc, their PYXIS_* defaults,
// the plugin's plugstack.conf arguments, and from those the `enroot` command
// lines that make and start a step's container. The SPANK glue
// (src/spank/plugin) only moves values between Slurm and this.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "container/container.h"
#include "corral/status.h"

namespace corral::spank {

enum class OptionId {
  kImage,
  kMounts,
  kWorkdir,
  kName,
  kSave,
  kMountHome,
  kNoMountHome,
  kRemapRoot,
  kNoRemapRoot,
  kWritable,
  kReadonly,
  kEntrypoint,
  kNoEntrypoint,
  kEnv,
  kUnshare,
  kEntrypointLog,
};

struct OptionInfo {
  OptionId id;
  const char* name;     // Without the leading "--".
  const char* arginfo;  // nullptr for flags.
  const char* usage;
};
// Every option, in `srun --help` order.
const std::vector<OptionInfo>& optionTable();

// --container-name=NAME[:FLAG]
enum class NameMode {
  kAuto,    // Use the container if it exists, create it otherwise.
  kCreate,  // Create it; an error if it exists.
  kExec,    // Join the running container of another step; an error if none.
  kNoExec,  // Use or create it, but never join a running one.
};

struct Options {
  std::string image;   // Reference or squashfs path; empty: no container.
  std::string mounts;  // Pyxis' list, checked by parseMountList.
  std::string workdir;  // Absolute, or relative to the container's root.
  std::string name;
  NameMode nameMode = NameMode::kAuto;
  std::string save;
  std::optional<bool> mountHome;
  std::optional<bool> remapRoot;
  std::optional<bool> writable;
  std::optional<bool> entrypoint;
  std::optional<bool> entrypointLog;  // Show what the entrypoint wrote.
  std::vector<std::string> env;  // Names whose host value wins over the image's.
  std::optional<container::Unshare> unshare;  // --container-unshare.

  bool any() const;  // Whether any container option was given.
};

// Applies one option (from the command line, or from a PYXIS_* default);
// validates its argument: a malformed image reference, a relative workdir, a
// bad name flag or mount list is an InvalidArgument that says which.
Status setOption(Options& o, OptionId id, const std::string& arg);

// PYXIS_CONTAINER_IMAGE, _MOUNTS, _WORKDIR, _NAME, _SAVE, _MOUNT_HOME,
// _REMAP_ROOT, _WRITABLE, _READONLY, _ENTRYPOINT, _ENTRYPOINT_LOG, _ENV and
// _UNSHARE fill what the command line left unset (booleans: 1/0, y/n,
// yes/no, true/false).
Status applyEnvironmentDefaults(Options& o, const std::map<std::string, std::string>& env);

// The plugin's arguments in plugstack.conf ("runtime_path=/x/enroot
// remap_root=1 …").
struct PluginArgs {
  std::string runtimePath = "enroot";
  bool remapRoot = true;
  bool mountHome = false;
  bool writable = true;
  bool executeEntrypoint = false;
  bool sbatchSupport = true;
};
StatusOr<PluginArgs> parsePluginArgs(const std::vector<std::string>& args);

// The options with the plugin's defaults applied to what the user left unset.
struct Resolved {
  Options options;
  bool mountHome = false;
  bool remapRoot = true;
  bool writable = true;
  bool entrypoint = false;
  bool entrypointLog = false;
  container::Unshare unshare;
};
Resolved resolve(const Options& o, const PluginArgs& a);

// The container's name in the user's data path: "pyxis_<job>_<name>" for a
// named container (it lives as long as the job), "pyxis_<job>.<step>" for an
// unnamed one (removed at the step's end). A name "<job>.<step>" of this job
// is that step's unnamed container, which a later step may attach to.
std::string containerName(const Options& o, unsigned job, unsigned step);
bool isJobContainer(const std::string& containerName, unsigned job);
bool namesUnnamedContainer(const Options& o, unsigned job);

// `enroot create` for the step (--force never: an existing name is used).
std::vector<std::string> createCommand(const PluginArgs& a, const Resolved& r,
                                       const std::string& name);
// `enroot start --hold-fd FD …` for the step's holder process. `home` is
// the job's $HOME (mounted at /root under remap-root, else at itself);
// relative mount sources are left for the runtime to resolve in the job's
// working directory.
std::vector<std::string> startCommand(const PluginArgs& a, const Resolved& r,
                                      const std::string& name, int holdFd,
                                      const std::string& gpus, const std::string& home,
                                      const std::vector<std::string>& extraMounts);
// `enroot export -o PATH NAME` for --container-save.
std::vector<std::string> exportCommand(const PluginArgs& a, const std::string& name,
                                       const std::string& path);

// What a task's environment becomes inside the container.
struct TaskEnvironment {
  std::map<std::string, std::string> set;
  std::vector<std::string> unset;
};

// The environment a task gets inside the container, from `jobEnv` (the
// task's environment on the node): the image's variables (or what its
// entrypoint left) override the job's, except the names in --container-env
// that the job sets; LANG, LANGUAGE and LC_ALL are dropped unless named
// there; `gpuEnv` (from the runtime) is applied last. For PMIx steps the
// PMIX_MCA_{ptl,psec,gds} selections that Slurm's server expects, and for
// images with PYTORCH_VERSION torch.distributed's MASTER_ADDR, MASTER_PORT,
// WORLD_SIZE, RANK and LOCAL_RANK, as Enroot's hooks give them.
// `firstNode` is the step's first node (for MASTER_ADDR).
TaskEnvironment taskEnvironment(const std::vector<std::string>& imageEnv,
                                const std::vector<std::string>& keepNames,
                                const std::map<std::string, std::string>& gpuEnv,
                                const std::map<std::string, std::string>& jobEnv,
                                const std::string& firstNode = "");

// Mounts a PMIx step needs besides the user's (Enroot's PMIx hook): the
// PMIx server's directory (PMIX_SERVER_TMPDIR; before the tasks exist, where
// Slurm makes it: <SlurmdSpoolDir>/pmix.<job>.<step>/) and MUNGE's socket
// directory, so that the client in the container proves who it is with
// psec/munge (a remapped root's uid inside is not the job's, and
// psec/native would be refused). The caller skips sources that are missing.
std::vector<std::string> pmixMounts(const std::map<std::string, std::string>& jobEnv,
                                    unsigned job, unsigned step,
                                    const std::string& slurmdSpoolDir = "/var/spool/slurmd");

}  // namespace corral::spank
