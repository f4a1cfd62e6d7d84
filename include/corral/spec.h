#pragma once

// Value types that describe a cluster: what the user asked for (`ClusterSpec`),
// what corral recorded about it (`ClusterRecord`) and the statuses of the
// seed's "Cluster Statuses" table. Plain data; JSON conversion lives in
// `src/common/spec_json.cc`.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "corral/image.h"

namespace corral {

// Limits that validation enforces. They are here, not in the validator, so the
// API, the CLI and the docs quote the same numbers.
inline constexpr int kMaxGpuNodes = 200;
inline constexpr int kMaxCpuNodes = 8;
inline constexpr int kMaxGpusPerNode = 16;
inline constexpr int kMaxSshKeys = 64;
inline constexpr size_t kMaxClusterNameLength = 40;
inline constexpr int kMaxUserPartitions = 20;
inline constexpr int kMaxSlurmConfEntries = 64;

inline constexpr const char* kGpuGroup = "slinky";
inline constexpr const char* kCpuGroup = "cpu-workers";

// A partition a user made (platform partitions are not in the spec: the
// renderer derives them). `nodes` is a Slurm hostlist of existing nodes;
// `options` holds allowlisted partition parameters by canonical name
// (`MaxTime`, `DefaultTime`, `Default`, …; see src/slurm/slurm_params.h).
struct PartitionSpec {
  std::string name;
  std::string nodes;
  std::map<std::string, std::string> options;
  bool operator==(const PartitionSpec&) const = default;
};

// Volume types of the seed's storage table. A dataset is mounted read-only.
inline constexpr const char* kVolumeTypes[] = {"pfs", "sfs", "weka", "dataset"};
inline constexpr int kMaxVolumesPerCluster = 16;
inline constexpr int kMaxLoginUsers = 256;

// A volume: a host directory that outlives clusters.
struct Volume {
  std::string name;
  std::string type;      // pfs | sfs | weka | dataset
  std::string hostPath;  // Absolute: --source, or <data dir>/volumes/<name>.
  bool managed = true;   // corral made hostPath (and removes it with the volume).
  int64_t createdAt = 0;
  std::string project;   // Who may see and attach it (see `Account`).
  bool operator==(const Volume&) const = default;
};

// A volume attached to a cluster: mounted at `path` on the login node and
// every worker. `hostPath` and `readOnly` are copied from the volume when it
// is attached, so that rendering never needs the volume table.
struct VolumeAttachment {
  std::string volume;
  std::string path;
  std::string hostPath;
  bool readOnly = false;
  bool operator==(const VolumeAttachment&) const = default;
};

// A login user (login user management): the same uid on the login node and
// every worker, home on the cluster's shared storage.
struct LoginUser {
  std::string name;
  int uid = 0;
  std::vector<std::string> sshKeys;
  bool operator==(const LoginUser&) const = default;
};

// What the user declared. Every accepted change produces a new revision of it.
// Container jobs (`srun --container-image`, issue 5): what the nodes'
// Enroot-compatible runtime is configured with.
struct ContainerSettings {
  // A docker-registry pod on the cluster network, "registry:5000" to jobs,
  // its storage kept with the cluster (demos, tests, air-gapped sites).
  bool registry = false;
  // Where nodes keep pulled images, under /shared/ so that one import serves
  // every node; empty: each node's own disk.
  std::string cachePath;
  // Registries (host[:port]) spoken to over plain http.
  std::vector<std::string> insecureRegistries;
  bool operator==(const ContainerSettings&) const = default;
};

// The cluster's own shared filesystem, on the login node and every worker.
inline constexpr const char* kSharedPath = "/shared";
inline constexpr int kMaxInsecureRegistries = 16;
inline constexpr const char* kClusterRegistry = "registry:5000";

struct ClusterSpec {
  std::string name;
  // The cluster image every pod runs on (its Slurm stack). A create names
  // it (or takes corrald's default); the API fills in the build and Slurm
  // release it resolves to, so a revision says exactly what it runs.
  ImageRef image;
  int gpuNodes = 4;
  int gpusPerNode = 8;
  int cpuNodes = 0;
  // OpenSSH public keys ("ssh-ed25519 AAAA… comment") for root on the login node.
  std::vector<std::string> sshKeys;
  // The user's own partitions, at most kMaxUserPartitions, in creation order.
  std::vector<PartitionSpec> partitions;
  // slurm.conf parameters the user set (`corral config set`), by canonical
  // name; each overrides corral's default for that parameter.
  std::map<std::string, std::string> slurmConf;
  // Bumped by `corral login restart`: a new value recreates the login pod.
  int loginGeneration = 0;
  // Bumped by `corral controller restart`: recreates the controller pod
  // (slurmctld saves the queue on the way down and reads it back).
  int controllerGeneration = 0;
  // Bumped per node by `corral node reboot`: a new value recreates that pod.
  std::map<std::string, int> nodeGenerations;
  // Bumped by `corral cluster restart-workers`: every worker is recreated,
  // each once its jobs have finished (drained first), as an image update's
  // workers are.
  int workerGeneration = 0;
  std::vector<VolumeAttachment> volumes;
  std::vector<LoginUser> users;
  ContainerSettings containers;
  bool operator==(const ClusterSpec&) const = default;
};

enum class ClusterStatus {
  kCreating,
  kRunning,
  kFailed,
  kTerminating,
  kTerminated,
  kDeleting,
  kDeleted,
};

const char* statusName(ClusterStatus s);
std::optional<ClusterStatus> parseStatus(const std::string& s);

// One Slurm node as corral placed it: its Slurm name, the group it belongs to,
// the "physical machine identifier" the console shows beside it, and its
// address on the cluster network.
struct NodeRecord {
  std::string name;        // slinky-0, cpu-workers-3
  std::string group;       // slinky, cpu-workers
  std::string physicalId;  // e.g. corral_node_682
  std::string address;     // 172.29.3.10
};

// Everything the store keeps about one cluster, in two parts that are
// written and versioned apart, as Kubernetes keeps an object's spec and
// status: the API writes the desired part (a change request), the
// reconciler the observed part (progress, nodes, what runs), and neither
// write makes the other retry. `RecordPart` names them; `copyRecordPart`
// (src/model/record.h) is the one list of which field is whose.
//
// Desired (`version`): id, spec, project, revision, platformPartitions,
//   changeAuthor, changeMessage, changeForce, changeRollback, createdAt.
// Observed (`statusVersion`): appliedRevision, status, phase, reason,
//   subnet, loginAddress, loginHostKey, nodes, controllerConfigKey.
// Both: updatedAt (the newest write of either).
struct ClusterRecord {
  int64_t id = 0;  // Assigned by the store; never reused.
  ClusterSpec spec;
  // The project the cluster belongs to: only its members (and admins) see it.
  std::string project;
  int64_t revision = 0;         // The newest desired revision of `spec`.
  int64_t appliedRevision = 0;  // The newest revision fully applied; 0 = none.
  ClusterStatus status = ClusterStatus::kCreating;
  std::string phase;   // What the reconciler is working on, for progress.
  // Also set for a Running cluster whose last change failed and was rolled back.
  std::string reason;  // Why the cluster is Failed, or the last error.
  std::string subnet;  // CIDR of the cluster network, e.g. 172.29.3.0/24.
  std::string loginAddress;
  std::string loginHostKey;  // Public SSH host key of the login node.
  std::vector<NodeRecord> nodes;
  // Extra platform partitions (corrald's --platform-partition), fixed when the
  // cluster is created so that re-rendering never depends on corrald's flags.
  std::vector<std::string> platformPartitions;
  // Who made the newest revision and what it changed; the store copies these
  // into that revision's history entry.
  std::string changeAuthor;
  std::string changeMessage;
  // The newest revision may cancel jobs on nodes it removes (`scale --force`)
  // instead of waiting for them.
  bool changeForce = false;
  // The newest revision is corral's automatic rollback after a failed one
  // (copied into its history entry as `rollback`).
  bool changeRollback = false;
  // What the running slurmctld was last (re)started with, as far as a restart
  // matters: node names and restart-only parameters. An apply restarts
  // slurmctld when the target's key differs (see src/reconcile/apply.cc).
  std::string controllerConfigKey;
  int64_t createdAt = 0;  // Unix seconds.
  int64_t updatedAt = 0;
  // Optimistic-concurrency tokens, one per part: the store bumps a part's on
  // every write of it; a write carrying a stale one fails with Conflict.
  int64_t version = 0;
  int64_t statusVersion = 0;
};

// Which part of a `ClusterRecord` a write replaces (`Store::writeCluster`).
enum class RecordPart {
  kSpec,    // The desired part; checks and bumps `version`.
  kStatus,  // The observed part; checks and bumps `statusVersion`.
  kAll,     // Both: checks and bumps both (terminate, delete, a rollback).
};

// One entry of a cluster's history (`corral cluster history`).
enum class RevisionState {
  kPending,     // Stored, not yet applied.
  kApplied,     // The cluster reached it.
  kFailed,      // Applying it failed; the cluster went back to the last applied one.
  kSuperseded,  // A newer revision was requested before this one was applied.
};
const char* revisionStateName(RevisionState s);
std::optional<RevisionState> parseRevisionState(const std::string& s);

struct Revision {
  int64_t number = 0;
  ClusterSpec spec;
  std::string author;
  std::string message;
  int64_t createdAt = 0;  // Unix seconds.
  RevisionState state = RevisionState::kPending;
  std::string error;  // Why it failed, for kFailed.
  bool rollback = false;  // corral made it, to go back after a failed revision.
};

struct Event {
  int64_t id = 0;
  std::string cluster;
  int64_t time = 0;  // Unix milliseconds.
  std::string type;  // "Normal" or "Warning", as Kubernetes events.
  std::string reason;
  std::string message;
  // What the event is about, where it is about one node or one revision
  // (empty / 0 otherwise): the API filters a cluster's events on them.
  std::string node;
  int64_t revision = 0;
};

// Which of a cluster's events `Store::findEvents` returns: those about
// `node` (when not empty) and `revision` (when not 0).
struct EventFilter {
  std::string node;
  int64_t revision = 0;
};

// Who may use the API (docs/api.md "Who may do what"). An account sees and
// changes the clusters and volumes of its projects; an admin sees all.
inline constexpr const char* kDefaultProject = "default";
inline constexpr int kMaxProjectsPerAccount = 64;

struct Account {
  std::string name;
  bool admin = false;
  std::vector<std::string> projects;
  int64_t createdAt = 0;  // Unix seconds.
  bool operator==(const Account&) const = default;
};

// An API token. Only its SHA-256 (`hash`, lowercase hex) is stored; the token
// itself is shown once, when it is made.
struct ApiToken {
  int64_t id = 0;  // Assigned by the store; never reused.
  std::string user;
  std::string hash;
  std::string description;
  int64_t createdAt = 0;  // Unix seconds.
  bool operator==(const ApiToken&) const = default;
};

}  // namespace corral
