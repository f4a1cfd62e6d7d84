#include "reconcile/reconciler.h"
#include "health/report.h"
#include "store/update.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/ipv4.h"
#include "health/xid.h"
#include "common/log.h"
#include "common/text.h"
#include "slurm/parsers.h"
#include "slurm/renderer.h"

namespace corral {
namespace {

bool tcpAnswers(const std::string& address, int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, address.c_str(), &a.sin_addr);
  timeval tv{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

std::vector<std::string> podNames(const RenderedCluster& rc, const std::string& role) {
  std::vector<std::string> out;
  for (const auto& p : rc.pods)
    if (p.role == role) out.push_back(p.name);
  return out;
}

// "04:56:37.893" for a Unix time in milliseconds: when an XID was seen, in
// an event's text (which also makes each XID's event unique).
std::string clockTime(int64_t unixMillis) {
  time_t secs = static_cast<time_t>(unixMillis / 1000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(unixMillis % 1000));
  return buf;
}

// A host key file's line as known_hosts wants it: type and blob, no
// comment, no trailing newline.
std::string knownHostsKey(std::string key) {
  while (!key.empty() && (key.back() == '\n' || key.back() == ' ')) key.pop_back();
  if (auto sp = key.find(' ', key.find(' ') + 1); sp != std::string::npos) key.resize(sp);
  return key;
}

}  // namespace

Reconciler::Reconciler(Store& store, Runtime& runtime, Clock& clock, ReconcilerOptions options)
    : store_(store), runtime_(runtime), clock_(clock), options_(std::move(options)) {}

Reconciler::~Reconciler() { stop(); }

void Reconciler::start() {
  std::lock_guard<std::mutex> l(mu_);
  if (!threads_.empty()) return;
  stopping_ = false;
  for (int i = 0; i < options_.workers; ++i) threads_.emplace_back([this] { workerLoop(); });
  threads_.emplace_back([this] { resyncLoop(); });
  threads_.emplace_back([this] { livenessLoop(); });
  threads_.emplace_back([this] { timerLoop(); });
}

void Reconciler::stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  timerCv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void Reconciler::enqueue(const std::string& cluster) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (queued_.count(cluster)) return;
    queued_.insert(cluster);
    queue_.push_back(cluster);
  }
  cv_.notify_all();
}

void Reconciler::workerLoop() {
  while (true) {
    std::string name;
    {
      std::unique_lock<std::mutex> l(mu_);
      // Take the first queued cluster that no other worker is busy with.
      cv_.wait(l, [&] {
        if (stopping_) return true;
        return std::any_of(queue_.begin(), queue_.end(),
                           [&](const std::string& n) { return !active_.count(n); });
      });
      if (stopping_) return;
      auto it = std::find_if(queue_.begin(), queue_.end(),
                             [&](const std::string& n) { return !active_.count(n); });
      name = *it;
      queue_.erase(it);
      queued_.erase(name);
      active_.insert(name);
    }
    Status s;
    try {
      s = reconcile(name);
    } catch (const std::exception& e) {
      // Nothing here should throw; if a library does, corrald must live on
      // and keep every other cluster reconciled.
      s = internalError(std::string("unexpected exception: ") + e.what());
    }
    if (!s.isOk() && s.code() != Code::kNotFound)
      LOG_WARN("reconcile " << name << ": " << s.toString());
    {
      std::lock_guard<std::mutex> l(mu_);
      active_.erase(name);
    }
    cv_.notify_all();
  }
}

void Reconciler::resyncLoop() {
  while (true) {
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait_for(l, options_.resyncPeriod, [&] { return stopping_; });
      if (stopping_) return;
    }
    auto all = store_.listClusters();
    if (!all.isOk()) continue;
    for (const auto& r : *all) enqueue(r.spec.name);
  }
}

StatusOr<ClusterRecord> Reconciler::mutate(const std::string& name,
                                           const std::function<void(ClusterRecord&)>& fn,
                                           RecordPart part) {
  return updateWithRetry(store_, name, part, [&](ClusterRecord& r) -> StatusOr<Edit> {
    fn(r);
    r.updatedAt = clock_.unixMillis() / 1000;
    return Edit::kWrite;
  });
}

void Reconciler::setPhase(const std::string& name, const std::string& phase) {
  LOG_INFO("cluster " << name << ": phase: " << phase);
  auto r = mutate(name, [&](ClusterRecord& c) { c.phase = phase; });
  if (!r.isOk()) LOG_WARN("cannot record phase of " << name << ": " << r.status().toString());
}

void Reconciler::event(const std::string& cluster, const std::string& type,
                       const std::string& reason, const std::string& message, const EventAbout& about) {
  Event e;
  e.node = about.node;
  e.revision = about.revision;
  e.cluster = cluster;
  e.time = clock_.unixMillis();
  e.type = type;
  e.reason = reason;
  e.message = message;
  (void)store_.appendEvent(e);
  LOG_INFO("cluster " << cluster << ": " << reason << ": " << message);
}

bool Reconciler::stillStatus(const std::string& name, ClusterStatus status) {
  auto r = store_.getCluster(name);
  return r.isOk() && r->status == status;
}

std::map<std::string, NodeObservation> Reconciler::observedNodes(const std::string& cluster) {
  std::lock_guard<std::mutex> l(observedMu_);
  auto it = observed_.find(cluster);
  return it == observed_.end() ? std::map<std::string, NodeObservation>{} : it->second;
}

Status Reconciler::reconcile(const std::string& name) {
  ASSIGN_OR_RETURN(ClusterRecord r, store_.getCluster(name));
  if (ClusterRuntime* whole = runtime_.wholeClusters()) return reconcileWhole(*whole, r);
  switch (r.status) {
    case ClusterStatus::kCreating:
      return runCreate(std::move(r));
    case ClusterStatus::kRunning:
      if (r.revision > r.appliedRevision) return runApply(std::move(r));
      return runHealth(r);
    case ClusterStatus::kTerminating:
      return runTerminate(r);
    case ClusterStatus::kDeleting:
      return runDelete(r);
    case ClusterStatus::kFailed:
    case ClusterStatus::kTerminated:
    case ClusterStatus::kDeleted:
      return Status::ok();
  }
  return Status::ok();
}

Status Reconciler::allocateSubnet(ClusterRecord& record) {
  if (!record.subnet.empty()) return Status::ok();
  ASSIGN_OR_RETURN(std::string subnet, runtime_.allocateNetwork(record.spec.name));
  ASSIGN_OR_RETURN(record, mutate(record.spec.name, [&](ClusterRecord& c) { c.subnet = subnet; }));
  return Status::ok();
}

Status Reconciler::waitPodsReady(const std::string& cluster, const std::vector<std::string>& pods,
                                 const std::string& phasePrefix, Deadline deadline,
                                 const std::function<Status()>& stillWanted) {
  size_t lastReady = SIZE_MAX;
  while (true) {
    size_t ready = 0;
    std::string notReady;
    for (const auto& p : pods) {
      ASSIGN_OR_RETURN(PodStatus st, runtime_.podStatus(cluster, p));
      if (st.ready) {
        ++ready;
      } else if (notReady.empty()) {
        notReady = p + (st.message.empty() ? "" : " (" + st.message + ")");
        if (st.exists && !st.running)
          return unavailable("pod " + p + " stopped while starting");
      }
    }
    if (ready == pods.size()) return Status::ok();
    if (ready != lastReady && pods.size() > 1) {
      setPhase(cluster, phasePrefix + " (" + std::to_string(ready) + "/" +
                            std::to_string(pods.size()) + " ready)");
      lastReady = ready;
    }
    if (clock_.now() > deadline) return unavailable("timed out waiting for " + notReady);
    RETURN_IF_ERROR(stillWanted());
    clock_.sleepFor(std::chrono::milliseconds(50));
  }
}

Status Reconciler::refreshNodes(const std::string& cluster) {
  ProcessOptions po;
  po.timeout = std::chrono::seconds(15);
  ASSIGN_OR_RETURN(ProcessResult res,
                   runtime_.exec(cluster, "controller",
                                 {"sinfo", "-h", "-N", "-o", kSinfoNodeFormat}, po));
  if (res.exitCode != 0) return unavailable("sinfo failed: " + res.err);
  auto parsed = parseSinfoNodes(res.out);
  std::map<std::string, NodeObservation> obs;
  for (const auto& [n, s] : parsed) obs[n] = {s.state, s.reason};
  std::lock_guard<std::mutex> l(observedMu_);
  observed_[cluster] = std::move(obs);
  return Status::ok();
}

Status Reconciler::waitNodesIdle(const ClusterRecord& record, Deadline deadline) {
  int lastIdle = -1;
  while (true) {
    Status s = refreshNodes(record.spec.name);
    int idle = 0;
    std::string waiting;
    if (s.isOk()) {
      auto obs = observedNodes(record.spec.name);
      for (const auto& n : record.nodes) {
        auto it = obs.find(n.name);
        if (it != obs.end() && it->second.state == "idle") {
          ++idle;
        } else if (waiting.empty()) {
          waiting = n.name + (it == obs.end() ? "" : " is " + it->second.state);
        }
      }
      if (idle == static_cast<int>(record.nodes.size())) return Status::ok();
    } else {
      waiting = s.message();
    }
    if (idle != lastIdle) {
      setPhase(record.spec.name, "waiting for nodes to register (" + std::to_string(idle) + "/" +
                                     std::to_string(record.nodes.size()) + " idle)");
      lastIdle = idle;
    }
    if (clock_.now() > deadline)
      return unavailable("timed out waiting for Slurm nodes to become idle: " + waiting);
    if (!stillStatus(record.spec.name, ClusterStatus::kCreating))
      return conflict("creation was cancelled");
    clock_.sleepFor(std::chrono::milliseconds(100));
  }
}

Status Reconciler::failCreate(const ClusterRecord& record, const Status& why,
                              const std::string& during) {
  const std::string& name = record.spec.name;
  if (why.code() == Code::kConflict && !stillStatus(name, ClusterStatus::kCreating)) {
    enqueue(name);  // Deleted while creating: let the delete pass run.
    return Status::ok();
  }
  std::string reason = during + ": " + why.message();
  recordDiagnostics(name);
  event(name, "Warning", "CreateFailed", reason);
  ClusterNetwork net{name, record.id, record.subnet};
  // CORRAL_KEEP_FAILED=1 leaves a failed cluster's pods for debugging.
  Status cleaned = getenv("CORRAL_KEEP_FAILED") ? Status::ok() : runtime_.destroyCluster(net);
  if (!cleaned.isOk()) event(name, "Warning", "CleanupFailed", cleaned.message());
  auto r = mutate(name, [&](ClusterRecord& c) {
    c.status = ClusterStatus::kFailed;
    c.phase.clear();
    c.reason = reason;
  });
  return r.isOk() ? Status::ok() : r.status();
}

void Reconciler::recordDiagnostics(const std::string& name) {
  // The controller's log says why Slurm did not come up far better than a
  // timeout does; a pod that stopped, its supervisor's.
  std::vector<std::pair<std::string, std::string>> logs = {
      {"controller", "/var/log/slurm/slurmctld.log"}, {"controller", "/var/log/slurm/slurmdbd.log"}};
  if (auto pods = runtime_.listPods(name); pods.isOk()) {
    for (const auto& p : *pods) {
      auto st = runtime_.podStatus(name, p);
      if (st.isOk() && !st->running) logs.emplace_back(p, "");
    }
  }
  for (const auto& [pod, log] : logs) {
    auto text = runtime_.podLogTail(name, pod, log, 8192);
    if (text.isOk() && !text->empty())
      event(name, "Warning", "Diagnostics",
            pod + (log.empty() ? " (its supervisor)" : ":" + log) + ":\n" + lastLines(*text, 15));
  }
}

// A creation in four steps; each says what it was doing when it failed
// (`during`), which is what the Failed cluster's reason names.
Status Reconciler::runCreate(ClusterRecord record) {
  const std::string name = record.spec.name;
  Deadline deadline = clock_.now() + options_.createTimeout;
  std::string during;
  LOG_INFO("cluster " << name << ": phase: queued");
  StatusOr<RenderedCluster> rendered = internalError("not rendered");
  Status s = planCreate(record, &during);
  if (s.isOk()) {
    rendered = prepareCreate(record, &during);
    s = rendered.status();
  }
  if (s.isOk()) s = startCreatedPods(record, *rendered, deadline, &during);
  if (!s.isOk()) return failCreate(record, s, during);
  const std::string restartKey = controllerRestartKey(record);
  return markCreated(record, [&](ClusterRecord& c) { c.controllerConfigKey = restartKey; });
}

Status Reconciler::planCreate(ClusterRecord& record, std::string* during) {
  const std::string& name = record.spec.name;
  setPhase(name, "allocating network");
  *during = "allocating a subnet";
  RETURN_IF_ERROR(allocateSubnet(record));
  // Plan the nodes and give new ones a physical id.
  *during = "planning nodes";
  ASSIGN_OR_RETURN(std::vector<NodeRecord> planned,
                   planNodes(record.spec, record.subnet, record.nodes));
  *during = "assigning node ids";
  RETURN_IF_ERROR(assignPhysicalIds(&planned));
  *during = "reading the subnet";
  ASSIGN_OR_RETURN(auto netCidr, parseCidr(record.subnet));
  *during = "saving the node plan";
  ASSIGN_OR_RETURN(record, mutate(name, [&](ClusterRecord& c) {
                     c.nodes = planned;
                     c.loginAddress = hostAddress(netCidr, kLoginOffset);
                     c.phase = "preparing network and secrets";
                   }));
  LOG_INFO("cluster " << name << ": phase: preparing network and secrets");
  return Status::ok();
}

StatusOr<RenderedCluster> Reconciler::prepareCreate(const ClusterRecord& record,
                                                    std::string* during) {
  const std::string& name = record.spec.name;
  *during = "building image " + record.spec.image.name;
  RETURN_IF_ERROR(ensureImage(name, record.spec.image));
  setPhase(name, "preparing network and secrets");
  *during = "preparing the cluster";
  RETURN_IF_ERROR(runtime_.prepareCluster(ClusterNetwork{name, record.id, record.subnet}));
  *during = "rendering configuration";
  ASSIGN_OR_RETURN(RenderedCluster rendered, renderCluster(record));
  *during = "writing configuration";
  RETURN_IF_ERROR(runtime_.writeFiles(name, rendered.files));
  *during = "preparing login users' homes";
  RETURN_IF_ERROR(prepareHomes(record));
  *during = "reading the login host key";
  ASSIGN_OR_RETURN(std::string hostKey, runtime_.loginHostKey(name));
  std::string key = knownHostsKey(hostKey);
  *during = "saving the login host key";
  RETURN_IF_ERROR(mutate(name, [&](ClusterRecord& c) { c.loginHostKey = key; }).status());
  return rendered;
}

Status Reconciler::startCreatedPods(const ClusterRecord& record, const RenderedCluster& rendered,
                                    Deadline deadline, std::string* during) {
  const std::string& name = record.spec.name;
  // Every pod at once: worker pods set themselves up while the controller
  // starts, and their slurmd waits for slurmctld to listen (see the
  // renderer). Pods are started by a few threads; each start is mostly
  // waiting on `ip` and the supervisor's handshake.
  setPhase(name, "starting pods");
  {
    std::vector<const PodSpec*> order;
    for (const auto& pod : rendered.pods) order.push_back(&pod);
    std::vector<std::string> started;
    std::string failedPod;
    Status s = startPods(order, &started, &failedPod);
    *during = "starting " + failedPod;
    RETURN_IF_ERROR(s);
  }
  auto creating = [&]() -> Status {
    return stillStatus(name, ClusterStatus::kCreating) ? Status::ok()
                                                       : conflict("creation was cancelled");
  };
  auto ready = [&](const std::vector<std::string>& pods, const std::string& phase,
                   const std::string& what) {
    *during = what;
    return waitPodsReady(name, pods, phase, deadline, creating);
  };
  RETURN_IF_ERROR(ready({"controller"}, "starting controller", "starting the controller"));
  RETURN_IF_ERROR(ready(podNames(rendered, "worker"), "starting workers", "starting workers"));
  *during = "registering nodes";
  RETURN_IF_ERROR(waitNodesIdle(record, deadline));
  setPhase(name, "waiting for the login node");
  RETURN_IF_ERROR(ready({"login"}, "starting login node", "starting the login node"));
  if (auto reg = podNames(rendered, "registry"); !reg.empty())
    RETURN_IF_ERROR(ready(reg, "starting the registry", "starting the registry"));
  std::function<bool(const std::string&, int)> probe =
      options_.loginProbe ? options_.loginProbe : tcpAnswers;
  *during = "starting the login node";
  while (!probe(record.loginAddress, 22)) {
    if (clock_.now() > deadline)
      return unavailable("sshd does not answer on " + record.loginAddress + ":22");
    clock_.sleepFor(std::chrono::milliseconds(50));
  }
  return Status::ok();
}

Status Reconciler::markCreated(const ClusterRecord& record,
                               const std::function<void(ClusterRecord&)>& observed) {
  const std::string& name = record.spec.name;
  auto done = mutate(name, [&](ClusterRecord& c) {
    if (c.status != ClusterStatus::kCreating) return;
    c.status = ClusterStatus::kRunning;
    c.phase.clear();
    c.reason.clear();
    c.appliedRevision = c.revision;
    observed(c);
  });
  if (!done.isOk()) return done.status();
  if (done->status == ClusterStatus::kRunning) {
    (void)store_.setRevisionState(name, done->appliedRevision, RevisionState::kApplied, "");
    event(name, "Normal", "Running",
          "cluster is running with " + std::to_string(record.nodes.size()) +
              " nodes; login: ssh root@" + record.loginAddress,
          {"", done->appliedRevision});
  } else {
    enqueue(name);
  }
  return Status::ok();
}

Status Reconciler::ensureImage(const std::string& cluster, const ImageRef& image) {
  if (options_.images == nullptr) return Status::ok();
  auto last = clock_.now() - std::chrono::seconds(10);
  std::string prefix = "building image " + image.name + ": ";
  return options_.images->ensureBuilt(image, [&](const std::string& line) {
    // The phase shows the build's latest word, at most once a second.
    if (line.empty() || clock_.now() - last < std::chrono::seconds(1)) return;
    last = clock_.now();
    setPhase(cluster, prefix + line.substr(0, 160));
  });
}

Status Reconciler::startPods(const std::vector<const PodSpec*>& pods,
                             std::vector<std::string>* started, std::string* failedPod) {
  // A few threads: each start is mostly waiting on `ip` and the supervisor.
  std::atomic<size_t> next{0};
  std::mutex mu;
  Status first;
  auto work = [&] {
    for (size_t i = next++; i < pods.size(); i = next++) {
      Status s = runtime_.startPod(*pods[i]);
      std::lock_guard<std::mutex> l(mu);
      if (!s.isOk() && first.isOk()) first = s, *failedPod = pods[i]->name;
      if (s.isOk()) started->push_back(pods[i]->name);
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 0; t < std::min<size_t>(4, pods.size()); ++t) threads.emplace_back(work);
  for (auto& t : threads) t.join();
  return first;
}

Status Reconciler::runHealth(const ClusterRecord& record) {
  const std::string& name = record.spec.name;
  // Pods that died (a crashed supervisor, a host reboot) are recreated; the
  // reconciler owns the pod set as the renderer describes it.
  auto rendered = renderCluster(record);
  if (!rendered.isOk()) return rendered.status();
  RETURN_IF_ERROR(correctDrift(record, *rendered));
  RETURN_IF_ERROR(restartDeadPods(record, *rendered));
  ingestHealth(record);
  return refreshNodes(name);
}

Status Reconciler::restartDeadPods(const ClusterRecord& record, const RenderedCluster& rendered) {
  const std::string& name = record.spec.name;
  for (const auto& pod : rendered.pods) {
    ASSIGN_OR_RETURN(PodStatus st, runtime_.podStatus(name, pod.name));
    if (st.running || !st.exists) continue;
    if (pod.role == "worker") {
      // Slurm learns at once that the node's jobs are gone (they end
      // NODE_FAIL, and are not requeued unless they asked to be), instead
      // of after SlurmdTimeout. ReturnToService=2 brings the node back when
      // its new slurmd registers.
      (void)slurmCommand(name, {"scontrol", "update", "nodename=" + pod.name, "state=down",
                                "reason=corral: node failed (its pod stopped); restarting it"});
    }
    event(name, "Warning", "PodRestarted", "pod " + pod.name + " was not running; recreating it",
          {pod.role == "worker" ? pod.name : ""});
    RETURN_IF_ERROR(runtime_.startPod(pod));
  }
  return Status::ok();
}

void Reconciler::ingestHealth(const ClusterRecord& record) {
  const std::string& name = record.spec.name;
  for (const auto& n : record.nodes) {
    auto text = runtime_.healthReport(name, n.name);
    if (!text.isOk()) continue;
    auto report = parseHealthReport(*text);
    if (!report) continue;
    for (const auto& x : report->xids) {
      std::string key = name + "/" + n.name + "/" + std::to_string(x.time) + "/" +
                        std::to_string(x.code);
      {
        std::lock_guard<std::mutex> l(observedMu_);
        if (!seenXids_.insert(key).second) continue;
      }
      const std::string& cls = x.cls;
      std::string message = n.name + " (" + n.physicalId + "): GPU XID " +
                            std::to_string(x.code) + " on " + (x.pci.empty() ? "?" : x.pci) +
                            " (" + x.description + "), " + cls + " fault; " +
                            (x.action.empty() ? "reported" : x.action) + " (at " +
                            clockTime(x.time) + " UTC)";
      // After a corrald restart the agent's report still lists what was
      // already recorded: record each XID once.
      auto recent = store_.listEvents(name, 200);
      bool known = recent.isOk() && std::any_of(recent->begin(), recent->end(), [&](const Event& e) {
                     return e.reason == "GpuXid" && e.message == message;
                   });
      if (!known) event(name, cls == "hardware" ? "Warning" : "Normal", "GpuXid", message, {n.name});
    }
  }
}

StatusOr<std::string> Reconciler::injectXid(const std::string& cluster, const std::string& node,
                                           int code) {
  // As the driver prints it; the PCI address is the node's first GPU's.
  std::string line = "NVRM: Xid (PCI:0000:3b:00): " + std::to_string(code) +
                     ", pid=4242, name=python, " + xidDescription(code) + " (injected by corral)";
  RETURN_IF_ERROR(runtime_.appendKernelLog(cluster, node, line));
  event(cluster, "Normal", "XidInjected", node + ": wrote \"" + line + "\" to its kernel log",
        {node});
  return line;
}

std::string Reconciler::healthReport(const std::string& cluster, const std::string& node) {
  // Read fresh: the agent rewrites it within 200 ms of a change.
  auto text = runtime_.healthReport(cluster, node);
  return text.isOk() ? *text : "";
}

void Reconciler::livenessLoop() {
  // Between resyncs, a dead pod or a new health report (an XID) asks for a
  // pass within a second.
  std::map<std::string, std::string> lastReports;
  while (true) {
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait_for(l, options_.livenessPeriod, [&] { return stopping_; });
      if (stopping_) return;
    }
    // A whole-cluster runtime tells of changes itself (ClusterRuntime::onChange).
    if (runtime_.wholeClusters() != nullptr) continue;
    auto all = store_.listClusters();
    if (!all.isOk()) continue;
    for (const auto& r : *all) {
      if (r.status != ClusterStatus::kRunning) continue;
      bool wanted = false;
      std::vector<std::string> pods = {"controller", "login"};
      if (r.spec.containers.registry) pods.push_back("registry");
      for (const auto& n : r.nodes) pods.push_back(n.name);
      for (const auto& p : pods) {
        auto st = runtime_.podStatus(r.spec.name, p);
        if (st.isOk() && st->exists && !st->running) wanted = true;
      }
      for (const auto& n : r.nodes) {
        auto text = runtime_.healthReport(r.spec.name, n.name);
        std::string key = r.spec.name + "/" + n.name;
        std::string value = text.isOk() ? *text : "";
        // The report's "time" changes every few seconds; only its XIDs matter here.
        auto report = parseHealthReport(value);
        std::string xids;
        if (report) {
          report->time = 0;
          report->slurmdOk = false;
          report->gpuOk = true;
          report->node.clear();
          xids = healthReportJson(*report, -1);
        }
        if (lastReports[key] != xids) wanted = true;
        lastReports[key] = xids;
      }
      if (wanted) enqueue(r.spec.name);
    }
  }
}

Status Reconciler::runDelete(const ClusterRecord& record) {
  setPhase(record.spec.name, "stopping pods and removing the network");
  ClusterNetwork net{record.spec.name, record.id, record.subnet};
  if (Status s = runtime_.destroyCluster(net); !s.isOk()) {
    event(record.spec.name, "Warning", "DeleteFailed", s.message());
    return s;
  }
  {
    std::lock_guard<std::mutex> l(observedMu_);
    observed_.erase(record.spec.name);
  }
  LOG_INFO("cluster " << record.spec.name << " deleted");
  return store_.deleteCluster(record.spec.name);
}

Status Reconciler::collectOrphans() {
  ASSIGN_OR_RETURN(std::vector<std::string> present, runtime_.listClusters());
  for (const auto& name : present) {
    auto r = store_.getCluster(name);
    if (r.isOk()) continue;
    if (r.status().code() != Code::kNotFound) return r.status();
    LOG_WARN("removing runtime state of unknown cluster " << name);
    RETURN_IF_ERROR(runtime_.destroyCluster({name, 0, ""}));
  }
  return Status::ok();
}

}  // namespace corral
