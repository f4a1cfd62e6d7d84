#pragma once

// The Docker Registry HTTP API v2 over libcurl: token and basic
// authentication, manifests, blob downloads and uploads. Internal to
// corral_image; `pull` and `push` are built on it.

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/curl_pool.h"
#include "corral/status.h"
#include "image/image.h"

namespace corral::image {

struct HttpResponse {
  long status = 0;
  // The body, unless a sink took it (then only an error body lands here).
  std::string body;
  // The final response's headers, names lowercase.
  std::map<std::string, std::string> headers;
  std::string header(const std::string& lowerName) const {
    auto it = headers.find(lowerName);
    return it == headers.end() ? std::string() : it->second;
  }
};

// Receives a successful response's body in pieces; an error aborts the
// transfer and becomes its result.
using BodySink = std::function<Status(const char* data, size_t size)>;

struct HttpRequest {
  std::string method = "GET";        // GET, HEAD, POST or PUT.
  std::string url;                   // Absolute, or a path on the registry ("/v2/…").
  std::vector<std::string> headers;  // "Name: value".
  std::string body;                  // The POST/PUT body, unless `bodyFd` is set.
  int bodyFd = -1;                   // PUT the first `bodySize` bytes of this file.
  int64_t bodySize = 0;
  BodySink sink;               // Takes a 2xx body instead of `HttpResponse::body`.
  size_t maxBody = 8u << 20;   // Larger in-memory bodies are an error.
  std::string user, password;  // HTTP basic authentication (token services).
};

// One netrc entry.
struct Credential {
  std::string machine, login, password;
};
// Parses netrc text ("machine HOST login USER password PASS", "default …").
std::vector<Credential> parseNetrc(const std::string& text);

// Parses a `WWW-Authenticate` challenge: the scheme, lowercase, and its
// parameters (`realm`, `service`, `scope`, …) unquoted.
struct Challenge {
  std::string scheme;
  std::map<std::string, std::string> params;
};
Challenge parseChallenge(const std::string& header);

// Talks to the registry of one reference. Thread-safe: layers are fetched
// from several threads through one client, which keeps a pool of curl
// handles (for connection reuse) and shares the bearer token between them.
class RegistryClient {
 public:
  // `actions` is the scope asked of token services: "pull" or "pull,push".
  RegistryClient(Reference ref, RegistryOptions options, std::string actions = "pull");
  ~RegistryClient();
  RegistryClient(const RegistryClient&) = delete;
  RegistryClient& operator=(const RegistryClient&) = delete;

  const Reference& reference() const { return ref_; }
  // "http(s)://registry" + `path`.
  std::string url(const std::string& path) const;

  // Sends `request`, answering one 401 challenge per request with a token or
  // basic credentials. A response of any status is a success here; failures
  // are transport errors ("registry unreachable: …") and sink errors.
  StatusOr<HttpResponse> send(const HttpRequest& request);

  struct FetchedManifest {
    std::string body;
    std::string contentType;
    std::string digest;  // sha256 of `body`, verified when fetched by digest.
  };
  // GET /v2/<repo>/manifests/<tagOrDigest>, accepting Docker v2 and OCI
  // manifests and lists.
  StatusOr<FetchedManifest> getManifest(const std::string& tagOrDigest);
  // GET /v2/<repo>/blobs/<digest>, following redirects to storage; the
  // caller verifies the digest.
  Status getBlob(const std::string& digest, const BodySink& sink);
  StatusOr<bool> hasBlob(const std::string& digest);
  // A monolithic upload: POST /v2/<repo>/blobs/uploads/, then PUT the bytes
  // (from `fd`, or `content` when `fd` < 0).
  Status uploadBlob(const std::string& digest, int fd, int64_t size,
                    const std::string& content = {});
  Status putManifest(const std::string& tag, const std::string& body, const std::string& mediaType);

  // The Status for an unsuccessful response to `what` ("manifest", "blob
  // sha256:…", "upload"), in the user's terms.
  Status errorFor(const HttpResponse& r, const std::string& what) const;

 private:
  StatusOr<HttpResponse> perform(const HttpRequest& request, const std::string& authorization);
  // Answers a 401's challenge: sets `authorization_` from the credentials
  // (basic) or a token service's token (bearer).
  Status authenticate(const std::string& challengeHeader);
  StatusOr<std::string> fetchBearerToken(const Challenge& challenge);
  // Where credentials come from, for messages that ask for them.
  std::string credentialsHint() const;
  const Credential* credentialsFor(const std::string& host) const;

  Reference ref_;
  RegistryOptions options_;
  std::string actions_;
  std::string scheme_;
  std::vector<Credential> credentials_;
  std::string credentialsError_;

  std::mutex mu_;
  std::string authorization_;  // "Bearer …" / "Basic …"; guarded by mu_.
  CurlHandlePool pool_;
};

}  // namespace corral::image
