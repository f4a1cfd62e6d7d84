#include "cli/client.h"
#include "common/text.h"

#include <cctype>
#include <exception>
#include <utility>

#include "cli/http.h"

namespace corral {
namespace {

constexpr const char* kUserAgent = "corral-cli/0.1.0";

// A short, single-line excerpt of a body for error messages: a proxy's HTML
// page should not flood the terminal.
std::string excerpt(const std::string& body) {
  constexpr size_t kMax = 200;
  std::string s = body.substr(0, kMax);
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (body.size() > kMax) s += "…";
  return s;
}

bool allDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Says what went wrong in words that fit after "cannot reach corrald at URL: ".
std::string transportReason(httplib::Error error, const ClientTimeouts& timeouts) {
  switch (error) {
    case httplib::Error::Connection:
      return "could not connect";
    case httplib::Error::ConnectionTimeout:
      return "no connection within " + std::to_string(timeouts.connect.count()) + "s";
    case httplib::Error::Read:
      return "no complete answer within " + std::to_string(timeouts.read.count()) + "s";
    case httplib::Error::Write:
      return "could not send the request";
    default: {
      std::string s = httplib::to_string(error);
      if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
      return s;
    }
  }
}

}  // namespace

std::string ServerUrl::toString() const {
  return scheme + "://" + host + ":" + std::to_string(port);
}

StatusOr<ServerUrl> parseServerUrl(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return invalidArgument("invalid server URL \"" + text + "\": " + why +
                           "; expected http://HOST:PORT, e.g. " + kDefaultServer);
  };
  ServerUrl url;
  std::string rest = text;
  size_t sep = rest.find("://");
  if (sep == std::string::npos) {
    url.scheme = "http";
  } else {
    url.scheme = rest.substr(0, sep);
    for (char& c : url.scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    rest = rest.substr(sep + 3);
    if (url.scheme != "http" && url.scheme != "https") {
      return bad("the scheme must be http or https");
    }
  }
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find_first_of("/?#@ ") != std::string::npos) {
    return bad("it must not have a path, query or user");
  }
  std::string portText;
  if (!rest.empty() && rest.front() == '[') {
    size_t close = rest.find(']');
    if (close == std::string::npos) return bad("unterminated IPv6 address");
    url.host = rest.substr(0, close + 1);
    std::string after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("unexpected text after the address");
      portText = after.substr(1);
      if (portText.empty()) return bad("empty port");
    }
  } else {
    size_t colon = rest.find(':');
    url.host = rest.substr(0, colon);
    if (colon != std::string::npos) {
      portText = rest.substr(colon + 1);
      if (portText.empty()) return bad("empty port");
    }
  }
  if (url.host.empty() || url.host == "[]") return bad("no host");
  if (portText.empty()) {
    url.port = url.scheme == "https" ? 443 : 80;
  } else {
    if (!allDigits(portText) || portText.size() > 5) return bad("the port must be a number");
    url.port = std::stoi(portText);
    if (url.port < 1 || url.port > 65535) return bad("the port must be 1-65535");
  }
  return url;
}

Code codeFromName(const std::string& name) {
  for (Code c :
       {Code::kInvalidArgument, Code::kNotFound, Code::kConflict, Code::kFailedPrecondition,
        Code::kUnauthenticated, Code::kUnavailable, Code::kInternal}) {
    if (name == codeName(c)) return c;
  }
  return Code::kInternal;
}

Code codeFromHttpStatus(int status) {
  switch (status) {
    case 400:
      return Code::kInvalidArgument;
    case 401:
      return Code::kUnauthenticated;
    case 404:
      return Code::kNotFound;
    case 409:
      return Code::kConflict;
    case 503:
      return Code::kUnavailable;
    default:
      return Code::kInternal;
  }
}

StatusOr<Json> interpretAnswer(int status, const std::string& body) {
  // `parse(…, nullptr, false)` reports bad JSON as a discarded value instead of
  // throwing, so no exception leaves this function.
  Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (status >= 200 && status < 300) {
    if (parsed.is_discarded()) {
      return internalError("corrald sent an answer that is not JSON (HTTP " +
                           std::to_string(status) + "): " + excerpt(body));
    }
    return parsed;
  }
  if (!parsed.is_discarded() && parsed.is_object()) {
    auto e = parsed.find("error");
    if (e != parsed.end() && e->is_object()) {
      auto m = e->find("message");
      auto c = e->find("code");
      if (m != e->end() && m->is_string() && !m->get_ref<const std::string&>().empty()) {
        Code code = (c != e->end() && c->is_string()) ? codeFromName(c->get<std::string>())
                                                      : codeFromHttpStatus(status);
        if (code == Code::kInternal && status != 500) code = codeFromHttpStatus(status);
        return Status(code, m->get<std::string>());
      }
    }
  }
  std::string msg = "corrald answered HTTP " + std::to_string(status);
  if (!body.empty()) msg += ": " + excerpt(body);
  return Status(codeFromHttpStatus(status), msg);
}

ApiClient::ApiClient(ServerUrl server, ClientTimeouts timeouts)
    : server_(std::move(server)), timeouts_(timeouts) {}

ApiClient::~ApiClient() = default;

StatusOr<Json> ApiClient::listClusters() { return call(Method::kGet, "/api/v1/clusters"); }

StatusOr<Json> ApiClient::getCluster(const std::string& name) {
  return call(Method::kGet, "/api/v1/clusters/" + percentEncode(name));
}

StatusOr<Json> ApiClient::createCluster(const Json& request) {
  return call(Method::kPost, "/api/v1/clusters",
              request.dump(-1, ' ', false, Json::error_handler_t::replace));
}

StatusOr<Json> ApiClient::deleteCluster(const std::string& name) {
  return call(Method::kDelete, "/api/v1/clusters/" + percentEncode(name));
}

StatusOr<Json> ApiClient::listEvents(const std::string& name, const std::string& node,
                                     int64_t revision) {
  std::string query;
  if (!node.empty()) query += "node=" + percentEncode(node);
  if (revision > 0) query += (query.empty() ? "" : "&") + std::string("revision=") +
                             std::to_string(revision);
  return call(Method::kGet, "/api/v1/clusters/" + percentEncode(name) + "/events" +
                                (query.empty() ? "" : "?" + query));
}

namespace {

std::string clusterPath(const std::string& name) {
  return "/api/v1/clusters/" + percentEncode(name);
}

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

}  // namespace

StatusOr<Json> ApiClient::listRevisions(const std::string& name) {
  return call(Method::kGet, clusterPath(name) + "/revisions");
}

StatusOr<Json> ApiClient::scaleCluster(const std::string& name, const Json& request) {
  return call(Method::kPost, clusterPath(name) + "/scale", dump(request));
}

StatusOr<Json> ApiClient::reconfigureCluster(const std::string& name) {
  return call(Method::kPost, clusterPath(name) + "/reconfigure", "{}");
}

StatusOr<Json> ApiClient::setSshKeys(const std::string& name,
                                     const std::vector<std::string>& keys) {
  return call(Method::kPut, clusterPath(name) + "/ssh-keys", dump(Json{{"sshKeys", keys}}));
}

StatusOr<Json> ApiClient::restartLogin(const std::string& name) {
  return call(Method::kPost, clusterPath(name) + "/login/restart", "{}");
}

StatusOr<Json> ApiClient::restartController(const std::string& name) {
  return call(Method::kPost, clusterPath(name) + "/controller/restart", "{}");
}

StatusOr<Json> ApiClient::terminateCluster(const std::string& name) {
  return call(Method::kPost, clusterPath(name) + "/terminate", "{}");
}

StatusOr<Json> ApiClient::cloneCluster(const std::string& name, const std::string& newName,
                                       const std::string& image) {
  Json body{{"name", newName}};
  if (!image.empty()) body["image"] = image;
  return call(Method::kPost, clusterPath(name) + "/clone", dump(body));
}

StatusOr<Json> ApiClient::setImage(const std::string& name, const std::string& image) {
  return call(Method::kPost, clusterPath(name) + "/image", dump(Json{{"image", image}}));
}

StatusOr<Json> ApiClient::restartWorkers(const std::string& name) {
  return call(Method::kPost, clusterPath(name) + "/workers/restart", "{}");
}

StatusOr<Json> ApiClient::listImages() { return call(Method::kGet, "/api/v1/images"); }

StatusOr<Json> ApiClient::getImage(const std::string& image) {
  return call(Method::kGet, "/api/v1/images/" + percentEncode(image));
}

StatusOr<Json> ApiClient::listPartitions(const std::string& name) {
  return call(Method::kGet, clusterPath(name) + "/partitions");
}

StatusOr<Json> ApiClient::createPartition(const std::string& name, const Json& partition) {
  return call(Method::kPost, clusterPath(name) + "/partitions", dump(partition));
}

StatusOr<Json> ApiClient::updatePartition(const std::string& name, const std::string& partition,
                                          const Json& body) {
  return call(Method::kPut, clusterPath(name) + "/partitions/" + percentEncode(partition),
              dump(body));
}

StatusOr<Json> ApiClient::deletePartition(const std::string& name, const std::string& partition,
                                          bool force) {
  return call(Method::kDelete, clusterPath(name) + "/partitions/" + percentEncode(partition) +
                                   (force ? "?force=true" : ""));
}

StatusOr<Json> ApiClient::slurmParams() { return call(Method::kGet, "/api/v1/slurm-params"); }

StatusOr<Json> ApiClient::getConfig(const std::string& name) {
  return call(Method::kGet, clusterPath(name) + "/config");
}

StatusOr<Json> ApiClient::changeConfig(const std::string& name, const Json& request) {
  return call(Method::kPatch, clusterPath(name) + "/config", dump(request));
}

StatusOr<Json> ApiClient::diffConfig(const std::string& name, const Json& request) {
  return call(Method::kPost, clusterPath(name) + "/config/diff", dump(request));
}

namespace {

std::string volumePath(const std::string& volume) {
  return "/api/v1/volumes/" + percentEncode(volume);
}

std::string nodePath(const std::string& name, const std::string& node) {
  return clusterPath(name) + "/nodes/" + percentEncode(node);
}

}  // namespace

StatusOr<Json> ApiClient::listVolumes() { return call(Method::kGet, "/api/v1/volumes"); }

StatusOr<Json> ApiClient::getVolume(const std::string& volume) {
  return call(Method::kGet, volumePath(volume));
}

StatusOr<Json> ApiClient::createVolume(const Json& request) {
  return call(Method::kPost, "/api/v1/volumes", dump(request));
}

StatusOr<Json> ApiClient::deleteVolume(const std::string& volume) {
  return call(Method::kDelete, volumePath(volume));
}

StatusOr<Json> ApiClient::attachVolume(const std::string& name, const std::string& volume,
                                       const std::string& path) {
  return call(Method::kPost, clusterPath(name) + "/volumes",
              dump(Json{{"volume", volume}, {"path", path}}));
}

StatusOr<Json> ApiClient::detachVolume(const std::string& name, const std::string& volume) {
  return call(Method::kDelete, clusterPath(name) + "/volumes/" + percentEncode(volume));
}

StatusOr<Json> ApiClient::listNodes(const std::string& name) {
  return call(Method::kGet, clusterPath(name) + "/nodes");
}

StatusOr<Json> ApiClient::getNode(const std::string& name, const std::string& node) {
  return call(Method::kGet, nodePath(name, node));
}

StatusOr<Json> ApiClient::rebootNode(const std::string& name, const std::string& node) {
  return call(Method::kPost, nodePath(name, node) + "/reboot", "{}");
}

StatusOr<Json> ApiClient::injectXid(const std::string& name, const std::string& node, int code) {
  return call(Method::kPost, nodePath(name, node) + "/inject-xid", dump(Json{{"code", code}}));
}

StatusOr<Json> ApiClient::listUsers(const std::string& name) {
  return call(Method::kGet, clusterPath(name) + "/users");
}

StatusOr<Json> ApiClient::addUser(const std::string& name, const std::string& user,
                                  const std::vector<std::string>& keys) {
  return call(Method::kPost, clusterPath(name) + "/users",
              dump(Json{{"name", user}, {"sshKeys", keys}}));
}

StatusOr<Json> ApiClient::removeUser(const std::string& name, const std::string& user) {
  return call(Method::kDelete, clusterPath(name) + "/users/" + percentEncode(user));
}

StatusOr<Json> ApiClient::call(Method method, const std::string& path, const std::string& body) {
  // httplib may throw (std::regex, allocation, its own invalid_argument); keep
  // that inside the module.
  try {
    std::string host = server_.host;
    if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
    std::unique_ptr<httplib::ClientImpl> http;
    if (server_.scheme == "https") {
      http = std::make_unique<httplib::SSLClient>(host, server_.port);
    } else {
      http = std::make_unique<httplib::ClientImpl>(host, server_.port);
    }
    http->set_connection_timeout(timeouts_.connect);
    http->set_read_timeout(timeouts_.read);
    http->set_write_timeout(timeouts_.read);
    // Paths are already percent-encoded; encoding them again would turn "%"
    // into "%25".
    http->set_url_encode(false);
    httplib::Headers headers = {{"Accept", "application/json"}, {"User-Agent", kUserAgent}};
    if (!token_.empty()) headers.emplace("Authorization", "Bearer " + token_);

    httplib::Result result{nullptr, httplib::Error::Unknown};
    switch (method) {
      case Method::kGet:
        result = http->Get(path.c_str(), headers);
        break;
      case Method::kPost:
        result = http->Post(path.c_str(), headers, body, "application/json");
        break;
      case Method::kPut:
        result = http->Put(path.c_str(), headers, body, "application/json");
        break;
      case Method::kPatch:
        result = http->Patch(path.c_str(), headers, body, "application/json");
        break;
      case Method::kDelete:
        result = http->Delete(path.c_str(), headers);
        break;
    }
    if (!result) {
      return unavailable("cannot reach corrald at " + server_.toString() + ": " +
                         transportReason(result.error(), timeouts_) +
                         "; is it running? (start it with: corrald)");
    }
    return interpretAnswer(result->status, result->body);
  } catch (const std::exception& e) {
    return internalError("talking to corrald at " + server_.toString() + ": " + e.what());
  }
}

}  // namespace corral
