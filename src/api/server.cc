// `ApiServer`'s frame: construction, authentication of every API route,
// what httplib answers outside the routes, and the lookups every handler
// shares (`findCluster`, `findVolume`, `projectFor`, `event`). The routes are
// listed in src/api/routes.cc, their handlers in a file per resource.

#include "api/server.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "api/http_util.h"
#include "common/text.h"
#include "model/validation.h"

namespace corral {
using nlohmann::json;

ApiServer::ApiServer(Store& store, Reconciler& reconciler, Clock& clock, ApiOptions options)
    : store_(store),
      reconciler_(reconciler),
      clock_(clock),
      options_(std::move(options)),
      volumes_(store_, reconciler_.runtime(), clock_,
               Volumes::Options{options_.dataDir, options_.volumeSourceRoots}),
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
  serverSettings();
  routes();
  consoleFiles();
}

namespace {
// See `ApiServer::caller`: set by `authenticated` for the duration of one
// route, on the httplib worker thread that runs it.
thread_local Caller tCaller;

// What `findCluster` and `findVolume` answer: NotFound, as for a name that
// does not exist, for a thing of a project the caller may not see. Names
// that are not valid cannot exist: NotFound without touching the store (this
// also stops path tricks like "..").
template <typename T, typename Get>
StatusOr<T> findVisible(const std::string& what, const std::string& name, Get get) {
  Status missing = notFound("no " + what + " named \"" + name + "\"");
  if (!validateClusterName(name).isOk()) return missing;
  StatusOr<T> found = get(name);
  if (!found.isOk() && found.status().code() == Code::kNotFound) return missing;
  if (found.isOk() && !tCaller.sees(found->project)) return missing;
  return found;
}

}  // namespace

const Caller& ApiServer::caller() { return tCaller; }

ApiServer::Handler ApiServer::authenticated(Route route) {
  return [this, route](const httplib::Request& req, httplib::Response& res) {
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
    (this->*route)(req, res);
  };
}

void ApiServer::get(const std::string& p, Route r) { http_->Get(p, authenticated(r)); }
void ApiServer::post(const std::string& p, Route r) { http_->Post(p, authenticated(r)); }
void ApiServer::put(const std::string& p, Route r) { http_->Put(p, authenticated(r)); }
void ApiServer::patch(const std::string& p, Route r) { http_->Patch(p, authenticated(r)); }
void ApiServer::del(const std::string& p, Route r) { http_->Delete(p, authenticated(r)); }

StatusOr<ClusterRecord> ApiServer::findCluster(const std::string& name) {
  return findVisible<ClusterRecord>("cluster", name, [this](const std::string& n) { return store_.getCluster(n); });
}

StatusOr<Volume> ApiServer::findVolume(const std::string& name) {
  return findVisible<Volume>("volume", name, [this](const std::string& n) { return store_.getVolume(n); });
}

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

void ApiServer::serverSettings() {
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
}

}  // namespace corral
