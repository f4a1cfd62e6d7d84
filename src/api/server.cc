#include "api/server.h"
#include "store/update.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "api/http_util.h"
#include "model/actions.h"
#include "common/log.h"
#include "model/spec_json.h"
#include "common/text.h"
#include "model/validation.h"
#include "slurm/settings.h"

namespace corral {
using nlohmann::json;

ApiServer::ApiServer(Store& store, Reconciler& reconciler, Clock& clock, ApiOptions options)
    : store_(store),
      reconciler_(reconciler),
      clock_(clock),
      options_(std::move(options)),
      http_(new httplib::Server) {
  SlurmFetch fetch = [this](const std::string& cluster, const std::vector<std::string>& argv) {
    return reconciler_.slurmCommand(cluster, argv, std::chrono::seconds(30));
  };
  jobs_ = std::make_unique<JobCache>(fetch, clock_, JobCache::Options{options_.jobsFresh});
  MetricsRecorder::Source source;
  source.clusters = [this] {
    std::vector<std::string> out;
    if (auto all = store_.listClusters(); all.isOk())
      for (const auto& r : *all)
        if (r.status == ClusterStatus::kRunning) out.push_back(r.spec.name);
    return out;
  };
  source.nodeStates = [this](const std::string& cluster) {
    std::map<std::string, std::string> out;
    for (const auto& [node, obs] : reconciler_.observedNodes(cluster)) out[node] = obs.state;
    return out;
  };
  source.fetch = fetch;
  metrics_ = std::make_unique<MetricsRecorder>(source, clock_, options_.metricsPeriod);
  routes();
  changeRoutes();
  nodeRoutes();
  consoleRoutes();
  jobRoutes();
  imageRoutes();
}

namespace {
// See `ApiServer::caller`: set by `authenticated` for the duration of one
// route, on the httplib worker thread that runs it.
thread_local Caller tCaller;
}  // namespace

const Caller& ApiServer::caller() { return tCaller; }

ApiServer::Handler ApiServer::authenticated(Handler handler) {
  return [this, handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    auto who = authenticate(store_, req.get_header_value("Authorization"));
    if (!who.isOk()) {
      if (who.status().code() == Code::kUnauthenticated)
        res.set_header("WWW-Authenticate", "Bearer realm=\"corral\"");
      return sendError(res, who.status());
    }
    tCaller = std::move(*who);
    struct Forget {
      ~Forget() { tCaller = Caller{}; }
    } forget;
    handler(req, res);
  };
}

void ApiServer::get(const std::string& p, Handler h) { http_->Get(p, authenticated(std::move(h))); }
void ApiServer::post(const std::string& p, Handler h) { http_->Post(p, authenticated(std::move(h))); }
void ApiServer::put(const std::string& p, Handler h) { http_->Put(p, authenticated(std::move(h))); }
void ApiServer::patch(const std::string& p, Handler h) { http_->Patch(p, authenticated(std::move(h))); }
void ApiServer::del(const std::string& p, Handler h) { http_->Delete(p, authenticated(std::move(h))); }

StatusOr<std::string> ApiServer::projectFor(const std::string& requested) {
  if (requested.empty()) return caller().defaultProject();
  RETURN_IF_ERROR(validateProjectName(requested));
  if (!caller().sees(requested))
    return notFound("no project named " + quoteForMessage(requested) + " that you belong to");
  return requested;
}

StatusOr<ImageRef> ApiServer::resolveImage(const std::string& requested) {
  std::string name = requested.empty() ? options_.defaultImage : requested;
  if (options_.images == nullptr) return ImageRef{name, "", ""};
  auto info = options_.images->find(name);
  if (!info.isOk()) {
    if (info.status().code() == Code::kNotFound) return invalidArgument(info.status().message());
    return info.status();
  }
  return info->ref;
}

void ApiServer::event(const std::string& cluster, const std::string& reason,
                      const std::string& message, int64_t revision) {
  Event e;
  e.cluster = cluster;
  e.time = clock_.unixMillis();
  e.type = "Normal";
  e.reason = reason;
  e.message = message;
  e.revision = revision;
  (void)store_.appendEvent(e);
}

StatusOr<ClusterRecord> ApiServer::createCluster(ClusterSpec spec, const std::string& project,
                                                 const std::string& why) {
  spec.loginGeneration = 0;
  // A clone keeps the build its source ran; a create resolves the name.
  if (spec.image.id.empty() || options_.images == nullptr) {
    ASSIGN_OR_RETURN(spec.image, resolveImage(spec.image.name));
  }
  RETURN_IF_ERROR(validateClusterSpec(spec));
  RETURN_IF_ERROR(normalizeSlurmSettings(spec, options_.platformPartitions));
  ClusterRecord r;
  r.spec = spec;
  r.project = project;
  r.status = ClusterStatus::kCreating;
  r.phase = "queued";
  r.revision = 1;
  r.platformPartitions = options_.platformPartitions;
  r.changeAuthor = caller().user.empty() ? "api" : caller().user;
  r.changeMessage = why;
  r.createdAt = r.updatedAt = clock_.unixMillis() / 1000;
  auto created = store_.createCluster(r);
  if (!created.isOk()) {
    if (created.status().code() == Code::kConflict) {
      // Names are unique across corrald; whose cluster holds one is not
      // the caller's business unless it is theirs to see.
      auto holder = store_.getCluster(r.spec.name);
      if (holder.isOk() && caller().sees(holder->project))
        return conflict("a cluster named \"" + r.spec.name +
                        "\" already exists; choose another name or delete it first");
      return conflict("the cluster name \"" + r.spec.name + "\" is not available; choose another");
    }
    return created.status();
  }
  event(r.spec.name, "CreateRequested",
        why + ": " + std::to_string(r.spec.gpuNodes) + " GPU nodes x " +
            std::to_string(r.spec.gpusPerNode) + " GPUs, " + std::to_string(r.spec.cpuNodes) +
            " CPU nodes",
        created->revision);
  reconciler_.enqueue(r.spec.name);
  return created;
}

// Names that are not valid cluster names cannot exist: NotFound without
// touching the store (this also stops path tricks like "..").
StatusOr<ClusterRecord> ApiServer::findCluster(const std::string& name) {
  if (!validateClusterName(name).isOk()) return notFound("no cluster named \"" + name + "\"");
  auto r = store_.getCluster(name);
  if ((!r.isOk() && r.status().code() == Code::kNotFound) || (r.isOk() && !caller().sees(r->project)))
    return notFound("no cluster named \"" + name + "\"");
  return r;
}

StatusOr<Volume> ApiServer::findVolume(const std::string& name) {
  if (!validateClusterName(name).isOk()) return notFound("no volume named \"" + name + "\"");
  auto v = store_.getVolume(name);
  if ((!v.isOk() && v.status().code() == Code::kNotFound) || (v.isOk() && !caller().sees(v->project)))
    return notFound("no volume named \"" + name + "\"");
  return v;
}

ApiServer::~ApiServer() { stop(); }

Status ApiServer::bind(const std::string& host, int port) {
  if (port == 0) {
    port_ = http_->bind_to_any_port(host.c_str());
    if (port_ <= 0) return unavailable("cannot bind " + host);
    return Status::ok();
  }
  if (!http_->bind_to_port(host.c_str(), port))
    return unavailable("cannot listen on " + host + ":" + std::to_string(port) +
                       " (is another corrald running? choose another with --listen)");
  port_ = port;
  return Status::ok();
}

void ApiServer::serve() {
  metrics_->start();
  http_->listen_after_bind();
}

void ApiServer::stop() {
  if (http_) http_->stop();
  if (metrics_) metrics_->stop();
}

void ApiServer::routes() {
  http_->set_payload_max_length(kMaxRequestBody);
  // Answers are small and clients keep connections alive: without this,
  // Nagle's algorithm and the client's delayed ACK add ~40 ms to each.
  http_->set_tcp_nodelay(true);
  // Every /api/ route is registered through `authenticated` (see `get`);
  // the console's files and /healthz hold no data and need no token.
  http_->set_exception_handler([](const httplib::Request&, httplib::Response& res,
                                  std::exception_ptr) {
    sendError(res, internalError("the server hit an unexpected error; see corrald's log"));
  });
  http_->set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    // Nothing under /api/ is described to a caller without a valid token,
    // not even which paths exist.
    if (res.status == 404 && req.path.rfind("/api/", 0) == 0) {
      auto who = authenticate(store_, req.get_header_value("Authorization"));
      if (!who.isOk()) {
        res.status = httpStatus(who.status().code());
        return sendError(res, who.status());
      }
    }
    const std::string clusters = "/api/v1/clusters/";
    if (res.status == 404 && req.path.rfind(clusters, 0) == 0)
      // A name with a '/' (e.g. "../x") matches no route: it is no cluster.
      sendError(res, notFound("no cluster named \"" + req.path.substr(clusters.size()) + "\""));
    else if (res.status == 404)
      sendError(res, notFound("no such endpoint: " + req.method + " " + req.path));
    else if (res.status == 413)
      sendError(res, invalidArgument("request body too large (limit 1 MiB)"));
    else if (res.status == 400 && !req.has_header("Content-Length") &&
             !req.has_header("Transfer-Encoding") && req.method != "GET" && req.method != "DELETE")
      sendError(res, invalidArgument(req.method + " needs a Content-Length header; send an empty "
                                                  "body (curl -d '') when there is nothing to send"));
    else if (res.status >= 400)
      sendError(res, Status(res.status >= 500 ? Code::kInternal : Code::kInvalidArgument,
                            "bad request"));
  });

  http_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    sendJson(res, 200, {{"status", "ok"}});
  });

  get("/api/v1/clusters", [this](const httplib::Request&, httplib::Response& res) {
    auto all = store_.listClusters();
    if (!all.isOk()) return sendError(res, all.status());
    json list = json::array();
    for (const auto& r : *all)
      if (caller().sees(r.project))
        list.push_back(clusterView(r, reconciler_.observedNodes(r.spec.name)));
    sendJson(res, 200, {{"clusters", list}});
  });

  post("/api/v1/clusters", [this](const httplib::Request& req, httplib::Response& res) {
    auto body = jsonBody(req);
    if (!body.isOk()) return sendError(res, body.status());
    // What a user declares at creation; the rest of a spec (volumes, login
    // users, generations) is made by later changes, each with its own checks.
    if (Status s = rejectUnknownFields(*body, {"name", "image", "gpuNodes", "gpusPerNode", "cpuNodes",
                                               "sshKeys", "containers", "partitions", "slurmConf",
                                               "project"});
        !s.isOk())
      return sendError(res, s);
    std::string requested;
    if (auto p = body->find("project"); p != body->end()) {
      if (!p->is_string())
        return sendError(res, invalidArgument("field \"project\" must be a string"));
      requested = p->get<std::string>();
      body->erase("project");
    }
    if (auto img = body->find("image"); img != body->end() && !img->is_string())
      return sendError(res, invalidArgument("field \"image\" must be an image name (a string; "
                                            "`corral image list` shows them)"));
    auto spec = specFromJson(*body, /*strict=*/true);
    if (!spec.isOk()) return sendError(res, spec.status());
    auto project = projectFor(requested);
    if (!project.isOk()) return sendError(res, project.status());
    auto created = createCluster(*spec, *project, "create requested");
    if (!created.isOk()) return sendError(res, created.status());
    sendJson(res, 201, clusterView(*created, {}));
  });

  auto lookup = [this](const std::string& name, httplib::Response& res) -> StatusOr<ClusterRecord> {
    auto r = findCluster(name);
    if (!r.isOk()) sendError(res, r.status());
    return r;
  };

  get(R"(/api/v1/clusters/([^/]+))", [this, lookup](const httplib::Request& req,
                                                           httplib::Response& res) {
    auto r = lookup(req.matches[1], res);
    if (!r.isOk()) return;
    sendJson(res, 200, clusterView(*r, reconciler_.observedNodes(r->spec.name)));
  });

  del(R"(/api/v1/clusters/([^/]+))", [this, lookup](const httplib::Request& req,
                                                              httplib::Response& res) {
    auto r = lookup(req.matches[1], res);
    if (!r.isOk()) return;
    ClusterRecord rec = *r;
    if (rec.status != ClusterStatus::kDeleting) {
      if (Status s = checkAction(Action::kDelete, rec.spec.name, rec.status); !s.isOk())
        return sendError(res, s);
    }
    if (rec.status != ClusterStatus::kDeleting) {
      auto u = updateWithRetry(store_, rec.spec.name, RecordPart::kAll,
                               [&](ClusterRecord& r) -> StatusOr<Edit> {
        if (r.status == ClusterStatus::kDeleting) return Edit::kUnchanged;
        RETURN_IF_ERROR(checkAction(Action::kDelete, r.spec.name, r.status));
        r.status = ClusterStatus::kDeleting;
        r.phase = "queued";
        r.updatedAt = clock_.unixMillis() / 1000;
        return Edit::kWrite;
      });
      if (!u.isOk()) return sendError(res, u.status());
      rec = *u;
      event(rec.spec.name, "DeleteRequested", "delete requested");
    }
    reconciler_.enqueue(rec.spec.name);
    sendJson(res, 202, clusterView(rec, {}));
  });

  get(R"(/api/v1/clusters/([^/]+)/events)", [this, lookup](const httplib::Request& req,
                                                                  httplib::Response& res) {
    auto r = lookup(req.matches[1], res);
    if (!r.isOk()) return;
    auto filter = eventFilterOf(req);
    if (!filter.isOk()) return sendError(res, filter.status());
    auto events = store_.findEvents(r->spec.name, 500, *filter);
    if (!events.isOk()) return sendError(res, events.status());
    json list = json::array();
    for (const auto& e : *events) list.push_back(eventToJson(e));
    sendJson(res, 200, {{"events", list}});
  });
}

}  // namespace corral
