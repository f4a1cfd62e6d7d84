#pragma once

// `LocalRuntime`: pods as sandboxes of Linux namespaces on this host (the
// embedded default). Each cluster gets a bridge `crl-<key>` (the key is its
// subnet's base address in hex) holding the subnet's first address, an
// nftables table that keeps its pods away from the host's services and from
// other clusters (firewall.h), and a range of 65,536 host uids and gids for
// its pods' user namespaces. Each pod gets a named network namespace
// `crl-<key>-<cluster>.<pod>` joined to the bridge by a veth pair, and a
// `corral-pod` supervisor that builds its sandbox (pod_root.h) and is PID 1
// of its other namespaces.
//
// On disk, under `<dataDir>/clusters/<cluster>/`: `etc/` (rendered files),
// `secrets/`, `state/` (slurmctld's saved state), `db/` (MariaDB), `shared/`,
// `ids` (the cluster's id range), and `pods/<pod>/` (see pod_supervisor.h
// and pod_root.h: the launch spec, the writable layer, the agent directory).
// These keep the ids pods see (host uid k is pod uid k, through idmapped
// mounts); only a pod's writable layer holds the cluster's range.

#include <functional>
#include <mutex>
#include <string>

#include "corral/image.h"
#include "corral/process.h"
#include "corral/runtime.h"
#include "runtime/local/pod_json.h"

namespace corral {

// Where clusters' id ranges are claimed, host-wide, so that two corrald
// instances (a developer's and a test run's) never share one.
inline constexpr const char* kDefaultIdRegistryDir = "/var/lib/corral-ids";
// The first host id of the ranges, and how many there are: 0x70000000 up to
// 2^31, above what systemd and Debian's useradd hand out.
inline constexpr uint32_t kIdPoolStart = 0x70000000;
inline constexpr uint32_t kIdRangeSize = 65536;
inline constexpr uint32_t kIdRanges = 4095;

struct LocalRuntimeOptions {
  std::string dataDir = "/var/lib/corral";
  // The IPv4 block cluster subnets (one /24 each) come from; corrald checks
  // that it overlaps no route of the host's.
  std::string subnetPool = "172.29.0.0/16";
  std::string podBinary;  // Path of `corral-pod`; corral's pod binaries are beside it.
  ProcessRunner* runner = nullptr;  // Not owned; realProcessRunner() if null.
  // The root filesystem of a built image (LocalImageCatalog::rootfsOf).
  std::function<std::string(const ImageRef&)> imageRootfs;
  std::string idRegistryDir = kDefaultIdRegistryDir;
  // A host interface the login pods reach the outside through (NAT); empty:
  // no pod has egress.
  std::string loginEgressInterface;
  // Where the runtime looks for the network state its `ip` commands make, and
  // sets forwarding: `<netStateRoot>/sys/class/net/<interface>`,
  // `<netStateRoot>/run/netns/<namespace>`, `<netStateRoot>/proc/sys/net`.
  // Empty (the host's own) with the real `ip`; a directory of their own for
  // unit tests, whose `runner` plays the kernel's part.
  std::string netStateRoot;
};

class LocalRuntime : public Runtime {
 public:
  explicit LocalRuntime(LocalRuntimeOptions options);

  // Prepares host-wide things once: the directory of corral's binaries that
  // every pod sees at /.corral-bin. Stops pods left by a corral from before
  // pods were sandboxed, so that they come back sandboxed.
  Status initialize();

  StatusOr<std::string> allocateNetwork(const std::string& cluster) override;
  Status prepareCluster(const ClusterNetwork& net) override;
  StatusOr<std::string> createVolume(const std::string& name) override;
  Status deleteVolume(const std::string& name) override;
  Status writeFiles(const std::string& cluster, const RenderedFiles& files) override;
  StatusOr<std::string> readFile(const std::string& cluster, const std::string& path) override;
  Status appendKernelLog(const std::string& cluster, const std::string& pod,
                         const std::string& line) override;
  StatusOr<std::string> healthReport(const std::string& cluster, const std::string& pod) override;
  StatusOr<std::string> podLogTail(const std::string& cluster, const std::string& pod,
                                   const std::string& path, size_t maxBytes) override;
  Status prepareSharedDirectory(const std::string& cluster, const std::string& path, int uid,
                                int gid, int mode) override;
  StatusOr<std::string> loginHostKey(const std::string& cluster) override;
  Status startPod(const PodSpec& spec) override;
  StatusOr<PodStatus> podStatus(const std::string& cluster, const std::string& pod) override;
  StatusOr<std::vector<std::string>> listPods(const std::string& cluster) override;
  Status stopPod(const std::string& cluster, const std::string& pod) override;
  StatusOr<ProcessResult> exec(const std::string& cluster, const std::string& pod,
                               const std::vector<std::string>& argv,
                               const ProcessOptions& options) override;
  Status updateMounts(const PodSpec& desired) override;
  Status restartDaemon(const std::string& cluster, const std::string& pod,
                       const std::string& daemon, std::chrono::milliseconds timeout) override;
  Status stopCluster(const ClusterNetwork& net) override;
  Status destroyCluster(const ClusterNetwork& net) override;
  StatusOr<std::vector<std::string>> listClusters() override;

  static std::string netnsName(const std::string& key, const std::string& cluster,
                               const std::string& pod);
  // `key` is the cluster subnet's base address in hex (see local_runtime.cc).
  static std::string bridgeName(const std::string& key);

  // The host ids of a cluster's pods (its root is `base`); NotFound before
  // `prepareCluster`.
  StatusOr<IdRange> idRange(const std::string& cluster) const;

 private:
  std::string clusterDir(const std::string& cluster) const;
  std::string podDir(const std::string& cluster, const std::string& pod) const;
  // The host PID of the pod's PID 1, or 0 when the pod is not running.
  int podPid(const std::string& cluster, const std::string& pod) const;
  std::pair<int, bool> daemonState(const std::string& cluster, const std::string& pod,
                                   const std::string& daemon) const;
  StatusOr<std::string> networkKey(const std::string& cluster) const;
  // Where interface `dev` and network namespace `ns` appear once they exist.
  std::string netDevicePath(const std::string& dev) const;
  std::string netnsPath(const std::string& ns) const;
  Status ensurePodNetwork(const PodSpec& spec, const std::string& key);
  Status removePodNetwork(const std::string& cluster, const std::string& pod,
                          const std::string& key, const std::string& address);
  Status ensureSecrets(const std::string& cluster);
  Status ensureFirewall(const std::string& key, const std::string& subnet);
  StatusOr<IdRange> claimIdRange(const std::string& cluster);
  void releaseIdRange(const std::string& cluster);
  // The mounts a pod gets besides its spec's: corral's binaries, its agent
  // directory. Sources absolute.
  std::vector<Mount> runtimeMounts(const std::string& cluster, const std::string& pod) const;
  std::vector<Mount> absoluteMounts(const PodSpec& spec) const;
  Status stopLegacyPods();
  Status stageBinaries();

  LocalRuntimeOptions options_;
  ProcessRunner& runner_;
  std::string binDir_;  // Staged by `initialize`.
  std::mutex idMu_;
  std::mutex netMu_;
};

}  // namespace corral
