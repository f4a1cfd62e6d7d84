// Every route of the API (docs/api.md, src/api/openapi.json) and the
// `ApiServer` handler that serves it: the place to start from a path. Each
// is registered through `get`, `post`, … (src/api/server.cc), so none runs
// for a request without a valid token. The console's files and /healthz
// need none: see `consoleFiles` and `serverSettings`.

#include <string>

#include "api/server.h"

namespace corral {

void ApiServer::routes() {
  // One line per route, `method(path, handler)` with the path written out
  // (as a literal, or `kCluster +` one): openapi_contract_test reads them
  // from the source to check that the document lists exactly these.
  const std::string kCluster = R"(/api/v1/clusters/([^/]+))";
  get("/api/v1/clusters", &ApiServer::listClusters);
  post("/api/v1/clusters", &ApiServer::createCluster);
  get(R"(/api/v1/clusters/([^/]+))", &ApiServer::getCluster);
  del(R"(/api/v1/clusters/([^/]+))", &ApiServer::deleteCluster);
  get(kCluster + "/events", &ApiServer::listEvents);
  get(kCluster + "/revisions", &ApiServer::listRevisions);
  post(kCluster + "/scale", &ApiServer::scaleCluster);
  get(kCluster + "/partitions", &ApiServer::listPartitions);
  post(kCluster + "/partitions", &ApiServer::createPartition);
  put(kCluster + "/partitions/([^/]+)", &ApiServer::updatePartition);
  del(kCluster + "/partitions/([^/]+)", &ApiServer::deletePartition);
  get("/api/v1/slurm-params", &ApiServer::listSlurmParams);
  get(kCluster + "/config", &ApiServer::getConfig);
  patch(kCluster + "/config", &ApiServer::setConfig);
  post(kCluster + "/config/diff", &ApiServer::diffConfig);
  put(kCluster + "/ssh-keys", &ApiServer::setSshKeys);
  post(kCluster + "/login/restart", &ApiServer::restartLogin);
  post(kCluster + "/controller/restart", &ApiServer::restartController);
  post(kCluster + "/reconfigure", &ApiServer::reconfigureCluster);
  post(kCluster + "/terminate", &ApiServer::terminateCluster);
  post(kCluster + "/clone", &ApiServer::cloneCluster);
  get("/api/v1/volumes", &ApiServer::listVolumes);
  post("/api/v1/volumes", &ApiServer::createVolume);
  get("/api/v1/volumes/([^/]+)", &ApiServer::getVolume);
  del("/api/v1/volumes/([^/]+)", &ApiServer::deleteVolume);
  post(kCluster + "/volumes", &ApiServer::attachVolume);
  del(kCluster + "/volumes/([^/]+)", &ApiServer::detachVolume);
  get(kCluster + "/nodes", &ApiServer::listNodes);
  get(kCluster + "/nodes/([^/]+)", &ApiServer::getNode);
  post(kCluster + "/nodes/([^/]+)/reboot", &ApiServer::rebootNode);
  post(kCluster + "/nodes/([^/]+)/inject-xid", &ApiServer::injectXid);
  get(kCluster + "/users", &ApiServer::listLoginUsers);
  post(kCluster + "/users", &ApiServer::createLoginUser);
  del(kCluster + "/users/([^/]+)", &ApiServer::deleteLoginUser);
  get("/api/v1/openapi.json", &ApiServer::getOpenapi);
  get("/api/v1/whoami", &ApiServer::whoami);
  get(kCluster + "/jobs", &ApiServer::listQueue);
  get(kCluster + "/jobs/history", &ApiServer::listHistory);
  get(kCluster + R"(/jobs/([0-9]{1,10}))", &ApiServer::getJob);
  get(kCluster + "/metrics", &ApiServer::getMetrics);
  get("/api/v1/images", &ApiServer::listImages);
  get("/api/v1/images/([^/]+)", &ApiServer::getImage);
  post(kCluster + "/image", &ApiServer::setImage);
  post(kCluster + "/workers/restart", &ApiServer::restartWorkers);
}

}  // namespace corral
