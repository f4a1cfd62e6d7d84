#pragma once

// The REST API of corrald (docs/api.md). `ApiServer` registers every route
// from one table (src/api/routes.cc) to one small handler each, in a file per
// resource (cluster_routes.cc, partition_routes.cc, …): a handler reads the
// request, calls the domain code (src/model, src/slurm, `Volumes`) and
// answers. It changes clusters only by writing desired state to the store
// and asking the reconciler for a pass.
//
// What needs the request's caller and the reconciler stays here, as private
// methods: `change` (every new revision), `storeNewCluster`, `findCluster`
// and `findVolume` (which hide other projects' things). Pure rules live
// beside the model, and volumes, which need only the store and the runtime,
// are `Volumes` (src/api/volumes.h).

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/auth.h"
#include "api/slurm_reader.h"
#include "api/volumes.h"
#include "model/actions.h"
#include "corral/clock.h"
#include "corral/image.h"
#include "corral/store.h"
#include "reconcile/reconciler.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}

namespace corral {

struct ApiOptions {
  // Extra platform partitions every new cluster gets (corrald's
  // --platform-partition), covering all nodes, e.g. "llm".
  std::vector<std::string> platformPartitions;
  // corrald's --data-dir: volumes without a --source live in <dataDir>/volumes.
  std::string dataDir;
  // Serve the console from this directory instead of the copy compiled into
  // corrald (for working on the console without rebuilding).
  std::string consoleDir;
  // How long a read of a cluster's queue or history is served as is.
  std::chrono::milliseconds jobsFresh{2000};
  // How often node states and queue length are sampled for the charts
  // (0: never).
  std::chrono::milliseconds metricsPeriod{10000};
  // The cluster images there are (not owned); null: a cluster keeps the
  // image its spec names, unresolved (unit tests).
  ImageCatalog* images = nullptr;
  // The image of a cluster created without one.
  std::string defaultImage = "debian13-slurm24.11";
  // Host directories (canonical) under which an admin may back a volume
  // with existing data (corrald --volume-source-root); none by default.
  std::vector<std::string> volumeSourceRoots;
};

class ApiServer {
 public:
  // `store`, `reconciler` and `clock` are not owned and must outlive this.
  ApiServer(Store& store, Reconciler& reconciler, Clock& clock, ApiOptions options = {});
  ~ApiServer();

  // Binds `host:port` (port 0 picks a free one). Fails with Unavailable when
  // the address is taken.
  Status bind(const std::string& host, int port);
  int port() const { return port_; }
  // Serves until `stop`. Blocking; call from a thread of your own.
  void serve();
  void stop();

 private:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  using Route = void (ApiServer::*)(const httplib::Request&, httplib::Response&);

  // src/api/routes.cc: every API route and its handler, one line each.
  void routes();
  // Register an API route: `route` runs only for an authenticated request,
  // with `caller()` set. httplib has read the request's body by then, so a
  // refused request never leaves it in the connection to be parsed as the
  // next request.
  void get(const std::string& pattern, Route route);
  void post(const std::string& pattern, Route route);
  void put(const std::string& pattern, Route route);
  void patch(const std::string& pattern, Route route);
  void del(const std::string& pattern, Route route);
  Handler authenticated(Route route);
  // What httplib answers outside the routes: limits, errors in the API's
  // shape, /healthz.
  void serverSettings();
  // src/api/console_routes.cc: the console's files, which need no token.
  void consoleFiles();

  // The handlers, one per route (src/api/routes.cc lists their paths), in
  // the files that hold them. Each reads the request, calls the domain code
  // and answers; for a change that is `change` and `answerChange`.

  // src/api/cluster_routes.cc: clusters, their events and revisions,
  // terminate, clone.
  void listClusters(const httplib::Request& req, httplib::Response& res);
  void createCluster(const httplib::Request& req, httplib::Response& res);
  void getCluster(const httplib::Request& req, httplib::Response& res);
  void deleteCluster(const httplib::Request& req, httplib::Response& res);
  void listEvents(const httplib::Request& req, httplib::Response& res);
  void listRevisions(const httplib::Request& req, httplib::Response& res);
  void terminateCluster(const httplib::Request& req, httplib::Response& res);
  void cloneCluster(const httplib::Request& req, httplib::Response& res);
  // src/api/change_routes.cc: changes that are not a resource of their own.
  void scaleCluster(const httplib::Request& req, httplib::Response& res);
  void setSshKeys(const httplib::Request& req, httplib::Response& res);
  void restartLogin(const httplib::Request& req, httplib::Response& res);
  void restartController(const httplib::Request& req, httplib::Response& res);
  void reconfigureCluster(const httplib::Request& req, httplib::Response& res);
  // src/api/partition_routes.cc.
  void listPartitions(const httplib::Request& req, httplib::Response& res);
  void createPartition(const httplib::Request& req, httplib::Response& res);
  void updatePartition(const httplib::Request& req, httplib::Response& res);
  void deletePartition(const httplib::Request& req, httplib::Response& res);
  // src/api/config_routes.cc: slurm.conf parameters and settings.
  void listSlurmParams(const httplib::Request& req, httplib::Response& res);
  void getConfig(const httplib::Request& req, httplib::Response& res);
  void setConfig(const httplib::Request& req, httplib::Response& res);
  void diffConfig(const httplib::Request& req, httplib::Response& res);
  // src/api/volume_routes.cc: volumes and their attachments.
  void listVolumes(const httplib::Request& req, httplib::Response& res);
  void createVolume(const httplib::Request& req, httplib::Response& res);
  void getVolume(const httplib::Request& req, httplib::Response& res);
  void deleteVolume(const httplib::Request& req, httplib::Response& res);
  void attachVolume(const httplib::Request& req, httplib::Response& res);
  void detachVolume(const httplib::Request& req, httplib::Response& res);
  // src/api/node_routes.cc: nodes with their health, reboot, XID injection.
  void listNodes(const httplib::Request& req, httplib::Response& res);
  void getNode(const httplib::Request& req, httplib::Response& res);
  void rebootNode(const httplib::Request& req, httplib::Response& res);
  void injectXid(const httplib::Request& req, httplib::Response& res);
  // src/api/user_routes.cc: login users.
  void listLoginUsers(const httplib::Request& req, httplib::Response& res);
  void createLoginUser(const httplib::Request& req, httplib::Response& res);
  void deleteLoginUser(const httplib::Request& req, httplib::Response& res);
  // src/api/image_routes.cc: cluster images, and moving a cluster to one.
  void listImages(const httplib::Request& req, httplib::Response& res);
  void getImage(const httplib::Request& req, httplib::Response& res);
  void setImage(const httplib::Request& req, httplib::Response& res);
  void restartWorkers(const httplib::Request& req, httplib::Response& res);
  // src/api/job_routes.cc: jobs and metrics, read from Slurm.
  void listQueue(const httplib::Request& req, httplib::Response& res);
  void listHistory(const httplib::Request& req, httplib::Response& res);
  void getJob(const httplib::Request& req, httplib::Response& res);
  void getMetrics(const httplib::Request& req, httplib::Response& res);
  void listJobs(const httplib::Request& req, httplib::Response& res, JobCache::Kind kind);
  // The cluster, if the caller may see it and it is Running (so Slurm can
  // be asked); FailedPrecondition otherwise.
  StatusOr<ClusterRecord> runningCluster(const std::string& name);
  // src/api/console_routes.cc: the OpenAPI document and whoami.
  void getOpenapi(const httplib::Request& req, httplib::Response& res);
  void whoami(const httplib::Request& req, httplib::Response& res);

  // The account the current request acts for, set by `authenticated` on
  // the thread that runs the route.
  static const Caller& caller();
  // A cluster the caller may see; NotFound, as for a name that does not
  // exist, otherwise.
  StatusOr<ClusterRecord> findCluster(const std::string& name);
  // A volume the caller may see; NotFound otherwise.
  StatusOr<Volume> findVolume(const std::string& name);
  // The project a new cluster or volume goes to: `requested` if the caller
  // belongs to it, else the caller's default (NotFound for a project the
  // caller does not belong to).
  StatusOr<std::string> projectFor(const std::string& requested);
  // Stores a new cluster (Creating, revision 1) and asks for its creation.
  StatusOr<ClusterRecord> storeNewCluster(ClusterSpec spec, const std::string& project,
                                          const std::string& why);
  // The image called `name` (the default when empty), resolved to the build
  // and Slurm release it stands for.
  StatusOr<ImageRef> resolveImage(const std::string& name);
  // Makes the next revision of a cluster: checks that its status allows
  // `action`, applies `edit` to a copy of the spec, validates and normalises
  // the result and stores it (retrying on a concurrent write). A change that
  // leaves the spec as it was stores nothing unless `always`.
  struct ChangeResult {
    ClusterRecord record;
    bool made = false;  // Whether a new revision was stored.
  };
  StatusOr<ChangeResult> change(const std::string& name, Action action, const std::string& message,
                                 bool force, bool always,
                                 const std::function<Status(ClusterSpec&)>& edit);
  // Answers a change request: 202 with the revision, 200 when nothing
  // changed (`sendChange`), the error otherwise.
  void answerChange(httplib::Response& res, const std::string& name,
                    const StatusOr<ChangeResult>& after,
                    const nlohmann::json& extra = nlohmann::json::object());
  // A change that adds one to a generation of the spec (`generation`), made
  // even though nothing else changes: what recreates the login pod, restarts
  // the controller, rolls the workers.
  void bumpGeneration(const httplib::Request& req, httplib::Response& res, Action action,
                      const std::string& message, int ClusterSpec::*generation);

  // A change that removes the thing the path's second part names from the
  // spec (`remove(spec, cluster, thing)`), described as "`verb` thing".
  using Removal = Status (*)(ClusterSpec&, const std::string&, const std::string&);
  void removeNamed(const httplib::Request& req, httplib::Response& res, Action action,
                   const std::string& verb, Removal remove);
  // Creates (`named`: the body names it) or updates (the path names it) a
  // user partition with `edit`, described as "`verb` NAME".
  using PartitionEdit = Status (*)(ClusterSpec&, const PartitionSpec&);
  void writePartition(const httplib::Request& req, httplib::Response& res, bool named,
                      const std::string& verb, PartitionEdit edit);

  // Appends a Normal event to the cluster's log, about `revision` (0: none).
  void event(const std::string& cluster, const std::string& reason, const std::string& message,
             int64_t revision = 0);

  Store& store_;
  Reconciler& reconciler_;
  Clock& clock_;
  ApiOptions options_;
  Volumes volumes_;
  std::unique_ptr<JobCache> jobs_;
  std::unique_ptr<MetricsRecorder> metrics_;
  std::unique_ptr<httplib::Server> http_;
  int port_ = 0;
};

}  // namespace corral
