#include "image/registry_client.h"
#include "common/text.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <optional>
#include <nlohmann/json.hpp>

#include "common/files.h"
#include "image/sha256.h"

namespace corral::image {
namespace {

constexpr const char* kUserAgent = "corral-image/0.1";
constexpr size_t kMaxManifest = 4u << 20;

void globalInit() {
  static const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
  (void)rc;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string base64(const std::string& in) {
  static const char* kTable = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  while (i + 2 < in.size()) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    out += kTable[v >> 18];
    out += kTable[(v >> 12) & 63];
    out += kTable[(v >> 6) & 63];
    out += kTable[v & 63];
    i += 3;
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    out += kTable[v >> 18];
    out += kTable[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += kTable[v >> 18];
    out += kTable[(v >> 12) & 63];
    out += kTable[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

// "host[:port]" of an absolute URL.
std::string hostOf(const std::string& url) {
  size_t start = url.find("://");
  start = (start == std::string::npos) ? 0 : start + 3;
  size_t end = url.find_first_of("/?#", start);
  std::string host = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  size_t at = host.rfind('@');
  return at == std::string::npos ? host : host.substr(at + 1);
}

// The registry's own explanation from an error body
// ({"errors":[{"code":…,"message":…}]}), or "".
struct RegistryError {
  std::vector<std::string> codes;
  std::string message;
};
RegistryError registryError(const std::string& body) {
  RegistryError e;
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return e;
  auto errs = j.find("errors");
  if (errs == j.end() || !errs->is_array()) return e;
  for (const auto& item : *errs) {
    if (!item.is_object()) continue;
    auto code = item.find("code");
    if (code != item.end() && code->is_string()) e.codes.push_back(code->get<std::string>());
    auto msg = item.find("message");
    if (e.message.empty() && msg != item.end() && msg->is_string())
      e.message = msg->get<std::string>();
  }
  return e;
}

bool hasCode(const RegistryError& e, const std::string& code) {
  return std::find(e.codes.begin(), e.codes.end(), code) != e.codes.end();
}

struct TransferContext {
  CURL* curl = nullptr;
  const HttpRequest* request = nullptr;
  HttpResponse* response = nullptr;
  Status sinkStatus;
  bool tooLarge = false;
  int64_t readOffset = 0;
  int readErrno = 0;
};

size_t onHeader(char* data, size_t size, size_t n, void* user) {
  auto* ctx = static_cast<TransferContext*>(user);
  std::string line(data, size * n);
  if (line.starts_with("HTTP/")) {
    ctx->response->headers.clear();  // A new response (after a redirect or 100 Continue).
  } else {
    size_t colon = line.find(':');
    if (colon != std::string::npos) {
      ctx->response->headers[lower(trim(line.substr(0, colon)))] = trim(line.substr(colon + 1));
    }
  }
  return size * n;
}

size_t onBody(char* data, size_t size, size_t n, void* user) {
  auto* ctx = static_cast<TransferContext*>(user);
  size_t len = size * n;
  long code = 0;
  curl_easy_getinfo(ctx->curl, CURLINFO_RESPONSE_CODE, &code);
  if (ctx->request->sink && code >= 200 && code < 300) {
    Status st = ctx->request->sink(data, len);
    if (!st.isOk()) {
      ctx->sinkStatus = st;
      return 0;
    }
    return len;
  }
  size_t cap = ctx->request->sink ? (64u << 10) : ctx->request->maxBody;
  if (ctx->response->body.size() + len > cap) {
    if (ctx->request->sink) return len;  // An error body: the start is enough.
    ctx->tooLarge = true;
    return 0;
  }
  ctx->response->body.append(data, len);
  return len;
}

size_t onRead(char* buffer, size_t size, size_t n, void* user) {
  auto* ctx = static_cast<TransferContext*>(user);
  const HttpRequest& req = *ctx->request;
  size_t want = size * n;
  if (req.bodyFd < 0) {
    size_t left = req.body.size() - static_cast<size_t>(ctx->readOffset);
    size_t take = std::min(want, left);
    std::copy_n(req.body.data() + ctx->readOffset, take, buffer);
    ctx->readOffset += static_cast<int64_t>(take);
    return take;
  }
  int64_t left = req.bodySize - ctx->readOffset;
  if (left <= 0) return 0;
  size_t take = std::min<size_t>(want, static_cast<size_t>(left));
  while (true) {
    ssize_t got = pread(req.bodyFd, buffer, take, ctx->readOffset);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      ctx->readErrno = got < 0 ? errno : EIO;
      return CURL_READFUNC_ABORT;
    }
    ctx->readOffset += got;
    return static_cast<size_t>(got);
  }
}

int onSeek(void* user, curl_off_t offset, int origin) {
  auto* ctx = static_cast<TransferContext*>(user);
  if (origin != SEEK_SET) return CURL_SEEKFUNC_CANTSEEK;
  ctx->readOffset = offset;
  return CURL_SEEKFUNC_OK;
}

// The request's headers for curl, the `Authorization` one included when
// given; the caller frees them after the transfer.
curl_slist* requestHeaders(const HttpRequest& req, const std::string& authorization) {
  curl_slist* headers = nullptr;
  for (const auto& h : req.headers) headers = curl_slist_append(headers, h.c_str());
  if (!authorization.empty()) {
    headers = curl_slist_append(headers, ("Authorization: " + authorization).c_str());
  }
  return headers;
}

// What every transfer sets: where, how long, and the callbacks that fill
// `ctx`'s response.
void setTransferOptions(CURL* curl, const std::string& url, const RegistryOptions& options,
                        curl_slist* headers, char* errbuf, TransferContext* ctx) {
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, kUserAgent);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, static_cast<long>(options.connectTimeout.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, static_cast<long>(options.transferTimeout.count()));
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, onHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, ctx);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, onBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, ctx);
}

// The request's method, its body and its basic authentication.
void setMethodOptions(CURL* curl, const HttpRequest& req, TransferContext* ctx) {
  if (!req.user.empty()) {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(curl, CURLOPT_USERNAME, req.user.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, req.password.c_str());
  }
  if (req.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (req.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, req.body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  } else if (req.method == "PUT") {
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, onRead);
    curl_easy_setopt(curl, CURLOPT_READDATA, ctx);
    curl_easy_setopt(curl, CURLOPT_SEEKFUNCTION, onSeek);
    curl_easy_setopt(curl, CURLOPT_SEEKDATA, ctx);
    curl_off_t size = req.bodyFd >= 0 ? req.bodySize : static_cast<curl_off_t>(req.body.size());
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, size);
  } else if (req.method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  }
}

// The token service's URL for a bearer challenge: its realm, asked for the
// challenge's service and scope (`defaultScope` when it names none).
std::string tokenUrl(const Challenge& ch, const std::string& defaultScope) {
  auto param = [&](const char* key) {
    auto it = ch.params.find(key);
    return it == ch.params.end() ? std::optional<std::string>() : it->second;
  };
  std::string realm = param("realm").value_or("");
  std::string url = realm + (realm.find('?') == std::string::npos ? "?" : "&");
  std::optional<std::string> service = param("service");
  if (service) url += "service=" + percentEncode(*service) + "&";
  return url + "scope=" + percentEncode(param("scope").value_or(defaultScope));
}

// The token in a token service's answer ("token", else "access_token"), or
// "" when it has none.
std::string tokenOf(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object()) return "";
  for (const char* key : {"token", "access_token"}) {
    auto it = j.find(key);
    if (it != j.end() && it->is_string() && !it->get<std::string>().empty()) {
      return it->get<std::string>();
    }
  }
  return "";
}

}  // namespace

std::vector<Credential> parseNetrc(const std::string& text) {
  std::vector<std::string> tokens;
  std::string cur;
  bool inQuote = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inQuote) {
      if (c == '"') {
        inQuote = false;
      } else if (c == '\\' && i + 1 < text.size()) {
        cur += text[++i];
      } else {
        cur += c;
      }
      continue;
    }
    if (c == '"') {
      inQuote = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty()) tokens.push_back(cur);
      cur.clear();
    } else if (c == '#' && cur.empty()) {
      while (i < text.size() && text[i] != '\n') ++i;  // A comment.
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) tokens.push_back(cur);

  std::vector<Credential> out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == "machine" && i + 1 < tokens.size()) {
      out.push_back({tokens[++i], "", ""});
    } else if (tokens[i] == "default") {
      out.push_back({"", "", ""});
    } else if ((tokens[i] == "login" || tokens[i] == "password" || tokens[i] == "account") &&
               i + 1 < tokens.size() && !out.empty()) {
      if (tokens[i] == "login") out.back().login = tokens[i + 1];
      if (tokens[i] == "password") out.back().password = tokens[i + 1];
      ++i;
    }
  }
  return out;
}

Challenge parseChallenge(const std::string& header) {
  Challenge c;
  std::string h = trim(header);
  size_t sp = h.find(' ');
  c.scheme = lower(h.substr(0, sp));
  if (sp == std::string::npos) return c;
  size_t i = sp + 1;
  while (i < h.size()) {
    while (i < h.size() && (h[i] == ' ' || h[i] == ',')) ++i;
    size_t eq = h.find('=', i);
    if (eq == std::string::npos) break;
    std::string key = lower(trim(h.substr(i, eq - i)));
    i = eq + 1;
    std::string value;
    if (i < h.size() && h[i] == '"') {
      ++i;
      while (i < h.size() && h[i] != '"') {
        if (h[i] == '\\' && i + 1 < h.size()) ++i;
        value += h[i++];
      }
      ++i;  // The closing quote.
    } else {
      size_t end = h.find(',', i);
      value = trim(h.substr(i, end == std::string::npos ? std::string::npos : end - i));
      i = end == std::string::npos ? h.size() : end;
    }
    c.params[key] = value;
  }
  return c;
}

RegistryClient::RegistryClient(Reference ref, RegistryOptions options, std::string actions)
    : ref_(std::move(ref)), options_(std::move(options)), actions_(std::move(actions)) {
  globalInit();
  bool http = false;
  std::string host = ref_.registry.substr(0, ref_.registry.rfind(':'));
  for (const auto& r : options_.httpRegistries) {
    if (r == "*" || r == ref_.registry || r == host) http = true;
  }
  scheme_ = http ? "http" : "https";
  if (!options_.credentialsFile.empty()) {
    auto text = readFile(options_.credentialsFile);
    if (text.isOk()) {
      credentials_ = parseNetrc(*text);
    } else {
      credentialsError_ = text.status().message();
    }
  }
}

RegistryClient::~RegistryClient() = default;

std::string RegistryClient::url(const std::string& path) const {
  return scheme_ + "://" + ref_.registry + path;
}

const Credential* RegistryClient::credentialsFor(const std::string& host) const {
  std::string bare = host.substr(0, host.rfind(':'));
  const Credential* best = nullptr;
  for (const auto& c : credentials_) {
    bool match = c.machine == host || (c.machine == bare && !bare.empty());
    if (!match) continue;
    if (!ref_.user.empty() && c.login == ref_.user) return &c;
    if (best == nullptr) best = &c;
  }
  if (best == nullptr) {
    for (const auto& c : credentials_) {
      if (c.machine.empty() && (ref_.user.empty() || c.login == ref_.user)) return &c;
    }
  }
  return best;
}

StatusOr<HttpResponse> RegistryClient::perform(const HttpRequest& req,
                                               const std::string& authorization) {
  CURL* curl = pool_.acquire();
  if (curl == nullptr) return internalError("cannot initialise libcurl");
  std::string url = req.url.starts_with("http://") || req.url.starts_with("https://")
                        ? req.url
                        : this->url(req.url);
  HttpResponse resp;
  TransferContext ctx;
  ctx.curl = curl;
  ctx.request = &req;
  ctx.response = &resp;
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_slist* headers = requestHeaders(req, authorization);
  setTransferOptions(curl, url, options_, headers, errbuf, &ctx);
  setMethodOptions(curl, req, &ctx);

  CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &resp.status);
  char* effective = nullptr;
  curl_easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &effective);
  std::string lastUrl = effective != nullptr ? effective : url;
  curl_slist_free_all(headers);
  pool_.release(curl);

  if (!ctx.sinkStatus.isOk()) return ctx.sinkStatus;
  if (ctx.tooLarge) {
    return internalError("the registry " + ref_.registry +
                         " sent an unexpectedly large response to " + req.method + " " + url);
  }
  if (ctx.readErrno != 0) {
    return internalError("reading the upload body: " + std::string(std::strerror(ctx.readErrno)));
  }
  if (rc != CURLE_OK) {
    std::string detail = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(rc);
    while (!detail.empty() && detail.back() == '\n') detail.pop_back();
    std::string host = hostOf(lastUrl);
    std::string hint;
    if (rc == CURLE_SSL_CONNECT_ERROR && scheme_ == "https") {
      hint = " (if the registry speaks plain http, allow it: ENROOT_ALLOW_HTTP=yes or --http)";
    }
    return unavailable("registry unreachable: " + host + ": " + detail + hint);
  }
  return resp;
}

StatusOr<HttpResponse> RegistryClient::send(const HttpRequest& request) {
  std::string sentAuth;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sentAuth = authorization_;
  }
  ASSIGN_OR_RETURN(HttpResponse r, perform(request, sentAuth));
  if (r.status != 401) return r;
  std::string current;
  {
    std::lock_guard<std::mutex> lock(mu_);
    current = authorization_;
  }
  // Another thread may have fetched a fresh token meanwhile; else get one.
  if (current == sentAuth) {
    RETURN_IF_ERROR(authenticate(r.header("www-authenticate")));
    std::lock_guard<std::mutex> lock(mu_);
    current = authorization_;
  }
  return perform(request, current);
}

std::string RegistryClient::credentialsHint() const {
  if (options_.credentialsFile.empty()) return "no credentials file is configured";
  return credentialsError_.empty() ? "credentials come from " + options_.credentialsFile
                                   : credentialsError_;
}

Status RegistryClient::authenticate(const std::string& header) {
  if (header.empty()) {
    return Status(Code::kUnauthenticated, "authentication failed: " + ref_.registry +
                                              " answered 401 without saying how to authenticate");
  }
  Challenge ch = parseChallenge(header);
  std::string authorization;
  if (ch.scheme == "basic") {
    const Credential* cred = credentialsFor(ref_.registry);
    if (cred == nullptr) {
      return Status(Code::kUnauthenticated,
                    "authentication failed: " + ref_.registry + " requires a login; add 'machine " +
                        ref_.registry + " login USER password PASSWORD' to the credentials file (" +
                        credentialsHint() + ")");
    }
    authorization = "Basic " + base64(cred->login + ":" + cred->password);
  } else if (ch.scheme == "bearer") {
    ASSIGN_OR_RETURN(std::string token, fetchBearerToken(ch));
    authorization = "Bearer " + token;
  } else {
    return Status(Code::kUnauthenticated, "authentication failed: " + ref_.registry +
                                              " asks for unsupported authentication '" + ch.scheme +
                                              "'");
  }
  std::lock_guard<std::mutex> lock(mu_);
  authorization_ = authorization;
  return Status::ok();
}

StatusOr<std::string> RegistryClient::fetchBearerToken(const Challenge& ch) {
  auto realmParam = ch.params.find("realm");
  std::string realm = realmParam == ch.params.end() ? "" : realmParam->second;
  if (realm.empty()) {
    return Status(Code::kUnauthenticated, "authentication failed: " + ref_.registry +
                                              " sent a bearer challenge without a realm");
  }
  HttpRequest req;
  req.url = tokenUrl(ch, "repository:" + ref_.repository + ":" + actions_);
  req.maxBody = 1u << 20;
  const Credential* cred = credentialsFor(hostOf(realm));
  if (cred == nullptr) cred = credentialsFor(ref_.registry);
  if (cred != nullptr) {
    req.user = cred->login;
    req.password = cred->password;
  }
  auto resp = perform(req, "");
  if (!resp.isOk()) {
    Status st = resp.status();
    return Status(st.code(), st.message() + " (while getting a token from " + realm + ")");
  }
  if (resp->status == 401 || resp->status == 403) {
    return Status(
        Code::kUnauthenticated,
        "authentication failed: the token service " + realm + " refused " +
            (cred ? "the credentials of '" + cred->login + "'" : std::string("anonymous access")) +
            " for " + ref_.repository + " (" + credentialsHint() + ")");
  }
  if (resp->status != 200) {
    return unavailable("authentication failed: the token service " + realm + " answered HTTP " +
                       std::to_string(resp->status));
  }
  std::string token = tokenOf(resp->body);
  if (token.empty()) {
    return Status(Code::kUnauthenticated,
                  "authentication failed: the token service " + realm + " sent no token");
  }
  return token;
}

Status RegistryClient::errorFor(const HttpResponse& r, const std::string& what) const {
  RegistryError e = registryError(r.body);
  std::string detail =
      "HTTP " + std::to_string(r.status) + (e.message.empty() ? "" : ": " + e.message);
  bool isManifest = what == "manifest";
  if (r.status == 404 || hasCode(e, "MANIFEST_UNKNOWN") || hasCode(e, "NAME_UNKNOWN") ||
      hasCode(e, "BLOB_UNKNOWN")) {
    if (isManifest || hasCode(e, "NAME_UNKNOWN")) {
      return notFound("image not found: " + ref_.toString() +
                      " (the registry has no such repository or tag)");
    }
    return notFound(what + " of " + ref_.toString() + " not found on the registry (" + detail +
                    ")");
  }
  if (r.status == 401 || r.status == 403 || hasCode(e, "UNAUTHORIZED") || hasCode(e, "DENIED")) {
    std::string hint = options_.credentialsFile.empty()
                           ? "no credentials file is configured"
                           : "credentials come from " + options_.credentialsFile;
    return Status(Code::kUnauthenticated,
                  "authentication failed: " + ref_.registry + " refused access to " +
                      ref_.repository + " (" + detail +
                      "); the repository may not exist or may need credentials (" + hint + ")");
  }
  if (r.status == 429 || r.status >= 500) {
    return unavailable("registry " + ref_.registry + " is unavailable (" + detail + " for " + what +
                       "); try again later");
  }
  return internalError("registry " + ref_.registry + " rejected the request for " + what + " of " +
                       ref_.toString() + " (" + detail + ")");
}

StatusOr<RegistryClient::FetchedManifest> RegistryClient::getManifest(
    const std::string& tagOrDigest) {
  HttpRequest req;
  req.url = "/v2/" + ref_.repository + "/manifests/" + tagOrDigest;
  req.headers.push_back(
      std::string("Accept: ") + "application/vnd.docker.distribution.manifest.v2+json, " +
      "application/vnd.docker.distribution.manifest.list.v2+json, " +
      "application/vnd.oci.image.manifest.v1+json, " + "application/vnd.oci.image.index.v1+json");
  req.maxBody = kMaxManifest;
  ASSIGN_OR_RETURN(HttpResponse r, send(req));
  if (r.status != 200) return errorFor(r, "manifest");
  FetchedManifest m;
  m.body = std::move(r.body);
  m.contentType = r.header("content-type");
  m.digest = sha256Digest(m.body);
  if (isSha256Digest(tagOrDigest) && m.digest != tagOrDigest) {
    return internalError("the registry " + ref_.registry + " sent a manifest whose digest " +
                         m.digest + " does not match the requested " + tagOrDigest);
  }
  return m;
}

Status RegistryClient::getBlob(const std::string& digest, const BodySink& sink) {
  HttpRequest req;
  req.url = "/v2/" + ref_.repository + "/blobs/" + digest;
  req.sink = sink;
  ASSIGN_OR_RETURN(HttpResponse r, send(req));
  if (r.status != 200) return errorFor(r, "blob " + digest);
  return Status::ok();
}

StatusOr<bool> RegistryClient::hasBlob(const std::string& digest) {
  HttpRequest req;
  req.method = "HEAD";
  req.url = "/v2/" + ref_.repository + "/blobs/" + digest;
  ASSIGN_OR_RETURN(HttpResponse r, send(req));
  if (r.status == 200) return true;
  if (r.status == 404) return false;
  return errorFor(r, "blob " + digest);
}

Status RegistryClient::uploadBlob(const std::string& digest, int fd, int64_t size,
                                  const std::string& content) {
  HttpRequest start;
  start.method = "POST";
  start.url = "/v2/" + ref_.repository + "/blobs/uploads/";
  ASSIGN_OR_RETURN(HttpResponse r, send(start));
  if (r.status != 202) return errorFor(r, "upload of " + digest);
  std::string location = r.header("location");
  if (location.empty()) {
    return internalError("registry " + ref_.registry + " started an upload without a Location");
  }
  HttpRequest put;
  put.method = "PUT";
  put.url = location + (location.find('?') == std::string::npos ? "?" : "&") + "digest=" + digest;
  put.headers.push_back("Content-Type: application/octet-stream");
  put.bodyFd = fd;
  put.bodySize = size;
  if (fd < 0) put.body = content;
  ASSIGN_OR_RETURN(HttpResponse done, send(put));
  if (done.status != 201 && done.status != 204) return errorFor(done, "upload of " + digest);
  return Status::ok();
}

Status RegistryClient::putManifest(const std::string& tag, const std::string& body,
                                   const std::string& mediaType) {
  HttpRequest req;
  req.method = "PUT";
  req.url = "/v2/" + ref_.repository + "/manifests/" + tag;
  req.headers.push_back("Content-Type: " + mediaType);
  req.body = body;
  ASSIGN_OR_RETURN(HttpResponse r, send(req));
  if (r.status != 201 && r.status != 200) return errorFor(r, "manifest upload");
  return Status::ok();
}

}  // namespace corral::image
