#include "slurm/renderer.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "common/ipv4.h"
#include "slurm/hostlist.h"
#include "slurm/partitions.h"
#include "slurm/release.h"
#include "slurm/slurm_params.h"

namespace corral {
namespace {

std::vector<std::string> namesOf(const std::vector<NodeRecord>& nodes, const std::string& group) {
  std::vector<std::string> out;
  for (const auto& n : nodes)
    if (group.empty() || n.group == group) out.push_back(n.name);
  return out;
}

// The revision is not in the header: a change that leaves a file's content
// alone must leave its bytes alone too, so that `config diff` shows only
// what changes and an unchanged slurm.conf needs no reconfigure.
std::string header(const ClusterRecord& r, const char* comment = "#") {
  std::ostringstream o;
  o << comment << " Rendered by corral for cluster \"" << r.spec.name << "\".\n"
    << comment << " Do not edit: corral regenerates this file on every change.\n";
  return o.str();
}

// slurm.conf parameters corral sets that users may override with
// `corral config set` (the rest of slurm.conf is corral's alone).
const std::vector<std::pair<std::string, std::string>>& overridableDefaults() {
  static const std::vector<std::pair<std::string, std::string>> defaults = {
      {"SchedulerType", "sched/backfill"},
      {"ReturnToService", "2"},
      {"MpiDefault", "none"},
      {"SlurmctldTimeout", "30"},
      {"SlurmdTimeout", "30"},
      {"MessageTimeout", "10"},
      {"InactiveLimit", "0"},
      {"KillWait", "5"},
      {"MinJobAge", "300"},
      // The seed: a job whose node vanished is not restarted for the user;
      // `sbatch --requeue` asks for it.
      {"JobRequeue", "0"},
  };
  return defaults;
}

std::string partitionLine(const std::string& name, const std::string& nodes,
                          const std::map<std::string, std::string>& options) {
  // slurmctld refuses an empty `Nodes=`; a partition without nodes omits it.
  std::string line = "PartitionName=" + name + (nodes.empty() ? "" : " Nodes=" + nodes);
  for (const auto& [k, v] : options) line += " " + k + "=" + v;
  return line + "\n";
}

// The nodes of `hostlist` that the cluster has, compressed; nodes a
// scale-down removed are dropped rather than left for slurmctld to reject.
std::string existingNodes(const std::string& hostlist, const std::vector<NodeRecord>& nodes) {
  auto names = expandHostlist(hostlist);
  if (!names.isOk()) return "";
  std::set<std::string> have;
  for (const auto& n : nodes) have.insert(n.name);
  std::vector<std::string> kept;
  for (const auto& n : *names)
    if (have.count(n)) kept.push_back(n);
  return compressHostlist(kept);
}

std::string renderSlurmdbdConf(const ClusterRecord& r) {
  std::ostringstream o;
  o << header(r)
    << "AuthType=auth/munge\n"
       "DbdHost=controller\n"
       "DbdPort="
    << kSlurmdbdPort
    << "\n"
       "SlurmUser=root\n"
       "LogFile=/var/log/slurm/slurmdbd.log\n"
       "PidFile=/run/slurmdbd.pid\n"
       "StorageType=accounting_storage/mysql\n"
       "# MariaDB runs in the controller pod; its socket is the pod's own\n"
       "# /run/mysqld/mysqld.sock and root authenticates by that socket, so no\n"
       "# password exists to leak.\n"
       "StorageHost=localhost\n"
       "StorageUser=root\n"
       "StorageLoc=slurm_acct_db\n";
  return o.str();
}

// Pods see no cgroup hierarchy of the host's (they are unprivileged and
// share the host's cgroups): processes are tracked through /proc.
std::string renderCgroupConf(const ClusterRecord& r) {
  std::string out = header(r) + "# Pods have no cgroup of their own to manage; processes are tracked\n"
                                "# through /proc (ProctrackType=proctrack/linuxproc).\n";
  // 24.05 and later can leave cgroups alone; 22.05 loads a cgroup plugin
  // whatever it is told, and would guess wrong from the pod's empty
  // /sys/fs/cgroup: cgroup/v1 is loaded, and nothing asks it for a cgroup.
  out += compareSlurmReleases(r.spec.image.slurmVersion, "24.05") >= 0 ? "CgroupPlugin=disabled\n"
                                                                        : "CgroupPlugin=cgroup/v1\n";
  return out;
}

// The files whose text is the same on every cluster: the header, then this.
struct FixedFile {
  const char* path;
  const char* text;
};

const FixedFile kFixedFiles[] = {
    {"etc/slurm/job_container.conf",
     "# Every job gets a private /tmp and /dev/shm that vanish with it.\n"
     "AutoBasePath=true\n"
     "BasePath=/var/spool/slurmd/job_containers\n"},
    {"etc/mysql/my.cnf",
     "[mysqld]\n"
     "datadir=/var/lib/mysql\n"
     "socket=/run/mysqld/mysqld.sock\n"
     "pid-file=/run/mysqld/mysqld.pid\n"
     "log-error=/var/log/mysql/error.log\n"
     "user=root\n"
     "skip-networking\n"
     "skip-name-resolve\n"
     "performance_schema=OFF\n"
     "innodb_buffer_pool_size=32M\n"
     "innodb_log_file_size=8M\n"
     "innodb_data_file_path=ibdata1:4M:autoextend\n"
     "innodb_lock_wait_timeout=900\n"
     "innodb_flush_log_at_trx_commit=2\n"
     "innodb_use_native_aio=0\n"
     "[client]\n"
     "socket=/run/mysqld/mysqld.sock\n"},
    {"etc/ssh/sshd_config",
     "Port 22\n"
     "ListenAddress 0.0.0.0\n"
     "HostKey /etc/ssh/ssh_host_ed25519_key\n"
     "PermitRootLogin prohibit-password\n"
     "PasswordAuthentication no\n"
     "KbdInteractiveAuthentication no\n"
     "PubkeyAuthentication yes\n"
     "AuthorizedKeysFile /etc/ssh/authorized_keys/%u\n"
     "UsePAM no\n"
     "UseDNS no\n"
     "PidFile /run/sshd.pid\n"
     "PrintMotd no\n"
     "AcceptEnv LANG LC_*\n"
     "Subsystem sftp /usr/lib/openssh/sftp-server\n"},
    {"etc/nsswitch.conf",
     "# Login users (corral user add) come from /var/lib/extrausers, the same on\n"
     "# every pod of the cluster.\n"
     "passwd:         files extrausers\n"
     "group:          files extrausers\n"
     "shadow:         files extrausers\n"
     "hosts:          files dns\n"
     "networks:       files\n"
     "protocols:      db files\n"
     "services:       db files\n"
     "ethers:         db files\n"
     "rpc:            db files\n"},
};

std::string renderAuthorizedKeys(const ClusterRecord& r) {
  std::string out = header(r);
  for (const auto& k : r.spec.sshKeys) out += k + "\n";
  return out;
}

// libnss-extrausers' files: one line per login user. No header: these are
// read by the C library, which takes no comments in passwd or shadow.
void renderExtraUsers(const ClusterRecord& r, RenderedFiles& files) {
  std::string passwd, group, shadow;
  for (const auto& u : r.spec.users) {
    std::string uid = std::to_string(u.uid);
    passwd += u.name + ":x:" + uid + ":" + uid + "::" + std::string(kSharedPath) + "/home/" +
              u.name + ":/bin/bash\n";
    group += u.name + ":x:" + uid + ":\n";
    // "*": no password, but not locked (sshd refuses locked accounts).
    shadow += u.name + ":*:19000:0:99999:7:::\n";
  }
  files["etc/extrausers/passwd"] = {passwd, 0644};
  files["etc/extrausers/group"] = {group, 0644};
  files["etc/extrausers/shadow"] = {shadow, 0600};
  for (const auto& u : r.spec.users) {
    std::string keys;
    for (const auto& k : u.sshKeys) keys += k + "\n";
    files["etc/ssh/authorized_keys/" + u.name] = {keys, 0644};
  }
}

}  // namespace

StatusOr<std::vector<NodeRecord>> planNodes(const ClusterSpec& spec, const std::string& subnet,
                                            const std::vector<NodeRecord>& existing) {
  ASSIGN_OR_RETURN(Cidr net, parseCidr(subnet));
  if (net.prefix != kClusterPrefix)
    return invalidArgument("cluster subnet " + subnet + " must be a /24");
  std::map<std::string, std::string> ids;
  for (const auto& n : existing) ids[n.name] = n.physicalId;
  std::vector<NodeRecord> out;
  for (int i = 0; i < spec.gpuNodes; ++i) {
    std::string name = std::string(kGpuGroup) + "-" + std::to_string(i);
    out.push_back({name, kGpuGroup, ids[name], hostAddress(net, kGpuNodeOffset + i)});
  }
  for (int i = 0; i < spec.cpuNodes; ++i) {
    std::string name = std::string(kCpuGroup) + "-" + std::to_string(i);
    out.push_back({name, kCpuGroup, ids[name], hostAddress(net, kCpuNodeOffset + i)});
  }
  return out;
}

namespace {

// What slurm.conf says that is corral's alone: the daemons, their plugins and
// where they keep their files.
std::string slurmConfFixedPart(const ClusterRecord& r) {
  std::ostringstream o;
  auto net = parseCidr(r.subnet);
  std::string controllerAddr = net.isOk() ? hostAddress(*net, kControllerOffset) : "";
  o << "ClusterName=" << r.spec.name << "\n"
    << "SlurmctldHost=controller(" << controllerAddr << ")\n"
    << "SlurmUser=root\n"
       "SlurmdUser=root\n"
       "AuthType=auth/munge\n"
       "CredType=cred/munge\n"
       "SlurmctldPort="
    << kSlurmctldPort << "\nSlurmdPort=" << kSlurmdPort
    << "\n"
       "StateSaveLocation=/var/spool/slurmctld\n"
       "SlurmdSpoolDir=/var/spool/slurmd\n"
       "SlurmctldPidFile=/run/slurmctld.pid\n"
       "SlurmdPidFile=/run/slurmd.pid\n"
       "SlurmctldLogFile=/var/log/slurm/slurmctld.log\n"
       "SlurmdLogFile=/var/log/slurm/slurmd.log\n"
       "# Pods share the host's cgroup hierarchy, so processes are tracked\n"
       "# through /proc rather than cgroups.\n"
       "ProctrackType=proctrack/linuxproc\n"
       "TaskPlugin=task/none\n"
       "# A private /tmp per job, removed when the job ends.\n"
       "JobContainerType=job_container/tmpfs\n"
       "PrologFlags=Contain\n"
       "SelectType=select/cons_tres\n"
       "SelectTypeParameters=CR_Core\n"
       "GresTypes=gpu\n"
       "SlurmdParameters=config_overrides\n"
       "MailProg=/bin/true\n"
       "SwitchType=switch/none\n"
       "AccountingStorageType=accounting_storage/slurmdbd\n"
       "AccountingStorageHost=controller\n"
       "AccountingStoragePort="
    << kSlurmdbdPort
    << "\n"
       "AccountingStorageTRES=gres/gpu\n"
       "JobAcctGatherType=jobacct_gather/linux\n"
       "JobCompType=jobcomp/none\n"
       "Waittime=0\n"
       "# No forwarding through slurmd trees: every slurmd is reached directly,\n"
       "# so a node added by scaling needs no other slurmd to know it.\n"
       "TreeWidth=65533\n";
  return o.str();
}

// The defaults users may override, as overridden, then the other
// parameters they set.
std::string slurmConfUserPart(const ClusterRecord& r) {
  std::ostringstream o;
  const auto& user = r.spec.slurmConf;
  o << "\n# Defaults that `corral config set` may override\n";
  for (const auto& [key, value] : overridableDefaults()) {
    auto it = user.find(key);
    o << key << "=" << (it == user.end() ? value : it->second) << "\n";
  }
  bool first = true;
  for (const auto& [key, value] : user) {
    bool isDefault = std::any_of(overridableDefaults().begin(), overridableDefaults().end(),
                                 [&](const auto& d) { return d.first == key; });
    if (isDefault) continue;
    if (first) o << "\n# Set by the cluster's users (`corral config set`)\n";
    first = false;
    o << key << "=" << value << "\n";
  }
  return o.str();
}

std::string slurmConfNodes(const ClusterRecord& r) {
  std::ostringstream o;
  o << "\n# Nodes\n";
  for (const auto& n : r.nodes) {
    bool gpu = n.group == kGpuGroup;
    o << "NodeName=" << n.name << " NodeAddr=" << n.address
      << " CPUs=" << (gpu ? kGpuNodeCpus : kCpuNodeCpus)
      << " RealMemory=" << (gpu ? kGpuNodeMemoryMb : kCpuNodeMemoryMb);
    if (gpu) o << " Gres=gpu:" << r.spec.gpusPerNode;
    o << " Feature=" << n.group << " State=UNKNOWN\n";
  }
  return o.str();
}

// corral's partitions (all, one per node group, the platform's), then the
// users'.
std::string slurmConfPartitions(const ClusterRecord& r) {
  std::ostringstream o;
  // corral's own, from the one list of them (src/slurm/partitions.h): `all`
  // is the default unless a user made one of theirs the default.
  bool userDefault = std::any_of(r.spec.partitions.begin(), r.spec.partitions.end(),
                                 [](const auto& p) { return isDefaultPartition(p); });
  std::vector<std::string> names;
  for (const auto& n : r.nodes) names.push_back(n.name);
  o << "\n# Partitions managed by corral\n";
  for (const auto& v : managedPartitions(names, r.platformPartitions, userDefault)) {
    o << "PartitionName=" << v.name << " Nodes=" << v.nodes << (v.isDefault ? " Default=YES" : "");
    for (const auto& [key, value] : v.options) o << " " << key << "=" << value;
    o << " State=UP\n";
  }
  if (!r.spec.partitions.empty()) o << "\n# Partitions of the cluster's users\n";
  for (const auto& p : r.spec.partitions) {
    std::map<std::string, std::string> options = p.options;
    options.emplace("MaxTime", "INFINITE");
    options.emplace("State", "UP");
    o << partitionLine(p.name, existingNodes(p.nodes, r.nodes), options);
  }
  return o.str();
}

}  // namespace

std::string renderSlurmConf(const ClusterRecord& r) {
  return header(r) + slurmConfFixedPart(r) + slurmConfUserPart(r) + slurmConfNodes(r) +
         slurmConfPartitions(r);
}

std::string controllerRestartKey(const ClusterRecord& r) {
  std::vector<std::string> names;
  for (const auto& n : r.nodes) names.push_back(n.name);
  std::string key = "nodes=" + compressHostlist(names);
  for (const auto& [k, v] : r.spec.slurmConf)
    if (slurmConfNeedsRestart(k)) key += ";" + k + "=" + v;
  return key;
}

std::string renderGresConf(const ClusterRecord& r) {
  std::string out = header(r) + "AutoDetect=off\n";
  auto gpuNodes = namesOf(r.nodes, kGpuGroup);
  if (!gpuNodes.empty() && r.spec.gpusPerNode > 0) {
    std::string files = r.spec.gpusPerNode == 1
                            ? "/dev/nvidia0"
                            : "/dev/nvidia[0-" + std::to_string(r.spec.gpusPerNode - 1) + "]";
    out += "NodeName=" + compressHostlist(gpuNodes) + " Name=gpu File=" + files + "\n";
  }
  return out;
}

// Container jobs: the Pyxis-compatible plugin for srun/sbatch/salloc and
// slurmstepd, and the Enroot-compatible runtime it drives, both corral's own
// (src/spank, src/container) and on every pod at kPodBinDir.
std::string renderPlugstackConf(const ClusterRecord& r) {
  std::ostringstream o;
  o << header(r) << "required " << kPodBinDir << "/" << spankPluginFile(r.spec.image.slurmVersion)
    << " runtime_path=" << kPodBinDir
    << "/enroot remap_root=1 container_mount_home=0 container_writable=1\n";
  return o.str();
}

std::string renderEnrootConf(const ClusterRecord& r) {
  const ContainerSettings& c = r.spec.containers;
  std::ostringstream o;
  o << header(r)
    << "# Containers' filesystems: node-local, per user. The runtime path\n"
       "# (running containers) is not under /tmp, which each job has its own of.\n"
       "ENROOT_DATA_PATH /var/tmp/enroot-data-user-$(id -u)\n"
       "ENROOT_RUNTIME_PATH /var/tmp/enroot-runtime-user-$(id -u)\n";
  if (c.cachePath.empty()) {
    o << "# Pulled images: node-local (containers.cachePath shares them).\n"
         "ENROOT_CACHE_PATH /var/tmp/enroot-cache-user-$(id -u)\n";
  } else {
    o << "# Pulled images: shared by every node, so one import serves them all.\n"
         "ENROOT_CACHE_PATH "
      << c.cachePath << "/user-$(id -u)\n";
  }
  o << "ENROOT_MOUNT_HOME no\nENROOT_ROOTFS_WRITABLE yes\nENROOT_REMAP_ROOT no\n";
  std::vector<std::string> http = c.insecureRegistries;
  if (c.registry) http.insert(http.begin(), kClusterRegistry);
  if (!http.empty()) {
    o << "# Registries reached over plain http.\nCORRAL_HTTP_REGISTRIES ";
    for (size_t i = 0; i < http.size(); ++i) o << (i ? "," : "") << http[i];
    o << "\n";
  }
  return o.str();
}

std::string renderRegistryConfig(const ClusterRecord& r) {
  std::ostringstream o;
  o << header(r) << "version: 0.1\n"
    << "log:\n  level: warn\n"
    << "storage:\n  filesystem:\n    rootdirectory: /var/lib/docker-registry\n"
    << "  delete:\n    enabled: true\n"
    << "http:\n  addr: 0.0.0.0:" << kRegistryPort << "\n";
  return o.str();
}

std::string spankPluginFile(const std::string& slurmRelease) {
  return "spank_pyxis-" + slurmRelease + ".so";
}

std::string renderHosts(const ClusterRecord& r) {
  std::ostringstream o;
  auto net = parseCidr(r.subnet);
  o << header(r) << "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n";
  if (net.isOk()) {
    o << hostAddress(*net, kControllerOffset) << "\tcontroller\n"
      << hostAddress(*net, kLoginOffset) << "\tlogin\n";
    if (r.spec.containers.registry) o << hostAddress(*net, kRegistryOffset) << "\tregistry\n";
  }
  for (const auto& n : r.nodes) o << n.address << "\t" << n.name << "\n";
  return o.str();
}

StatusOr<RenderedFiles> renderFiles(const ClusterRecord& r) {
  // Every file below needs a valid subnet.
  RETURN_IF_ERROR(parseCidr(r.subnet).status());
  RenderedFiles files;
  files["etc/slurm/slurm.conf"] = {renderSlurmConf(r), 0644};
  files["etc/slurm/gres.conf"] = {renderGresConf(r), 0644};
  files["etc/slurm/cgroup.conf"] = {renderCgroupConf(r), 0644};
  files["etc/slurm/slurmdbd.conf"] = {renderSlurmdbdConf(r), 0600};
  files["etc/hosts"] = {renderHosts(r), 0644};
  files["etc/ssh/authorized_keys/root"] = {renderAuthorizedKeys(r), 0644};
  files["etc/slurm/plugstack.conf"] = {renderPlugstackConf(r), 0644};
  files["etc/enroot/enroot.conf"] = {renderEnrootConf(r), 0644};
  for (const FixedFile& f : kFixedFiles) files[f.path] = {header(r) + f.text, 0644};
  renderExtraUsers(r, files);
  files[std::string(kCandidateDir) + "/README"] = {
      "Candidate Slurm configuration of a change, tried by a throwaway slurmctld\n"
      "before it reaches the live controller. Written by corral.\n",
      0644};
  if (r.spec.containers.registry) {
    files["etc/docker-registry/config.yml"] = {renderRegistryConfig(r), 0644};
    files["registry/README"] = {"The cluster registry's storage. Written by corral.\n", 0644};
  }
  return files;
}

}  // namespace corral
