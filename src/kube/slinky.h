#pragma once

// A corral cluster as Kubernetes objects for SchedMD's Slinky operator
// (`slinky.slurm.net/v1beta1`, release v1.1.0): the pure, deterministic
// mapping that issue 15's `KubernetesRuntime` applies. Same record and
// options in, byte-identical JSON out, so a change is exactly the objects
// whose JSON differs and a rollback is the previous revision's objects
// applied again. Nothing here talks to a server.
//
// What corral renders and what the operator makes of it (cluster `c`, one
// cluster per namespace: the operator names worker pods after the NodeSet,
// `slinky-0`, so two clusters cannot share a namespace):
//
// - Secrets `c-slurm-key` (`slurm.key`), `c-jwt-key` (`jwt_hs256.key`),
//   `c-login-ssh-host-keys` (the six `ssh_host_*_key[.pub]` the operator
//   mounts on the login pod), `c-sssd-conf` (`sssd.conf`, which the
//   LoginSet CRD requires) and `c-mariadb` (`password`). The host keys
//   Secret carries the name the operator would give its own and is
//   immutable: the operator then leaves it alone ("is immutable.
//   Skipping") instead of replacing the keys with random ones, so the
//   login node's host key is corral's and survives the pod.
// - ConfigMap `c-slurm-files` (gres.conf, plugstack.conf, cgroup.conf) and
//   `c-corral-conf` (`corral.conf`: the same text as the Controller's
//   `extraConf`), both in the Controller's `configFileRefs`, so both are
//   in /etc/slurm on the controller and slurmctld serves the first three
//   to every slurmd (configless). With a gres.conf and a cgroup.conf of
//   corral's the operator writes neither of its own.
// - PersistentVolumeClaims (ReadWriteMany) `c-shared` for /shared and
//   `c-volume-<volume>` per attached volume, mounted on the login pod and
//   every worker (read-only where the attachment is).
// - Service and StatefulSet `c-mariadb` (the accounting database, corral's
//   own: Slinky's Accounting expects one outside it).
// - Accounting `c` (the operator makes StatefulSet and Service
//   `c-accounting`), Controller `c` (StatefulSet and Service
//   `c-controller`, ConfigMap `c-config` with slurm.conf), NodeSet
//   `slinky` (pods and Slurm nodes `slinky-0…`, partition `slinky`),
//   NodeSet `cpu-workers` when the cluster has CPU nodes, LoginSet
//   `c-login` (Deployment, and the SSH Service `c-login`, port 22, which
//   the operator makes from `spec.service`: a Service of corral's own of
//   that name would be overwritten by the operator on every pass).
//
// Every object, and every pod template, is labelled
// `app.kubernetes.io/managed-by: corral` and `corral.dev/cluster: c`, so
// delete removes exactly what corral made (the operator's own objects go
// with their owners).
//
// slurm.conf: the operator writes the daemons' part (auth/slurm,
// configless, its NodeSet and partition lines) and appends `extraConf`.
// corral's `extraConf` is what corral's renderer (src/slurm/renderer.h)
// writes for the cluster beyond that: the defaults `corral config set` may
// override, the users' settings, corral's partitions and the users'
// partitions, cut from `renderSlurmConf`'s own text so the two runtimes
// cannot drift. Two edits, both because Slinky's nodes are dynamic (they
// register with `slurmd -Z`; there are no NodeName lines): the node
// groups' partitions (`slinky`, `cpu-workers`) are left to the NodeSets'
// `partition` (same names, the same options via `partition.config`), and
// `Nodes=ALL` becomes the NodeSets' names (`Nodes=slinky,cpu-workers`).
//
// Least privilege: every pod has `hostUsers: false` (its own user
// namespace: root in it is an unprivileged uid on the node), no host
// paths, no service account token, `seccompProfile: RuntimeDefault`.
// Slinky's slurmd container is privileged with BPF, NET_ADMIN, SYS_ADMIN
// and SYS_NICE so that slurmd can build cgroup v2 job containment and
// eBPF device filters; corral's cgroup.conf says `CgroupPlugin=disabled`
// (as its local pods do: processes tracked through /proc), so nothing
// needs that. No container is privileged (Kubernetes refuses privileged
// containers in a user-namespaced pod anyway). slurmd keeps one
// capability, SYS_ADMIN, which in a user-namespaced pod is the namespace's
// own, not the node's: `job_container/tmpfs`'s private /tmp per job and
// corral's container runtime (srun --container-image) make mount
// namespaces. slurmctld and slurmdbd run as the `slurm` user (uid 401, as
// Slinky sets) with every capability dropped; sshd on the login pod and
// MariaDB keep the runtime's default set and may not escalate.
//
// What cannot map (the runtime must say so, or work around it):
// - Least privilege does NOT reach the pods with Slinky v1.1.0 (seen
//   against the real operator, test/k8s/apply-check.cc): it merges our
//   template onto its own after pruning "empty" values, `false` included
//   (internal/utils/structutils/kube.go, cleanAndMarshal), so
//   `hostUsers: false` and slurmd's `privileged: false` are dropped and
//   worker pods come out privileged, in the node's user namespace. What
//   does reach them: the capability list (replaced), images, mounts,
//   `runAsUser`, `drop: [ALL]`, no host paths. The objects say what corral
//   asks for; enforcing it needs an operator that keeps `false`, or an
//   admission policy (Pod Security `baseline` refuses privileged pods).
// - A pod's mounts, image, hostname and resources are fixed when it is
//   created: attaching or detaching a volume, an image update or a
//   `node reboot` recreates the affected pods (NodeSet and LoginSet
//   templates change; the operator rolls them), where the local runtime
//   also recreates but corral chooses the order.
// - Node addresses: Kubernetes assigns pod IPs, so `NodeRecord.address`
//   and `ClusterRecord.subnet` mean nothing here; pods find each other by
//   DNS (the operator's headless Services).
// - The SSH host keys Secret is immutable: new keys mean deleting and
//   re-creating it (and the login pod).
// - Login users (`spec.users`): the LoginSet has no passwd of its own
//   (Slinky expects SSSD over a directory); not mapped yet.
// - Container jobs' cluster registry (`spec.containers.registry`) and the
//   per-node generations (`nodeGenerations`: a NodeSet recreates pods only
//   as a whole template changes): not mapped yet.
// - User partitions name nodes (`slinky-[0-1]`); Slinky's nodes are
//   dynamic and exist in Slurm only once registered, so slurmctld meets
//   such a partition's names before it meets the nodes.
// - Slurm must be recent enough for the operator's slurmrestd v0.0.44;
//   Debian 12's 22.05 and 13's 24.11 are not: the images for Kubernetes
//   are `debian-unstable-slurm26.05`'s (scripts/kube-images.sh).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "corral/spec.h"
#include "corral/status.h"
#include "kube/paths.h"

namespace corral::kube {

// The images each role runs (corral's own images, pushed to a registry the
// cluster's nodes can pull from). `logfile` is the small sidecar that tails
// Slurm's log files; the controller image also runs the operator's
// `reconfigure` sidecar (scontrol reconfigure).
struct SlinkyImages {
  std::string controller;  // slurmctld
  std::string slurmd;
  std::string login;
  std::string slurmdbd;
  std::string mariadb;
  std::string logfile;
  // The login pod's init container, which writes its sshd and sssd files
  // (LoginSet.spec.initconf; without it the operator cannot make the
  // login Deployment).
  std::string initconf;
};

// The login node's SSH host keys (OpenSSH's file formats), the six files
// Slinky's login pod mounts.
struct SshHostKeys {
  std::string ed25519, ed25519Pub;
  std::string rsa, rsaPub;
  std::string ecdsa, ecdsaPub;
};

// Secrets and sizes are passed in so that rendering is pure: the runtime
// makes the keys once per cluster and keeps them.
struct SlinkyOptions {
  std::string ns;  // The cluster's namespace (one cluster per namespace).
  SlinkyImages images;
  std::string slurmKey;         // auth/slurm's key (binary; 1024 random bytes).
  std::string jwtKey;           // auth/jwt's HS256 key (binary).
  SshHostKeys sshHostKeys;
  std::string mariadbPassword;  // slurmdbd's database password.
  // Storage: "" for the namespace's default class.
  std::string rwxStorageClass;    // /shared and the volumes (ReadWriteMany).
  std::string rwoStorageClass;    // slurmctld's state and MariaDB's data.
  std::string sharedSize = "100Gi";
  std::string volumeSize = "100Gi";   // Each attached volume's claim.
  std::string controllerStateSize = "4Gi";
  std::string mariadbSize = "8Gi";
  // The extended resource a GPU worker asks for per GPU (the device
  // plugin's, e.g. "nvidia.com/gpu"); "" asks for none (GPUs simulated).
  std::string gpuResource;
  std::string loginServiceType = "ClusterIP";  // ClusterIP | NodePort | LoadBalancer.
};

// The labels every object corral makes carries.
inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kManagedByValue = "corral";
inline constexpr const char* kClusterLabel = "corral.dev/cluster";

// The label selector of everything corral made for `cluster`.
std::string clusterSelector(const std::string& cluster);

// Every object of the cluster, in the order to apply them (what an object
// refers to comes before it). InvalidArgument, naming the field, when the
// record has no name or negative node counts, or an option the objects
// need is empty (namespace, an image, a key, the database password).
StatusOr<std::vector<nlohmann::json>> renderSlinkyObjects(const ClusterRecord& record,
                                                          const SlinkyOptions& options);

// What `renderSlinkyObjects` puts in the Controller's `extraConf` (and in
// ConfigMap `c-corral-conf`).
std::string renderSlinkyExtraConf(const ClusterRecord& record);

// The resource type of one of the objects above, by apiVersion and kind;
// InvalidArgument for a kind corral does not render.
StatusOr<ResourceType> resourceTypeOf(const nlohmann::json& object);

// Its object path (`kube/paths.h`), from its kind, namespace and name.
StatusOr<std::string> objectPathOf(const nlohmann::json& object);

}  // namespace corral::kube
