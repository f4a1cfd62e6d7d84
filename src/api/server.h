#pragma once

// The REST API of corrald (docs/api.md): request parsing, validation and the
// JSON views of clusters. It changes clusters only by writing desired state
// to the store and asking the reconciler for a pass.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/auth.h"
#include "api/slurm_reader.h"
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

// Whether the canonical `path` is one of `roots` or lies under one.
bool underVolumeSourceRoot(const std::string& path, const std::vector<std::string>& roots);

// A directory an operator names as a --volume-source-root: existing, not
// part of the host's system, apart from corrald's data directory.
Status checkVolumeSourceRoot(const std::string& root, const std::string& dataDir);

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
  // Register an API route: the handler runs only for an authenticated
  // request, with `caller()` set. httplib has read the request's body by
  // then, so a refused request never leaves it in the connection to be
  // parsed as the next request.
  void get(const std::string& pattern, Handler handler);
  void post(const std::string& pattern, Handler handler);
  void put(const std::string& pattern, Handler handler);
  void patch(const std::string& pattern, Handler handler);
  void del(const std::string& pattern, Handler handler);
  Handler authenticated(Handler handler);

  void routes();
  // src/api/change_routes.cc: everything that makes a new revision.
  void changeRoutes();
  // src/api/node_routes.cc: volumes, nodes, login users.
  void nodeRoutes();
  // src/api/console_routes.cc: the console's files, the OpenAPI document, whoami.
  void consoleRoutes();
  // src/api/job_routes.cc: jobs and metrics, read from Slurm.
  void jobRoutes();
  // src/api/image_routes.cc: cluster images, and moving a cluster to one.
  void imageRoutes();
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
  StatusOr<ClusterRecord> createCluster(ClusterSpec spec, const std::string& project,
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

  // Appends a Normal event to the cluster's log, about `revision` (0: none).
  void event(const std::string& cluster, const std::string& reason, const std::string& message,
             int64_t revision = 0);

  Store& store_;
  Reconciler& reconciler_;
  Clock& clock_;
  ApiOptions options_;
  std::unique_ptr<JobCache> jobs_;
  std::unique_ptr<MetricsRecorder> metrics_;
  std::unique_ptr<httplib::Server> http_;
  int port_ = 0;
};

}  // namespace corral
