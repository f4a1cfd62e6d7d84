#pragma once

// Value types that describe a cluster: what the user asked for (`ClusterSpec`),
// what corral recorded about it (`ClusterRecord`) and the statuses of the
// seed's "Cluster Statuses" table. Plain data; JSON conversion lives in
// `src/common/spec_json.cc`.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace corral {

// Limits that validation enforces. They are here, not in the validator, so the
// API, the CLI and the docs quote the same numbers.
inline constexpr int kMaxGpuNodes = 200;
inline constexpr int kMaxCpuNodes = 8;
inline constexpr int kMaxGpusPerNode = 16;
inline constexpr int kMaxSshKeys = 64;
inline constexpr size_t kMaxClusterNameLength = 40;

inline constexpr const char* kGpuGroup = "slinky";
inline constexpr const char* kCpuGroup = "cpu-workers";

// What the user declared. Every accepted change produces a new revision of it.
struct ClusterSpec {
  std::string name;
  int gpuNodes = 4;
  int gpusPerNode = 8;
  int cpuNodes = 0;
  // OpenSSH public keys ("ssh-ed25519 AAAA… comment") for root on the login node.
  std::vector<std::string> sshKeys;
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

// Everything the store keeps about one cluster.
struct ClusterRecord {
  int64_t id = 0;  // Assigned by the store; never reused.
  ClusterSpec spec;
  int64_t revision = 0;         // The newest desired revision of `spec`.
  int64_t appliedRevision = 0;  // The newest revision fully applied; 0 = none.
  ClusterStatus status = ClusterStatus::kCreating;
  std::string phase;   // What the reconciler is working on, for progress.
  std::string reason;  // Why the cluster is Failed, or the last error.
  std::string subnet;  // CIDR of the cluster network, e.g. 172.29.3.0/24.
  std::string loginAddress;
  std::string loginHostKey;  // Public SSH host key of the login node.
  std::vector<NodeRecord> nodes;
  int64_t createdAt = 0;  // Unix seconds.
  int64_t updatedAt = 0;
  // Optimistic-concurrency token: bumped by the store on every write; a write
  // carrying a stale version fails with Conflict.
  int64_t version = 0;
};

struct Event {
  int64_t id = 0;
  std::string cluster;
  int64_t time = 0;  // Unix milliseconds.
  std::string type;  // "Normal" or "Warning", as Kubernetes events.
  std::string reason;
  std::string message;
};

}  // namespace corral
