#pragma once

// `LocalRuntime`: pods as Linux namespaces on this host (the embedded
// default). Each cluster gets a bridge `crl-<subnet in hex>` with the first address of its
// subnet, each pod a named network namespace `crl-<key>-<cluster>.<pod>` joined to
// the bridge by a veth pair, and a `corral-pod` supervisor that is PID 1 of the
// pod's own mount, UTS, IPC and PID namespaces.
//
// On disk, under `<dataDir>/clusters/<cluster>/`: `etc/` (rendered files),
// `secrets/`, `state/` (slurmctld's saved state), `db/` (MariaDB), `pods/<pod>/`
// (supervisor files and the pod's ephemeral directories).

#include <mutex>
#include <string>

#include "corral/process.h"
#include "corral/runtime.h"

namespace corral {

struct LocalRuntimeOptions {
  std::string dataDir = "/var/lib/corral";
  std::string podBinary;  // Path of `corral-pod`.
  ProcessRunner* runner = nullptr;  // Not owned; realProcessRunner() if null.
};

class LocalRuntime : public Runtime {
 public:
  explicit LocalRuntime(LocalRuntimeOptions options);

  // Prepares host-wide things once: the MariaDB template data directory that
  // every cluster's accounting database is copied from. Slow (seconds) the
  // first time, instant afterwards.
  Status initialize();

  Status prepareCluster(const ClusterNetwork& net) override;
  Status writeFiles(const std::string& cluster, const RenderedFiles& files) override;
  StatusOr<std::string> readFile(const std::string& cluster, const std::string& path) override;
  Status startPod(const PodSpec& spec) override;
  StatusOr<PodStatus> podStatus(const std::string& cluster, const std::string& pod) override;
  StatusOr<std::vector<std::string>> listPods(const std::string& cluster) override;
  Status stopPod(const std::string& cluster, const std::string& pod) override;
  StatusOr<ProcessResult> exec(const std::string& cluster, const std::string& pod,
                               const std::vector<std::string>& argv,
                               const ProcessOptions& options) override;
  Status updateMounts(const PodSpec& desired) override;
  Status appendFile(const std::string& cluster, const std::string& path,
                    const std::string& text) override;
  Status prepareDirectory(const std::string& cluster, const std::string& path, int uid, int gid,
                          int mode) override;
  Status restartDaemon(const std::string& cluster, const std::string& pod,
                       const std::string& daemon, std::chrono::milliseconds timeout) override;
  Status stopCluster(const ClusterNetwork& net) override;
  Status destroyCluster(const ClusterNetwork& net) override;
  StatusOr<std::vector<std::string>> listClusters() override;

  static std::string netnsName(const std::string& key, const std::string& cluster,
                               const std::string& pod);
  // `key` is the cluster subnet's base address in hex (see local_runtime.cc).
  static std::string bridgeName(const std::string& key);

 private:
  std::string clusterDir(const std::string& cluster) const;
  std::string podDir(const std::string& cluster, const std::string& pod) const;
  // The host PID of the pod's PID 1, or 0 when the pod is not running.
  int podPid(const std::string& cluster, const std::string& pod) const;
  std::pair<int, bool> daemonState(const std::string& cluster, const std::string& pod,
                                   const std::string& daemon) const;
  StatusOr<std::string> networkKey(const std::string& cluster) const;
  Status ensurePodNetwork(const PodSpec& spec, const std::string& key);
  Status removePodNetwork(const std::string& cluster, const std::string& pod,
                          const std::string& key, const std::string& address);
  Status ensureDatabase(const std::string& cluster);

  LocalRuntimeOptions options_;
  ProcessRunner& runner_;
  std::mutex templateMutex_;
};

}  // namespace corral
