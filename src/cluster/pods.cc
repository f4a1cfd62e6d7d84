#include "cluster/pods.h"

#include "common/ipv4.h"
#include "slurm/renderer.h"

namespace corral {
namespace {

DaemonSpec munged() {
  return {"munged",
          {"munged", "--foreground", "--key-file=/etc/munge/munge.key",
           "--seed-file=/run/munge/munged.seed", "--log-file=/var/log/munge/munged.log",
           "--pid-file=/run/munge/munged.pid"},
          {},
          {0, "/run/munge/munge.socket.2", std::chrono::seconds(10)},
          {}};
}

PodSpec basePod(const ClusterRecord& r, const std::string& name, const std::string& role,
                const std::string& address) {
  PodSpec p;
  p.cluster = r.spec.name;
  p.name = name;
  p.role = role;
  p.address = address;
  p.prefixLength = kClusterPrefix;
  p.image = r.spec.image;
  p.scratchDirs = {"/tmp", "/var/tmp"};
  p.mounts = {{"etc/slurm", "/etc/slurm", true},
              {"etc/hosts", "/etc/hosts", true},
              {"secrets/munge", "/etc/munge", true},
              {"etc/nsswitch.conf", "/etc/nsswitch.conf", true},
              {"etc/extrausers", "/var/lib/extrausers", true}};
  p.setupDirs = {"/run/munge", "/var/log/munge", "/var/log/slurm"};
  p.daemons.push_back(munged());
  return p;
}

// Every cluster has a shared filesystem of its own at /shared on the login
// node and every worker (the seed's SFS), so job scripts, sbatch output and
// environments are visible everywhere from the first minute. It lives as long
// as the cluster.
Mount sharedMount() { return {"shared", kSharedPath, false}; }

// The cluster's storage on a login or worker pod: /shared and every attached
// volume, at the same paths everywhere.
void addStorage(const ClusterRecord& r, PodSpec& p) {
  p.mounts.push_back(sharedMount());
  p.mounts.push_back({"etc/enroot", "/etc/enroot", true});
  for (const auto& v : r.spec.volumes) p.mounts.push_back({v.hostPath, v.path, v.readOnly});
}

PodSpec controllerPod(const ClusterRecord& r, const Cidr& net) {
  PodSpec controller = basePod(r, "controller", "controller", hostAddress(net, kControllerOffset));
  controller.generation = r.spec.controllerGeneration;
  controller.mounts.push_back({"state/slurmctld", "/var/spool/slurmctld", false});
  controller.mounts.push_back({"db", "/var/lib/mysql", false});
  controller.mounts.push_back({"etc/mysql", "/etc/mysql", true});
  // Where a change's slurm.conf is tried by a throwaway slurmctld before it
  // reaches the live one (see src/slurm/config_check.h).
  controller.mounts.push_back({kCandidateDir, kCandidateMountPoint, true});
  controller.setupDirs.insert(controller.setupDirs.end(), {"/run/mysqld", "/var/log/mysql"});
  // The accounting database starts from the image's template the first
  // time (a copy, not mariadb-install-db: 0.1 s instead of 3 s), inside the
  // pod, as its root, so its files are the pod's.
  controller.daemons.push_back({"mariadb",
                                {"/bin/sh", "-c",
                                 "[ -e /var/lib/mysql/.complete ] || { rm -rf /var/lib/mysql/* && "
                                 "cp -a --sparse=always /usr/share/corral/mysql-template/. /var/lib/mysql/; } && "
                                 "exec mariadbd --defaults-file=/etc/mysql/my.cnf"},
                                {},
                                {0, "/run/mysqld/mysqld.sock", std::chrono::seconds(60)},
                                {}});
  // The client library's own default socket differs by release (Debian
  // unstable's is /run/mariadbd/mysqld.sock) and slurmdbd reads no option
  // file: the environment names the socket my.cnf gives the server.
  controller.daemons.push_back({"slurmdbd",
                                {"slurmdbd", "-D"},
                                {{"MYSQL_UNIX_PORT", "/run/mysqld/mysqld.sock"}},
                                {kSlurmdbdPort, "", std::chrono::seconds(60)},
                                {}});
  controller.daemons.push_back(
      {"slurmctld", {"slurmctld", "-D"}, {}, {kSlurmctldPort, "", std::chrono::seconds(60)}, {}});
  return controller;
}

PodSpec loginPod(const ClusterRecord& r, const Cidr& net) {
  PodSpec login = basePod(r, "login", "login", hostAddress(net, kLoginOffset));
  login.generation = r.spec.loginGeneration;
  addStorage(r, login);
  login.mounts.push_back({"etc/ssh", "/etc/ssh", true});
  login.setupDirs.push_back("/run/sshd");
  login.daemons.push_back(
      {"sshd", {"/usr/sbin/sshd", "-D", "-e"}, {}, {22, "", std::chrono::seconds(10)}, {}});
  return login;
}

// Debian's docker-registry, for images built on the platform's side
// (`corral-imagectl push`) and pulled by the nodes as registry:5000/….
PodSpec registryPod(const ClusterRecord& r, const Cidr& net) {
  PodSpec reg = basePod(r, "registry", "registry", hostAddress(net, kRegistryOffset));
  // No Slurm here: no munge, no Slurm or login configuration.
  reg.daemons.clear();
  reg.mounts = {{"etc/hosts", "/etc/hosts", true}};
  reg.setupDirs.clear();
  reg.mounts.push_back({"etc/docker-registry", "/etc/docker/registry", true});
  reg.mounts.push_back({"registry", "/var/lib/docker-registry", false});
  // Debian's docker-registry (a static binary), among corral's own: the
  // cluster image need not carry it.
  reg.daemons.push_back({"registry",
                         {std::string(kPodBinDir) + "/docker-registry", "serve", "/etc/docker/registry/config.yml"},
                         {},
                         {kRegistryPort, "", std::chrono::seconds(30)},
                         {}});
  return reg;
}

PodSpec workerPod(const ClusterRecord& r, const Cidr& net, const NodeRecord& n) {
  PodSpec w = basePod(r, n.name, "worker", n.address);
  w.gpus = n.group == kGpuGroup ? r.spec.gpusPerNode : 0;
  auto gen = r.spec.nodeGenerations.find(n.name);
  w.generation = gen == r.spec.nodeGenerations.end() ? 0 : gen->second;
  w.rollGeneration = r.spec.workerGeneration;
  // Jobs' private /tmp and namespaces (job_container/tmpfs) on the node's
  // disk, emptied when the node is recreated.
  w.scratchDirs.push_back("/var/spool/slurmd");
  addStorage(r, w);
  // The node's health agent: GPU XIDs from the kernel log, slurmd's
  // liveness; drains the node on a hardware XID (src/health).
  w.daemons.push_back({"health", {"corral-health", "--node", n.name}, {}, {}, {}});
  // slurmd starts once slurmctld listens, so its first registration
  // succeeds and worker pods can be created while the controller starts.
  // Its steps' PMIx servers share job data by message (gds/hash), not by
  // gds/shmem2: a step's tasks have a private /dev/shm (job_container/tmpfs)
  // where shmem2's segments would not be found, and MPI_Init would fail.
  w.daemons.push_back({"slurmd",
                       {"slurmd", "-D"},
                       {{"PMIX_MCA_gds", "hash"}},
                       {kSlurmdPort, "", std::chrono::seconds(30)},
                       {hostAddress(net, kControllerOffset), kSlurmctldPort}});
  return w;
}

}  // namespace

StatusOr<std::vector<PodSpec>> buildPods(const ClusterRecord& r) {
  ASSIGN_OR_RETURN(Cidr net, parseCidr(r.subnet));
  std::vector<PodSpec> pods;
  pods.push_back(controllerPod(r, net));
  pods.push_back(loginPod(r, net));
  if (r.spec.containers.registry) pods.push_back(registryPod(r, net));
  for (const auto& n : r.nodes) pods.push_back(workerPod(r, net, n));
  return pods;
}

StatusOr<RenderedCluster> renderCluster(const ClusterRecord& record) {
  RenderedCluster out;
  ASSIGN_OR_RETURN(out.files, renderFiles(record));
  ASSIGN_OR_RETURN(out.pods, buildPods(record));
  return out;
}

}  // namespace corral
