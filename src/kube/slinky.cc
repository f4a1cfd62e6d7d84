#include "kube/slinky.h"

#include <sstream>

#include "slurm/partitions.h"
#include "slurm/renderer.h"
#include "slurm/settings.h"

namespace corral::kube {
namespace {

using Json = nlohmann::json;

constexpr const char* kSlinkyApi = "slinky.slurm.net/v1beta1";
constexpr int kSlurmUid = 401;  // Slinky's `slurm` user (internal/builder/common/const.go).
constexpr int kMariadbPort = 3306;
constexpr const char* kAccountingDatabase = "slurm_acct_db";
constexpr const char* kAccountingUser = "slurm";

std::string base64(const std::string& in) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

Json labelsOf(const std::string& cluster) {
  return {{kManagedByLabel, kManagedByValue}, {kClusterLabel, cluster}};
}

Json metadataOf(const std::string& name, const std::string& cluster, const SlinkyOptions& o) {
  return {{"name", name}, {"namespace", o.ns}, {"labels", labelsOf(cluster)}};
}

Json object(const char* apiVersion, const char* kind, const std::string& name,
            const std::string& cluster, const SlinkyOptions& o) {
  return {{"apiVersion", apiVersion}, {"kind", kind}, {"metadata", metadataOf(name, cluster, o)}};
}

Json secret(const std::string& name, const std::string& cluster, const SlinkyOptions& o,
            const std::vector<std::pair<std::string, std::string>>& data) {
  Json s = object("v1", "Secret", name, cluster, o);
  s["type"] = "Opaque";
  s["data"] = Json::object();
  for (const auto& [key, value] : data) s["data"][key] = base64(value);
  return s;
}

Json configMap(const std::string& name, const std::string& cluster, const SlinkyOptions& o,
               const std::vector<std::pair<std::string, std::string>>& data) {
  Json c = object("v1", "ConfigMap", name, cluster, o);
  c["data"] = Json::object();
  for (const auto& [key, value] : data) c["data"][key] = value;
  return c;
}

Json claimSpec(const char* accessMode, const std::string& storageClass, const std::string& size) {
  Json spec = {{"accessModes", {accessMode}}, {"resources", {{"requests", {{"storage", size}}}}}};
  if (!storageClass.empty()) spec["storageClassName"] = storageClass;
  return spec;
}

Json keyRef(const std::string& name, const std::string& key) {
  return {{"name", name}, {"key", key}};
}

// What every pod of the cluster shares: its own user namespace, no service
// account token, no Service environment variables, the runtime's seccomp
// profile. No host path volume appears anywhere in these objects.
Json podSpecBase() {
  return {{"hostUsers", false},
          {"automountServiceAccountToken", false},
          {"enableServiceLinks", false},
          {"securityContext", {{"seccompProfile", {{"type", "RuntimeDefault"}}}}}};
}

Json podTemplate(const std::string& cluster, Json spec) {
  return {{"metadata", {{"labels", labelsOf(cluster)}}}, {"spec", std::move(spec)}};
}

// A daemon that runs as the `slurm` user and needs no capability.
Json slurmUserSecurity() {
  return {{"runAsNonRoot", true},
          {"runAsUser", kSlurmUid},
          {"runAsGroup", kSlurmUid},
          {"allowPrivilegeEscalation", false},
          {"capabilities", {{"drop", {"ALL"}}}}};
}

// A root daemon (in the pod's user namespace) that keeps the runtime's
// default capabilities but may not gain more.
Json rootNoEscalation() { return {{"privileged", false}, {"allowPrivilegeEscalation", false}}; }

struct Names {
  std::string cluster;
  std::string slurmKey, jwtKey, login, hostKeys, sssd, mariadb, slurmFiles, corralConf, shared;
  std::string volume(const std::string& v) const { return cluster + "-volume-" + v; }
};

Names namesOf(const std::string& c) {
  Names n;
  n.cluster = c;
  n.slurmKey = c + "-slurm-key";
  n.jwtKey = c + "-jwt-key";
  n.login = c + "-login";
  n.hostKeys = n.login + "-ssh-host-keys";  // The operator's name for it: LoginSet.SshHostKeys().
  n.sssd = c + "-sssd-conf";
  n.mariadb = c + "-mariadb";
  n.slurmFiles = c + "-slurm-files";
  n.corralConf = c + "-corral-conf";
  n.shared = c + "-shared";
  return n;
}

// The volumes and mounts of /shared and the attached volumes, on the login
// pod and every worker.
void addSharedStorage(const ClusterSpec& spec, const Names& n, Json& podSpec, Json& container) {
  podSpec["volumes"].push_back(
      {{"name", "shared"}, {"persistentVolumeClaim", {{"claimName", n.shared}}}});
  container["volumeMounts"].push_back({{"name", "shared"}, {"mountPath", kSharedPath}});
  for (const auto& v : spec.volumes) {
    std::string name = "volume-" + v.volume;
    Json claim = {{"claimName", n.volume(v.volume)}};
    if (v.readOnly) claim["readOnly"] = true;
    podSpec["volumes"].push_back({{"name", name}, {"persistentVolumeClaim", claim}});
    Json mount = {{"name", name}, {"mountPath", v.path}};
    if (v.readOnly) mount["readOnly"] = true;
    container["volumeMounts"].push_back(mount);
  }
}

// The lines of one section of renderSlurmConf's text: from the comment
// line `header` to the blank line that ends it (or the end), header
// included. Empty when the text has no such section.
std::vector<std::string> sectionLines(const std::string& conf, const std::string& header) {
  std::vector<std::string> out;
  std::istringstream in(conf);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line == header) inside = true;
    if (!inside) continue;
    if (line.empty()) break;
    out.push_back(line);
  }
  return out;
}

bool isGroupPartitionLine(const std::string& line) {
  for (const char* group : {kGpuGroup, kCpuGroup})
    if (line.rfind("PartitionName=" + std::string(group) + " ", 0) == 0) return true;
  return false;
}

// The record as corral's renderer needs it here: the nodes the spec asks
// for (names and groups; Kubernetes gives the addresses).
ClusterRecord withPlannedNodes(const ClusterRecord& record) {
  ClusterRecord r = record;
  r.nodes.clear();
  for (const auto& name : nodeNamesOf(r.spec)) {
    std::string group = name.rfind(std::string(kCpuGroup) + "-", 0) == 0 ? kCpuGroup : kGpuGroup;
    r.nodes.push_back({name, group, "", ""});
  }
  return r;
}

// The NodeSets the spec has, by Slurm name: slinky, then cpu-workers.
std::vector<std::string> nodeSetNames(const ClusterSpec& spec) {
  std::vector<std::string> out;
  if (spec.gpuNodes > 0) out.push_back(kGpuGroup);
  if (spec.cpuNodes > 0) out.push_back(kCpuGroup);
  return out;
}

// `partition.config` of a node group's NodeSet: corral's options for that
// partition (from the one list of corral's partitions), as slurm.conf
// would have them after its `Nodes=`.
std::string groupPartitionConfig(const ClusterRecord& r, const std::string& group) {
  std::vector<std::string> names;
  for (const auto& n : r.nodes) names.push_back(n.name);
  for (const auto& v : managedPartitions(names, r.platformPartitions, true)) {
    if (v.name != group) continue;
    std::string config;
    for (const auto& [key, value] : v.options) config += key + "=" + value + " ";
    return config + "State=UP";
  }
  return "State=UP";
}

std::string cgroupConf(const std::string& cluster) {
  return "# Rendered by corral for cluster \"" + cluster +
         "\".\n"
         "# As on corral's local pods: no cgroup of their own to manage, processes\n"
         "# tracked through /proc, so slurmd needs no privileged container.\n"
         "CgroupPlugin=disabled\n";
}

// SSSD is what Slinky's login image resolves users with; corral's login
// users are not mapped yet (see slinky.h), so it knows only the image's.
std::string sssdConf() {
  return "[sssd]\n"
         "config_file_version = 2\n"
         "services = nss, pam\n"
         "domains = local\n"
         "\n"
         "[domain/local]\n"
         "id_provider = proxy\n"
         "proxy_lib_name = files\n"
         "auth_provider = none\n";
}

Status requireNonEmpty(const std::string& value, const char* field) {
  if (value.empty()) return invalidArgument(std::string("Slinky objects need ") + field);
  return Status::ok();
}

Status checkInputs(const ClusterRecord& record, const SlinkyOptions& o) {
  if (record.spec.name.empty()) return invalidArgument("Slinky objects need the cluster's name");
  if (record.spec.gpuNodes < 0 || record.spec.cpuNodes < 0)
    return invalidArgument("Slinky objects need node counts of at least 0");
  const std::pair<const std::string*, const char*> required[] = {
      {&o.ns, "options.ns (the cluster's namespace)"},
      {&o.images.controller, "options.images.controller"},
      {&o.images.slurmd, "options.images.slurmd"},
      {&o.images.login, "options.images.login"},
      {&o.images.slurmdbd, "options.images.slurmdbd"},
      {&o.images.mariadb, "options.images.mariadb"},
      {&o.images.logfile, "options.images.logfile"},
      {&o.images.initconf, "options.images.initconf"},
      {&o.slurmKey, "options.slurmKey"},
      {&o.jwtKey, "options.jwtKey"},
      {&o.sshHostKeys.ed25519, "options.sshHostKeys.ed25519"},
      {&o.sshHostKeys.ed25519Pub, "options.sshHostKeys.ed25519Pub"},
      {&o.sshHostKeys.rsa, "options.sshHostKeys.rsa"},
      {&o.sshHostKeys.rsaPub, "options.sshHostKeys.rsaPub"},
      {&o.sshHostKeys.ecdsa, "options.sshHostKeys.ecdsa"},
      {&o.sshHostKeys.ecdsaPub, "options.sshHostKeys.ecdsaPub"},
      {&o.mariadbPassword, "options.mariadbPassword"},
      {&o.sharedSize, "options.sharedSize"},
      {&o.volumeSize, "options.volumeSize"},
      {&o.controllerStateSize, "options.controllerStateSize"},
      {&o.mariadbSize, "options.mariadbSize"},
  };
  for (const auto& [value, field] : required) RETURN_IF_ERROR(requireNonEmpty(*value, field));
  return Status::ok();
}

Json nodeSet(const ClusterRecord& r, const SlinkyOptions& o, const Names& n,
             const std::string& group, int replicas) {
  bool gpu = group == kGpuGroup;
  Json ns = object(kSlinkyApi, "NodeSet", group, n.cluster, o);
  Json podSpec = podSpecBase();
  podSpec["hostname"] = group + "-";  // Pods and Slurm nodes <group>-0, -1, …
  podSpec["volumes"] = Json::array();
  // slurmd runs as root in the pod's user namespace. Not privileged (see
  // slinky.h): SYS_ADMIN, the user namespace's own, is for job_container/
  // tmpfs's and corral's container runtime's mount namespaces; this list
  // replaces Slinky's (BPF, NET_ADMIN, SYS_ADMIN, SYS_NICE, privileged),
  // which serve only cgroup containment corral turns off.
  Json slurmd = {{"image", o.images.slurmd},
                 {"securityContext",
                  {{"privileged", false}, {"capabilities", {{"add", {"SYS_ADMIN"}}}}}},
                 {"volumeMounts", Json::array()}};
  if (gpu && !o.gpuResource.empty() && r.spec.gpusPerNode > 0)
    slurmd["resources"] = {{"limits", {{o.gpuResource, std::to_string(r.spec.gpusPerNode)}}}};
  addSharedStorage(r.spec, n, podSpec, slurmd);
  ns["spec"] = {{"controllerRef", {{"name", n.cluster}, {"namespace", o.ns}}},
                {"replicas", replicas},
                {"slurmd", slurmd},
                {"logfile", {{"image", o.images.logfile}}},
                {"partition", {{"enabled", true}, {"config", groupPartitionConfig(r, group)}}},
                {"template", podTemplate(n.cluster, podSpec)}};
  return ns;
}

}  // namespace

std::string clusterSelector(const std::string& cluster) {
  return std::string(kManagedByLabel) + "=" + kManagedByValue + "," + kClusterLabel + "=" + cluster;
}

std::string renderSlinkyExtraConf(const ClusterRecord& record) {
  ClusterRecord r = withPlannedNodes(record);
  std::string conf = renderSlurmConf(r);
  std::string nodeSets;
  for (const auto& name : nodeSetNames(r.spec)) nodeSets += (nodeSets.empty() ? "" : ",") + name;

  std::ostringstream o;
  o << "# Rendered by corral for cluster \"" << r.spec.name << "\": corral's settings and\n"
    << "# partitions (the node groups' partitions are the NodeSets').\n";
  for (const auto& line : sectionLines(conf, "# Defaults that `corral config set` may override"))
    o << line << "\n";
  for (const auto& line : sectionLines(conf, "# Set by the cluster's users (`corral config set`)"))
    o << (line.rfind("# ", 0) == 0 ? "\n" : "") << line << "\n";
  for (const auto& header :
       {"# Partitions managed by corral", "# Partitions of the cluster's users"}) {
    for (std::string line : sectionLines(conf, header)) {
      if (isGroupPartitionLine(line)) continue;
      // Slinky's nodes are dynamic: a partition over every node names the
      // NodeSets, whose Feature= lines take the nodes in as they register.
      auto all = line.find(" Nodes=ALL");
      if (all != std::string::npos && !nodeSets.empty())
        line.replace(all, 10, " Nodes=" + nodeSets);
      o << (line.rfind("# ", 0) == 0 ? "\n" : "") << line << "\n";
    }
  }
  return o.str();
}

namespace {

// What one rendering works from.
struct Input {
  const ClusterRecord& r;  // With planned nodes (withPlannedNodes).
  const SlinkyOptions& o;
  const Names& n;
  const std::string& extraConf;
};

void addSecrets(const Input& in, std::vector<Json>& out) {
  const auto& [r, o, n, extraConf] = in;
  const std::string& c = n.cluster;
  out.push_back(secret(n.slurmKey, c, o, {{"slurm.key", o.slurmKey}}));
  out.push_back(secret(n.jwtKey, c, o, {{"jwt_hs256.key", o.jwtKey}}));
  const SshHostKeys& k = o.sshHostKeys;
  Json hostKeys = secret(n.hostKeys, c, o,
                         {{"ssh_host_ecdsa_key", k.ecdsa},
                          {"ssh_host_ecdsa_key.pub", k.ecdsaPub},
                          {"ssh_host_ed25519_key", k.ed25519},
                          {"ssh_host_ed25519_key.pub", k.ed25519Pub},
                          {"ssh_host_rsa_key", k.rsa},
                          {"ssh_host_rsa_key.pub", k.rsaPub}});
  hostKeys["immutable"] = true;  // So the operator keeps corral's keys (slinky.h).
  out.push_back(hostKeys);
  out.push_back(secret(n.sssd, c, o, {{"sssd.conf", sssdConf()}}));
  out.push_back(secret(n.mariadb, c, o, {{"password", o.mariadbPassword}}));
}

void addConfigAndClaims(const Input& in, std::vector<Json>& out) {
  const auto& [r, o, n, extraConf] = in;
  const std::string& c = n.cluster;
  out.push_back(configMap(n.slurmFiles, c, o,
                          {{"cgroup.conf", cgroupConf(c)},
                           {"gres.conf", renderGresConf(r)},
                           {"plugstack.conf", renderPlugstackConf(r)}}));
  out.push_back(configMap(n.corralConf, c, o, {{"corral.conf", extraConf}}));
  // Storage, before every pod that mounts it.
  Json shared = object("v1", "PersistentVolumeClaim", n.shared, c, o);
  shared["spec"] = claimSpec("ReadWriteMany", o.rwxStorageClass, o.sharedSize);
  out.push_back(shared);
  for (const auto& v : r.spec.volumes) {
    Json claim = object("v1", "PersistentVolumeClaim", n.volume(v.volume), c, o);
    claim["metadata"]["labels"]["corral.dev/volume"] = v.volume;
    claim["spec"] = claimSpec("ReadWriteMany", o.rwxStorageClass, o.volumeSize);
    out.push_back(claim);
  }
}

// The accounting database: Slinky's Accounting expects one outside it.
void addMariadb(const Input& in, std::vector<Json>& out) {
  const auto& [r, o, n, extraConf] = in;
  const std::string& c = n.cluster;
  Json dbLabels = {{"app.kubernetes.io/name", "mariadb"}, {"app.kubernetes.io/instance", c}};
  Json svc = object("v1", "Service", n.mariadb, c, o);
  svc["spec"] = {{"selector", dbLabels},
                 {"ports", {{{"name", "mysql"}, {"port", kMariadbPort}, {"targetPort", "mysql"}}}}};
  out.push_back(svc);

  Json podSpec = podSpecBase();
  podSpec["containers"] = {
      {{"name", "mariadb"},
       {"image", o.images.mariadb},
       {"env",
        {{{"name", "MARIADB_DATABASE"}, {"value", kAccountingDatabase}},
         {{"name", "MARIADB_USER"}, {"value", kAccountingUser}},
         {{"name", "MARIADB_PASSWORD"},
          {"valueFrom", {{"secretKeyRef", keyRef(n.mariadb, "password")}}}},
         {{"name", "MARIADB_RANDOM_ROOT_PASSWORD"}, {"value", "yes"}}}},
       {"ports", {{{"name", "mysql"}, {"containerPort", kMariadbPort}}}},
       {"readinessProbe", {{"tcpSocket", {{"port", "mysql"}}}, {"periodSeconds", 10}}},
       {"securityContext", rootNoEscalation()},
       {"volumeMounts", {{{"name", "data"}, {"mountPath", "/var/lib/mysql"}}}}}};
  Json templ = podTemplate(c, podSpec);
  for (auto& [k, v] : dbLabels.items()) templ["metadata"]["labels"][k] = v;
  Json sts = object("apps/v1", "StatefulSet", n.mariadb, c, o);
  sts["spec"] = {{"serviceName", n.mariadb},
                 {"replicas", 1},
                 {"selector", {{"matchLabels", dbLabels}}},
                 {"template", templ},
                 {"volumeClaimTemplates",
                  {{{"metadata", {{"name", "data"}, {"labels", labelsOf(c)}}},
                    {"spec", claimSpec("ReadWriteOnce", o.rwoStorageClass, o.mariadbSize)}}}}};
  out.push_back(sts);
}

void addAccountingAndController(const Input& in, std::vector<Json>& out) {
  const auto& [r, o, n, extraConf] = in;
  const std::string& c = n.cluster;
  const Json slurmKeyRef = keyRef(n.slurmKey, "slurm.key");
  const Json jwtKeyRef = keyRef(n.jwtKey, "jwt_hs256.key");

  Json acct = object(kSlinkyApi, "Accounting", c, c, o);
  acct["spec"] = {{"slurmKeyRef", slurmKeyRef},
                  {"jwtKeyRef", jwtKeyRef},
                  {"slurmdbd", {{"image", o.images.slurmdbd}, {"securityContext", slurmUserSecurity()}}},
                  {"storageConfig",
                   {{"host", n.mariadb},
                    {"port", kMariadbPort},
                    {"database", kAccountingDatabase},
                    {"username", kAccountingUser},
                    {"passwordKeyRef", keyRef(n.mariadb, "password")}}},
                  {"template", podTemplate(c, podSpecBase())}};
  out.push_back(acct);

  Json ctl = object(kSlinkyApi, "Controller", c, c, o);
  Json persistence = claimSpec("ReadWriteOnce", o.rwoStorageClass, o.controllerStateSize);
  persistence["enabled"] = true;
  ctl["spec"] = {{"clusterName", c},
                 {"slurmKeyRef", slurmKeyRef},
                 {"jwtKeyRef", jwtKeyRef},
                 {"accountingRef", {{"name", c}, {"namespace", o.ns}}},
                 {"slurmctld", {{"image", o.images.controller}, {"securityContext", slurmUserSecurity()}}},
                 {"reconfigure", {{"image", o.images.controller}, {"securityContext", slurmUserSecurity()}}},
                 {"logfile", {{"image", o.images.logfile}}},
                 {"extraConf", extraConf},
                 {"configFileRefs",
                  {{{"name", n.slurmFiles}, {"namespace", o.ns}},
                   {{"name", n.corralConf}, {"namespace", o.ns}}}},
                 {"persistence", persistence},
                 {"template", podTemplate(c, podSpecBase())}};
  out.push_back(ctl);
}

Json loginSet(const Input& in) {
  const auto& [r, o, n, extraConf] = in;
  const std::string& c = n.cluster;
  Json login = object(kSlinkyApi, "LoginSet", n.login, c, o);
  std::string keys;
  for (const auto& k : r.spec.sshKeys) keys += k + "\n";
  Json podSpec = podSpecBase();
  podSpec["volumes"] = Json::array();
  // sshd runs as root in the pod's user namespace (it changes to the user
  // who logs in); the runtime's default capabilities, no escalation.
  Json container = {{"image", o.images.login},
                    {"securityContext", rootNoEscalation()},
                    {"volumeMounts", Json::array()}};
  addSharedStorage(r.spec, n, podSpec, container);
  login["spec"] = {{"controllerRef", {{"name", c}, {"namespace", o.ns}}},
                   {"replicas", 1},
                   {"login", container},
                   {"initconf", {{"image", o.images.initconf}}},
                   {"rootSshAuthorizedKeys", keys},
                   {"sssdConfRef", keyRef(n.sssd, "sssd.conf")},
                   {"service", {{"spec", {{"type", o.loginServiceType}}}, {"port", 22}}},
                   {"template", podTemplate(c, podSpec)}};
  return login;
}

}  // namespace

StatusOr<std::vector<Json>> renderSlinkyObjects(const ClusterRecord& record,
                                                const SlinkyOptions& options) {
  RETURN_IF_ERROR(checkInputs(record, options));
  const ClusterRecord r = withPlannedNodes(record);
  const Names n = namesOf(r.spec.name);
  const std::string extraConf = renderSlinkyExtraConf(r);
  const Input in{r, options, n, extraConf};
  std::vector<Json> out;
  addSecrets(in, out);
  addConfigAndClaims(in, out);
  addMariadb(in, out);
  addAccountingAndController(in, out);
  if (r.spec.gpuNodes > 0) out.push_back(nodeSet(r, options, n, kGpuGroup, r.spec.gpuNodes));
  if (r.spec.cpuNodes > 0) out.push_back(nodeSet(r, options, n, kCpuGroup, r.spec.cpuNodes));
  out.push_back(loginSet(in));
  return out;
}

StatusOr<ResourceType> resourceTypeOf(const Json& object) {
  std::string apiVersion = object.value("apiVersion", "");
  std::string kind = object.value("kind", "");
  static const std::vector<std::tuple<const char*, const char*, const ResourceType*>> kKinds = {
      {"v1", "Secret", &resources::kSecrets},
      {"v1", "ConfigMap", &resources::kConfigMaps},
      {"v1", "Service", &resources::kServices},
      {"v1", "PersistentVolumeClaim", &resources::kPersistentVolumeClaims},
      {"apps/v1", "StatefulSet", &resources::kStatefulSets},
      {kSlinkyApi, "Controller", &resources::kControllers},
      {kSlinkyApi, "Accounting", &resources::kAccountings},
      {kSlinkyApi, "NodeSet", &resources::kNodeSets},
      {kSlinkyApi, "LoginSet", &resources::kLoginSets},
  };
  for (const auto& [v, k, type] : kKinds)
    if (apiVersion == v && kind == k) return *type;
  return invalidArgument("no resource type for " + apiVersion + " " + kind);
}

StatusOr<std::string> objectPathOf(const Json& object) {
  ASSIGN_OR_RETURN(ResourceType type, resourceTypeOf(object));
  const Json& meta = object.value("metadata", Json::object());
  std::string name = meta.value("name", "");
  if (name.empty()) return invalidArgument("object has no metadata.name");
  return kube::objectPath(type, meta.value("namespace", ""), name);
}

}  // namespace corral::kube
