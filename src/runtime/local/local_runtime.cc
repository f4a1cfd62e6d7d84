#include "runtime/local/local_runtime.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <thread>

#include "common/beneath.h"
#include "common/files.h"
#include "common/ipv4.h"
#include "common/log.h"
#include "common/sha256.h"
#include "runtime/local/firewall.h"
#include "runtime/local/pod_root.h"
#include "runtime/local/pod_supervisor.h"
#include "slurm/release.h"
#include "slurm/renderer.h"

namespace fs = std::filesystem;

namespace corral {
namespace {

// What a pod may write for corrald to read is bounded: a pod's root can
// make any file as large as it likes.
constexpr size_t kMaxReportBytes = 1 << 20;

// corral's binaries that pods run, from the directory of corral-pod, and
// Debian's docker-registry (a static Go binary) for the cluster registry:
// the images need not carry it.
std::vector<std::string> podBinaries() {
  std::vector<std::string> names = {"corral-health", "enroot", "corral-imagectl"};
  for (const auto& release : supportedSlurmReleases()) names.push_back(spankPluginFile(release));
  return names;
}
constexpr const char* kRegistryBinary = "/usr/bin/docker-registry";

StatusOr<std::string> readWhole(const std::string& path) { return readFile(path); }

Status writeAtomic(const std::string& path, const std::string& content, int mode) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return internalError("cannot create " + fs::path(path).parent_path().string() + ": " +
                               ec.message());
  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
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

bool safeRelative(const std::string& path) {
  return !path.empty() && path[0] != '/' && path.find("..") == std::string::npos;
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

void killAndWait(int pid, const std::function<bool()>& alive) {
  kill(pid, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(8);
  while (alive() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (alive()) {
    kill(pid, SIGKILL);
    while (alive()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
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

std::string LocalRuntime::netDevicePath(const std::string& dev) const {
  return options_.netStateRoot + "/sys/class/net/" + dev;
}

std::string LocalRuntime::netnsPath(const std::string& ns) const {
  return options_.netStateRoot + "/run/netns/" + ns;
}

Status LocalRuntime::initialize() {
  RETURN_IF_ERROR(stageBinaries());
  return stopLegacyPods();
}

// corral's pod binaries, copied into a directory named by their content, so
// that a rebuilt corral never changes what running pods have mounted.
Status LocalRuntime::stageBinaries() {
  std::string src = fs::path(options_.podBinary).parent_path().string();
  std::vector<std::pair<std::string, std::string>> files;  // name -> source path
  for (const auto& n : podBinaries()) files.emplace_back(n, src + "/" + n);
  if (fs::exists(kRegistryBinary)) files.emplace_back("docker-registry", kRegistryBinary);
  std::string key;
  for (const auto& [name, path] : files) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) continue;
    key += name + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec) + ";";
  }
  binDir_ = options_.dataDir + "/pod-bin/" + sha256Hex(key).substr(0, 16);
  if (fs::exists(binDir_)) return Status::ok();
  std::string tmp = binDir_ + ".tmp";
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) return internalError("cannot create " + tmp + ": " + ec.message());
  for (const auto& [name, path] : files) {
    if (!fs::exists(path)) continue;
    fs::copy_file(path, tmp + "/" + name, fs::copy_options::overwrite_existing, ec);
    if (ec) return internalError("cannot copy " + path + " for the pods: " + ec.message());
    chmod((tmp + "/" + name).c_str(), 0755);
  }
  fs::rename(tmp, binDir_, ec);
  if (ec && !fs::exists(binDir_)) return internalError("cannot create " + binDir_ + ": " + ec.message());
  fs::remove_all(tmp, ec);
  return Status::ok();
}

// Pods started by a corral from before the sandbox (their pid file lay in
// the pod directory itself) run with the host's root: stop them, so that
// the health pass recreates them sandboxed.
Status LocalRuntime::stopLegacyPods() {
  std::error_code ec;
  for (const auto& cluster : fs::directory_iterator(options_.dataDir + "/clusters", ec)) {
    std::error_code ec2;
    for (const auto& pod : fs::directory_iterator(cluster.path() / "pods", ec2)) {
      std::string legacyPid = (pod.path() / "pid").string();
      if (!fs::exists(legacyPid)) continue;
      auto text = readWhole(legacyPid);
      int pid = text.isOk() ? std::atoi(text->c_str()) : 0;
      std::string spec = (pod.path() / kPodSpecFile).string();
      if (pid > 0 && isPodProcess(pid, spec)) {
        LOG_WARN("stopping pod " << pod.path().string() << " (started unsandboxed by an older corral)");
        killAndWait(pid, [&] { return isPodProcess(pid, spec); });
      }
      fs::remove(legacyPid, ec2);
    }
  }
  return Status::ok();
}

StatusOr<IdRange> LocalRuntime::idRange(const std::string& cluster) const {
  auto text = readWhole(clusterDir(cluster) + "/ids");
  if (!text.isOk()) return notFound("cluster \"" + cluster + "\" has no id range");
  long long base = std::atoll(text->c_str());
  if (base < kIdPoolStart || base >= static_cast<long long>(kIdPoolStart) + static_cast<long long>(kIdRanges) * kIdRangeSize)
    return internalError("cluster \"" + cluster + "\" has a malformed id range: " + *text);
  return IdRange{static_cast<uint32_t>(base), kIdRangeSize};
}

// A range is claimed by a symlink in the registry that names the cluster's
// directory; a claim whose directory is gone (a data directory removed by
// hand) is free again.
StatusOr<IdRange> LocalRuntime::claimIdRange(const std::string& cluster) {
  if (auto r = idRange(cluster); r.isOk()) return r;
  std::lock_guard<std::mutex> l(idMu_);
  std::error_code ec;
  fs::create_directories(options_.idRegistryDir, ec);
  if (ec) return internalError("cannot create " + options_.idRegistryDir + ": " + ec.message());
  std::string owner = fs::absolute(clusterDir(cluster)).string();
  for (uint32_t i = 0; i < kIdRanges; ++i) {
    std::string claim = options_.idRegistryDir + "/" + std::to_string(i);
    if (symlink(owner.c_str(), claim.c_str()) != 0) {
      if (errno != EEXIST) return internalError("cannot claim " + claim + ": " + std::strerror(errno));
      auto target = fs::read_symlink(claim, ec);
      if (ec || fs::exists(target)) continue;
      fs::remove(claim, ec);  // Stale: its cluster directory is gone.
      if (symlink(owner.c_str(), claim.c_str()) != 0) continue;
    }
    uint32_t base = kIdPoolStart + i * kIdRangeSize;
    RETURN_IF_ERROR(writeAtomic(clusterDir(cluster) + "/ids", std::to_string(base) + "\n", 0644));
    return IdRange{base, kIdRangeSize};
  }
  return unavailable("every one of the " + std::to_string(kIdRanges) + " id ranges is in use");
}

void LocalRuntime::releaseIdRange(const std::string& cluster) {
  auto r = idRange(cluster);
  if (!r.isOk()) return;
  std::string claim = options_.idRegistryDir + "/" + std::to_string((r->base - kIdPoolStart) / kIdRangeSize);
  std::error_code ec;
  auto target = fs::read_symlink(claim, ec);
  if (!ec && target == fs::absolute(clusterDir(cluster))) fs::remove(claim, ec);
}

Status LocalRuntime::ensureSecrets(const std::string& cluster) {
  std::string dir = clusterDir(cluster);
  std::error_code ec;
  // A munge key of the cluster's own and the login node's host key.
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
                                  "root@login." + cluster, "-f", hostKey});
    if (!r.isOk()) return r.status().withContext("generating the login node's host key");
  }
  return Status::ok();
}

Status LocalRuntime::ensureFirewall(const std::string& key, const std::string& subnet) {
  ClusterFirewall fw{key, bridgeName(key), options_.loginEgressInterface, ""};
  if (!fw.egressInterface.empty()) {
    ASSIGN_OR_RETURN(Cidr cidr, parseCidr(subnet));
    fw.loginAddress = hostAddress(cidr, kLoginOffset);
  }
  ProcessOptions po;
  po.input = renderFirewall(fw);
  auto r = runChecked(runner_, {"nft", "-f", "-"}, po);
  if (!r.isOk()) return r.status().withContext("isolating the cluster network (nftables)");
  if (!fw.egressInterface.empty()) {
    // Forwarding on the two interfaces egress crosses, and no others.
    for (const auto& dev : {fw.bridge, fw.egressInterface}) {
      std::string path = options_.netStateRoot + "/proc/sys/net/ipv4/conf/" + dev + "/forwarding";
      int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
      bool ok = fd >= 0 && write(fd, "1\n", 2) == 2;
      if (fd >= 0) close(fd);
      if (!ok) return internalError("cannot enable forwarding on " + dev + ": " + std::strerror(errno));
    }
  }
  return Status::ok();
}

// A cluster's subnet is recorded by its network key (the subnet's base in
// hex, which also names its bridge and namespaces) in its directory.
StatusOr<std::string> LocalRuntime::allocateNetwork(const std::string& cluster) {
  std::lock_guard<std::mutex> l(netMu_);
  auto subnetOfKey = [](const std::string& key) -> std::string {
    if (key.size() != 8) return "";
    uint32_t base = static_cast<uint32_t>(std::stoul(key, nullptr, 16));
    return Cidr{base, kClusterPrefix}.toString();
  };
  if (auto known = networkKey(cluster); known.isOk()) return subnetOfKey(*known);
  std::set<std::string> used;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(options_.dataDir + "/clusters", ec))
    if (auto k = readWhole((e.path() / "netkey").string()); k.isOk()) used.insert(subnetOfKey(*k));
  ASSIGN_OR_RETURN(Cidr pool, parseCidr(options_.subnetPool));
  for (uint64_t i = 0; i < pool.size() / 256; ++i) {
    ASSIGN_OR_RETURN(Cidr candidate, subnetAt(pool, kClusterPrefix, i));
    if (used.count(candidate.toString())) continue;
    RETURN_IF_ERROR(writeAtomic(clusterDir(cluster) + "/netkey", hex8(candidate.base), 0644));
    return candidate.toString();
  }
  return unavailable("every /24 of the subnet pool " + options_.subnetPool +
                     " is in use; delete a cluster or give corrald a larger --subnet-pool");
}

StatusOr<std::string> LocalRuntime::createVolume(const std::string& name) {
  if (!safeRelative(name) || name.find('/') != std::string::npos) return invalidArgument("bad volume name " + name);
  std::string dir = options_.dataDir + "/volumes/" + name;
  std::error_code ec;
  fs::create_directories(options_.dataDir + "/volumes", ec);
  if (mkdir(dir.c_str(), 01777) != 0) {
    if (errno == EEXIST)
      return conflict("a directory for volume \"" + name + "\" already exists at " + dir +
                      "; remove it or choose another name");
    return internalError("cannot create " + dir + ": " + std::strerror(errno));
  }
  // Like /tmp: every login user may write, nobody may remove others' files.
  if (chmod(dir.c_str(), 01777) != 0) return internalError("cannot set the mode of " + dir);
  return dir;
}

Status LocalRuntime::deleteVolume(const std::string& name) {
  if (!safeRelative(name) || name.find('/') != std::string::npos) return invalidArgument("bad volume name " + name);
  std::error_code ec;
  fs::remove_all(options_.dataDir + "/volumes/" + name, ec);
  if (ec) return internalError("cannot remove volume " + name + ": " + ec.message());
  return Status::ok();
}

Status LocalRuntime::prepareCluster(const ClusterNetwork& net) {
  std::string dir = clusterDir(net.cluster);
  std::error_code ec;
  for (const char* sub : {"/pods", "/state/slurmctld", "/shared", "/db"}) fs::create_directories(dir + sub, ec);
  if (ec) return internalError("cannot create " + dir + ": " + ec.message());
  ASSIGN_OR_RETURN(std::string key, networkKeyOf(net.subnet));
  RETURN_IF_ERROR(writeAtomic(dir + "/netkey", key, 0644));
  RETURN_IF_ERROR(claimIdRange(net.cluster).status());
  RETURN_IF_ERROR(ensureSecrets(net.cluster));

  // The cluster network: a bridge holding the subnet's first address, so the
  // host reaches the login node, and the firewall that keeps pods off the
  // host's services and other networks.
  ASSIGN_OR_RETURN(Cidr cidr, parseCidr(net.subnet));
  std::string br = bridgeName(key);
  if (!fs::exists(netDevicePath(br))) {
    ProcessOptions po;
    po.input = "link add " + br + " type bridge\n" + "addr add " +
               hostAddress(cidr, 1) + "/" + std::to_string(cidr.prefix) + " dev " + br +
               "\nlink set " + br + " up\n";
    auto r = runChecked(runner_, {"ip", "-batch", "-"}, po);
    if (!r.isOk()) return r.status().withContext("creating bridge " + br);
  }
  return ensureFirewall(key, net.subnet);
}

Status LocalRuntime::writeFiles(const std::string& cluster, const RenderedFiles& files) {
  for (const auto& [rel, file] : files) {
    if (!safeRelative(rel)) return invalidArgument("bad rendered file path " + rel);
    RETURN_IF_ERROR(writeAtomic(clusterDir(cluster) + "/" + rel, file.content, file.mode));
  }
  return Status::ok();
}

Status LocalRuntime::appendKernelLog(const std::string& cluster, const std::string& pod,
                                     const std::string& line) {
  return appendFileBeneath(podDir(cluster, pod) + "/" + kPodAgentDir, "kmsg", line + "\n");
}

StatusOr<std::string> LocalRuntime::healthReport(const std::string& cluster, const std::string& pod) {
  return readFileBeneath(podDir(cluster, pod) + "/" + kPodAgentDir, "health.json", kMaxReportBytes);
}

StatusOr<std::string> LocalRuntime::podLogTail(const std::string& cluster, const std::string& pod,
                                               const std::string& path, size_t maxBytes) {
  if (path.empty()) return readFileBeneath(podDir(cluster, pod), kPodLogFile, maxBytes);
  if (path[0] != '/') return invalidArgument("a pod's log path is absolute: " + path);
  // What the pod wrote is in its writable layer, also after it stopped.
  return readFileBeneath(podDir(cluster, pod) + "/" + kPodUpperDir, path, maxBytes);
}

Status LocalRuntime::prepareSharedDirectory(const std::string& cluster, const std::string& path,
                                            int uid, int gid, int mode) {
  if (!safeRelative(path)) return invalidArgument("bad shared directory path " + path);
  return prepareDirectoryBeneath(clusterDir(cluster) + "/shared", path, uid, gid, mode);
}

StatusOr<std::string> LocalRuntime::loginHostKey(const std::string& cluster) {
  return readWhole(clusterDir(cluster) + "/etc/ssh/ssh_host_ed25519_key.pub");
}

StatusOr<std::string> LocalRuntime::readFile(const std::string& cluster, const std::string& path) {
  if (!safeRelative(path)) return invalidArgument("bad path " + path);
  return readWhole(clusterDir(cluster) + "/" + path);
}

Status LocalRuntime::ensurePodNetwork(const PodSpec& spec, const std::string& id) {
  std::string ns = netnsName(id, spec.cluster, spec.name);
  std::string hostIf = vethName(id, spec.address, true);
  std::string podIf = vethName(id, spec.address, false);
  if (!fs::exists(netnsPath(ns))) {
    auto r = runChecked(runner_, {"ip", "netns", "add", ns});
    if (!r.isOk()) return r.status().withContext("creating network namespace " + ns);
  }
  // A crash between creating the veth pair and configuring its pod end
  // leaves a host end without a working eth0 inside: start that over.
  if (fs::exists(netDevicePath(hostIf))) {
    auto probe = runner_.run({"ip", "-n", ns, "-o", "addr", "show", "dev", "eth0"});
    if (!probe.isOk() || probe->exitCode != 0 || probe->out.find(spec.address + "/") == std::string::npos)
      (void)runner_.run({"ip", "link", "del", hostIf});
  }
  if (!fs::exists(netDevicePath(hostIf))) {
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
    // Only the login pod has a way out, and only when the operator gave one.
    if (spec.role == "login" && !options_.loginEgressInterface.empty()) {
      ASSIGN_OR_RETURN(uint32_t ip, parseIpv4(spec.address));
      uint32_t mask = spec.prefixLength == 0 ? 0 : ~uint32_t{0} << (32 - spec.prefixLength);
      pi.input += "route add default via " + hostAddress(Cidr{ip & mask, spec.prefixLength}, 1) + "\n";
    }
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
    if (fs::exists(netDevicePath(hostIf)))
      (void)runner_.run({"ip", "link", "del", hostIf});
  }
  if (fs::exists(netnsPath(ns))) {
    auto r = runChecked(runner_, {"ip", "netns", "del", ns});
    if (!r.isOk()) return r.status();
  }
  return Status::ok();
}

int LocalRuntime::podPid(const std::string& cluster, const std::string& pod) const {
  std::string dir = podDir(cluster, pod);
  auto text = readWhole(dir + "/" + kPodStateDir + "/" + kPodPidFile);
  if (!text.isOk()) return 0;
  int pid = std::atoi(text->c_str());
  if (pid <= 0) return 0;
  return isPodProcess(pid, dir + "/" + kPodSpecFile) ? pid : 0;
}

std::vector<Mount> LocalRuntime::runtimeMounts(const std::string& cluster, const std::string& pod) const {
  return {{binDir_, kPodBinDir, true}, {podDir(cluster, pod) + "/" + kPodAgentDir, kPodAgentMount, false}};
}

// The host directory of a pod's scratch directory `target`.
static std::string scratchSource(const std::string& podDir, const std::string& target) {
  std::string flat = target;
  std::replace(flat.begin(), flat.end(), '/', '_');
  return podDir + "/scratch/" + flat;
}

std::vector<Mount> LocalRuntime::absoluteMounts(const PodSpec& spec) const {
  std::vector<Mount> out = runtimeMounts(spec.cluster, spec.name);
  for (const auto& d : spec.scratchDirs) out.push_back({scratchSource(podDir(spec.cluster, spec.name), d), d, false});
  for (auto m : spec.mounts) {
    if (!m.source.empty() && m.source[0] != '/') m.source = clusterDir(spec.cluster) + "/" + m.source;
    out.push_back(m);
  }
  return out;
}

Status LocalRuntime::startPod(const PodSpec& spec) {
  if (podPid(spec.cluster, spec.name) > 0) return Status::ok();
  if (binDir_.empty()) return failedPrecondition("the local runtime is not initialised");
  if (!options_.imageRootfs) return failedPrecondition("the local runtime has no image catalog");
  std::string rootfs = options_.imageRootfs(spec.image);
  if (!fs::is_directory(rootfs))
    return failedPrecondition("image " + spec.image.name + " (" + spec.image.id.substr(0, 12) +
                              ") is not built on this host");
  ASSIGN_OR_RETURN(std::string id, networkKey(spec.cluster));
  ASSIGN_OR_RETURN(IdRange ids, idRange(spec.cluster));
  RETURN_IF_ERROR(ensurePodNetwork(spec, id));

  // A pod that is not running starts from a fresh writable layer: this is
  // what makes /root, /tmp and everything installed vanish when a pod is
  // recreated.
  std::string dir = podDir(spec.cluster, spec.name);
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir + "/" + kPodAgentDir, ec);
  if (ec) return internalError("cannot create " + dir + ": " + ec.message());
  // PID 1, as the pod's root, needs to search the pod directory (only).
  chmod(dir.c_str(), 0711);
  for (const auto& d : spec.scratchDirs) {
    std::string src = scratchSource(dir, d);
    fs::create_directories(src, ec);
    if (ec) return internalError("cannot create " + src + ": " + ec.message());
    chmod(src.c_str(), d == "/tmp" || d == "/var/tmp" ? 01777 : 0755);
  }

  LaunchSpec launch{spec, netnsPath(netnsName(id, spec.cluster, spec.name)), dir, rootfs, ids};
  launch.pod.mounts = absoluteMounts(spec);
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
    if (j.is_object()) {
      st.generation = j.value("generation", 0);
      st.rollGeneration = j.value("rollGeneration", 0);
      if (j.contains("image") && j["image"].is_object()) st.imageId = j["image"].value("id", "");
    }
  }
  auto text = readWhole(dir + "/" + kPodStateDir + "/" + kPodStatusFile);
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
  if (pid > 0) killAndWait(pid, [&] { return podPid(cluster, pod) > 0; });
  auto id = networkKey(cluster);
  if (id.isOk()) RETURN_IF_ERROR(removePodNetwork(cluster, pod, *id, address));
  std::error_code ec;
  // Every mount of the pod lived in namespaces that died with it, so this
  // removes files only (and never follows a link the pod made).
  fs::remove_all(dir, ec);
  if (ec) return internalError("cannot remove " + dir + ": " + ec.message());
  return Status::ok();
}

StatusOr<ProcessResult> LocalRuntime::exec(const std::string& cluster, const std::string& pod,
                                           const std::vector<std::string>& argv,
                                           const ProcessOptions& options) {
  int pid = podPid(cluster, pod);
  if (pid <= 0) return unavailable("pod " + pod + " of cluster \"" + cluster + "\" is not running");
  // -U: the command runs as the pod's root, with no privilege on the host;
  // it is inside every namespace of the pod before anything of the pod's
  // runs (nsenter itself is the host's).
  std::vector<std::string> cmd = {"nsenter", "-t", std::to_string(pid), "-U", "-n", "-m", "-u",
                                  "-i", "-p", "-C", "-r", "-w", "--", "env", "-i",
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
  auto text = readWhole(podDir(cluster, pod) + "/" + kPodStateDir + "/" + kPodStatusFile);
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
  // 0644: PID 1 reads it as the pod's root.
  RETURN_IF_ERROR(writeAtomic(podDir(cluster, pod) + "/" + kPodStateDir + "/" + kPodRestartFile,
                              daemon + "\n", 0644));
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
  std::vector<Mount> want = absoluteMounts(desired);
  auto find = [](const std::vector<Mount>& in, const std::string& target) -> const Mount* {
    for (const auto& m : in)
      if (m.target == target) return &m;
    return nullptr;
  };
  auto run = [&](std::vector<std::string> args) -> Status {
    args.insert(args.begin(), {options_.podBinary});
    return runChecked(runner_, args).status();
  };
  // Removals first, so that a path can move from one volume to another.
  bool changed = false;
  for (const auto& m : launch.pod.mounts) {
    const Mount* w = find(want, m.target);
    if (w && w->source == m.source && w->readOnly == m.readOnly) continue;
    RETURN_IF_ERROR(run({"umount", specPath, m.target})
                        .withContext("changing the mounts of pod " + desired.name));
    changed = true;
  }
  for (const auto& m : want) {
    const Mount* had = find(launch.pod.mounts, m.target);
    if (had && had->source == m.source && had->readOnly == m.readOnly) continue;
    RETURN_IF_ERROR(run({"mount", specPath, m.source, m.target, m.readOnly ? "ro" : "rw"})
                        .withContext("changing the mounts of pod " + desired.name));
    changed = true;
  }
  if (!changed) return Status::ok();
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
    if (fs::exists(netnsPath(""))) {
      for (const auto& e : fs::directory_iterator(netnsPath(""), ec)) {
        std::string n = e.path().filename();
        if (n.rfind(prefix, 0) == 0) (void)runner_.run({"ip", "netns", "del", n});
      }
    }
    if (fs::exists(netDevicePath(bridgeName(id)))) {
      auto r = runChecked(runner_, {"ip", "link", "del", bridgeName(id)});
      if (!r.isOk()) return r.status();
    }
    ProcessOptions po;
    po.input = renderFirewallRemoval(id);
    RETURN_IF_ERROR(runChecked(runner_, {"nft", "-f", "-"}, po).status().withContext("removing the cluster's firewall"));
  }
  return Status::ok();
}

Status LocalRuntime::destroyCluster(const ClusterNetwork& net) {
  RETURN_IF_ERROR(stopCluster(net));
  releaseIdRange(net.cluster);
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
