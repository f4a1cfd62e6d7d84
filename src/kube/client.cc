#include "kube/client.h"

#include <curl/curl.h>

#include <functional>
#include <optional>

#include "common/files.h"
#include "kube/errors.h"
#include "kube/paths.h"
#include "kube/watch.h"

namespace corral::kube {

namespace internal {

// Takes a 2xx body in pieces instead of `Response::body`; false aborts the
// transfer.
using BodySink = std::function<bool(const char* data, size_t size)>;

struct Exchange {
  const KubeClient::Request* request = nullptr;
  KubeClient::Response response;
  BodySink sink;                         // Set for a watch.
  const std::atomic<bool>* stop = nullptr;  // Polled about once a second.
  long timeoutSeconds = 0;               // 0: none.
  size_t maxBody = 0;
  bool tooLarge = false;
  CURL* curl = nullptr;
  CURLcode rc = CURLE_OK;
  char errbuf[CURL_ERROR_SIZE] = {0};
};

}  // namespace internal

namespace {

using internal::Exchange;

constexpr size_t kMaxErrorBody = 64u << 10;

void globalInit() {
  static const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
  (void)rc;
}

std::string trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

bool isSuccess(long status) { return status >= 200 && status < 300; }

size_t onBody(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  size_t len = size * n;
  long code = 0;
  curl_easy_getinfo(ex->curl, CURLINFO_RESPONSE_CODE, &code);
  if (ex->sink && isSuccess(code)) return ex->sink(data, len) ? len : 0;
  size_t cap = ex->sink ? kMaxErrorBody : ex->maxBody;
  if (ex->response.body.size() + len > cap) {
    if (ex->sink) return len;  // An error body: its start is enough.
    ex->tooLarge = true;
    return 0;
  }
  ex->response.body.append(data, len);
  return len;
}

int onProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* ex = static_cast<Exchange*>(user);
  return ex->stop != nullptr && ex->stop->load() ? 1 : 0;
}

void setBlob(CURL* curl, CURLoption option, const std::string& pem) {
  curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
  curl_easy_setopt(curl, option, &blob);
}

// How to reach and trust the server, and how to prove who corral is.
void setTlsOptions(CURL* curl, const KubeConfig& config) {
  if (config.insecureSkipTlsVerify) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!config.caPem.empty()) {
    setBlob(curl, CURLOPT_CAINFO_BLOB, config.caPem);
  }
  if (!config.clientCertPem.empty()) {
    setBlob(curl, CURLOPT_SSLCERT_BLOB, config.clientCertPem);
    curl_easy_setopt(curl, CURLOPT_SSLCERTTYPE, "PEM");
    setBlob(curl, CURLOPT_SSLKEY_BLOB, config.clientKeyPem);
    curl_easy_setopt(curl, CURLOPT_SSLKEYTYPE, "PEM");
  }
}

// The method, its body, the timeouts and the callbacks that fill `ex`.
void setTransferOptions(CURL* curl, const std::string& url, const KubeClientOptions& options,
                        curl_slist* headers, Exchange* ex) {
  const KubeClient::Request& req = *ex->request;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, ex->errbuf);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, options.userAgent.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, static_cast<long>(options.connectTimeout.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, ex->timeoutSeconds);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, onBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, ex);
  if (ex->stop != nullptr) {
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, onProgress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, ex);
  }
  if (!req.body.empty()) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, req.body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  }
  if (req.method != "GET" && req.method != "POST") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  }
}

// A transport failure in the user's terms: which server, what curl said,
// and for TLS failures which part of the config to look at.
Status transportError(const Exchange& ex, const KubeConfig& config) {
  std::string detail = ex.errbuf[0] != '\0' ? ex.errbuf : curl_easy_strerror(ex.rc);
  while (!detail.empty() && detail.back() == '\n') detail.pop_back();
  std::string what = "Kubernetes API server " + config.server + " (" + ex.request->method + " " +
                     ex.request->target + "): " + detail;
  switch (ex.rc) {
    case CURLE_PEER_FAILED_VERIFICATION:
      return unavailable(what + "; its certificate is not trusted by the certificate-authority "
                                "of " + config.source);
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
      return failedPrecondition(what + "; check the certificates and key of " + config.source);
    case CURLE_OPERATION_TIMEDOUT:
      return unavailable("timed out: " + what);
    default:
      return unavailable("unreachable: " + what);
  }
}

StatusOr<nlohmann::json> parseObject(const KubeClient::Request& req, const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object())
    return internalError("Kubernetes API: " + req.method + " " + req.target +
                         " answered with something not a JSON object");
  return j;
}

// `j[key]` when it is a string, else "" (`json::value` would throw).
std::string stringAt(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

bool isExpiredStatus(const nlohmann::json& status) {
  if (!status.is_object()) return false;
  auto code = status.find("code");
  return code != status.end() && code->is_number_integer() && code->get<long>() == 410;
}

std::string dumpJson(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

KubeClient::KubeClient(KubeConfig config, KubeClientOptions options)
    : config_(std::move(config)), options_(std::move(options)), lastToken_(config_.token) {
  globalInit();
}

KubeClient::~KubeClient() = default;

std::string KubeClient::bearerToken() {
  std::optional<std::string> fresh;
  if (!config_.tokenFile.empty()) {
    auto text = readFile(config_.tokenFile);
    if (text.isOk() && !trimmed(*text).empty()) fresh = trimmed(*text);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (fresh) lastToken_ = *fresh;
  return lastToken_;
}

Status KubeClient::perform(internal::Exchange& ex) {
  CURL* curl = pool_.acquire();
  if (curl == nullptr) return internalError("cannot initialise libcurl");
  ex.curl = curl;
  ex.maxBody = options_.maxBody;
  const Request& req = *ex.request;
  curl_slist* headers = curl_slist_append(nullptr, "Accept: application/json");
  headers = curl_slist_append(headers, "Expect:");  // No 100-continue round trip.
  if (!req.contentType.empty())
    headers = curl_slist_append(headers, ("Content-Type: " + req.contentType).c_str());
  std::string token = bearerToken();
  if (!token.empty())
    headers = curl_slist_append(headers, ("Authorization: Bearer " + token).c_str());
  setTransferOptions(curl, config_.server + req.target, options_, headers, &ex);
  setTlsOptions(curl, config_);

  requests_++;
  ex.rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &ex.response.status);
  curl_slist_free_all(headers);
  pool_.release(curl);
  ex.curl = nullptr;
  if (ex.tooLarge) {
    return internalError("Kubernetes API: " + req.method + " " + req.target +
                         " answered with more than " + std::to_string(options_.maxBody >> 20) +
                         " MiB");
  }
  if (ex.rc != CURLE_OK) return transportError(ex, config_);
  return Status::ok();
}

StatusOr<KubeClient::Response> KubeClient::send(const Request& request) {
  internal::Exchange ex;
  ex.request = &request;
  ex.timeoutSeconds = static_cast<long>(options_.requestTimeout.count());
  RETURN_IF_ERROR(perform(ex));
  return std::move(ex.response);
}

StatusOr<nlohmann::json> KubeClient::jsonOf(const Request& request) {
  ASSIGN_OR_RETURN(Response r, send(request));
  if (!isSuccess(r.status)) return apiError(request.method, request.target, r.status, r.body);
  return parseObject(request, r.body);
}

StatusOr<nlohmann::json> KubeClient::get(const std::string& path) {
  Request req;
  req.target = path;
  return jsonOf(req);
}

StatusOr<ObjectList> KubeClient::list(const std::string& path, const std::string& labelSelector) {
  ObjectList out;
  std::string continueToken;
  do {
    Request req;
    req.target = withQuery(path, {{"labelSelector", labelSelector},
                                  {"limit", std::to_string(options_.listPageSize)},
                                  {"continue", continueToken}});
    ASSIGN_OR_RETURN(nlohmann::json page, jsonOf(req));
    auto items = page.find("items");
    if (items != page.end() && items->is_array()) {
      for (auto& item : *items) out.items.push_back(std::move(item));
    } else if (items != page.end() && !items->is_null()) {
      return internalError("Kubernetes API: GET " + req.target + " answered with no list");
    }
    auto meta = page.find("metadata");
    nlohmann::json none;
    const nlohmann::json& m = meta == page.end() ? none : *meta;
    // Every page is read at the first page's version.
    if (out.resourceVersion.empty()) out.resourceVersion = stringAt(m, "resourceVersion");
    continueToken = stringAt(m, "continue");
  } while (!continueToken.empty());
  return out;
}

StatusOr<WatchEnd> KubeClient::watch(const std::string& path, const WatchOptions& options,
                                     const WatchHandler& onEvent, const std::atomic<bool>& stop) {
  if (stop.load()) return WatchEnd::kStopped;
  Request req;
  req.target = withQuery(
      path, {{"watch", "1"},
             {"resourceVersion", options.resourceVersion},
             {"labelSelector", options.labelSelector},
             {"allowWatchBookmarks", "true"},
             {"timeoutSeconds",
              options.timeoutSeconds > 0 ? std::to_string(options.timeoutSeconds) : ""}});
  std::optional<WatchEnd> end;
  WatchLineSplitter lines([&](const std::string& line) -> Status {
    if (end) return Status::ok();
    ASSIGN_OR_RETURN(WatchEvent event, parseWatchEvent(line));
    if (event.type == WatchEventType::kError) {
      if (isExpiredStatus(event.object)) {
        end = WatchEnd::kExpired;
        return Status::ok();
      }
      return statusFromApiStatus(event.object, "watch " + path);
    }
    RETURN_IF_ERROR(onEvent(event));
    if (stop.load()) end = WatchEnd::kStopped;
    return Status::ok();
  });
  Status failure;
  internal::Exchange ex;
  ex.request = &req;
  ex.stop = &stop;
  // The server ends the stream at its timeout; this only bounds a server
  // that does not.
  ex.timeoutSeconds = options.timeoutSeconds > 0 ? options.timeoutSeconds + 60 : 0;
  ex.sink = [&](const char* data, size_t size) {
    failure = lines.feed(data, size);
    return failure.isOk() && !end;
  };
  Status transport = perform(ex);
  if (!failure.isOk()) return failure;
  if (end) return *end;
  if (stop.load()) return WatchEnd::kStopped;
  long status = ex.response.status;
  if (status == 410) return WatchEnd::kExpired;
  if (status != 0 && !isSuccess(status))
    return apiError("GET", req.target, status, ex.response.body);
  if (!transport.isOk()) {
    // Our own bound on a stream the server did not end: watch again.
    if (ex.rc == CURLE_OPERATION_TIMEDOUT && isSuccess(status)) return WatchEnd::kClosed;
    return transport;
  }
  RETURN_IF_ERROR(lines.finish());
  if (end) return *end;
  return WatchEnd::kClosed;
}

StatusOr<nlohmann::json> KubeClient::apply(const std::string& path, const nlohmann::json& object) {
  Request req;
  req.method = "PATCH";
  req.target = withQuery(path, {{"fieldManager", options_.fieldManager}, {"force", "true"}});
  // Server-side apply takes YAML; JSON is YAML.
  req.contentType = "application/apply-patch+yaml";
  req.body = dumpJson(object);
  return jsonOf(req);
}

StatusOr<nlohmann::json> KubeClient::applyStatus(const std::string& path,
                                                 const nlohmann::json& object) {
  return apply(path + "/status", object);
}

Status KubeClient::remove(const std::string& path) {
  Request req;
  req.method = "DELETE";
  req.target = withQuery(path, {{"propagationPolicy", "Background"}});
  ASSIGN_OR_RETURN(Response r, send(req));
  if (!isSuccess(r.status)) return apiError(req.method, req.target, r.status, r.body);
  return Status::ok();
}

}  // namespace corral::kube
