#pragma once

// `ApiClient`: corrald's REST API (docs/api.md) as functions that return
// `StatusOr`. Transport failures, HTTP errors and malformed answers all come
// back as a `Status` whose message is fit to print after "error: ".

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/text.h"
#include "corral/status.h"

namespace corral {

// JSON as the CLI handles it: keys keep the order corrald sent them in, so
// that `-o json` prints the answer as it came.
using Json = nlohmann::ordered_json;

inline constexpr const char* kDefaultServer = "http://127.0.0.1:8470";

// A parsed `--server` value.
struct ServerUrl {
  std::string scheme;  // "http" or "https"
  std::string host;    // Host name or address; IPv6 keeps its brackets.
  int port = 0;

  // "http://127.0.0.1:8470": what error messages and httplib are given.
  std::string toString() const;
};

// Accepts "[http://|https://]HOST[:PORT][/]". A missing scheme means http and
// a missing port the scheme's default. Anything else (a path, a query, a bad
// port) is InvalidArgument.
StatusOr<ServerUrl> parseServerUrl(const std::string& text);


// Maps an API error code name ("NotFound") onto a `Code`; Internal when the
// name is unknown.
Code codeFromName(const std::string& name);

// Maps an HTTP status onto the `Code` the API would have used.
Code codeFromHttpStatus(int status);

// Turns one HTTP answer into the body's JSON (2xx) or the API's error.
// `body` is what came back, `status` its HTTP status.
StatusOr<Json> interpretAnswer(int status, const std::string& body);

struct ClientTimeouts {
  std::chrono::seconds connect{2};
  std::chrono::seconds read{30};
};

// Not thread-safe: one command uses one client from one thread.
class ApiClient {
 public:
  explicit ApiClient(ServerUrl server, ClientTimeouts timeouts = {});
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  const ServerUrl& server() const { return server_; }
  // The API token sent as "Authorization: Bearer …" with every request.
  void setToken(std::string token) { token_ = std::move(token); }

  // GET /api/v1/clusters → {"clusters": [...]}.
  StatusOr<Json> listClusters();
  // GET /api/v1/clusters/{name} → Cluster.
  StatusOr<Json> getCluster(const std::string& name);
  // POST /api/v1/clusters with a ClusterCreate body → Cluster.
  StatusOr<Json> createCluster(const Json& request);
  // DELETE /api/v1/clusters/{name} → Cluster.
  StatusOr<Json> deleteCluster(const std::string& name);
  // GET /api/v1/clusters/{name}/events → {"events": [...]}.
  // GET …/events, of `node` (if not empty) and `revision` (if above 0).
  StatusOr<Json> listEvents(const std::string& name, const std::string& node = "",
                            int64_t revision = 0);

  // Changes. Each answers 202 {"change": {"revision", "made", "message", …},
  // "cluster": Cluster}, or 200 with made=false when nothing would change.

  // GET /api/v1/clusters/{name}/revisions → {"revisions": [...], "appliedRevision"}.
  StatusOr<Json> listRevisions(const std::string& name);
  // POST /api/v1/clusters/{name}/scale with {"gpuNodes"?, "cpuNodes"?, "force"?}.
  StatusOr<Json> scaleCluster(const std::string& name, const Json& request);
  // POST /api/v1/clusters/{name}/reconfigure.
  StatusOr<Json> reconfigureCluster(const std::string& name);
  // PUT /api/v1/clusters/{name}/ssh-keys with {"sshKeys": keys}.
  StatusOr<Json> setSshKeys(const std::string& name, const std::vector<std::string>& keys);
  // POST /api/v1/clusters/{name}/login/restart.
  StatusOr<Json> restartLogin(const std::string& name);
  // POST /api/v1/clusters/{name}/controller/restart.
  StatusOr<Json> restartController(const std::string& name);
  // POST /api/v1/clusters/{name}/terminate → Cluster.
  StatusOr<Json> terminateCluster(const std::string& name);
  // POST /api/v1/clusters/{name}/clone with {"name": newName} → the new Cluster.
  StatusOr<Json> cloneCluster(const std::string& name, const std::string& newName,
                              const std::string& image = "");
  // POST …/image {"image"}: move the cluster to another image.
  StatusOr<Json> setImage(const std::string& name, const std::string& image);
  // POST …/workers/restart.
  StatusOr<Json> restartWorkers(const std::string& name);
  // GET /api/v1/images and /api/v1/images/{name}.
  StatusOr<Json> listImages();
  StatusOr<Json> getImage(const std::string& image);

  // GET /api/v1/clusters/{name}/partitions → {"partitions": [...], "userPartitions", "limit"}.
  StatusOr<Json> listPartitions(const std::string& name);
  // POST /api/v1/clusters/{name}/partitions with {"name", "nodes", "options"}.
  StatusOr<Json> createPartition(const std::string& name, const Json& partition);
  // PUT /api/v1/clusters/{name}/partitions/{partition}: replaces the whole
  // partition with `body` ({"name", "nodes", "options"}).
  StatusOr<Json> updatePartition(const std::string& name, const std::string& partition,
                                 const Json& body);
  // DELETE /api/v1/clusters/{name}/partitions/{partition}[?force=true].
  StatusOr<Json> deletePartition(const std::string& name, const std::string& partition, bool force);

  // GET /api/v1/slurm-params → {"slurmConf": [...], "partition": [...]}.
  StatusOr<Json> slurmParams();
  // GET /api/v1/clusters/{name}/config → {"slurmConf": {...}, "revision", "appliedRevision"}.
  StatusOr<Json> getConfig(const std::string& name);
  // PATCH /api/v1/clusters/{name}/config with {"set": {...}, "unset": [...]}.
  StatusOr<Json> changeConfig(const std::string& name, const Json& request);
  // POST /api/v1/clusters/{name}/config/diff with {"set"?, "unset"?} →
  // {"diff", "restartsSlurmctld"}.
  StatusOr<Json> diffConfig(const std::string& name, const Json& request);

  // Volumes: host directories that outlive clusters.

  // GET /api/v1/volumes → {"volumes": [Volume + "attachedTo"]}.
  StatusOr<Json> listVolumes();
  // GET /api/v1/volumes/{volume} → Volume + "attachedTo": ["cluster:/path"].
  StatusOr<Json> getVolume(const std::string& volume);
  // POST /api/v1/volumes with {"name", "type", "source"?} → Volume.
  StatusOr<Json> createVolume(const Json& request);
  // DELETE /api/v1/volumes/{volume} → the deleted Volume; FailedPrecondition
  // while it is attached.
  StatusOr<Json> deleteVolume(const std::string& volume);
  // POST /api/v1/clusters/{name}/volumes with {"volume", "path"}: a change.
  StatusOr<Json> attachVolume(const std::string& name, const std::string& volume,
                              const std::string& path);
  // DELETE /api/v1/clusters/{name}/volumes/{volume}: a change.
  StatusOr<Json> detachVolume(const std::string& name, const std::string& volume);

  // Nodes.

  // GET /api/v1/clusters/{name}/nodes → {"nodes": [Node]}.
  StatusOr<Json> listNodes(const std::string& name);
  // GET /api/v1/clusters/{name}/nodes/{node} → Node + "history": [Event].
  StatusOr<Json> getNode(const std::string& name, const std::string& node);
  // POST /api/v1/clusters/{name}/nodes/{node}/reboot: a change.
  StatusOr<Json> rebootNode(const std::string& name, const std::string& node);
  // POST /api/v1/clusters/{name}/nodes/{node}/inject-xid with {"code"} →
  // {"node", "line"}.
  StatusOr<Json> injectXid(const std::string& name, const std::string& node, int code);

  // Login users.

  // GET /api/v1/clusters/{name}/users → {"users": [{"name", "uid", "home", "sshKeys"}]}.
  StatusOr<Json> listUsers(const std::string& name);
  // POST /api/v1/clusters/{name}/users with {"name", "sshKeys"}: a change.
  StatusOr<Json> addUser(const std::string& name, const std::string& user,
                         const std::vector<std::string>& keys);
  // DELETE /api/v1/clusters/{name}/users/{user}: a change.
  StatusOr<Json> removeUser(const std::string& name, const std::string& user);

 private:
  enum class Method { kGet, kPost, kPut, kPatch, kDelete };
  StatusOr<Json> call(Method method, const std::string& path, const std::string& body = "");

  ServerUrl server_;
  ClientTimeouts timeouts_;
  std::string token_;
};

}  // namespace corral
