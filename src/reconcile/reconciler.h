#pragma once

// The reconciler: the one place that changes clusters. Level-based, like a
// Kubernetes controller: `reconcile(name)` reads the desired state from the
// store, looks at what the runtime has, acts, and records what it did. It is
// safe to call at any time and any number of times; corrald calls it when a
// request changes a cluster and periodically for every cluster.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "corral/clock.h"
#include "corral/image.h"
#include "corral/runtime.h"
#include "corral/spec.h"
#include "corral/store.h"
#include "cluster/pods.h"
#include "slurm/renderer.h"

namespace corral {

// The drain reason of a worker being rolled (src/reconcile/roll.cc): once
// the roll is over, a node drained with it returns to service whichever
// pass recreated it (a corrald may have died in between).
inline constexpr const char* kRollReason = "corral: rolling to a new image or restarting workers";

struct ReconcilerOptions {
  std::string physicalIdPrefix = "corral";
  int workers = 4;
  std::chrono::milliseconds resyncPeriod{5000};
  // How often pods are checked for death and health reports for news.
  std::chrono::milliseconds livenessPeriod{1000};
  // How long a cluster may stay Creating before it is marked Failed.
  std::chrono::seconds createTimeout{180};
  // How long applying a change may take once its nodes are drained, before
  // it is rolled back.
  std::chrono::seconds applyTimeout{90};
  // Whether something accepts TCP connections on `address:port`; asked for
  // the login node's sshd before a cluster is declared Running. Null means a
  // real connect(); unit tests set it so that they need no network.
  std::function<bool(const std::string& address, int port)> loginProbe;
  // Where clusters' images are built before their pods start; null: every
  // image is taken to be built (unit tests).
  ImageCatalog* images = nullptr;
};

// A node as Slurm last reported it.
struct NodeObservation {
  std::string state;   // sinfo's %T, e.g. idle, allocated, down*, drained.
  std::string reason;  // sinfo's %E.
};

// What a reconciler event is about (Event's node and revision).
struct EventAbout {
  std::string node;
  int64_t revision = 0;
};

class Reconciler {
 public:
  // `store`, `runtime` and `clock` are not owned and must outlive this.
  Reconciler(Store& store, Runtime& runtime, Clock& clock, ReconcilerOptions options);
  ~Reconciler();

  // Starts the worker threads and the periodic resync; `stop` ends them,
  // waiting for passes in progress. Thread-safe.
  void start();
  void stop();

  // Asks for a pass over `cluster` soon. Passes over one cluster never overlap.
  void enqueue(const std::string& cluster);
  // Asks for a pass over `cluster` once `delay` has passed (a pass that
  // waits for something asks to be run again instead of sleeping); an
  // earlier request that is due sooner is kept.
  void enqueueAfter(const std::string& cluster, std::chrono::milliseconds delay);
  // Whether a pass over `cluster` is waiting to be enqueued by `enqueueAfter`.
  bool requeued(const std::string& cluster);

  // One synchronous pass (tests call this directly).
  Status reconcile(const std::string& cluster);

  // Destroys runtime state of clusters the store does not know (left by a
  // crash between removing the record and the pods, or by hand).
  Status collectOrphans();

  // Jobs that squeue lists with `filter` (e.g. {"-w", "slinky-[4-5]"}), as
  // "id user name" lines. For the API's warnings before a change.
  StatusOr<std::vector<std::string>> jobsOn(const std::string& cluster,
                                            const std::vector<std::string>& filter);

  // Writes an XID in the NVIDIA driver's format into a worker's (simulated)
  // kernel log, where its health agent reads it; returns the line.
  StatusOr<std::string> injectXid(const std::string& cluster, const std::string& node, int code);

  // The newest report of a worker's health agent (JSON, see src/health), or
  // "" if none was read yet.
  std::string healthReport(const std::string& cluster, const std::string& node);

  // Runs a Slurm command in the controller pod and returns its stdout;
  // a non-zero exit is Unavailable with its stderr. Also the API's way to read
  // the queue and the accounting history.
  StatusOr<std::string> slurmCommand(const std::string& cluster,
                                     const std::vector<std::string>& argv,
                                     std::chrono::seconds timeout = std::chrono::seconds(15));

  // The runtime clusters run on (not owned), for what the API asks of it
  // directly: a managed volume's storage.
  Runtime& runtime() { return runtime_; }

  // The latest Slurm view of a cluster's nodes, by node name.
  std::map<std::string, NodeObservation> observedNodes(const std::string& cluster);

 private:
  using Deadline = std::chrono::steady_clock::time_point;

  // src/reconcile/whole.cc: clusters on a runtime that takes them whole
  // (`Runtime::wholeClusters`, Kubernetes). Each pass does one step —
  // apply the desired objects, or look at what the runtime reports — records
  // it, and asks to be run again; none waits.
  Status reconcileWhole(ClusterRuntime& whole, const ClusterRecord& record);
  Status wholeCreate(ClusterRuntime& whole, const ClusterRecord& record);
  Status wholeApply(ClusterRuntime& whole, const ClusterRecord& record);
  Status wholeSteady(ClusterRuntime& whole, const ClusterRecord& record);
  Status wholeTerminate(ClusterRuntime& whole, const ClusterRecord& record);
  Status wholeDelete(ClusterRuntime& whole, const ClusterRecord& record);
  Status wholeCreateFailed(ClusterRuntime& whole, const ClusterRecord& record,
                           const std::string& reason);
  // Applies `record`'s revision unless this corrald already did; false
  // with the error when the runtime refused or could not be reached.
  Status applyWholeOnce(ClusterRuntime& whole, const ClusterRecord& record, bool* applied);
  // The runtime's warnings as events, and its phase, node table and login
  // address into the record where they changed.
  void recordView(const ClusterRecord& record, const ClusterView& view);
  void timerLoop();

  Status runCreate(ClusterRecord record);
  // runCreate's steps: subnet and node plan (saved into `record`); image,
  // network, files and host key; pods started and serving; Running.
  // `during` names what a step was doing when it failed.
  Status planCreate(ClusterRecord& record, std::string* during);
  StatusOr<RenderedCluster> prepareCreate(const ClusterRecord& record, std::string* during);
  Status startCreatedPods(const ClusterRecord& record, const RenderedCluster& rendered,
                          Deadline deadline, std::string* during);
  // The cluster is Running at its revision; `observed` adds what the pass
  // saw. `record` names its nodes and login address for the event.
  Status markCreated(const ClusterRecord& record,
                     const std::function<void(ClusterRecord&)>& observed);
  // Fails a create: its diagnostics as events, its pods and network
  // destroyed, the cluster Failed with the reason.
  Status failCreate(const ClusterRecord& record, const Status& why, const std::string& during);
  // The last lines of the controller's logs and of every stopped pod's
  // supervisor, as Diagnostics events.
  void recordDiagnostics(const std::string& cluster);
  // Builds the cluster's image unless it is built, showing the build's
  // progress as the cluster's phase.
  Status ensureImage(const std::string& cluster, const ImageRef& image);
  Status runDelete(const ClusterRecord& record);
  Status runHealth(const ClusterRecord& record);
  // src/reconcile/apply.cc: drive a Running cluster to its newest revision.
  Status runApply(ClusterRecord record);
  Status failApply(const ClusterRecord& record, const Status& why, bool touchedLive);
  // The last step of an apply, for both kinds of pass: `record`'s revision
  // is the applied one, with what `observed` adds (its nodes); an Applied
  // (or RolledBack) event says how long it `took`.
  Status finishApply(const ClusterRecord& record, std::chrono::steady_clock::duration took,
                     const std::function<void(ClusterRecord&)>& observed);
  // Gives each new node (one without) a physical id.
  Status assignPhysicalIds(std::vector<NodeRecord>* nodes);
  // Steps 4–6 of an apply: files, pods, controller, the workers' roll, and
  // Slurm's view of the nodes.
  Status applyLive(const ClusterRecord& record, const ClusterRecord& desired,
                   const RenderedCluster& rendered, const std::vector<std::string>& removed,
                   const std::function<Status()>& stillWanted);
  Status tryConfiguration(const ClusterRecord& desired, const RenderedFiles& files);
  // Drains the nodes that go and cancels their jobs on --force; `waiting`
  // when jobs still run on them (the pass then ends and asks to be run again).
  Status drainRemovedNodes(const ClusterRecord& record, const std::vector<std::string>& removed,
                           bool* waiting);
  // Starts what is missing, recreates at once what must be (a reboot, a
  // new controller or login image), stops what goes; leaves `rolling` to
  // `rollWorkers`.
  Status syncPods(const ClusterRecord& desired, const RenderedCluster& rendered,
                  const std::vector<std::string>& removed, const std::set<std::string>& rolling,
                  std::vector<std::string>* started, std::set<std::string>* recreated);
  // src/reconcile/roll.cc: workers that run another image or roll
  // generation than the render's, and their graceful recreation: drained,
  // each recreated once its jobs have ended, then back in service.
  StatusOr<std::vector<std::string>> workersToRoll(const std::string& cluster,
                                                   const RenderedCluster& rendered);
  Status rollWorkers(const ClusterRecord& desired, const RenderedCluster& rendered,
                     const std::vector<std::string>& nodes,
                     const std::function<Status()>& stillWanted, std::set<std::string>* recreated);
  // Starts `pods` concurrently; names the ones that started in `started`
  // and returns the first failure, naming its pod in `failedPod`.
  Status startPods(const std::vector<const PodSpec*>& pods, std::vector<std::string>* started,
                   std::string* failedPod);
  // Homes of login users on the cluster's shared storage.
  Status prepareHomes(const ClusterRecord& desired);
  Status syncController(const ClusterRecord& record, const ClusterRecord& desired);
  Status waitNodesServing(const ClusterRecord& desired, const RenderedCluster& rendered,
                          Deadline deadline, const std::function<Status()>& stillWanted,
                          const std::set<std::string>& recreated,
                          const std::set<std::string>& mustServe);
  Status runTerminate(const ClusterRecord& record);
  // Rewrites rendered files that differ from the render (a hand edit).
  Status correctDrift(const ClusterRecord& record, const RenderedCluster& rendered);
  Status allocateSubnet(ClusterRecord& record);
  // Waits until every pod in `pods` is ready. `stillWanted` is asked between
  // polls; its error (say, the change was superseded) ends the wait.
  Status waitPodsReady(const std::string& cluster, const std::vector<std::string>& pods,
                       const std::string& phasePrefix, Deadline deadline,
                       const std::function<Status()>& stillWanted);
  Status waitNodesIdle(const ClusterRecord& record, Deadline deadline);
  Status refreshNodes(const std::string& cluster);
  // Re-reads the record, applies `fn`, writes `part` of it back; retries on
  // Conflict. The reconciler writes what it observed (kStatus), so that its
  // progress never makes a change request retry; only a rollback, which is
  // a new desired revision, writes both.
  StatusOr<ClusterRecord> mutate(const std::string& name,
                                 const std::function<void(ClusterRecord&)>& fn,
                                 RecordPart part = RecordPart::kStatus);
  void setPhase(const std::string& name, const std::string& phase);
  // Appends to the cluster's event log; `about` names the node and the
  // revision the event concerns, where it concerns one.
  void event(const std::string& cluster, const std::string& type, const std::string& reason,
             const std::string& message, const EventAbout& about = {});
  bool stillStatus(const std::string& name, ClusterStatus status);
  // Recreates pods of the render that exist but died (a node failure); a
  // worker is marked down in Slurm first so that its jobs end at once.
  Status restartDeadPods(const ClusterRecord& record, const RenderedCluster& rendered);
  // Records each XID a worker's health agent reported as an event, once.
  void ingestHealth(const ClusterRecord& record);
  void workerLoop();
  void resyncLoop();
  void livenessLoop();

  Store& store_;
  Runtime& runtime_;
  Clock& clock_;
  ReconcilerOptions options_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::set<std::string> queued_;
  std::set<std::string> active_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
  // enqueueAfter's requests: when each cluster is due. Guarded by mu_.
  std::map<std::string, std::chrono::steady_clock::time_point> delayed_;
  std::condition_variable timerCv_;
  // Whole clusters: the revision whose objects this corrald applied, and
  // when it started applying it. Guarded by mu_.
  std::map<std::string, int64_t> wholeApplied_;
  std::map<std::string, std::chrono::steady_clock::time_point> wholeApplyStarted_;
  // Local applies that wait across passes: the revision whose configuration
  // was tried, and whose removed nodes' jobs --force cancelled. Guarded by mu_.
  std::map<std::string, int64_t> configTried_;
  std::map<std::string, int64_t> jobsCancelled_;

  std::mutex observedMu_;
  std::map<std::string, std::map<std::string, NodeObservation>> observed_;
  std::set<std::string> seenXids_;
};

}  // namespace corral
