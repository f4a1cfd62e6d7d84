#pragma once

// `FakeRuntime`: the `Runtime` contract in memory, for unit tests of the
// reconciler and the API. It keeps what `LocalRuntime` keeps on disk (prepared
// clusters, rendered files, pods and their specs) and answers as it does:
// NotFound for a pod of an unprepared cluster, InvalidArgument for a path
// that leaves the cluster directory, Unavailable for `exec` in a pod that is
// not running.
//
// Behaviour a test controls:
// - Pods become ready as soon as they start, unless `setPodReady(…, false)`
//   said otherwise; that choice outlives restarts of the pod.
// - `killPod` leaves a pod existing but not running, as a crashed supervisor.
// - `failNext(method, status)` makes the next call of `method` fail with
//   `status` and change nothing (LevelDB's `FaultInjectionTestEnv`).
// - `exec` answers through a handler; the default one answers `sinfo` with
//   every running worker pod as an idle node, so that a create converges.
// - `stopCluster` forgets the pods and the network but keeps the files, as
//   a terminated cluster keeps its directory.
//
// `prepareCluster` writes a fake munge key and a login host key
// (`kFakeHostKey`) as the real runtime generates them. Thread-safe; handlers
// are called without the lock held, so they may call back into the runtime.

#include <array>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "corral/process.h"
#include "corral/runtime.h"
#include "corral/status.h"

namespace corral {

class FakeRuntime : public Runtime {
 public:
  using ExecHandler = std::function<StatusOr<ProcessResult>(
      const std::string& cluster, const std::string& pod, const std::vector<std::string>& argv)>;

  // The public half of the login host key `prepareCluster` writes to
  // `etc/ssh/ssh_host_ed25519_key.pub` (followed by " root@login.<cluster>\n").
  static constexpr const char* kFakeHostKey =
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeFakeFakeFakeFakeFakeFakeFakeFakeFakeFake";

  FakeRuntime();

  // Subnets 172.29.0.0/24, 172.29.1.0/24, … in the order clusters ask.
  StatusOr<std::string> allocateNetwork(const std::string& cluster) override;
  Status prepareCluster(const ClusterNetwork& net) override;
  // Volumes live at /var/lib/corral-fake/volumes/<name>, in memory.
  StatusOr<std::string> createVolume(const std::string& name) override;
  Status deleteVolume(const std::string& name) override;
  Status writeFiles(const std::string& cluster, const RenderedFiles& files) override;
  StatusOr<std::string> readFile(const std::string& cluster, const std::string& path) override;
  Status startPod(const PodSpec& spec) override;
  StatusOr<PodStatus> podStatus(const std::string& cluster, const std::string& pod) override;
  StatusOr<std::vector<std::string>> listPods(const std::string& cluster) override;
  Status stopPod(const std::string& cluster, const std::string& pod) override;
  StatusOr<ProcessResult> exec(const std::string& cluster, const std::string& pod,
                               const std::vector<std::string>& argv,
                               const ProcessOptions& options = {}) override;
  Status updateMounts(const PodSpec& desired) override;
  Status appendKernelLog(const std::string& cluster, const std::string& pod,
                         const std::string& line) override;
  StatusOr<std::string> healthReport(const std::string& cluster, const std::string& pod) override;
  StatusOr<std::string> podLogTail(const std::string& cluster, const std::string& pod,
                                   const std::string& path, size_t maxBytes) override;
  Status prepareSharedDirectory(const std::string& cluster, const std::string& path, int uid,
                                int gid, int mode) override;
  StatusOr<std::string> loginHostKey(const std::string& cluster) override;
  Status restartDaemon(const std::string& cluster, const std::string& pod,
                       const std::string& daemon, std::chrono::milliseconds timeout) override;
  Status stopCluster(const ClusterNetwork& net) override;
  Status destroyCluster(const ClusterNetwork& net) override;
  StatusOr<std::vector<std::string>> listClusters() override;

  // --- Control -------------------------------------------------------------

  // Whether the pod reports ready. Applies now if the pod exists and to every
  // later start of it; a pod that is not running is never ready.
  void setPodReady(const std::string& cluster, const std::string& pod, bool ready);

  // The next call of `method` (a `Runtime` method name such as "startPod")
  // fails with `status` and changes nothing; later calls behave normally. A
  // later `failNext` for the same method replaces an earlier one not yet used;
  // an OK status cancels it. An unknown method name aborts the test binary,
  // since a typo would otherwise make the fault silently never fire.
  void failNext(const std::string& method, Status status);

  // The pod still exists but is no longer running (a crashed supervisor).
  // Nothing happens if the pod does not exist.
  void killPod(const std::string& cluster, const std::string& pod);

  // Replaces how `exec` answers; null restores the default.
  void setExecHandler(ExecHandler handler);

  // Puts a file into the cluster's directory, as if the runtime had written
  // it. Does not prepare the cluster.
  void putFile(const std::string& cluster, const std::string& path, std::string content);

  // Puts a file into a pod, as if something in it had written it at `path`
  // (a daemon's log; "/run/corral/health.json" is the node agent's report,
  // "" the supervisor's log). Kept until `stopPod` removes the pod.
  void putPodFile(const std::string& cluster, const std::string& pod, const std::string& path,
                  std::string content);

  // What `appendKernelLog` wrote to a pod's kernel log.
  std::string kernelLog(const std::string& cluster, const std::string& pod) const;

  // --- Inspection ----------------------------------------------------------

  // The network `prepareCluster` was last given for `cluster`, if it is
  // prepared now.
  std::optional<ClusterNetwork> prepared(const std::string& cluster) const;

  // Every file of the cluster, written or generated, by relative path.
  RenderedFiles files(const std::string& cluster) const;

  // The spec the pod was last started with, if the pod exists.
  std::optional<PodSpec> pod(const std::string& cluster, const std::string& pod) const;

  // The names of the pods of `cluster` in the order they were (re)started by
  // `startPod`; a call that found the pod running adds nothing.
  std::vector<std::string> startOrder(const std::string& cluster) const;

  // The clusters `destroyCluster` was called for, in call order, including
  // calls that found nothing to remove.
  std::vector<std::string> destroyed() const;

  // Directories `prepareSharedDirectory` made, by path under /shared:
  // {uid, gid, mode}.
  std::map<std::string, std::array<int, 3>> directories(const std::string& cluster) const;

  // Whether `createVolume` made storage for `name` that `deleteVolume` has
  // not removed.
  bool volumeExists(const std::string& name) const;

  // Every successful `restartDaemon`, as "cluster/pod/daemon", in call order.
  std::vector<std::string> restarts() const;

  // How many times `method` was called, failed calls included.
  int calls(const std::string& method) const;

 private:
  struct FakePod {
    PodSpec spec;
    bool running = false;
    std::map<std::string, std::string> files;  // What the pod wrote, by path.
  };
  struct FakeCluster {
    std::optional<ClusterNetwork> net;
    RenderedFiles files;
    std::map<std::string, FakePod> pods;
    std::vector<std::string> startOrder;
    bool empty() const { return !net && files.empty() && pods.empty(); }
  };

  // Counts the call and takes its pending fault, if any. Requires `mu_`.
  std::optional<Status> takeFault(const std::string& method);
  bool readyLocked(const std::string& cluster, const std::string& pod) const;
  StatusOr<ProcessResult> defaultExec(const std::string& cluster,
                                      const std::vector<std::string>& argv);

  mutable std::mutex mu_;
  std::map<std::string, FakeCluster> clusters_;
  std::set<std::pair<std::string, std::string>> notReady_;  // (cluster, pod)
  std::map<std::string, Status> faults_;
  std::map<std::string, int> calls_;
  std::vector<std::string> destroyed_;
  std::vector<std::string> restarts_;
  std::map<std::string, std::map<std::string, std::array<int, 3>>> directories_;
  std::map<std::string, std::string> subnets_;  // cluster -> subnet
  std::set<std::string> volumes_;
  ExecHandler execHandler_;
};

}  // namespace corral
