#include "support/api_harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "api/auth.h"
#include "model/spec_json.h"
#include "model/validation.h"
#include "slurm/renderer.h"

namespace corral::testing_support {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "api_harness: %s\n", why.c_str());
  std::abort();
}

void check(const Status& s, const std::string& what) {
  if (!s.isOk()) die(what + ": " + s.toString());
}

template <typename T>
T checked(StatusOr<T> v, const std::string& what) {
  if (!v.isOk()) die(what + ": " + v.status().toString());
  return std::move(*v);
}

// Slurm 23.02 and later wrap numbers; 22.05 prints them plain. The queue
// mixes both, as the parsers accept both.
json wrapped(int64_t n) { return {{"set", true}, {"infinite", false}, {"number", n}}; }

std::string squeueJson() {
  json jobs = json::array();
  jobs.push_back({{"job_id", 40},
                  {"array_job_id", wrapped(0)},
                  {"name", "train"},
                  {"user_name", "carol"},
                  {"partition", "p1"},
                  {"job_state", json::array({"RUNNING"})},
                  {"state_reason", "None"},
                  {"nodes", "slinky-[0-1]"},
                  {"node_count", wrapped(2)},
                  {"cpus", wrapped(2)},
                  {"tres_alloc_str", "cpu=2,node=2,billing=2,gres/gpu=4"},
                  {"submit_time", wrapped(1764460000)},
                  {"start_time", wrapped(1764460001)},
                  {"end_time", wrapped(1764463601)},
                  {"time_limit", wrapped(60)},
                  {"current_working_directory", "/shared"},
                  {"command", "/shared/train.sh"},
                  {"exit_code", 0},
                  {"standard_output", "/shared/slurm-40.out"}});
  jobs.push_back({{"job_id", 43},
                  {"array_job_id", 41},
                  {"array_task_id", 2},
                  {"name", "sweep"},
                  {"user_name", "root"},
                  {"partition", "slinky"},
                  {"job_state", "PENDING"},
                  {"state_reason", "Resources"},
                  {"nodes", ""},
                  {"node_count", 1},
                  {"cpus", 1},
                  {"tres_req_str", "cpu=1,node=1"},
                  {"submit_time", 1764460100},
                  {"start_time", 1764470000},
                  {"end_time", 1764473600},
                  {"time_limit", {{"set", false}, {"infinite", true}, {"number", 0}}},
                  {"current_working_directory", "/shared/home/carol"},
                  {"command", "/shared/sweep.sh"},
                  {"exit_code", 0},
                  {"standard_output", "/shared/home/carol/sweep-%A_%a.out"}});
  // A finished job still in the queue: the queue view leaves it out.
  jobs.push_back({{"job_id", 39},
                  {"name", "\xC3\xA9valuation \xE2\x9C\x93"},
                  {"user_name", "carol"},
                  {"partition", "llm"},
                  {"job_state", "COMPLETED"},
                  {"time_limit", 2 * 24 * 60 + 5}});
  return json{{"jobs", jobs}}.dump();
}

std::string sacctJson() {
  json jobs = json::array();
  jobs.push_back(
      {{"job_id", 30},
       {"name", "prep"},
       {"user", "carol"},
       {"partition", "p1"},
       {"state", {{"current", json::array({"COMPLETED"})}, {"reason", "None"}}},
       {"nodes", "slinky-0"},
       {"time",
        {{"submission", 1764400000},
         {"start", 1764400001},
         {"end", 1764400301},
         {"limit", wrapped(30)}}},
       {"tres",
        {{"allocated", json::array({{{"type", "cpu"}, {"name", ""}, {"count", 1}},
                                    {{"type", "node"}, {"name", ""}, {"count", 1}},
                                    {{"type", "gres"}, {"name", "gpu"}, {"count", 1}}})}}},
       {"working_directory", "/shared"},
       {"exit_code",
        {{"status", json::array({"SUCCESS"})},
         {"return_code", wrapped(0)},
         {"signal", {{"signal_id", {{"set", false}, {"infinite", false}, {"number", 0}}}}}}}});
  jobs.push_back({{"job_id", 31},
                  {"array", {{"job_id", 31}, {"task_id", wrapped(1)}}},
                  {"name", "sweep"},
                  {"user", "root"},
                  {"partition", "slinky"},
                  {"state", {{"current", "FAILED"}, {"reason", "NonZeroExitCode"}}},
                  {"nodes", "None assigned"},
                  {"time", {{"submission", 1764400000}, {"start", 0}, {"end", 0}}},
                  {"exit_code", {{"return_code", 3}, {"signal", {{"signal_id", 0}}}}}});
  return json{{"jobs", jobs}}.dump();
}

// The controller pod's Slurm: what the API and the metrics ask for.
StatusOr<ProcessResult> slurm(const std::string&, const std::string& pod,
                              const std::vector<std::string>& argv) {
  ProcessResult r;
  r.exitCode = 0;
  if (pod != "controller" || argv.empty()) return r;
  auto has = [&](const std::string& a) {
    return std::find(argv.begin(), argv.end(), a) != argv.end();
  };
  if (argv[0] == "squeue" && has("--json")) {
    r.out = squeueJson();
  } else if (argv[0] == "sacct" && has("--json")) {
    r.out = sacctJson();
  } else if (argv[0] == "squeue" && has("%t")) {
    r.out = "R\nPD\n";
  } else if (argv[0] == "squeue" && has("-p") && has("p1")) {
    r.out = "40 carol train\n";  // Jobs of partition p1, for a refused delete.
  }
  return r;
}

ClusterRecord cluster(const std::string& name, const std::string& project, ClusterStatus status,
                      int gpuNodes, int cpuNodes, int subnet) {
  ClusterRecord r;
  r.spec.name = name;
  r.spec.gpuNodes = gpuNodes;
  r.spec.cpuNodes = cpuNodes;
  r.spec.gpusPerNode = gpuNodes > 0 ? 8 : 0;
  r.spec.sshKeys = {kTestSshKey};
  r.spec.image = {"debian13-slurm24.11", std::string(64, 'a'), "24.11"};
  r.project = project;
  r.status = status;
  r.revision = 1;
  r.appliedRevision = status == ClusterStatus::kCreating ? 0 : 1;
  r.phase = status == ClusterStatus::kCreating ? "starting pods" : "";
  r.subnet = "172.29." + std::to_string(subnet) + ".0/24";
  r.loginAddress = "172.29." + std::to_string(subnet) + ".3";
  r.loginHostKey = FakeRuntime::kFakeHostKey;
  r.nodes = checked(planNodes(r.spec, r.subnet, {}), "planNodes");
  r.platformPartitions = {"llm"};
  r.changeAuthor = "api";
  r.changeMessage = "create requested";
  r.createdAt = r.updatedAt = 1764460800;
  return r;
}

std::string firstHeaderValue(const std::string& head, const std::string& name) {
  std::istringstream lines(head);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.size() > name.size() + 1 &&
        strncasecmp(line.c_str(), name.c_str(), name.size()) == 0 && line[name.size()] == ':') {
      std::string v = line.substr(name.size() + 1);
      while (!v.empty() && (v.front() == ' ')) v.erase(0, 1);
      while (!v.empty() && (v.back() == '\r' || v.back() == ' ')) v.pop_back();
      return v;
    }
  }
  return "";
}

}  // namespace

fs::path sourceDir() {
  // This file is test/support/api_harness.cc; CMake compiles it by its
  // absolute path.
  return fs::path(__FILE__).parent_path().parent_path().parent_path();
}

const json& openapiDocument() {
  static const json doc = [] {
    fs::path p = sourceDir() / "src" / "api" / "openapi.json";
    std::ifstream in(p);
    if (!in) die("cannot read " + p.string());
    std::stringstream s;
    s << in.rdbuf();
    json d = json::parse(s.str(), nullptr, false);
    if (d.is_discarded()) die(p.string() + " is not JSON");
    return d;
  }();
  return doc;
}

ApiHarness::ApiHarness(bool populated) {
  char tmpl[] = "/tmp/corral-api-harness-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) die("mkdtemp failed");
  dataDir = tmpl;

  check(store.createAccount({"admin", true, {}, 0}).status(), "createAccount");
  check(store.createAccount({"alice", false, {"team-a"}, 0}).status(), "createAccount");
  check(store.createAccount({"bob", false, {"team-b"}, 0}).status(), "createAccount");
  for (const char* user : {"admin", "alice", "bob"})
    tokens_[user] = checked(issueToken(store, clock, user, "tests"), "issueToken");
  runtime.setExecHandler(slurm);
  if (populated) populate();

  reconciler_ = std::make_unique<Reconciler>(store, runtime, clock, ReconcilerOptions{});
  ApiOptions options;
  options.platformPartitions = {"llm"};
  options.dataDir = dataDir.string();
  options.images = &images;
  api_ = std::make_unique<ApiServer>(store, *reconciler_, clock, options);
  check(api_->bind("127.0.0.1", 0), "bind");
  serving_ = std::thread([this] { api_->serve(); });
  client_ = std::make_unique<httplib::Client>("127.0.0.1", api_->port());
  client_->set_url_encode(false);
  // One connection per request, so that a request the server leaves
  // half-read cannot garble the next one (the pipelining test sees to that).
  client_->set_keep_alive(false);
  client_->set_read_timeout(30, 0);
  for (int i = 0; i < 400; ++i) {
    if (auto r = client_->Get("/healthz"); r && r->status == 200) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  die("the API server did not start");
}

ApiHarness::~ApiHarness() {
  client_.reset();
  api_->stop();
  serving_.join();
  api_.reset();
  reconciler_.reset();
  std::error_code ec;
  fs::remove_all(dataDir, ec);
}

void ApiHarness::populate() {
  // "a": the cluster most requests work on.
  ClusterRecord a = cluster("a", kDefaultProject, ClusterStatus::kRunning, 4, 1, 1);
  a.spec.partitions = {{"p1", "slinky-[0-1]", {{"MaxTime", "30"}}}};
  a.spec.slurmConf = {{"MinJobAge", "300"}};
  a.spec.users = {{"carol", kFirstLoginUid, {kTestSshKey}}};
  a.spec.containers.registry = true;
  fs::create_directories(dataDir / "volumes" / "data");
  fs::create_directories(dataDir / "volumes" / "scratch");
  fs::create_directories(dataDir / "volumes" / "bvol");
  a.spec.volumes = {{"data", "/data", (dataDir / "volumes" / "data").string(), false}};
  a = checked(store.createCluster(a), "createCluster a");
  checked(store.nextSequence("login-uid/a"), "nextSequence");  // carol's uid.
  check(store.setRevisionState("a", 1, RevisionState::kApplied, ""), "setRevisionState");
  // Revision 2 failed; revision 3, by corral, rolled back to revision 1.
  ClusterRecord next = a;
  next.revision = 2;
  next.spec.slurmConf["SchedulerType"] = "sched/builtin";
  next.changeMessage = "config SchedulerType=sched/builtin";
  next = checked(store.updateCluster(next), "updateCluster");
  check(store.setRevisionState("a", 2, RevisionState::kFailed,
                               "slurmctld refused the new configuration: fatal: bad config"),
        "setRevisionState");
  next.revision = 3;
  next.spec = a.spec;
  next.changeAuthor = "corral";
  next.changeRollback = true;
  next.changeMessage = "roll back to revision 1 after revision 2 failed";
  next = checked(store.updateCluster(next), "updateCluster");
  check(store.setRevisionState("a", 3, RevisionState::kApplied, ""), "setRevisionState");
  next.appliedRevision = 3;
  next.reason = "revision 2 failed: slurmctld refused the new configuration";
  next = checked(store.updateCluster(next), "updateCluster");

  int64_t t = clock.unixMillis();
  check(store.appendEvent({0, "a", t, "Normal", "Created", "cluster is Running", "", 0}), "appendEvent");
  check(store.appendEvent({0, "a", t + 1, "Normal", "ChangeRequested", "revision 2: config", "", 2}), "");
  check(store.appendEvent({0, "a", t + 2, "Warning", "ChangeFailed", "revision 2 failed", "", 2}), "");
  check(store.appendEvent({0, "a", t + 3, "Normal", "RolledBack", "back to revision 1", "", 3}), "");
  check(store.appendEvent({0, "a", t + 4, "Warning", "GpuXid",
                           "slinky-0 reported XID 79 (hardware): GPU has fallen off the bus", "slinky-0", 0}),
        "");
  check(store.appendEvent({0, "a", t + 5, "Normal", "PodRestarted",
                           "pod slinky-1 was not running; recreating it", "slinky-1", 0}),
        "");

  // Its runtime: a controller whose Slurm answers, and two health reports.
  check(runtime.prepareCluster({"a", a.id, a.subnet}), "prepareCluster");
  PodSpec controller;
  controller.cluster = "a";
  controller.name = "controller";
  controller.role = "controller";
  controller.address = "172.29.1.2";
  check(runtime.startPod(controller), "startPod");
  json xid = {
      {"time", t},
      {"code", 79},
      {"pci", "0000:3b:00"},
      {"class", "hardware"},
      {"description", "GPU has fallen off the bus"},
      {"action", "drained"},
      {"line",
       "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python, GPU has fallen off the bus"}};
  runtime.putPodFile("a", "slinky-0", "/run/corral/health.json",
                  json{{"node", "slinky-0"},
                       {"slurmd", "ok"},
                       {"gpu", "xid"},
                       {"xids", json::array({xid})},
                       {"time", t}}
                      .dump());
  runtime.putPodFile("a", "slinky-1", "/run/corral/health.json",
                  json{{"node", "slinky-1"},
                       {"slurmd", "not running"},
                       {"gpu", "ok"},
                       {"xids", json::array()},
                       {"time", t}}
                      .dump());

  checked(store.createCluster(cluster("idle", kDefaultProject, ClusterStatus::kRunning, 1, 0, 2)),
          "createCluster idle");
  checked(store.createCluster(cluster("old", kDefaultProject, ClusterStatus::kTerminated, 0, 1, 3)),
          "createCluster old");
  checked(
      store.createCluster(cluster("creating", kDefaultProject, ClusterStatus::kCreating, 2, 0, 4)),
      "createCluster creating");
  checked(store.createCluster(cluster("bee", "team-b", ClusterStatus::kRunning, 1, 0, 5)),
          "createCluster bee");
  for (const char* c : {"idle", "old", "creating", "bee"})
    check(store.appendEvent({0, c, t, "Normal", "CreateRequested", "create requested", "", 0}), "");

  auto volume = [&](const std::string& name, const std::string& project, const std::string& type) {
    Volume v;
    v.name = name;
    v.project = project;
    v.type = type;
    v.hostPath = (dataDir / "volumes" / name).string();
    v.managed = true;
    v.createdAt = 1764460800;
    checked(store.createVolume(v), "createVolume " + name);
  };
  volume("data", kDefaultProject, "pfs");
  volume("scratch", kDefaultProject, "dataset");
  volume("bvol", "team-b", "sfs");
}

void ApiHarness::setReadTimeout(std::chrono::milliseconds timeout) {
  client_->set_read_timeout(timeout.count() / 1000, (timeout.count() % 1000) * 1000);
}

std::string ApiHarness::token(const std::string& user) const {
  auto it = tokens_.find(user);
  return it == tokens_.end() ? "" : it->second;
}

Answer ApiHarness::parse(int status, std::string raw, std::string contentType) {
  Answer a;
  a.status = status;
  a.body = json::parse(raw, nullptr, false);
  a.raw = std::move(raw);
  a.contentType = std::move(contentType);
  return a;
}

Answer ApiHarness::send(const std::string& method, const std::string& path, const std::string& body,
                        const std::string& tokenOf) {
  httplib::Headers headers;
  std::string t = tokenOf == kAdmin ? token("admin") : tokenOf;
  if (!t.empty()) headers.emplace("Authorization", "Bearer " + t);
  // httplib sends no Content-Length for an empty body, which corrald
  // refuses; clients such as curl -d '' send "Content-Length: 0".
  if (body.empty() && method != "GET" && method != "DELETE") headers.emplace("Content-Length", "0");
  httplib::Result res =
      method == "GET"      ? client_->Get(path.c_str(), headers)
      : method == "DELETE" ? client_->Delete(path.c_str(), headers, body, "application/json")
      : method == "POST"   ? client_->Post(path.c_str(), headers, body, "application/json")
      : method == "PUT"    ? client_->Put(path.c_str(), headers, body, "application/json")
      : method == "PATCH"  ? client_->Patch(path.c_str(), headers, body, "application/json")
                           : client_->Options(path.c_str(), headers);
  if (!res) return {};
  return parse(res->status, res->body, res->get_header_value("Content-Type"));
}

Answer ApiHarness::sendRaw(const std::string& request, int timeoutMs) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return {};
  timeval tv{timeoutMs / 1000, (timeoutMs % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return {};
  }
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // The server may answer (and close) before reading it all.
    sent += static_cast<size_t>(n);
  }
  std::string in;
  char buf[65536];
  while (true) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    in.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  // "HTTP/1.1 400 Bad Request\r\n…\r\n\r\nbody"
  int status = 0;
  if (std::sscanf(in.c_str(), "HTTP/1.%*d %d", &status) != 1) return {};
  size_t split = in.find("\r\n\r\n");
  std::string head = in.substr(0, split);
  std::string body = split == std::string::npos ? "" : in.substr(split + 4);
  if (std::string length = firstHeaderValue(head, "Content-Length"); !length.empty())
    body = body.substr(0, std::strtoul(length.c_str(), nullptr, 10));
  Answer a = parse(status, body, firstHeaderValue(head, "Content-Type"));
  a.wire = std::move(in);
  return a;
}

RawConnection::RawConnection(int port, int timeoutMs) : timeoutMs_(timeoutMs) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) return;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) ::close(fd_);
}

bool RawConnection::write(const std::string& bytes) {
  size_t sent = 0;
  while (fd_ >= 0 && sent < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return fd_ >= 0;
}

Answer RawConnection::read(int timeoutMs) {
  if (fd_ >= 0) {
    int ms = timeoutMs > 0 ? timeoutMs : timeoutMs_;
    timeval tv{ms / 1000, (ms % 1000) * 1000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  auto fill = [&] {
    char buf[65536];
    ssize_t n = fd_ < 0 ? -1 : ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return false;
    buffered_.append(buf, static_cast<size_t>(n));
    return true;
  };
  size_t split;
  while ((split = buffered_.find("\r\n\r\n")) == std::string::npos)
    if (!fill()) return {};
  std::string head = buffered_.substr(0, split);
  size_t length = std::strtoul(firstHeaderValue(head, "Content-Length").c_str(), nullptr, 10);
  while (buffered_.size() < split + 4 + length)
    if (!fill()) return {};
  int status = 0;
  std::sscanf(head.c_str(), "HTTP/1.%*d %d", &status);
  Answer a;
  a.status = status;
  a.raw = buffered_.substr(split + 4, length);
  a.body = json::parse(a.raw, nullptr, false);
  a.contentType = firstHeaderValue(head, "Content-Type");
  a.wire = buffered_.substr(0, split + 4 + length);
  buffered_.erase(0, split + 4 + length);
  return a;
}

json ApiHarness::snapshot() {
  // Small on purpose: the fuzz test takes one before and after each of
  // thousands of requests. The store bumps a record's version on every
  // write, so the version stands for the whole record.
  json s;
  json clusters = json::array();
  for (const auto& r : checked(store.listClusters(), "listClusters")) {
    json revisions = json::array();
    for (const auto& rev : checked(store.listRevisions(r.spec.name), "listRevisions"))
      revisions.push_back({rev.number, revisionStateName(rev.state), rev.error});
    auto events = checked(store.listEvents(r.spec.name, 1 << 30), "listEvents");
    json files = json::object();
    for (const auto& [path, file] : runtime.files(r.spec.name)) files[path] = file.content.size();
    clusters.push_back({{"name", r.spec.name},
                        {"project", r.project},
                        {"version", r.version},
                        {"revision", r.revision},
                        {"appliedRevision", r.appliedRevision},
                        {"status", statusName(r.status)},
                        {"revisions", revisions},
                        {"events", events.size()},
                        {"lastEvent", events.empty() ? 0 : events.back().id},
                        {"runtimeFiles", files}});
  }
  s["clusters"] = clusters;
  json volumes = json::array();
  for (const auto& v : checked(store.listVolumes(), "listVolumes"))
    volumes.push_back(volumeToJson(v));
  s["volumes"] = volumes;
  json accounts = json::array();
  for (const auto& a : checked(store.listAccounts(), "listAccounts"))
    accounts.push_back({a.name, a.admin, a.projects});
  s["accounts"] = accounts;
  json tokens = json::array();
  for (const auto& t : checked(store.listTokens(), "listTokens"))
    tokens.push_back({t.id, t.user, t.hash});
  s["tokens"] = tokens;
  json dirs = json::array();
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dataDir, ec); !ec && it != fs::end(it);
       it.increment(ec))
    dirs.push_back(fs::relative(it->path(), dataDir).string());
  std::sort(dirs.begin(), dirs.end());
  s["files"] = dirs;
  return s;
}

bool codeFits(int status, const std::string& code) {
  switch (status) {
    case 400:
    case 413:
      return code == "InvalidArgument";
    case 401:
      return code == "Unauthenticated";
    case 403:
      return code == "PermissionDenied";
    case 404:
      return code == "NotFound";
    case 409:
      return code == "Conflict" || code == "FailedPrecondition";
    case 500:
      return code == "Internal";
    case 503:
      return code == "Unavailable";
  }
  return false;
}

}  // namespace corral::testing_support
