#include "runtime/kubernetes/kubernetes_runtime.h"

#include <stdlib.h>
#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/base64.h"
#include "common/files.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/parallel.h"
#include "kube/observe.h"
#include "kube/paths.h"

namespace corral {
namespace {

using Json = nlohmann::json;
using kube::ObjectKind;

constexpr const char* kNoPods =
    "the kubernetes runtime does not do this: Slinky's operator makes and runs the pods";

Status notOnKubernetes(const std::string& what) {
  return failedPrecondition(what + ": " + kNoPods);
}

StatusOr<std::string> randomBytes(size_t n) {
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r = getrandom(out.data() + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return internalError(std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<size_t>(r);
  }
  return out;
}

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string nameOf(const Json& object) {
  return object.value("/metadata/name"_json_pointer, std::string());
}

int64_t generationOf(const Json& object) {
  auto it = object.find("metadata");
  if (it == object.end() || !it->is_object()) return 0;
  auto g = it->find("generation");
  return g != it->end() && g->is_number_integer() ? g->get<int64_t>() : 0;
}

bool deleting(const Json& object) {
  auto it = object.find("metadata");
  return it != object.end() && it->is_object() && it->contains("deletionTimestamp");
}

// The watched kinds whose generation tells whether the watch has seen an apply.
std::optional<ObjectKind> watchedKindOf(const Json& object) {
  std::string kind = object.value("kind", "");
  for (ObjectKind k : {ObjectKind::kController, ObjectKind::kAccounting, ObjectKind::kNodeSet,
                       ObjectKind::kLoginSet})
    if (kind == kube::objectKindName(k)) return k;
  return std::nullopt;
}

// "NodeSet/slinky".
std::string objectKey(ObjectKind kind, const std::string& name) {
  return std::string(kube::objectKindName(kind)) + "/" + name;
}

// What corral labels, per type, for delete (kube/slinky.h's kinds).
const std::vector<const kube::ResourceType*>& renderedTypes() {
  using namespace kube::resources;
  static const std::vector<const kube::ResourceType*> kTypes = {
      &kLoginSets,  &kNodeSets, &kControllers, &kAccountings,
      &kStatefulSets, &kServices, &kConfigMaps, &kSecrets, &kPersistentVolumeClaims};
  return kTypes;
}

// Trims a public key file's line to "type blob comment" without newline.
std::string oneLine(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

}  // namespace

struct KubernetesRuntime::Secrets {
  std::string slurmKey, jwtKey, mariadbPassword;
  kube::SshHostKeys hostKeys;
  // Generations of the watched objects as the last apply stored them.
  std::map<std::string, int64_t> appliedGenerations;
};

std::string clusterNamespace(const std::string& namespaceTemplate, const std::string& cluster) {
  std::string out = namespaceTemplate;
  for (size_t at = out.find("{cluster}"); at != std::string::npos; at = out.find("{cluster}"))
    out.replace(at, 9, cluster);
  return out;
}

kube::SlinkyImages slinkyImagesFor(const std::string& prefix, const std::string& imageName) {
  auto role = [&](const char* r) { return prefix + "/" + r + ":" + imageName; };
  // The operator runs its logfile sidecar and the login's initconf as shell
  // scripts of its own (`sh -c …`: mkfifo, cp, chown), which any of the
  // images can run: they reuse the controller's and the login's, whose
  // layers the node has pulled already.
  return {role("slurmctld"), role("slurmd"),    role("login"), role("slurmdbd"),
          role("mariadb"),   role("slurmctld"), role("login")};
}

bool settled(const kube::ClusterObservation& o, const kube::ObjectSet& objects) {
  if (o.verdict != kube::Verdict::kRunning || !o.allObserved) return false;
  for (const kube::NodeSetObservation& set : o.nodeSets) {
    std::string prefix = set.name + "-";
    for (const auto& [name, pod] : objects.of(ObjectKind::kPod)) {
      if (!name.starts_with(prefix)) continue;
      std::string ordinal = name.substr(prefix.size());
      if (ordinal.empty() || ordinal.find_first_not_of("0123456789") != std::string::npos) continue;
      if (std::stoll(ordinal) >= set.replicas) return false;  // Still being removed.
    }
  }
  return true;
}

KubernetesRuntime::KubernetesRuntime(kube::KubeApi& api, ProcessRunner& runner,
                                     KubernetesRuntimeOptions options)
    : api_(api), runner_(runner), options_(std::move(options)) {
  watcher_ = std::make_unique<kube::ClusterWatcher>(
      api_, [this](const std::string& cluster) { changed(cluster); }, options_.watch);
  if (options_.hostKeysAhead)
    spareHostKeys_ = std::async(std::launch::async, [this] { return makeHostKeys(); });
}

KubernetesRuntime::~KubernetesRuntime() {
  watcher_->stop();
  std::lock_guard<std::mutex> l(spareMu_);
  if (spareHostKeys_.valid()) spareHostKeys_.wait();
}

std::string KubernetesRuntime::ns(const std::string& cluster) const {
  return clusterNamespace(options_.namespaceTemplate, cluster);
}

void KubernetesRuntime::onChange(std::function<void(const std::string&)> callback) {
  std::lock_guard<std::mutex> l(mu_);
  callback_ = std::move(callback);
}

void KubernetesRuntime::changed(const std::string& cluster) {
  std::function<void(const std::string&)> callback;
  {
    std::lock_guard<std::mutex> l(mu_);
    callback = callback_;
  }
  if (callback) callback(cluster);
}

Status KubernetesRuntime::ensureWatched(const std::string& cluster) {
  return watcher_->watch(cluster, ns(cluster));
}

// ---- Secrets -------------------------------------------------------------

StatusOr<std::shared_ptr<const KubernetesRuntime::Secrets>> KubernetesRuntime::secretsFor(
    const std::string& cluster) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (auto it = secrets_.find(cluster); it != secrets_.end()) return it->second;
  }
  ASSIGN_OR_RETURN(auto made, readSecrets(cluster));
  std::lock_guard<std::mutex> l(mu_);
  return secrets_.emplace(cluster, std::move(made)).first->second;
}

// Reads each of the cluster's Secrets that exists and makes what is missing
// (a first apply, or one cut short before all of them were written).
StatusOr<std::shared_ptr<const KubernetesRuntime::Secrets>> KubernetesRuntime::readSecrets(
    const std::string& cluster) {
  const std::string space = ns(cluster);
  auto data = [&](const std::string& secret,
                  const std::string& key) -> StatusOr<std::optional<std::string>> {
    auto got = api_.get(kube::objectPath(kube::resources::kSecrets, space, secret));
    if (!got.isOk() && got.status().code() == Code::kNotFound) return std::optional<std::string>();
    if (!got.isOk()) return got.status();
    const Json* value = nullptr;
    if (auto d = got->find("data"); d != got->end() && d->is_object() && d->contains(key))
      value = &(*d)[key];
    if (value == nullptr || !value->is_string())
      return internalError("Secret " + space + "/" + secret + " has no " + key);
    ASSIGN_OR_RETURN(std::string decoded, decodeBase64(value->get<std::string>()));
    return std::optional<std::string>(std::move(decoded));
  };
  auto s = std::make_shared<Secrets>();
  ASSIGN_OR_RETURN(auto slurmKey, data(cluster + "-slurm-key", "slurm.key"));
  if (slurmKey) {
    s->slurmKey = *slurmKey;
  } else {
    ASSIGN_OR_RETURN(s->slurmKey, randomBytes(1024));
  }
  ASSIGN_OR_RETURN(auto jwt, data(cluster + "-jwt-key", "jwt_hs256.key"));
  if (jwt) {
    s->jwtKey = *jwt;
  } else {
    ASSIGN_OR_RETURN(s->jwtKey, randomBytes(32));
  }
  ASSIGN_OR_RETURN(auto password, data(cluster + "-mariadb", "password"));
  if (password) {
    s->mariadbPassword = *password;
  } else {
    ASSIGN_OR_RETURN(std::string bytes, randomBytes(24));
    s->mariadbPassword = hex(bytes);
  }
  // The host keys are one immutable Secret: all six or none.
  const std::string hostKeys = cluster + "-login-ssh-host-keys";
  ASSIGN_OR_RETURN(auto ed, data(hostKeys, "ssh_host_ed25519_key"));
  if (!ed) {
    ASSIGN_OR_RETURN(s->hostKeys, takeHostKeys());
  } else {
    kube::SshHostKeys& k = s->hostKeys;
    k.ed25519 = *ed;
    std::vector<std::pair<std::string*, const char*>> rest = {
        {&k.ed25519Pub, "ssh_host_ed25519_key.pub"}, {&k.rsa, "ssh_host_rsa_key"},
        {&k.rsaPub, "ssh_host_rsa_key.pub"},         {&k.ecdsa, "ssh_host_ecdsa_key"},
        {&k.ecdsaPub, "ssh_host_ecdsa_key.pub"}};
    for (auto& [field, key] : rest) {
      ASSIGN_OR_RETURN(auto value, data(hostKeys, key));
      if (!value) return internalError("Secret " + space + "/" + hostKeys + " has no " + key);
      *field = *value;
    }
  }
  return std::shared_ptr<const Secrets>(s);
}

StatusOr<kube::SshHostKeys> KubernetesRuntime::takeHostKeys() {
  if (!options_.hostKeysAhead) return makeHostKeys();
  std::lock_guard<std::mutex> l(spareMu_);
  StatusOr<kube::SshHostKeys> keys =
      spareHostKeys_.valid() ? spareHostKeys_.get() : makeHostKeys();
  spareHostKeys_ = std::async(std::launch::async, [this] { return makeHostKeys(); });
  return keys;
}

StatusOr<kube::SshHostKeys> KubernetesRuntime::makeHostKeys() {
  kube::SshHostKeys k;
  std::string dir = scratchDir() + "/corral-hostkeys-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return fileError("mkdtemp " + dir, errno);
  struct Cleanup {
    std::string dir;
    ~Cleanup() { (void)removeTree(dir); }
  } cleanup{dir};
  std::vector<std::tuple<const char*, std::string*, std::string*>> types = {
      {"ed25519", &k.ed25519, &k.ed25519Pub},
      {"rsa", &k.rsa, &k.rsaPub},
      {"ecdsa", &k.ecdsa, &k.ecdsaPub}};
  // At once: an RSA key alone takes most of a second on a busy machine.
  RETURN_IF_ERROR(runInParallel(types.size(), static_cast<int>(types.size()), [&](size_t i) {
    auto& [type, priv, pub] = types[i];
    std::string file = dir + "/ssh_host_" + type + "_key";
    RETURN_IF_ERROR(runChecked(runner_, {"ssh-keygen", "-q", "-t", type, "-N", "", "-C",
                                         "root@login", "-f", file})
                        .status());
    ASSIGN_OR_RETURN(*priv, ::corral::readFile(file));
    ASSIGN_OR_RETURN(*pub, ::corral::readFile(file + ".pub"));
    return Status::ok();
  }));
  return k;
}

StatusOr<kube::SlinkyOptions> KubernetesRuntime::slinkyOptions(const ClusterRecord& record) {
  ASSIGN_OR_RETURN(auto secrets, secretsFor(record.spec.name));
  kube::SlinkyOptions o;
  o.ns = ns(record.spec.name);
  o.images = slinkyImagesFor(options_.imagePrefix, record.spec.image.name);
  o.slurmKey = secrets->slurmKey;
  o.jwtKey = secrets->jwtKey;
  o.sshHostKeys = secrets->hostKeys;
  o.mariadbPassword = secrets->mariadbPassword;
  o.rwxStorageClass = options_.rwxStorageClass;
  o.rwoStorageClass = options_.rwoStorageClass;
  o.gpuResource = options_.gpuResource;
  o.loginServiceType = options_.loginServiceType;
  return o;
}

// ---- ClusterRuntime ------------------------------------------------------

Status KubernetesRuntime::applyCluster(const ClusterRecord& desired) {
  const std::string& cluster = desired.spec.name;
  RETURN_IF_ERROR(sharedNamespaceIsFree(cluster));
  RETURN_IF_ERROR(ensureWatched(cluster));
  ASSIGN_OR_RETURN(kube::SlinkyOptions options, slinkyOptions(desired));
  ASSIGN_OR_RETURN(std::vector<Json> objects, kube::renderSlinkyObjects(desired, options));
  std::map<std::string, int64_t> generations;
  std::set<std::string> nodeSets;
  for (const Json& object : objects) {
    ASSIGN_OR_RETURN(std::string path, kube::objectPathOf(object));
    const std::string what = object.value("kind", "") + " " + nameOf(object);
    auto stored = api_.apply(path, object);
    if (!stored.isOk()) return stored.status().withContext("applying " + what);
    if (auto kind = watchedKindOf(object)) {
      generations[objectKey(*kind, nameOf(object))] = generationOf(*stored);
      if (*kind == ObjectKind::kNodeSet) nodeSets.insert(objectKey(*kind, nameOf(object)));
    }
  }
  // A NodeSet the desired state no longer has (no CPU workers any more).
  RETURN_IF_ERROR(prune(cluster, {ObjectKind::kNodeSet}, nodeSets));
  std::lock_guard<std::mutex> l(mu_);
  auto updated = std::make_shared<Secrets>(*secrets_.at(cluster));
  updated->appliedGenerations = std::move(generations);
  secrets_[cluster] = std::move(updated);
  return Status::ok();
}

Status KubernetesRuntime::sharedNamespaceIsFree(const std::string& cluster) {
  if (options_.namespaceTemplate.find("{cluster}") != std::string::npos) return Status::ok();
  ASSIGN_OR_RETURN(std::vector<std::string> present, listClusters());
  for (const std::string& other : present)
    if (other != cluster)
      return failedPrecondition(
          "namespace " + ns(cluster) + " already holds cluster " + other +
          ", and Slinky names every cluster's worker pods alike (slinky-0, …): give corrald "
          "--namespace with {cluster} in it (one namespace per cluster), or delete " + other);
  return Status::ok();
}

Status KubernetesRuntime::prune(const std::string& cluster, const std::set<ObjectKind>& kinds,
                                const std::set<std::string>& keep) {
  for (ObjectKind kind : kinds) {
    const kube::ResourceType& type = kube::resourceTypeFor(kind);
    ASSIGN_OR_RETURN(kube::ObjectList present,
                     api_.list(kube::collectionPath(type, ns(cluster)), kube::clusterSelector(cluster)));
    for (const Json& object : present.items) {
      std::string name = nameOf(object);
      if (keep.count(objectKey(kind, name)) || deleting(object)) continue;
      LOG_INFO("cluster " << cluster << ": removing " << objectKey(kind, name));
      Status s = api_.remove(kube::objectPath(type, ns(cluster), name));
      if (!s.isOk() && s.code() != Code::kNotFound) return s.withContext("removing " + name);
    }
  }
  return Status::ok();
}

StatusOr<ClusterView> KubernetesRuntime::viewCluster(const ClusterRecord& desired) {
  const std::string& cluster = desired.spec.name;
  RETURN_IF_ERROR(ensureWatched(cluster));
  std::optional<kube::ObjectSet> objects = watcher_->snapshot(cluster);
  if (!objects) return unavailable("the cluster's objects have not been read yet");
  kube::ClusterObservation o = kube::observeCluster(*objects, cluster);
  ClusterView view;
  view.nodes = kube::nodeRecords(o);
  // GPU workers first, as the local runtime lists them (NodeSets come by name).
  std::stable_partition(view.nodes.begin(), view.nodes.end(),
                        [](const NodeRecord& n) { return n.group == "slinky"; });
  view.loginAddress = o.loginAddress;
  std::map<std::string, int64_t> applied;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (auto it = secrets_.find(cluster); it != secrets_.end())
      applied = it->second->appliedGenerations;
    for (const auto& e : kube::unseenEvents(o.events, seenEvents_[cluster]))
      view.warnings.push_back({e.reason, e.object + ": " + e.message, e.node});
  }
  // The watch may not have delivered the last apply yet: until it has, what
  // it shows describes the previous objects.
  std::string behind;
  for (const auto& [key, generation] : applied) {
    std::string kind = key.substr(0, key.find('/')), name = key.substr(key.find('/') + 1);
    for (ObjectKind k : kube::kObjectKinds) {
      if (kind != kube::objectKindName(k)) continue;
      auto it = objects->of(k).find(name);
      if ((it == objects->of(k).end() || generationOf(it->second) < generation) && behind.empty())
        behind = key;
    }
  }
  if (o.verdict == kube::Verdict::kFailed) {
    view.state = ClusterView::State::kFailed;
    view.reason = o.reason;
  } else if (!behind.empty()) {
    view.phase = "waiting for the watch to see " + behind;
  } else if (settled(o, *objects)) {
    view.state = ClusterView::State::kReady;
  } else {
    view.phase = o.phase.empty() ? "waiting for removed workers' pods to go" : o.phase;
  }
  return view;
}

StatusOr<bool> KubernetesRuntime::suspendCluster(const ClusterRecord& record) {
  const std::string& cluster = record.spec.name;
  RETURN_IF_ERROR(ensureWatched(cluster));
  // What runs goes; Secrets, ConfigMaps and claims (the state) stay.
  RETURN_IF_ERROR(prune(cluster,
                        {ObjectKind::kLoginSet, ObjectKind::kNodeSet, ObjectKind::kController,
                         ObjectKind::kAccounting},
                        {}));
  Status s = api_.remove(kube::objectPath(kube::resources::kStatefulSets, ns(cluster),
                                          cluster + "-mariadb"));
  if (!s.isOk() && s.code() != Code::kNotFound) return s;
  std::optional<kube::ObjectSet> objects = watcher_->snapshot(cluster);
  if (!objects) return false;
  for (ObjectKind k : {ObjectKind::kLoginSet, ObjectKind::kNodeSet, ObjectKind::kController,
                       ObjectKind::kAccounting})
    for (const auto& [name, object] : objects->of(k))
      if (!deleting(object)) return false;
  return true;
}

StatusOr<bool> KubernetesRuntime::removeCluster(const std::string& cluster) {
  bool gone = true;
  for (const kube::ResourceType* type : renderedTypes()) {
    ASSIGN_OR_RETURN(kube::ObjectList present,
                     api_.list(kube::collectionPath(*type, ns(cluster)), kube::clusterSelector(cluster)));
    for (const Json& object : present.items) {
      // Being deleted: the API server finishes it (a claim waits for its
      // last pod, an object for its finalizers).
      if (deleting(object)) continue;
      gone = false;
      Status s = api_.remove(kube::objectPath(*type, ns(cluster), nameOf(object)));
      if (!s.isOk() && s.code() != Code::kNotFound) return s.withContext("removing " + nameOf(object));
    }
  }
  if (!gone) return false;
  watcher_->forget(cluster);
  std::lock_guard<std::mutex> l(mu_);
  secrets_.erase(cluster);
  seenEvents_.erase(cluster);
  return true;
}

// ---- Runtime: what maps --------------------------------------------------

StatusOr<std::string> KubernetesRuntime::allocateNetwork(const std::string& cluster) {
  return notOnKubernetes("a subnet for " + cluster + " (Kubernetes assigns pod addresses)");
}

Status KubernetesRuntime::prepareCluster(const ClusterNetwork& net) {
  return notOnKubernetes("preparing " + net.cluster + " pod by pod");
}

StatusOr<std::string> KubernetesRuntime::createVolume(const std::string& name) {
  // The storage is a ReadWriteMany claim made with each cluster that
  // attaches the volume (`<cluster>-volume-<name>`), by the storage class.
  return "kubernetes: claim <cluster>-volume-" + name + " in each cluster's namespace";
}

Status KubernetesRuntime::deleteVolume(const std::string&) { return Status::ok(); }

StatusOr<std::string> KubernetesRuntime::loginHostKey(const std::string& cluster) {
  ASSIGN_OR_RETURN(auto secrets, secretsFor(cluster));
  return oneLine(secrets->hostKeys.ed25519Pub);
}

StatusOr<std::vector<std::string>> KubernetesRuntime::listClusters() {
  // Only a single namespace can be searched without cluster-wide rights.
  if (options_.namespaceTemplate.find("{cluster}") != std::string::npos)
    return watcher_->clusters();
  ASSIGN_OR_RETURN(kube::ObjectList controllers,
                   api_.list(kube::collectionPath(kube::resources::kControllers,
                                                  options_.namespaceTemplate),
                             std::string(kube::kManagedByLabel) + "=" + kube::kManagedByValue));
  std::vector<std::string> out;
  for (const Json& c : controllers.items) {
    if (deleting(c)) continue;
    std::string name = c.value("/metadata/labels"_json_pointer, Json::object())
                           .value(kube::kClusterLabel, "");
    if (!name.empty()) out.push_back(name);
  }
  return out;
}

Status KubernetesRuntime::stopCluster(const ClusterNetwork& net) {
  ClusterRecord r;
  r.spec.name = net.cluster;
  return suspendCluster(r).status();
}

Status KubernetesRuntime::destroyCluster(const ClusterNetwork& net) {
  return removeCluster(net.cluster).status();
}

StatusOr<PodStatus> KubernetesRuntime::podStatus(const std::string& cluster,
                                                 const std::string& pod) {
  std::optional<kube::ObjectSet> objects = watcher_->snapshot(cluster);
  PodStatus st;
  if (!objects) return st;
  auto found = objects->of(ObjectKind::kPod).find(pod);
  if (found == objects->of(ObjectKind::kPod).end()) return st;
  kube::ClusterObservation o = kube::observeCluster(*objects, cluster);
  const kube::PodObservation& p = o.pods.at(pod);
  st.exists = true;
  st.running = p.phase == "Running";
  st.ready = p.ready;
  st.message = p.detail;
  return st;
}

StatusOr<std::vector<std::string>> KubernetesRuntime::listPods(const std::string& cluster) {
  std::vector<std::string> out;
  if (auto objects = watcher_->snapshot(cluster))
    for (const auto& [name, pod] : objects->of(ObjectKind::kPod)) out.push_back(name);
  return out;
}

// ---- Runtime: what does not map -------------------------------------------

Status KubernetesRuntime::writeFiles(const std::string& cluster, const RenderedFiles&) {
  return notOnKubernetes("writing files of " + cluster + " (they are ConfigMaps)");
}
Status KubernetesRuntime::appendKernelLog(const std::string& cluster, const std::string& pod,
                                          const std::string&) {
  return notOnKubernetes("writing the kernel log of " + cluster + "/" + pod);
}
StatusOr<std::string> KubernetesRuntime::healthReport(const std::string& cluster,
                                                      const std::string& pod) {
  return notFound("no health report of " + cluster + "/" + pod + " on the kubernetes runtime");
}
StatusOr<std::string> KubernetesRuntime::podLogTail(const std::string& cluster,
                                                    const std::string& pod, const std::string&,
                                                    size_t) {
  return notFound("no log of " + cluster + "/" + pod + " on the kubernetes runtime");
}
Status KubernetesRuntime::prepareSharedDirectory(const std::string& cluster, const std::string& path,
                                                 int, int, int) {
  return notOnKubernetes("preparing /shared/" + path + " of " + cluster);
}
StatusOr<std::string> KubernetesRuntime::readFile(const std::string& cluster,
                                                  const std::string& path) {
  return notOnKubernetes("reading " + path + " of " + cluster);
}
Status KubernetesRuntime::startPod(const PodSpec& spec) {
  return notOnKubernetes("starting pod " + spec.cluster + "/" + spec.name);
}
Status KubernetesRuntime::stopPod(const std::string& cluster, const std::string& pod) {
  return notOnKubernetes("stopping pod " + cluster + "/" + pod);
}
Status KubernetesRuntime::updateMounts(const PodSpec& desired) {
  return notOnKubernetes("changing the mounts of " + desired.cluster + "/" + desired.name);
}
Status KubernetesRuntime::restartDaemon(const std::string& cluster, const std::string& pod,
                                        const std::string& daemon, std::chrono::milliseconds) {
  return notOnKubernetes("restarting " + daemon + " on " + cluster + "/" + pod);
}
StatusOr<ProcessResult> KubernetesRuntime::exec(const std::string& cluster, const std::string& pod,
                                                const std::vector<std::string>&,
                                                const ProcessOptions&) {
  return notOnKubernetes("running a command in " + cluster + "/" + pod +
                         " (exec into Kubernetes pods is not implemented)");
}

}  // namespace corral
