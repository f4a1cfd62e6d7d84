#include "runtime/local/local_runtime.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "common/files.h"
#include "common/ipv4.h"
#include "common/log.h"
#include "runtime/local/pod_json.h"
#include "runtime/local/pod_supervisor.h"

namespace fs = std::filesystem;

namespace corral {
namespace {

StatusOr<std::string> readWhole(const std::string& path) { return readFile(path); }

Status writeAtomic(const std::string& path, const std::string& content, int mode) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return internalError("cannot create " + fs::path(path).parent_path().string() + ": " +
                               ec.message());
  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return internalError("cannot write " + tmp + ": " + std::strerror(errno));
  size_t off = 0;
  while (off < content.size()) {
    ssize_t n = write(fd, content.data() + off, content.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      return internalError("cannot write " + tmp + ": " + std::strerror(errno));
    }
    off += static_cast<size_t>(n);
  }
  fchmod(fd, static_cast<mode_t>(mode));
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0)
    return internalError("cannot rename " + tmp + ": " + std::strerror(errno));
  return Status::ok();
}

// Whether `pid` is alive (not a zombie) and was started as
// `corral-pod start <specPath>`.
bool isPodProcess(int pid, const std::string& specPath) {
  std::string proc = "/proc/" + std::to_string(pid);
  auto stat = readFile(proc + "/stat");
  if (!stat.isOk()) return false;
  auto rp = stat->rfind(')');
  if (rp == std::string::npos || rp + 2 >= stat->size() || (*stat)[rp + 2] == 'Z') return false;
  auto args = readFile(proc + "/cmdline");
  if (!args.isOk()) return false;
  return args->find(std::string("\0", 1) + specPath + std::string("\0", 1)) != std::string::npos;
}

// Interface names are limited to 15 characters, and must not collide between
// corrald instances on one host. Subnets never overlap (corrald refuses a pool
// that overlaps an existing route), so the subnet's base address in hex is a
// unique key: bridge "crl-ac1d0300", veths "cac1d0300-0a" / "pac1d0300-0a".
std::string hex8(uint32_t v) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

// 02:63:a:b:c:d for a.b.c.d: locally administered, unique per address.
std::string macFor(const std::string& address) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  std::sscanf(address.c_str(), "%u.%u.%u.%u", &a, &b, &c, &d);
  char mac[32];
  std::snprintf(mac, sizeof mac, "02:63:%02x:%02x:%02x:%02x", a & 0xff, b & 0xff, c & 0xff, d & 0xff);
  return mac;
}

StatusOr<std::string> networkKeyOf(const std::string& subnet) {
  ASSIGN_OR_RETURN(Cidr c, parseCidr(subnet));
  return hex8(c.base);
}

std::string vethName(const std::string& key, const std::string& address, bool host) {
  auto ip = parseIpv4(address);
  char last[3];
  std::snprintf(last, sizeof last, "%02x", ip.isOk() ? (*ip & 0xff) : 0);
  return std::string(host ? "c" : "p") + key + "-" + last;
}

}  // namespace

LocalRuntime::LocalRuntime(LocalRuntimeOptions options)
    : options_(std::move(options)),
      runner_(options_.runner ? *options_.runner : realProcessRunner()) {}

std::string LocalRuntime::netnsName(const std::string& key, const std::string& cluster,
                                    const std::string& pod) {
  // The subnet key keeps two corrald instances' clusters of the same name
  // apart; '.' appears in neither cluster nor pod names, so the prefix
  // "crl-<key>-<cluster>." names exactly one cluster's namespaces.
  return "crl-" + key + "-" + cluster + "." + pod;
}

std::string LocalRuntime::bridgeName(const std::string& key) { return "crl-" + key; }

std::string LocalRuntime::clusterDir(const std::string& cluster) const {
  return options_.dataDir + "/clusters/" + cluster;
}

std::string LocalRuntime::podDir(const std::string& cluster, const std::string& pod) const {
  return clusterDir(cluster) + "/pods/" + pod;
}

StatusOr<std::string> LocalRuntime::networkKey(const std::string& cluster) const {
  auto text = readWhole(clusterDir(cluster) + "/netkey");
  if (!text.isOk()) return notFound("cluster \"" + cluster + "\" has no runtime state");
  return *text;
}

Status LocalRuntime::initialize() {
  std::lock_guard<std::mutex> lock(templateMutex_);
  std::string tmpl = options_.dataDir + "/templates/mariadb";
  if (fs::exists(tmpl + "/.complete")) return Status::ok();
  LOG_INFO("preparing the MariaDB template data directory (once per host)");
  std::error_code ec;
  fs::remove_all(tmpl, ec);
  fs::create_directories(tmpl, ec);
  std::string cnf = options_.dataDir + "/templates/mariadb.cnf";
  RETURN_IF_ERROR(writeAtomic(cnf,
                              "[mysqld]\nskip-networking\nperformance_schema=OFF\n"
                              "innodb_buffer_pool_size=32M\ninnodb_log_file_size=8M\n"
                              "innodb_data_file_path=ibdata1:4M:autoextend\n"
                              "innodb_use_native_aio=0\n",
                              0644));
  ProcessOptions po;
  po.timeout = std::chrono::seconds(120);
  auto r = runChecked(runner_,
                      {"mariadb-install-db", "--defaults-file=" + cnf, "--datadir=" + tmpl,
                       "--auth-root-authentication-method=socket", "--skip-test-db",
                       "--user=root"},
                      po);
  if (!r.isOk()) return r.status().withContext("initialising the accounting database template");
  return writeAtomic(tmpl + "/.complete", "", 0644);
}

Status LocalRuntime::ensureDatabase(const std::string& cluster) {
  std::string db = clusterDir(cluster) + "/db";
  if (fs::exists(db + "/.complete")) return Status::ok();
  RETURN_IF_ERROR(initialize());
  std::error_code ec;
  fs::remove_all(db, ec);
  auto r = runChecked(runner_, {"cp", "-a", "--sparse=always",
                                options_.dataDir + "/templates/mariadb", db});
  if (!r.isOk()) return r.status().withContext("copying the accounting database template");
  return Status::ok();
}

Status LocalRuntime::prepareCluster(const ClusterNetwork& net) {
  std::string dir = clusterDir(net.cluster);
  std::error_code ec;
  fs::create_directories(dir + "/pods", ec);
  fs::create_directories(dir + "/state/slurmctld", ec);
  fs::create_directories(dir + "/shared", ec);
  if (ec) return internalError("cannot create " + dir + ": " + ec.message());
  ASSIGN_OR_RETURN(std::string key, networkKeyOf(net.subnet));
  RETURN_IF_ERROR(writeAtomic(dir + "/netkey", key, 0644));

  // Secrets: a munge key of the cluster's own and the login node's host key.
  std::string mungeKey = dir + "/secrets/munge/munge.key";
  if (!fs::exists(mungeKey)) {
    std::string key(1024, '\0');
    std::random_device rd;
    for (auto& c : key) c = static_cast<char>(rd() & 0xff);
    fs::create_directories(dir + "/secrets/munge", ec);
    chmod((dir + "/secrets").c_str(), 0700);
    chmod((dir + "/secrets/munge").c_str(), 0700);
    RETURN_IF_ERROR(writeAtomic(mungeKey, key, 0400));
  }
  std::string hostKey = dir + "/etc/ssh/ssh_host_ed25519_key";
  if (!fs::exists(hostKey + ".pub")) {
    fs::create_directories(dir + "/etc/ssh", ec);
    fs::remove(hostKey, ec);
    auto r = runChecked(runner_, {"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                                  "root@login." + net.cluster, "-f", hostKey});
    if (!r.isOk()) return r.status().withContext("generating the login node's host key");
  }
  RETURN_IF_ERROR(ensureDatabase(net.cluster));

  // The cluster network: a bridge holding the subnet's first address, so the
  // host reaches the login node. No NAT and no forwarding: pods reach only
  // each other and this host.
  ASSIGN_OR_RETURN(Cidr cidr, parseCidr(net.subnet));
  std::string br = bridgeName(key);
  if (!fs::exists("/sys/class/net/" + br)) {
    ProcessOptions po;
    po.input = "link add " + br + " type bridge\n" + "addr add " +
               hostAddress(cidr, 1) + "/" + std::to_string(cidr.prefix) + " dev " + br +
               "\nlink set " + br + " up\n";
    auto r = runChecked(runner_, {"ip", "-batch", "-"}, po);
    if (!r.isOk()) return r.status().withContext("creating bridge " + br);
  }
  return Status::ok();
}

Status LocalRuntime::writeFiles(const std::string& cluster, const RenderedFiles& files) {
  for (const auto& [rel, file] : files) {
    if (rel.empty() || rel[0] == '/' || rel.find("..") != std::string::npos)
      return invalidArgument("bad rendered file path " + rel);
    RETURN_IF_ERROR(writeAtomic(clusterDir(cluster) + "/" + rel, file.content, file.mode));
  }
  return Status::ok();
}

Status LocalRuntime::appendFile(const std::string& cluster, const std::string& path,
                                const std::string& text) {
  if (path.empty() || path[0] == '/' || path.find("..") != std::string::npos)
    return invalidArgument("bad path " + path);
  std::string full = clusterDir(cluster) + "/" + path;
  int fd = open(full.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return unavailable("cannot open " + full + ": " + std::strerror(errno));
  ssize_t n = write(fd, text.data(), text.size());
  close(fd);
  if (n != static_cast<ssize_t>(text.size())) return unavailable("cannot append to " + full);
  return Status::ok();
}

Status LocalRuntime::prepareDirectory(const std::string& cluster, const std::string& path, int uid,
                                      int gid, int mode) {
  if (path.empty() || path[0] == '/' || path.find("..") != std::string::npos)
    return invalidArgument("bad path " + path);
  std::string full = clusterDir(cluster) + "/" + path;
  std::error_code ec;
  fs::create_directories(full, ec);
  if (ec) return internalError("cannot create " + full + ": " + ec.message());
  if (chown(full.c_str(), static_cast<uid_t>(uid), static_cast<gid_t>(gid)) != 0 ||
      chmod(full.c_str(), static_cast<mode_t>(mode)) != 0)
    return internalError("cannot set the owner of " + full + ": " + std::strerror(errno));
  return Status::ok();
}

StatusOr<std::string> LocalRuntime::readFile(const std::string& cluster, const std::string& path) {
  if (path.empty() || path[0] == '/' || path.find("..") != std::string::npos)
    return invalidArgument("bad path " + path);
  return readWhole(clusterDir(cluster) + "/" + path);
}

Status LocalRuntime::ensurePodNetwork(const PodSpec& spec, const std::string& id) {
  std::string ns = netnsName(id, spec.cluster, spec.name);
  std::string hostIf = vethName(id, spec.address, true);
  std::string podIf = vethName(id, spec.address, false);
  if (!fs::exists("/run/netns/" + ns)) {
    auto r = runChecked(runner_, {"ip", "netns", "add", ns});
    if (!r.isOk()) return r.status().withContext("creating network namespace " + ns);
  }
  // A crash between creating the veth pair and configuring its pod end
  // leaves a host end without a working eth0 inside: start that over.
  if (fs::exists("/sys/class/net/" + hostIf)) {
    auto probe = runner_.run({"ip", "-n", ns, "-o", "addr", "show", "dev", "eth0"});
    if (!probe.isOk() || probe->exitCode != 0 || probe->out.find(spec.address + "/") == std::string::npos)
      (void)runner_.run({"ip", "link", "del", hostIf});
  }
  if (!fs::exists("/sys/class/net/" + hostIf)) {
    ProcessOptions po;
    // The pod's MAC address follows from its IP address, so a recreated pod
    // (a login restart, a node reboot) keeps it and no neighbour's ARP cache
    // points at a vanished interface for a minute.
    po.input = "link add " + hostIf + " type veth peer name " + podIf + " address " +
               macFor(spec.address) + "\n" + "link set " +
               podIf + " netns " + ns + "\n" + "link set " + hostIf + " master " +
               bridgeName(id) + " up\n";
    auto r = runChecked(runner_, {"ip", "-batch", "-"}, po);
    if (!r.isOk()) return r.status().withContext("connecting pod " + spec.name);
    ProcessOptions pi;
    pi.input = "link set lo up\nlink set " + podIf + " name eth0\naddr add " + spec.address +
               "/" + std::to_string(spec.prefixLength) + " dev eth0\nlink set eth0 up\n";
    auto r2 = runChecked(runner_, {"ip", "-n", ns, "-batch", "-"}, pi);
    if (!r2.isOk()) return r2.status().withContext("configuring pod " + spec.name + " network");
  }
  return Status::ok();
}

Status LocalRuntime::removePodNetwork(const std::string& cluster, const std::string& pod,
                                      const std::string& id, const std::string& address) {
  std::string ns = netnsName(id, cluster, pod);
  if (!address.empty()) {
    std::string hostIf = vethName(id, address, true);
    if (fs::exists("/sys/class/net/" + hostIf))
      (void)runner_.run({"ip", "link", "del", hostIf});
  }
  if (fs::exists("/run/netns/" + ns)) {
    auto r = runChecked(runner_, {"ip", "netns", "del", ns});
    if (!r.isOk()) return r.status();
  }
  return Status::ok();
}

int LocalRuntime::podPid(const std::string& cluster, const std::string& pod) const {
  std::string dir = podDir(cluster, pod);
  auto text = readWhole(dir + "/" + kPodPidFile);
  if (!text.isOk()) return 0;
  int pid = std::atoi(text->c_str());
  if (pid <= 0) return 0;
  return isPodProcess(pid, dir + "/" + kPodSpecFile) ? pid : 0;
}

Status LocalRuntime::startPod(const PodSpec& spec) {
  if (podPid(spec.cluster, spec.name) > 0) return Status::ok();
  ASSIGN_OR_RETURN(std::string id, networkKey(spec.cluster));
  RETURN_IF_ERROR(ensurePodNetwork(spec, id));

  // A pod that is not running starts from fresh ephemeral directories: this is
  // what makes /root, /tmp and the rest vanish when a pod is recreated.
  std::string dir = podDir(spec.cluster, spec.name);
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) return internalError("cannot create " + dir + ": " + ec.message());

  LaunchSpec launch{spec, "/run/netns/" + netnsName(id, spec.cluster, spec.name), dir};
  for (auto& m : launch.pod.mounts)
    if (!m.source.empty() && m.source[0] != '/') m.source = clusterDir(spec.cluster) + "/" + m.source;
  std::string specPath = dir + "/" + kPodSpecFile;
  RETURN_IF_ERROR(writeAtomic(specPath, launchSpecToJson(launch).dump(2), 0600));
  ProcessOptions po;
  po.timeout = std::chrono::seconds(30);
  auto r = runChecked(runner_, {options_.podBinary, "start", specPath}, po);
  if (!r.isOk()) return r.status().withContext("starting pod " + spec.name);
  return Status::ok();
}

StatusOr<PodStatus> LocalRuntime::podStatus(const std::string& cluster, const std::string& pod) {
  PodStatus st;
  std::string dir = podDir(cluster, pod);
  st.exists = fs::exists(dir + "/" + kPodSpecFile);
  if (!st.exists) return st;
  st.running = podPid(cluster, pod) > 0;
  if (!st.running) {
    st.message = "pod is not running";
    return st;
  }
  if (auto spec = readWhole(dir + "/" + kPodSpecFile); spec.isOk()) {
    auto j = nlohmann::json::parse(*spec, nullptr, false);
    if (j.is_object()) st.generation = j.value("generation", 0);
  }
  auto text = readWhole(dir + "/" + kPodStatusFile);
  if (!text.isOk()) {
    st.message = "starting";
    return st;
  }
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return st;
  st.ready = j.value("ready", false);
  st.message = j.value("message", "");
  return st;
}

StatusOr<std::vector<std::string>> LocalRuntime::listPods(const std::string& cluster) {
  std::vector<std::string> out;
  std::error_code ec;
  std::string dir = clusterDir(cluster) + "/pods";
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename());
  std::sort(out.begin(), out.end());
  return out;
}

Status LocalRuntime::stopPod(const std::string& cluster, const std::string& pod) {
  std::string dir = podDir(cluster, pod);
  std::string address;
  if (auto spec = readWhole(dir + "/" + kPodSpecFile); spec.isOk()) {
    auto j = nlohmann::json::parse(*spec, nullptr, false);
    if (!j.is_discarded()) address = j.value("address", "");
  }
  int pid = podPid(cluster, pod);
  if (pid > 0) {
    kill(pid, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(8);
    while (podPid(cluster, pod) > 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (podPid(cluster, pod) > 0) {
      kill(pid, SIGKILL);
      while (podPid(cluster, pod) > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  auto id = networkKey(cluster);
  if (id.isOk()) RETURN_IF_ERROR(removePodNetwork(cluster, pod, *id, address));
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) return internalError("cannot remove " + dir + ": " + ec.message());
  return Status::ok();
}

StatusOr<ProcessResult> LocalRuntime::exec(const std::string& cluster, const std::string& pod,
                                           const std::vector<std::string>& argv,
                                           const ProcessOptions& options) {
  int pid = podPid(cluster, pod);
  if (pid <= 0) return unavailable("pod " + pod + " of cluster \"" + cluster + "\" is not running");
  std::vector<std::string> cmd = {"nsenter", "-t", std::to_string(pid), "-n", "-m", "-u", "-i",
                                  "-p", "-r", "-w", "--", "env", "-i",
                                  "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                                  "HOME=/root", "LANG=C.UTF-8", "USER=root"};
  for (const auto& [k, v] : options.env) cmd.push_back(k + "=" + v);
  cmd.insert(cmd.end(), argv.begin(), argv.end());
  ProcessOptions po = options;
  po.env.clear();
  return runner_.run(cmd, po);
}

// The pid and readiness of one daemon, from the pod's status.json.
std::pair<int, bool> LocalRuntime::daemonState(const std::string& cluster, const std::string& pod,
                                               const std::string& daemon) const {
  auto text = readWhole(podDir(cluster, pod) + "/" + kPodStatusFile);
  if (!text.isOk()) return {0, false};
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("daemons") || !j["daemons"].is_array()) return {0, false};
  for (const auto& d : j["daemons"])
    if (d.is_object() && d.value("name", "") == daemon)
      return {d.value("pid", 0), d.value("ready", false)};
  return {0, false};
}

Status LocalRuntime::restartDaemon(const std::string& cluster, const std::string& pod,
                                   const std::string& daemon, std::chrono::milliseconds timeout) {
  int pid = podPid(cluster, pod);
  if (pid <= 0) return unavailable("pod " + pod + " of cluster \"" + cluster + "\" is not running");
  int oldPid = daemonState(cluster, pod, daemon).first;
  RETURN_IF_ERROR(writeAtomic(podDir(cluster, pod) + "/" + kPodRestartFile, daemon + "\n", 0600));
  if (kill(pid, SIGUSR1) != 0) return unavailable("cannot signal pod " + pod);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto [newPid, ready] = daemonState(cluster, pod, daemon);
    if (newPid > 0 && newPid != oldPid && ready) return Status::ok();
    if (podPid(cluster, pod) <= 0) return unavailable("pod " + pod + " stopped while restarting " + daemon);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return unavailable(daemon + " in pod " + pod + " was not ready again within " +
                     std::to_string(timeout.count()) + " ms after a restart");
}

Status LocalRuntime::updateMounts(const PodSpec& desired) {
  int pid = podPid(desired.cluster, desired.name);
  if (pid <= 0)
    return unavailable("pod " + desired.name + " of cluster \"" + desired.cluster + "\" is not running");
  std::string specPath = podDir(desired.cluster, desired.name) + "/" + kPodSpecFile;
  ASSIGN_OR_RETURN(std::string text, readWhole(specPath));
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return internalError("cannot parse " + specPath);
  ASSIGN_OR_RETURN(LaunchSpec launch, launchSpecFromJson(j));
  std::vector<Mount> want = desired.mounts;
  for (auto& m : want)
    if (!m.source.empty() && m.source[0] != '/') m.source = clusterDir(desired.cluster) + "/" + m.source;
  auto find = [](const std::vector<Mount>& in, const std::string& target) -> const Mount* {
    for (const auto& m : in)
      if (m.target == target) return &m;
    return nullptr;
  };
  // One shell in the pod's mount namespace does every change, in order:
  // removals first, so that a path can move from one volume to another.
  std::string script = "set -e\n";
  auto quote = [](const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  };
  bool changes = false;
  for (const auto& m : launch.pod.mounts) {
    const Mount* w = find(want, m.target);
    if (w && w->source == m.source && w->readOnly == m.readOnly) continue;
    // The mount point goes too when nothing else is in it (it was made in
    // the pod's own root for this mount).
    script += "umount -l " + quote(m.target) + " 2>/dev/null || true\nrmdir " + quote(m.target) +
              " 2>/dev/null || true\n";
    changes = true;
  }
  for (const auto& m : want) {
    const Mount* had = find(launch.pod.mounts, m.target);
    if (had && had->source == m.source && had->readOnly == m.readOnly) continue;
    script += "mkdir -p " + quote(m.target) + "\nmount --bind " + quote(m.source) + " " +
              quote(m.target) + "\n";
    if (m.readOnly) script += "mount -o remount,bind,ro " + quote(m.target) + "\n";
    changes = true;
  }
  if (!changes) return Status::ok();
  // -p as well: umount reads /proc/self/mountinfo, and the pod's /proc shows
  // only processes of its PID namespace.
  auto r = runChecked(runner_, {"nsenter", "-t", std::to_string(pid), "-m", "-p", "-r", "-w", "--",
                                "sh", "-c", script});
  if (!r.isOk()) return r.status().withContext("changing the mounts of pod " + desired.name);
  launch.pod.mounts = want;
  return writeAtomic(specPath, launchSpecToJson(launch).dump(2), 0600);
}

Status LocalRuntime::stopCluster(const ClusterNetwork& net) {
  auto pods = listPods(net.cluster);
  if (pods.isOk()) {
    // Stop pods concurrently: each waits for its daemons' grace period.
    std::vector<std::thread> threads;
    std::mutex mu;
    Status first;
    for (const auto& p : *pods) {
      threads.emplace_back([&, p] {
        Status s = stopPod(net.cluster, p);
        std::lock_guard<std::mutex> l(mu);
        if (!s.isOk() && first.isOk()) first = s;
      });
    }
    for (auto& t : threads) t.join();
    RETURN_IF_ERROR(first);
  }
  std::string id;
  if (auto k = networkKeyOf(net.subnet); k.isOk()) id = *k;
  if (auto known = networkKey(net.cluster); id.empty() && known.isOk()) id = *known;
  std::error_code ec;
  if (!id.empty()) {
    // Namespaces whose pod directory was already gone (a crash in between).
    std::string prefix = "crl-" + id + "-" + net.cluster + ".";
    if (fs::exists("/run/netns")) {
      for (const auto& e : fs::directory_iterator("/run/netns", ec)) {
        std::string n = e.path().filename();
        if (n.rfind(prefix, 0) == 0) (void)runner_.run({"ip", "netns", "del", n});
      }
    }
    if (fs::exists("/sys/class/net/" + bridgeName(id))) {
      auto r = runChecked(runner_, {"ip", "link", "del", bridgeName(id)});
      if (!r.isOk()) return r.status();
    }
  }
  return Status::ok();
}

Status LocalRuntime::destroyCluster(const ClusterNetwork& net) {
  RETURN_IF_ERROR(stopCluster(net));
  std::error_code ec;
  fs::remove_all(clusterDir(net.cluster), ec);
  if (ec) return internalError("cannot remove " + clusterDir(net.cluster) + ": " + ec.message());
  return Status::ok();
}

StatusOr<std::vector<std::string>> LocalRuntime::listClusters() {
  std::vector<std::string> out;
  std::error_code ec;
  std::string dir = options_.dataDir + "/clusters";
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace corral
