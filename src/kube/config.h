#pragma once

// Where a Kubernetes API server is and how corral proves who it is: read from
// a kubeconfig file (as kubectl reads it) or from the service account a pod
// is given (in-cluster). Pure parsing; `KubeClient` makes the connection.

#include <functional>
#include <optional>
#include <string>

#include "corral/status.h"

namespace corral::kube {

// Everything `KubeClient` needs, with certificates and keys already read:
// a config that parsed is one whose files could all be read.
struct KubeConfig {
  std::string server;  // "https://host:port", perhaps with a path prefix; no trailing '/'.
  // The CA bundle (PEM) the server's certificate must chain to; empty means
  // the system's trusted CAs.
  std::string caPem;
  bool insecureSkipTlsVerify = false;
  // A TLS client certificate and its key (PEM), both or neither.
  std::string clientCertPem;
  std::string clientKeyPem;
  // A bearer token. When `tokenFile` is set the client reads the token from
  // it for every request instead (a service account's token is rotated in
  // place), and `token` holds what it read when the config was loaded.
  std::string token;
  std::string tokenFile;
  std::string defaultNamespace = "default";  // The context's namespace.
  // What the config came from, for messages: "kubeconfig /path (context
  // dev)" or "in-cluster service account".
  std::string source;
};

// Parses kubeconfig `text` and picks the context `context` (the file's
// `current-context` when empty): its cluster's `server`,
// `certificate-authority(-data)` and `insecure-skip-tls-verify`, and its
// user's `client-certificate(-data)` + `client-key(-data)`, `token` or
// `tokenFile`. A `-data` field wins over its file form, as in kubectl.
// Relative file paths are relative to `baseDir`. Errors (InvalidArgument,
// or NotFound for a file that cannot be read) name the field at fault and
// begin "kubeconfig: ".
StatusOr<KubeConfig> parseKubeConfig(const std::string& text, const std::string& baseDir,
                                     const std::string& context = "");

// Reads and parses the kubeconfig at `path`; errors begin "kubeconfig PATH: ".
StatusOr<KubeConfig> loadKubeConfig(const std::string& path, const std::string& context = "");

// Where a pod's service account is mounted.
inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

// Looks up an environment variable; `std::getenv` unless a test says otherwise.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
std::optional<std::string> processEnv(const std::string& name);

// The config of a pod's own service account: the API server at
// $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, `root`/token (re-read
// for every request), `root`/ca.crt and `root`/namespace (optional,
// "default" without it). FailedPrecondition outside a pod (the variables
// unset); NotFound when the token or CA cannot be read.
StatusOr<KubeConfig> inClusterConfig(const std::string& root = kServiceAccountDir,
                                     const EnvLookup& env = processEnv);


}  // namespace corral::kube
