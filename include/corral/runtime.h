#pragma once

// `Runtime`: where a cluster's pods live. `LocalRuntime` (src/runtime/local)
// runs each pod as a set of Linux namespaces on this host, which is the
// embedded default; a Kubernetes runtime would turn the same `PodSpec`s into
// Slinky resources. The reconciler talks only to this interface.
//
// Paths in this file: a *relative* path names a file inside the cluster's own
// directory that the runtime manages (rendered configuration, secrets); an
// *absolute* source path names a host directory (a volume).
//
// Every pod is a sandbox: its root filesystem is its image under a writable
// layer that is erased whenever the pod is recreated, its root user is
// nobody outside it, and it sees of the outside only the mounts its spec
// names.

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "corral/cluster_runtime.h"
#include "corral/image.h"
#include "corral/process.h"
#include "corral/status.h"

namespace corral {

struct Mount {
  std::string source;  // Relative: inside the cluster dir. Absolute: host path.
  std::string target;  // Absolute path inside the pod.
  bool readOnly = false;
};

// How the pod's supervisor knows a daemon is ready before it starts the next.
struct Readiness {
  int tcpPort = 0;         // Something accepts connections on 127.0.0.1:port or the pod address.
  std::string unixSocket;  // This socket path accepts connections.
  std::chrono::milliseconds timeout{30000};
};

// A dependency outside the pod that must accept TCP connections before a
// daemon starts (the local equivalent of an init container that waits),
// e.g. slurmd waits for slurmctld so that its first registration succeeds.
struct StartAfter {
  std::string host;
  int port = 0;
};

// One long-running process of a pod (the local equivalent of a container).
// The supervisor starts daemons in order, waiting for each one's readiness, and
// restarts a daemon that exits.
struct DaemonSpec {
  std::string name;
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  Readiness ready;
  StartAfter startAfter;
};

// Every pod sees corral's own binaries (corral-health, enroot, the SPANK
// plugin) read-only at this path, and its daemons have it on their PATH.
inline constexpr const char* kPodBinDir = "/.corral-bin";

struct PodSpec {
  std::string cluster;
  std::string name;  // Also the hostname: controller, login, slinky-0, …
  std::string role;  // controller | login | worker | registry
  std::string address;
  int prefixLength = 24;
  int gpus = 0;  // Simulated GPUs: /dev/nvidia0 … /dev/nvidia(gpus-1).
  // The pod's root filesystem. Everything outside `mounts` is the image
  // under a writable layer of this pod instance: erased when the pod is
  // recreated (the seed's "/root … No", and "anything you pip installed").
  // /run is a tmpfs.
  ImageRef image;
  std::vector<Mount> mounts;
  // Directories on the node's disk rather than in the writable layer, empty
  // at every start of the pod (Kubernetes' emptyDir): job scratch, and the
  // overlay filesystems of container jobs, which cannot live on an overlay.
  // /tmp and /var/tmp are world-writable and sticky; the rest 0755.
  std::vector<std::string> scratchDirs;
  // Directories created (mode 0755) after the mounts, before any daemon
  // starts, e.g. `/run/munge` inside the tmpfs `/run`.
  std::vector<std::string> setupDirs;
  std::vector<DaemonSpec> daemons;
  // A counter the renderer sets (e.g. from `login restart`). A running pod
  // whose generation differs from the desired one is recreated at once.
  int generation = 0;
  // Like `generation`, but a worker whose roll generation (or image)
  // differs is recreated gracefully: drained, and recreated once its jobs
  // have ended (`cluster restart-workers`, an image update).
  int rollGeneration = 0;
};

// A file that the renderer produced, with the permission bits it needs
// (`slurmdbd.conf` must be 0600, for example).
struct RenderedFile {
  std::string content;
  int mode = 0644;
  bool operator==(const RenderedFile&) const = default;
};
using RenderedFiles = std::map<std::string, RenderedFile>;

struct ClusterNetwork {
  std::string cluster;
  int64_t id = 0;      // The store's cluster id; names the bridge.
  std::string subnet;  // e.g. 172.29.3.0/24; the host takes the first address.
};

struct PodStatus {
  bool exists = false;   // The runtime knows the pod (it may have died).
  bool running = false;  // Its supervisor is alive.
  bool ready = false;    // Every daemon reached readiness.
  std::string message;   // Why it is not ready, if known.
  int generation = 0;    // The `PodSpec.generation` it was started with.
  int rollGeneration = 0;  // Its `PodSpec.rollGeneration`.
  std::string imageId;   // The image build it runs (`PodSpec.image.id`).
};

class Runtime {
 public:
  virtual ~Runtime() = default;

  // The cluster's network: a subnet for its pods, from the runtime's own
  // pool, reserved for the cluster until `destroyCluster` (the same answer
  // every time it is asked). Addresses inside it follow the renderer's
  // offsets (src/slurm/renderer.h).
  virtual StatusOr<std::string> allocateNetwork(const std::string& cluster) = 0;

  // Creates, if absent, everything the cluster's pods share: its network, its
  // directory and its secrets (munge key, SSH host keys). Idempotent.
  virtual Status prepareCluster(const ClusterNetwork& net) = 0;

  // Storage for a managed volume, which outlives every cluster: created
  // empty and writable by everyone (mode 1777, like /tmp). Returns where it
  // is, as a `Mount.source` names it. Conflict if it exists already.
  virtual StatusOr<std::string> createVolume(const std::string& name) = 0;
  // Removes a managed volume's storage and everything in it. OK if absent.
  virtual Status deleteVolume(const std::string& name) = 0;

  // Writes rendered files (relative path -> content) into the cluster's
  // directory; each file is replaced atomically. Files not named are kept.
  virtual Status writeFiles(const std::string& cluster, const RenderedFiles& files) = 0;

  // Appends one line to a worker's simulated kernel log, where its node
  // agent reads GPU XIDs as from the driver (`corral node inject-xid`).
  virtual Status appendKernelLog(const std::string& cluster, const std::string& pod,
                                 const std::string& line) = 0;

  // The newest report of a worker's node agent (JSON, see
  // src/health/report.h), or NotFound before its first.
  virtual StatusOr<std::string> healthReport(const std::string& cluster, const std::string& pod) = 0;

  // The last `maxBytes` of a log file a pod wrote at `path` (absolute, as
  // the pod sees it), also after the pod stopped and until it is recreated:
  // evidence for a cluster that did not come up. An empty `path` is the
  // runtime's own log of the pod (its supervisor's: daemons that exited, a
  // sandbox that could not be built). NotFound if there is none.
  virtual StatusOr<std::string> podLogTail(const std::string& cluster, const std::string& pod,
                                           const std::string& path, size_t maxBytes) = 0;

  // Creates `path` (relative to the cluster's shared filesystem, /shared in
  // the pods) and its parents, and sets its owner (ids as pods see them)
  // and mode, never following a symbolic link a pod made: a login user's
  // home.
  virtual Status prepareSharedDirectory(const std::string& cluster, const std::string& path,
                                        int uid, int gid, int mode) = 0;

  // The login node's public SSH host key ("ssh-ed25519 AAAA… comment").
  virtual StatusOr<std::string> loginHostKey(const std::string& cluster) = 0;

  // Reads a file this runtime wrote with `writeFiles` (drift detection,
  // `config get`). Files pods write are not reachable this way.
  virtual StatusOr<std::string> readFile(const std::string& cluster, const std::string& path) = 0;

  // Starts the pod unless it is already running; a pod that exists but died is
  // recreated with a fresh writable layer. The image must be built. Returns
  // once the supervisor runs; readiness is reported by `podStatus`.
  virtual Status startPod(const PodSpec& spec) = 0;

  virtual StatusOr<PodStatus> podStatus(const std::string& cluster, const std::string& pod) = 0;

  // Names of the pods of `cluster` that exist on the runtime.
  virtual StatusOr<std::vector<std::string>> listPods(const std::string& cluster) = 0;

  // Stops the pod (SIGTERM to its daemons, then SIGKILL after a grace period)
  // and erases its writable layer. OK if it did not exist.
  virtual Status stopPod(const std::string& cluster, const std::string& pod) = 0;

  // Brings a running pod's mounts to `desired.mounts` without recreating it
  // (attaching or detaching a volume): mounts what is missing, unmounts what
  // is gone, remounts what changed. Processes already running keep the view
  // they had only where they made a mount namespace of their own (a Slurm
  // job's); everything started afterwards sees the new mounts. OK if the pod
  // already has them; Unavailable if it is not running.
  virtual Status updateMounts(const PodSpec& desired) = 0;

  // Restarts one daemon of a running pod at once (no back-off) and waits
  // until its replacement is ready again, at most `timeout`. The pod's other
  // daemons and processes are untouched.
  virtual Status restartDaemon(const std::string& cluster, const std::string& pod,
                               const std::string& daemon, std::chrono::milliseconds timeout) = 0;

  // Runs `argv` inside the pod's namespaces, as the pod's root.
  virtual StatusOr<ProcessResult> exec(const std::string& cluster, const std::string& pod,
                                       const std::vector<std::string>& argv,
                                       const ProcessOptions& options = {}) = 0;

  // Stops every pod of the cluster and removes its network, but keeps its
  // directory: configuration, the Slurm state and the accounting database
  // (a Terminated cluster). OK if nothing was running.
  virtual Status stopCluster(const ClusterNetwork& net) = 0;

  // Stops every pod of the cluster and removes its network and directory. OK
  // if nothing was there.
  virtual Status destroyCluster(const ClusterNetwork& net) = 0;

  // Names of the clusters that have anything on this runtime, for finding
  // orphans after a crash.
  virtual StatusOr<std::vector<std::string>> listClusters() = 0;

  // Non-null when this runtime takes whole clusters rather than pods
  // (Kubernetes): the reconciler then drives clusters through it and calls
  // none of the pod-level operations above that create or change pods.
  virtual ClusterRuntime* wholeClusters() { return nullptr; }
};

}  // namespace corral
