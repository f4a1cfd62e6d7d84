#pragma once

// `KubernetesRuntime`: corral's clusters on Kubernetes, through SchedMD's
// Slinky operator (`corrald --runtime kubernetes`). It is a `ClusterRuntime`:
// a cluster is the set of objects `renderSlinkyObjects` (kube/slinky.h)
// makes of its record, applied by server-side apply; what the operator and
// the kubelets make of them is read back by `ClusterWatcher`
// (kube/watcher.h, list-then-watch, no polling) and judged by
// `observeCluster` (kube/observe.h). See docs/kubernetes.md.
//
// Per cluster it keeps, in the cluster's own Secrets (so that a restarted
// corrald, or another one, finds them): the slurm.key, the JWT key, the
// login node's SSH host keys and the accounting database's password. They
// are made once, when the cluster's first objects are applied.
//
// The pod-level half of `Runtime` mostly does not map: Slinky's operator
// makes the pods, so starting, stopping or entering one is refused with
// FailedPrecondition saying so, and the reconciler never asks (it drives
// this runtime through `wholeClusters()`). What does map: managed volumes
// (a PersistentVolumeClaim per attachment, made with the cluster's
// objects), the login host key, and the cluster's namespace as its network.

#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "corral/cluster_runtime.h"
#include "corral/process.h"
#include "corral/runtime.h"
#include "kube/api.h"
#include "kube/slinky.h"
#include "kube/watcher.h"

namespace corral {

struct KubernetesRuntimeOptions {
  // The namespace of each cluster: `{cluster}` is replaced by its name.
  // Without `{cluster}` every cluster goes to this one namespace, and as
  // Slinky names worker pods after their NodeSet (`slinky-0`), it then
  // holds one cluster at a time (a second is refused).
  std::string namespaceTemplate = "corral";
  // Where the cluster images are (scripts/kube-images.sh pushes them): a
  // role's image is `<imagePrefix>/<role>:<cluster image name>`, role one of
  // slurmctld, slurmd, login, slurmdbd, mariadb (the operator's logfile
  // sidecar runs in the slurmctld image, the login's initconf in login's).
  std::string imagePrefix = "registry.corral.test/corral";
  std::string rwxStorageClass;  // /shared and volumes; "" = the default class.
  std::string rwoStorageClass;  // slurmctld's state and MariaDB; "" = default.
  std::string gpuResource;      // e.g. nvidia.com/gpu; "" requests none.
  std::string loginServiceType = "ClusterIP";
  kube::ClusterWatcherOptions watch;
  // Keep one set of SSH host keys made ahead, so that a create does not
  // wait for ssh-keygen (an RSA key takes most of a second on a busy host).
  bool hostKeysAhead = true;
};

// The namespace of `cluster` under `namespaceTemplate`.
std::string clusterNamespace(const std::string& namespaceTemplate, const std::string& cluster);

// The images of a cluster whose image is named `imageName`.
kube::SlinkyImages slinkyImagesFor(const std::string& imagePrefix, const std::string& imageName);

// Whether the observation shows everything of what was applied done: every
// object observed at its generation, every pod ready, and no worker pod left
// beyond its NodeSet's replicas (a scale-down still draining). Pure.
bool settled(const kube::ClusterObservation& observation, const kube::ObjectSet& objects);

class KubernetesRuntime : public Runtime, public ClusterRuntime {
 public:
  // `api` and `runner` (ssh-keygen) are not owned and must outlive this.
  KubernetesRuntime(kube::KubeApi& api, ProcessRunner& runner, KubernetesRuntimeOptions options);
  ~KubernetesRuntime() override;

  ClusterRuntime* wholeClusters() override { return this; }

  // ClusterRuntime.
  Status applyCluster(const ClusterRecord& desired) override;
  StatusOr<ClusterView> viewCluster(const ClusterRecord& desired) override;
  StatusOr<bool> suspendCluster(const ClusterRecord& record) override;
  StatusOr<bool> removeCluster(const std::string& cluster) override;
  void onChange(std::function<void(const std::string& cluster)> callback) override;

  // Runtime: what maps.
  StatusOr<std::string> allocateNetwork(const std::string& cluster) override;
  Status prepareCluster(const ClusterNetwork& net) override;
  StatusOr<std::string> createVolume(const std::string& name) override;
  Status deleteVolume(const std::string& name) override;
  StatusOr<std::string> loginHostKey(const std::string& cluster) override;
  StatusOr<std::vector<std::string>> listClusters() override;
  Status stopCluster(const ClusterNetwork& net) override;
  Status destroyCluster(const ClusterNetwork& net) override;
  StatusOr<PodStatus> podStatus(const std::string& cluster, const std::string& pod) override;
  StatusOr<std::vector<std::string>> listPods(const std::string& cluster) override;

  // Runtime: what does not (FailedPrecondition, saying why).
  Status writeFiles(const std::string& cluster, const RenderedFiles& files) override;
  Status appendKernelLog(const std::string& cluster, const std::string& pod,
                         const std::string& line) override;
  StatusOr<std::string> healthReport(const std::string& cluster, const std::string& pod) override;
  StatusOr<std::string> podLogTail(const std::string& cluster, const std::string& pod,
                                   const std::string& path, size_t maxBytes) override;
  Status prepareSharedDirectory(const std::string& cluster, const std::string& path, int uid,
                                int gid, int mode) override;
  StatusOr<std::string> readFile(const std::string& cluster, const std::string& path) override;
  Status startPod(const PodSpec& spec) override;
  Status stopPod(const std::string& cluster, const std::string& pod) override;
  Status updateMounts(const PodSpec& desired) override;
  Status restartDaemon(const std::string& cluster, const std::string& pod,
                       const std::string& daemon, std::chrono::milliseconds timeout) override;
  StatusOr<ProcessResult> exec(const std::string& cluster, const std::string& pod,
                               const std::vector<std::string>& argv,
                               const ProcessOptions& options = {}) override;

 private:
  struct Secrets;
  std::string ns(const std::string& cluster) const;
  // The cluster's secrets: remembered, else read from its Secrets, and what
  // is missing there made.
  StatusOr<std::shared_ptr<const Secrets>> secretsFor(const std::string& cluster);
  StatusOr<std::shared_ptr<const Secrets>> readSecrets(const std::string& cluster);
  StatusOr<kube::SshHostKeys> makeHostKeys();
  // The set made ahead (waiting for it if it is still being made), and the
  // next one started; or one made now when `hostKeysAhead` is off.
  StatusOr<kube::SshHostKeys> takeHostKeys();
  StatusOr<kube::SlinkyOptions> slinkyOptions(const ClusterRecord& record);
  // Deletes corral's objects of `cluster` that are among `kinds` and not in
  // `keep` (kind/name), as the watcher last saw them.
  Status prune(const std::string& cluster, const std::set<kube::ObjectKind>& kinds,
               const std::set<std::string>& keep);
  Status ensureWatched(const std::string& cluster);
  // FailedPrecondition when every cluster shares one namespace and another
  // cluster is in it.
  Status sharedNamespaceIsFree(const std::string& cluster);
  void changed(const std::string& cluster);

  kube::KubeApi& api_;
  ProcessRunner& runner_;
  const KubernetesRuntimeOptions options_;

  std::mutex mu_;
  std::function<void(const std::string&)> callback_;  // Guarded by mu_.
  std::map<std::string, std::shared_ptr<const Secrets>> secrets_;  // Guarded by mu_.
  // Warning events already reported, by cluster.
  std::map<std::string, std::set<std::string>> seenEvents_;  // Guarded by mu_.
  std::unique_ptr<kube::ClusterWatcher> watcher_;
  std::mutex spareMu_;
  std::future<StatusOr<kube::SshHostKeys>> spareHostKeys_;  // Guarded by spareMu_.
};

}  // namespace corral
