#include "fakes/fake_runtime.h"

#include <cstdio>
#include <cstdlib>

namespace corral {

namespace {

const std::set<std::string>& methodNames() {
  static const std::set<std::string> names = {
      "prepareCluster", "writeFiles", "readFile", "startPod",       "podStatus",
      "listPods",       "stopPod",    "exec",     "destroyCluster", "listClusters",
      "restartDaemon",  "stopCluster", "updateMounts", "appendKernelLog", "healthReport",
      "podLogTail",     "prepareSharedDirectory", "loginHostKey", "allocateNetwork",
      "createVolume",   "deleteVolume"};
  return names;
}

std::string quote(const std::string& s) { return "\"" + s + "\""; }

// The same check `LocalRuntime` makes: paths stay inside the cluster directory.
bool badPath(const std::string& path) {
  return path.empty() || path[0] == '/' || path.find("..") != std::string::npos;
}

}  // namespace

FakeRuntime::FakeRuntime() = default;

std::optional<Status> FakeRuntime::takeFault(const std::string& method) {
  ++calls_[method];
  auto it = faults_.find(method);
  if (it == faults_.end()) return std::nullopt;
  Status fault = std::move(it->second);
  faults_.erase(it);
  return fault;
}

bool FakeRuntime::readyLocked(const std::string& cluster, const std::string& pod) const {
  return !notReady_.count({cluster, pod});
}

StatusOr<std::string> FakeRuntime::allocateNetwork(const std::string& cluster) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault("allocateNetwork")) return *fault;
  if (auto it = subnets_.find(cluster); it != subnets_.end()) return it->second;
  std::set<std::string> used;
  for (const auto& [_, s] : subnets_) used.insert(s);
  for (int i = 0; i < 256; ++i) {
    std::string s = "172.29." + std::to_string(i) + ".0/24";
    if (used.count(s)) continue;
    subnets_[cluster] = s;
    return s;
  }
  return unavailable("the fake's subnet pool is exhausted");
}

StatusOr<std::string> FakeRuntime::createVolume(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault("createVolume")) return *fault;
  if (!volumes_.insert(name).second) return conflict("volume storage " + quote(name) + " exists");
  return "/var/lib/corral-fake/volumes/" + name;
}

bool FakeRuntime::volumeExists(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return volumes_.count(name) > 0;
}

Status FakeRuntime::deleteVolume(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault("deleteVolume")) return *fault;
  volumes_.erase(name);
  return Status::ok();
}

Status FakeRuntime::prepareCluster(const ClusterNetwork& net) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault("prepareCluster")) return *fault;
  FakeCluster& c = clusters_[net.cluster];
  c.net = net;
  // Secrets are generated once and kept, as `LocalRuntime` keeps them.
  c.files.try_emplace("secrets/munge/munge.key", RenderedFile{"fake munge key", 0400});
  c.files.try_emplace(
      "etc/ssh/ssh_host_ed25519_key.pub",
      RenderedFile{std::string(kFakeHostKey) + " root@login." + net.cluster + "\n", 0644});
  return Status::ok();
}

Status FakeRuntime::writeFiles(const std::string& cluster, const RenderedFiles& files) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault("writeFiles")) return *fault;
  for (const auto& [path, file] : files) {
    if (badPath(path)) return invalidArgument("bad rendered file path " + path);
  }
  FakeCluster& c = clusters_[cluster];
  for (const auto& [path, file] : files) c.files[path] = file;
  return Status::ok();
}

StatusOr<std::string> FakeRuntime::readFile(const std::string& cluster, const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault("readFile")) return *fault;
  if (badPath(path)) return invalidArgument("bad path " + path);
  auto c = clusters_.find(cluster);
  if (c == clusters_.end()) return notFound("cannot read " + path);
  auto f = c->second.files.find(path);
  if (f == c->second.files.end()) return notFound("cannot read " + path);
  return f->second.content;
}

Status FakeRuntime::startPod(const PodSpec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault("startPod")) return *fault;
  auto c = clusters_.find(spec.cluster);
  if (c == clusters_.end() || !c->second.net)
    return notFound("cluster " + quote(spec.cluster) + " has no runtime state");
  FakePod& p = c->second.pods[spec.name];
  if (p.running) return Status::ok();
  p.spec = spec;
  p.running = true;
  c->second.startOrder.push_back(spec.name);
  return Status::ok();
}

StatusOr<PodStatus> FakeRuntime::podStatus(const std::string& cluster, const std::string& pod) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault("podStatus")) return *fault;
  PodStatus st;
  auto c = clusters_.find(cluster);
  if (c == clusters_.end()) return st;
  auto p = c->second.pods.find(pod);
  if (p == c->second.pods.end()) return st;
  st.exists = true;
  st.running = p->second.running;
  st.generation = p->second.spec.generation;
  st.rollGeneration = p->second.spec.rollGeneration;
  st.imageId = p->second.spec.image.id;
  if (!st.running) {
    st.message = "pod is not running";
    return st;
  }
  st.ready = readyLocked(cluster, pod);
  if (!st.ready) st.message = "not ready (FakeRuntime)";
  return st;
}

StatusOr<std::vector<std::string>> FakeRuntime::listPods(const std::string& cluster) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault("listPods")) return *fault;
  std::vector<std::string> out;
  auto c = clusters_.find(cluster);
  if (c == clusters_.end()) return out;
  for (const auto& [name, p] : c->second.pods) out.push_back(name);  // Sorted, as a map.
  return out;
}

Status FakeRuntime::stopPod(const std::string& cluster, const std::string& pod) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault("stopPod")) return *fault;
  auto c = clusters_.find(cluster);
  if (c != clusters_.end()) c->second.pods.erase(pod);
  return Status::ok();
}

StatusOr<ProcessResult> FakeRuntime::exec(const std::string& cluster, const std::string& pod,
                                          const std::vector<std::string>& argv,
                                          const ProcessOptions& /*options*/) {
  ExecHandler handler;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto fault = takeFault("exec")) return *fault;
    auto c = clusters_.find(cluster);
    bool running = false;
    if (c != clusters_.end()) {
      auto p = c->second.pods.find(pod);
      running = p != c->second.pods.end() && p->second.running;
    }
    if (!running)
      return unavailable("pod " + pod + " of cluster " + quote(cluster) + " is not running");
    handler = execHandler_;
  }
  if (handler) return handler(cluster, pod, argv);
  return defaultExec(cluster, argv);
}

StatusOr<ProcessResult> FakeRuntime::defaultExec(const std::string& cluster,
                                                 const std::vector<std::string>& argv) {
  ProcessResult result;
  result.exitCode = 0;
  if (argv.empty() || argv[0] != "sinfo") return result;
  std::lock_guard<std::mutex> lock(mu_);
  auto c = clusters_.find(cluster);
  if (c == clusters_.end()) return result;
  // One line per running worker, by name.
  for (const auto& [name, p] : c->second.pods) {
    if (p.spec.role == "worker" && p.running) result.out += name + "|idle|none\n";
  }
  return result;
}

Status FakeRuntime::appendKernelLog(const std::string& cluster, const std::string& pod,
                                    const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault("appendKernelLog")) return *fault;
  auto c = clusters_.find(cluster);
  if (c == clusters_.end() || !c->second.net)
    return notFound("cluster " + quote(cluster) + " has no runtime state");
  c->second.pods[pod].files["/run/corral/kmsg"] += line + "\n";
  return Status::ok();
}

std::string FakeRuntime::kernelLog(const std::string& cluster, const std::string& pod) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto c = clusters_.find(cluster);
  if (c == clusters_.end()) return "";
  auto p = c->second.pods.find(pod);
  if (p == c->second.pods.end()) return "";
  auto f = p->second.files.find("/run/corral/kmsg");
  return f == p->second.files.end() ? "" : f->second;
}

StatusOr<std::string> FakeRuntime::healthReport(const std::string& cluster, const std::string& pod) {
  return podLogTail(cluster, pod, "/run/corral/health.json", 1 << 20);
}

StatusOr<std::string> FakeRuntime::podLogTail(const std::string& cluster, const std::string& pod,
                                              const std::string& path, size_t maxBytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault(path == "/run/corral/health.json" ? "healthReport" : "podLogTail"))
    return *fault;
  auto c = clusters_.find(cluster);
  if (c == clusters_.end()) return notFound("no pod " + pod);
  auto p = c->second.pods.find(pod);
  if (p == c->second.pods.end()) return notFound("no pod " + pod);
  auto f = p->second.files.find(path);
  if (f == p->second.files.end()) return notFound(path + " does not exist");
  const std::string& text = f->second;
  return text.size() > maxBytes ? text.substr(text.size() - maxBytes) : text;
}

void FakeRuntime::putPodFile(const std::string& cluster, const std::string& pod,
                             const std::string& path, std::string content) {
  std::lock_guard<std::mutex> lock(mu_);
  clusters_[cluster].pods[pod].files[path] = std::move(content);
}

Status FakeRuntime::prepareSharedDirectory(const std::string& cluster, const std::string& path,
                                           int uid, int gid, int mode) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault("prepareSharedDirectory")) return *fault;
  if (badPath(path)) return invalidArgument("bad shared directory path " + path);
  directories_[cluster][path] = {uid, gid, mode};
  return Status::ok();
}

StatusOr<std::string> FakeRuntime::loginHostKey(const std::string& cluster) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto fault = takeFault("loginHostKey")) return *fault;
  }
  return readFile(cluster, "etc/ssh/ssh_host_ed25519_key.pub");
}

std::map<std::string, std::array<int, 3>> FakeRuntime::directories(const std::string& cluster) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = directories_.find(cluster);
  return it == directories_.end() ? std::map<std::string, std::array<int, 3>>{} : it->second;
}

Status FakeRuntime::updateMounts(const PodSpec& desired) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault("updateMounts")) return *fault;
  auto c = clusters_.find(desired.cluster);
  if (c == clusters_.end()) return unavailable("pod " + desired.name + " is not running");
  auto p = c->second.pods.find(desired.name);
  if (p == c->second.pods.end() || !p->second.running)
    return unavailable("pod " + desired.name + " is not running");
  p->second.spec.mounts = desired.mounts;
  return Status::ok();
}

Status FakeRuntime::restartDaemon(const std::string& cluster, const std::string& pod,
                                  const std::string& daemon, std::chrono::milliseconds) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault("restartDaemon")) return *fault;
  auto c = clusters_.find(cluster);
  bool running = false;
  if (c != clusters_.end()) {
    auto p = c->second.pods.find(pod);
    running = p != c->second.pods.end() && p->second.running;
  }
  if (!running) return unavailable("pod " + pod + " of cluster " + quote(cluster) + " is not running");
  restarts_.push_back(cluster + "/" + pod + "/" + daemon);
  return Status::ok();
}

Status FakeRuntime::stopCluster(const ClusterNetwork& net) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault("stopCluster")) return *fault;
  auto c = clusters_.find(net.cluster);
  if (c == clusters_.end()) return Status::ok();
  c->second.pods.clear();
  c->second.net.reset();
  return Status::ok();
}

std::vector<std::string> FakeRuntime::restarts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return restarts_;
}

Status FakeRuntime::destroyCluster(const ClusterNetwork& net) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault("destroyCluster")) return *fault;
  destroyed_.push_back(net.cluster);
  clusters_.erase(net.cluster);
  subnets_.erase(net.cluster);
  return Status::ok();
}

StatusOr<std::vector<std::string>> FakeRuntime::listClusters() {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault("listClusters")) return *fault;
  std::vector<std::string> out;
  for (const auto& [name, c] : clusters_) {
    if (!c.empty()) out.push_back(name);
  }
  return out;
}

void FakeRuntime::setPodReady(const std::string& cluster, const std::string& pod, bool ready) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ready) {
    notReady_.erase({cluster, pod});
  } else {
    notReady_.insert({cluster, pod});
  }
}

void FakeRuntime::failNext(const std::string& method, Status status) {
  if (!methodNames().count(method)) {
    std::fprintf(stderr, "FakeRuntime::failNext: %s is not a Runtime method\n", method.c_str());
    std::abort();
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (status.isOk()) {
    faults_.erase(method);
  } else {
    faults_[method] = std::move(status);
  }
}

void FakeRuntime::killPod(const std::string& cluster, const std::string& pod) {
  std::lock_guard<std::mutex> lock(mu_);
  auto c = clusters_.find(cluster);
  if (c == clusters_.end()) return;
  auto p = c->second.pods.find(pod);
  if (p != c->second.pods.end()) p->second.running = false;
}

void FakeRuntime::setExecHandler(ExecHandler handler) {
  std::lock_guard<std::mutex> lock(mu_);
  execHandler_ = std::move(handler);
}

void FakeRuntime::putFile(const std::string& cluster, const std::string& path,
                          std::string content) {
  std::lock_guard<std::mutex> lock(mu_);
  clusters_[cluster].files[path] = RenderedFile{std::move(content), 0644};
}

std::optional<ClusterNetwork> FakeRuntime::prepared(const std::string& cluster) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto c = clusters_.find(cluster);
  if (c == clusters_.end()) return std::nullopt;
  return c->second.net;
}

RenderedFiles FakeRuntime::files(const std::string& cluster) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto c = clusters_.find(cluster);
  return c == clusters_.end() ? RenderedFiles{} : c->second.files;
}

std::optional<PodSpec> FakeRuntime::pod(const std::string& cluster, const std::string& pod) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto c = clusters_.find(cluster);
  if (c == clusters_.end()) return std::nullopt;
  auto p = c->second.pods.find(pod);
  if (p == c->second.pods.end()) return std::nullopt;
  return p->second.spec;
}

std::vector<std::string> FakeRuntime::startOrder(const std::string& cluster) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto c = clusters_.find(cluster);
  return c == clusters_.end() ? std::vector<std::string>{} : c->second.startOrder;
}

std::vector<std::string> FakeRuntime::destroyed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return destroyed_;
}

int FakeRuntime::calls(const std::string& method) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = calls_.find(method);
  return it == calls_.end() ? 0 : it->second;
}

}  // namespace corral
