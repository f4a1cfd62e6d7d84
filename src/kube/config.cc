#include "kube/config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <vector>

#include "common/base64.h"
#include "common/files.h"
#include "common/text.h"

namespace corral::kube {
namespace {

constexpr size_t kMaxKubeConfigBytes = 4u << 20;

std::string trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::string resolvePath(const std::string& path, const std::string& baseDir) {
  if (path.empty() || path.front() == '/' || baseDir.empty()) return path;
  return baseDir + "/" + path;
}

// `node[key]` as a string: "" when absent or null, InvalidArgument when it
// is not a scalar. `where` names the entry for messages ("user \"u\"").
StatusOr<std::string> stringField(const YAML::Node& node, const char* key,
                                  const std::string& where) {
  YAML::Node v = node[key];
  if (!v || v.IsNull()) return std::string();
  if (!v.IsScalar()) return invalidArgument(where + ": " + key + " must be a string");
  return v.as<std::string>();
}

StatusOr<bool> boolField(const YAML::Node& node, const char* key, const std::string& where) {
  YAML::Node v = node[key];
  if (!v || v.IsNull()) return false;
  bool out = false;
  if (!v.IsScalar() || !YAML::convert<bool>::decode(v, out))
    return invalidArgument(where + ": " + key + " must be true or false");
  return out;
}

// The entry called `name` of the top-level list `list` ("contexts"), as the
// mapping under its `field` ("context").
StatusOr<YAML::Node> namedEntry(const YAML::Node& doc, const std::string& list,
                                const std::string& field, const std::string& name) {
  YAML::Node entries = doc[list];
  std::string kind = list.substr(0, list.size() - 1);  // "context"
  if (entries && !entries.IsNull() && !entries.IsSequence())
    return invalidArgument(list + " must be a list");
  std::vector<std::string> names;
  if (entries && entries.IsSequence()) {
    for (const auto& e : entries) {
      if (!e.IsMap() || !e["name"] || !e["name"].IsScalar()) continue;
      std::string n = e["name"].as<std::string>();
      if (n != name) {
        names.push_back(quoteForMessage(n));
        continue;
      }
      YAML::Node body = e[field];
      if (!body || body.IsNull()) return YAML::Node(YAML::NodeType::Map);
      if (!body.IsMap()) return invalidArgument(kind + " " + quoteForMessage(name) + ": " +
                                                field + " must be a mapping");
      return body;
    }
  }
  std::string known = names.empty() ? "the file has no " + list : "the file has ";
  for (size_t i = 0; i < names.size(); ++i) known += (i ? ", " : "") + names[i];
  return invalidArgument(kind + " " + quoteForMessage(name) + " not found (" + known + ")");
}

// A PEM from `dataKey` (base64) or else the file `fileKey` names; "" when
// neither is set.
StatusOr<std::string> pemField(const YAML::Node& node, const char* dataKey, const char* fileKey,
                               const std::string& where, const std::string& baseDir) {
  ASSIGN_OR_RETURN(std::string data, stringField(node, dataKey, where));
  ASSIGN_OR_RETURN(std::string file, stringField(node, fileKey, where));
  std::string pem;
  std::string from;
  if (!data.empty()) {
    auto decoded = decodeBase64(data);
    if (!decoded.isOk())
      return invalidArgument(where + ": " + dataKey + " is not valid base64 (" +
                             decoded.status().message() + ")");
    pem = std::move(decoded).value();
    from = dataKey;
  } else if (!file.empty()) {
    std::string path = resolvePath(file, baseDir);
    auto text = readFile(path);
    if (!text.isOk()) return text.status().withContext(where + ": " + fileKey);
    pem = std::move(text).value();
    from = std::string(fileKey) + " " + path;
  } else {
    return std::string();
  }
  if (pem.find("-----BEGIN ") == std::string::npos)
    return invalidArgument(where + ": " + from + " holds no PEM block (-----BEGIN …)");
  return pem;
}

Status readCluster(const YAML::Node& cluster, const std::string& name, const std::string& baseDir,
                   KubeConfig& out) {
  std::string where = "cluster " + quoteForMessage(name);
  ASSIGN_OR_RETURN(out.server, stringField(cluster, "server", where));
  if (out.server.empty()) return invalidArgument(where + " has no server");
  if (!out.server.starts_with("https://") && !out.server.starts_with("http://"))
    return invalidArgument(where + ": server " + quoteForMessage(out.server) +
                           " must be an https:// (or http://) URL");
  while (out.server.ends_with("/")) out.server.pop_back();
  ASSIGN_OR_RETURN(out.insecureSkipTlsVerify,
                   boolField(cluster, "insecure-skip-tls-verify", where));
  ASSIGN_OR_RETURN(out.caPem, pemField(cluster, "certificate-authority-data",
                                       "certificate-authority", where, baseDir));
  if (out.insecureSkipTlsVerify && !out.caPem.empty())
    return invalidArgument(where + ": insecure-skip-tls-verify and a certificate-authority "
                           "contradict each other; keep one");
  return Status::ok();
}

Status readUser(const YAML::Node& user, const std::string& name, const std::string& baseDir,
                KubeConfig& out) {
  std::string where = "user " + quoteForMessage(name);
  ASSIGN_OR_RETURN(out.clientCertPem, pemField(user, "client-certificate-data",
                                               "client-certificate", where, baseDir));
  ASSIGN_OR_RETURN(out.clientKeyPem,
                   pemField(user, "client-key-data", "client-key", where, baseDir));
  if (out.clientCertPem.empty() != out.clientKeyPem.empty())
    return invalidArgument(where + " has a client " +
                           (out.clientKeyPem.empty() ? "certificate but no client-key"
                                                     : "key but no client-certificate") +
                           "; give both");
  ASSIGN_OR_RETURN(out.token, stringField(user, "token", where));
  ASSIGN_OR_RETURN(std::string tokenFile, stringField(user, "tokenFile", where));
  if (!tokenFile.empty()) {
    out.tokenFile = resolvePath(tokenFile, baseDir);
    auto text = readFile(out.tokenFile);
    if (!text.isOk()) return text.status().withContext(where + ": tokenFile");
    out.token = trimmed(*text);
  }
  bool hasCredential = !out.clientCertPem.empty() || !out.token.empty();
  for (const char* unsupported : {"exec", "auth-provider", "username"}) {
    if (!hasCredential && user[unsupported]) {
      return invalidArgument(where + " authenticates with " + unsupported +
                             ", which corral does not support; give it client-certificate and "
                             "client-key, token or tokenFile");
    }
  }
  return Status::ok();
}

StatusOr<KubeConfig> parseDocument(const std::string& text, const std::string& baseDir,
                                   const std::string& context) {
  if (text.size() > kMaxKubeConfigBytes) return invalidArgument("larger than 4 MiB");
  KubeConfig out;
  try {
    YAML::Node doc = YAML::Load(text);
    if (!doc.IsMap()) return invalidArgument("not a YAML mapping (apiVersion:, clusters:, …)");
    ASSIGN_OR_RETURN(std::string current, stringField(doc, "current-context", "the file"));
    std::string name = context.empty() ? current : context;
    if (name.empty()) return invalidArgument("no current-context, and no context was named");
    ASSIGN_OR_RETURN(YAML::Node ctx, namedEntry(doc, "contexts", "context", name));
    std::string where = "context " + quoteForMessage(name);
    ASSIGN_OR_RETURN(std::string clusterName, stringField(ctx, "cluster", where));
    ASSIGN_OR_RETURN(std::string userName, stringField(ctx, "user", where));
    ASSIGN_OR_RETURN(std::string ns, stringField(ctx, "namespace", where));
    if (clusterName.empty()) return invalidArgument(where + " names no cluster");
    if (!ns.empty()) out.defaultNamespace = ns;
    ASSIGN_OR_RETURN(YAML::Node cluster, namedEntry(doc, "clusters", "cluster", clusterName));
    RETURN_IF_ERROR(readCluster(cluster, clusterName, baseDir, out));
    if (!userName.empty()) {
      ASSIGN_OR_RETURN(YAML::Node user, namedEntry(doc, "users", "user", userName));
      RETURN_IF_ERROR(readUser(user, userName, baseDir, out));
    }
    out.source = "context " + quoteForMessage(name);
  } catch (const YAML::Exception& e) {
    return invalidArgument(std::string("not valid YAML: ") + e.what());
  }
  return out;
}

}  // namespace

StatusOr<KubeConfig> parseKubeConfig(const std::string& text, const std::string& baseDir,
                                     const std::string& context) {
  auto config = parseDocument(text, baseDir, context);
  if (!config.isOk()) return config.status().withContext("kubeconfig");
  config->source = "kubeconfig (" + config->source + ")";
  return config;
}

StatusOr<KubeConfig> loadKubeConfig(const std::string& path, const std::string& context) {
  std::string label = "kubeconfig " + path;
  auto text = readFile(path);
  if (!text.isOk()) return text.status().withContext("kubeconfig");
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  auto config = parseDocument(*text, dir, context);
  if (!config.isOk()) return config.status().withContext(label);
  config->source = label + " (" + config->source + ")";
  return config;
}

std::optional<std::string> processEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

StatusOr<KubeConfig> inClusterConfig(const std::string& root, const EnvLookup& env) {
  std::string host = env("KUBERNETES_SERVICE_HOST").value_or("");
  std::string port = env("KUBERNETES_SERVICE_PORT").value_or("");
  if (host.empty() || port.empty())
    return failedPrecondition(
        "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set "
        "(corrald is not running in a Kubernetes pod; give it a kubeconfig instead)");
  KubeConfig out;
  bool ipv6 = host.find(':') != std::string::npos;
  out.server = "https://" + (ipv6 ? "[" + host + "]" : host) + ":" + port;
  out.tokenFile = root + "/token";
  auto token = readFile(out.tokenFile);
  if (!token.isOk()) return token.status().withContext("in-cluster config: service account token");
  out.token = trimmed(*token);
  auto ca = readFile(root + "/ca.crt");
  if (!ca.isOk()) return ca.status().withContext("in-cluster config: service account CA");
  out.caPem = std::move(ca).value();
  auto ns = readFile(root + "/namespace");
  if (ns.isOk() && !trimmed(*ns).empty()) out.defaultNamespace = trimmed(*ns);
  out.source = "in-cluster service account (" + root + ")";
  return out;
}

}  // namespace corral::kube
