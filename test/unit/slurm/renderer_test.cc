#include "cluster/pods.h"
#include "slurm/renderer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

namespace corral {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::ElementsAre;
using ::testing::IsSupersetOf;

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

// The lines of `text` that start with `prefix`, in order.
std::vector<std::string> linesStartingWith(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& l : linesOf(text))
    if (l.rfind(prefix, 0) == 0) out.push_back(l);
  return out;
}

// The lines that are neither comments nor blank.
std::vector<std::string> contentLines(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& l : linesOf(text))
    if (!l.empty() && l[0] != '#') out.push_back(l);
  return out;
}

// A record as the reconciler builds it: nodes from `planNodes`, with ids.
ClusterRecord makeRecord(int gpuNodes, int gpusPerNode, int cpuNodes,
                         const std::string& subnet = "172.29.0.0/24") {
  ClusterRecord r;
  r.id = 7;
  r.spec.name = "demo";
  r.spec.gpuNodes = gpuNodes;
  r.spec.gpusPerNode = gpusPerNode;
  r.spec.cpuNodes = cpuNodes;
  r.spec.image = {"debian12-slurm22.05", std::string(64, 'a'), "22.05"};
  r.spec.sshKeys = {"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOne alice@laptop",
                    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQTwo bob@desk"};
  r.revision = 3;
  r.subnet = subnet;
  StatusOr<std::vector<NodeRecord>> nodes = planNodes(r.spec, subnet, {});
  EXPECT_TRUE(nodes.isOk()) << nodes.status().toString();
  if (nodes.isOk()) r.nodes = *nodes;
  for (size_t i = 0; i < r.nodes.size(); ++i)
    r.nodes[i].physicalId = "corral_node_" + std::to_string(100 + i);
  return r;
}

const PodSpec* findPod(const RenderedCluster& rc, const std::string& name) {
  for (const auto& p : rc.pods)
    if (p.name == name) return &p;
  return nullptr;
}

// --- planNodes -------------------------------------------------------------

TEST(PlanNodesTest, PlacesGpuThenCpuNodesAtFixedOffsets) {
  ClusterSpec spec;
  spec.name = "demo";
  spec.gpuNodes = 3;
  spec.cpuNodes = 2;
  StatusOr<std::vector<NodeRecord>> nodes = planNodes(spec, "172.29.5.0/24", {});
  ASSERT_TRUE(nodes.isOk()) << nodes.status().toString();
  ASSERT_EQ(nodes->size(), 5u);
  const std::vector<std::vector<std::string>> want = {
      {"slinky-0", "slinky", "172.29.5.10"},
      {"slinky-1", "slinky", "172.29.5.11"},
      {"slinky-2", "slinky", "172.29.5.12"},
      {"cpu-workers-0", "cpu-workers", "172.29.5.230"},
      {"cpu-workers-1", "cpu-workers", "172.29.5.231"},
  };
  for (size_t i = 0; i < want.size(); ++i) {
    const NodeRecord& n = (*nodes)[i];
    EXPECT_EQ(n.name, want[i][0]);
    EXPECT_EQ(n.group, want[i][1]);
    EXPECT_EQ(n.address, want[i][2]);
    EXPECT_EQ(n.physicalId, "") << n.name << " is new and must get its id from the caller";
  }
}

TEST(PlanNodesTest, KeepsPhysicalIdsOfExistingNodesByName) {
  ClusterSpec spec;
  spec.name = "demo";
  spec.gpuNodes = 3;
  spec.cpuNodes = 1;
  // slinky-1 and cpu-workers-0 exist; slinky-7 existed but the spec shrank.
  std::vector<NodeRecord> existing = {
      {"slinky-1", "slinky", "corral_node_41", "172.29.5.11"},
      {"cpu-workers-0", "cpu-workers", "corral_node_42", "172.29.5.230"},
      {"slinky-7", "slinky", "corral_node_43", "172.29.5.17"},
  };
  StatusOr<std::vector<NodeRecord>> nodes = planNodes(spec, "172.29.5.0/24", existing);
  ASSERT_TRUE(nodes.isOk()) << nodes.status().toString();
  std::vector<std::string> names, ids;
  for (const auto& n : *nodes) {
    names.push_back(n.name);
    ids.push_back(n.physicalId);
  }
  EXPECT_THAT(names, ElementsAre("slinky-0", "slinky-1", "slinky-2", "cpu-workers-0"));
  EXPECT_THAT(ids, ElementsAre("", "corral_node_41", "", "corral_node_42"));
}

TEST(PlanNodesTest, RejectsASubnetThatIsNotASlash24) {
  ClusterSpec spec;
  spec.gpuNodes = 1;
  StatusOr<std::vector<NodeRecord>> wide = planNodes(spec, "172.29.0.0/16", {});
  ASSERT_FALSE(wide.isOk());
  EXPECT_EQ(wide.status().code(), Code::kInvalidArgument);
  EXPECT_NE(wide.status().message().find("/24"), std::string::npos);
  EXPECT_FALSE(planNodes(spec, "not a subnet", {}).isOk());
  EXPECT_FALSE(planNodes(spec, "", {}).isOk());
}

// --- slurm.conf ------------------------------------------------------------

TEST(RenderSlurmConfTest, FourGpuNodes) {
  ClusterRecord r = makeRecord(4, 8, 0);
  std::string conf = renderSlurmConf(r);

  EXPECT_THAT(linesOf(conf), Contains("ClusterName=demo"));
  EXPECT_THAT(linesOf(conf), Contains("SlurmctldHost=controller(172.29.0.2)"));

  std::vector<std::string> nodeLines = linesStartingWith(conf, "NodeName=");
  ASSERT_EQ(nodeLines.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const std::string& l = nodeLines[i];
    std::string prefix = "NodeName=slinky-" + std::to_string(i) + " NodeAddr=172.29.0." +
                         std::to_string(10 + i) + " ";
    EXPECT_EQ(l.rfind(prefix, 0), 0u) << l;
    EXPECT_NE(l.find(" Gres=gpu:8 "), std::string::npos) << l;
    EXPECT_NE(l.find(" Feature=slinky "), std::string::npos) << l;
  }

  std::vector<std::string> partitions = linesStartingWith(conf, "PartitionName=");
  EXPECT_THAT(partitions,
              ElementsAre("PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
                          "PartitionName=slinky Nodes=slinky-[0-3] MaxTime=INFINITE State=UP"));
  EXPECT_EQ(conf.find("cpu-workers"), std::string::npos) << conf;
}

TEST(RenderSlurmConfTest, CpuNodesGetTheirOwnPartitionAndNoGres) {
  ClusterRecord r = makeRecord(4, 8, 2);
  std::string conf = renderSlurmConf(r);

  std::vector<std::string> cpuLines = linesStartingWith(conf, "NodeName=cpu-workers-");
  ASSERT_EQ(cpuLines.size(), 2u);
  EXPECT_EQ(cpuLines[0].rfind("NodeName=cpu-workers-0 NodeAddr=172.29.0.230 ", 0), 0u);
  EXPECT_EQ(cpuLines[1].rfind("NodeName=cpu-workers-1 NodeAddr=172.29.0.231 ", 0), 0u);
  for (const auto& l : cpuLines) {
    EXPECT_EQ(l.find("Gres="), std::string::npos) << l;
    EXPECT_NE(l.find(" Feature=cpu-workers "), std::string::npos) << l;
  }
  EXPECT_EQ(linesStartingWith(conf, "NodeName=slinky-").size(), 4u);

  std::vector<std::string> partitions = linesStartingWith(conf, "PartitionName=");
  ASSERT_EQ(partitions.size(), 3u);
  EXPECT_EQ(partitions[0], "PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP");
  EXPECT_EQ(partitions[1], "PartitionName=slinky Nodes=slinky-[0-3] MaxTime=INFINITE State=UP");
  EXPECT_EQ(partitions[2].rfind("PartitionName=cpu-workers Nodes=cpu-workers-[0-1] ", 0), 0u)
      << partitions[2];
}

TEST(RenderSlurmConfTest, UsesTheClusterSubnet) {
  ClusterRecord r = makeRecord(1, 8, 0, "172.29.9.0/24");
  std::string conf = renderSlurmConf(r);
  EXPECT_THAT(linesOf(conf), Contains("SlurmctldHost=controller(172.29.9.2)"));
  EXPECT_EQ(linesStartingWith(conf, "NodeName=slinky-0 NodeAddr=172.29.9.10 ").size(), 1u);
  EXPECT_EQ(conf.find("172.29.0."), std::string::npos);
}

// --- gres.conf -------------------------------------------------------------

TEST(RenderGresConfTest, EightGpusPerNode) {
  std::string gres = renderGresConf(makeRecord(4, 8, 2));
  EXPECT_THAT(
      contentLines(gres),
      ElementsAre("AutoDetect=off", "NodeName=slinky-[0-3] Name=gpu File=/dev/nvidia[0-7]"));
}

TEST(RenderGresConfTest, OneGpuPerNodeIsNotARange) {
  std::string gres = renderGresConf(makeRecord(2, 1, 0));
  EXPECT_THAT(contentLines(gres),
              ElementsAre("AutoDetect=off", "NodeName=slinky-[0-1] Name=gpu File=/dev/nvidia0"));
}

TEST(RenderGresConfTest, NoGpuNodesNoGresLine) {
  std::string gres = renderGresConf(makeRecord(0, 8, 2));
  EXPECT_THAT(contentLines(gres), ElementsAre("AutoDetect=off"));
}

// --- /etc/hosts ------------------------------------------------------------

TEST(RenderHostsTest, NamesEveryPod) {
  std::string hosts = renderHosts(makeRecord(2, 8, 1));
  EXPECT_THAT(linesOf(hosts),
              IsSupersetOf({"127.0.0.1\tlocalhost", "172.29.0.2\tcontroller", "172.29.0.3\tlogin",
                            "172.29.0.10\tslinky-0", "172.29.0.11\tslinky-1",
                            "172.29.0.230\tcpu-workers-0"}));
}

// --- renderCluster ---------------------------------------------------------

TEST(RenderClusterTest, IsDeterministic) {
  ClusterRecord r = makeRecord(4, 8, 2);
  StatusOr<RenderedCluster> a = renderCluster(r);
  StatusOr<RenderedCluster> b = renderCluster(r);
  ASSERT_TRUE(a.isOk()) << a.status().toString();
  ASSERT_TRUE(b.isOk()) << b.status().toString();
  EXPECT_EQ(a->files, b->files);
  ASSERT_EQ(a->pods.size(), b->pods.size());
  for (size_t i = 0; i < a->pods.size(); ++i) {
    EXPECT_EQ(a->pods[i].name, b->pods[i].name);
    EXPECT_EQ(a->pods[i].address, b->pods[i].address);
  }
  // A new revision with the same spec renders the same bytes (so it needs
  // no reconfigure); a change to the spec changes them.
  ClusterRecord next = r;
  next.revision = 4;
  StatusOr<RenderedCluster> c = renderCluster(next);
  ASSERT_TRUE(c.isOk());
  EXPECT_EQ(c->files, a->files);
  next.spec.slurmConf["MinJobAge"] = "60";
  StatusOr<RenderedCluster> d = renderCluster(next);
  ASSERT_TRUE(d.isOk());
  EXPECT_NE(d->files.at("etc/slurm/slurm.conf").content,
            a->files.at("etc/slurm/slurm.conf").content);
}

TEST(RenderSlurmConfTest, UserSettingsOverrideDefaultsOrAreAddedOnce) {
  ClusterRecord r = makeRecord(2, 8, 0);
  r.spec.slurmConf = {{"MinJobAge", "60"}, {"PriorityType", "priority/multifactor"}};
  std::string conf = renderSlurmConf(r);
  EXPECT_THAT(conf, HasSubstr("\nMinJobAge=60\n"));
  EXPECT_THAT(conf, Not(HasSubstr("MinJobAge=300")));
  EXPECT_THAT(conf, HasSubstr("# Set by the cluster's users (`corral config set`)\n"
                              "PriorityType=priority/multifactor\n"));
}

TEST(RenderSlurmConfTest, UserPartitionsPlatformPartitionsAndTheDefault) {
  ClusterRecord r = makeRecord(4, 8, 0);
  r.platformPartitions = {"llm"};
  r.spec.partitions = {{"short", "slinky-[0-1]", {{"MaxTime", "30"}, {"Default", "YES"}}},
                       {"gone", "", {}}};
  std::string conf = renderSlurmConf(r);
  EXPECT_THAT(conf, HasSubstr("PartitionName=all Nodes=ALL MaxTime=INFINITE State=UP\n"));
  EXPECT_THAT(conf, HasSubstr("PartitionName=llm Nodes=ALL MaxTime=INFINITE State=UP\n"));
  EXPECT_THAT(conf, HasSubstr(
                        "PartitionName=short Nodes=slinky-[0-1] Default=YES MaxTime=30 State=UP\n"));
  // A partition whose nodes a scale-down removed has no Nodes= (slurmctld
  // refuses an empty one).
  EXPECT_THAT(conf, HasSubstr("PartitionName=gone MaxTime=INFINITE State=UP\n"));
}

TEST(ControllerRestartKeyTest, ChangesWithNodesAndRestartOnlyParameters) {
  ClusterRecord r = makeRecord(2, 8, 0);
  std::string key = controllerRestartKey(r);
  ClusterRecord partition = r;
  partition.spec.partitions = {{"p", "slinky-0", {}}};
  partition.spec.slurmConf["MinJobAge"] = "60";
  EXPECT_EQ(controllerRestartKey(partition), key);
  ClusterRecord priority = r;
  priority.spec.slurmConf["PriorityType"] = "priority/multifactor";
  EXPECT_NE(controllerRestartKey(priority), key);
  EXPECT_NE(controllerRestartKey(makeRecord(3, 8, 0)), key);
}

TEST(RenderClusterTest, WritesTheExpectedFilesWithTheirModes) {
  StatusOr<RenderedCluster> rc = renderCluster(makeRecord(2, 8, 0));
  ASSERT_TRUE(rc.isOk()) << rc.status().toString();
  std::vector<std::string> paths;
  for (const auto& [path, file] : rc->files) paths.push_back(path);
  EXPECT_THAT(
      paths, IsSupersetOf({"etc/slurm/slurm.conf", "etc/slurm/gres.conf", "etc/slurm/slurmdbd.conf",
                           "etc/hosts", "etc/ssh/sshd_config", "etc/ssh/authorized_keys/root"}));
  // slurmdbd refuses to start with a configuration others can read.
  EXPECT_EQ(rc->files.at("etc/slurm/slurmdbd.conf").mode, 0600);
  EXPECT_EQ(rc->files.at("etc/slurm/slurm.conf").mode, 0644);
  EXPECT_EQ(rc->files.at("etc/slurm/slurm.conf").content, renderSlurmConf(makeRecord(2, 8, 0)));
  EXPECT_EQ(rc->files.at("etc/slurm/gres.conf").content, renderGresConf(makeRecord(2, 8, 0)));
}

TEST(RenderClusterTest, PodsAreControllerLoginThenWorkersInOrder) {
  StatusOr<RenderedCluster> rc = renderCluster(makeRecord(3, 4, 2));
  ASSERT_TRUE(rc.isOk()) << rc.status().toString();
  std::vector<std::string> names, roles, addresses;
  std::vector<int> gpus;
  for (const auto& p : rc->pods) {
    names.push_back(p.name);
    roles.push_back(p.role);
    addresses.push_back(p.address);
    gpus.push_back(p.gpus);
    EXPECT_EQ(p.cluster, "demo");
    EXPECT_EQ(p.prefixLength, 24);
  }
  EXPECT_THAT(names, ElementsAre("controller", "login", "slinky-0", "slinky-1", "slinky-2",
                                 "cpu-workers-0", "cpu-workers-1"));
  EXPECT_THAT(roles,
              ElementsAre("controller", "login", "worker", "worker", "worker", "worker", "worker"));
  EXPECT_THAT(addresses, ElementsAre("172.29.0.2", "172.29.0.3", "172.29.0.10", "172.29.0.11",
                                     "172.29.0.12", "172.29.0.230", "172.29.0.231"));
  EXPECT_THAT(gpus, ElementsAre(0, 0, 4, 4, 4, 0, 0));
}

TEST(RenderClusterTest, EachPodRunsItsRolesDaemons) {
  StatusOr<RenderedCluster> rc = renderCluster(makeRecord(1, 8, 0));
  ASSERT_TRUE(rc.isOk());
  auto daemonNames = [](const PodSpec* p) {
    std::vector<std::string> out;
    if (p)
      for (const auto& d : p->daemons) out.push_back(d.name);
    return out;
  };
  EXPECT_THAT(daemonNames(findPod(*rc, "controller")),
              ElementsAre("munged", "mariadb", "slurmdbd", "slurmctld"));
  EXPECT_THAT(daemonNames(findPod(*rc, "login")), ElementsAre("munged", "sshd"));
  EXPECT_THAT(daemonNames(findPod(*rc, "slinky-0")), ElementsAre("munged", "health", "slurmd"));
  const PodSpec* login = findPod(*rc, "login");
  ASSERT_NE(login, nullptr);
  EXPECT_EQ(login->daemons.back().ready.tcpPort, 22);
}

TEST(RenderClusterTest, EveryPodRunsOnTheClustersImage) {
  StatusOr<RenderedCluster> rc = renderCluster(makeRecord(2, 8, 1));
  ASSERT_TRUE(rc.isOk());
  ASSERT_EQ(rc->pods.size(), 5u);
  for (const auto& p : rc->pods) {
    EXPECT_EQ(p.image.name, "debian12-slurm22.05") << p.name;
    EXPECT_EQ(p.image.id, std::string(64, 'a')) << p.name;
  }
  // slurmctld's saved state outlives the pod: it is a writable mount over the
  // pod's root, which is erased whenever the pod is recreated.
  const PodSpec* controller = findPod(*rc, "controller");
  ASSERT_NE(controller, nullptr);
  auto state = std::find_if(controller->mounts.begin(), controller->mounts.end(),
                            [](const Mount& m) { return m.target == "/var/spool/slurmctld"; });
  ASSERT_NE(state, controller->mounts.end());
  EXPECT_EQ(state->source, "state/slurmctld");
  EXPECT_FALSE(state->readOnly);
}

TEST(RenderClusterTest, AuthorizedKeysHasOneSpecKeyPerLine) {
  ClusterRecord r = makeRecord(1, 8, 0);
  StatusOr<RenderedCluster> rc = renderCluster(r);
  ASSERT_TRUE(rc.isOk());
  const std::string& keys = rc->files.at("etc/ssh/authorized_keys/root").content;
  EXPECT_THAT(contentLines(keys), ElementsAre(r.spec.sshKeys[0], r.spec.sshKeys[1]));
  ASSERT_FALSE(keys.empty());
  EXPECT_EQ(keys.back(), '\n');

  r.spec.sshKeys.clear();
  rc = renderCluster(r);
  ASSERT_TRUE(rc.isOk());
  EXPECT_TRUE(contentLines(rc->files.at("etc/ssh/authorized_keys/root").content).empty());
}

TEST(RenderClusterTest, FailsOnABadSubnet) {
  ClusterRecord r = makeRecord(1, 8, 0);
  r.subnet = "nonsense";
  StatusOr<RenderedCluster> rc = renderCluster(r);
  ASSERT_FALSE(rc.isOk());
  EXPECT_EQ(rc.status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace corral

namespace corral {
namespace {

TEST(RenderContainersTest, PlugstackLoadsThePyxisPluginFromThePodBinDir) {
  ClusterRecord r = makeRecord(2, 4, 0);
  auto out = renderCluster(r);
  ASSERT_TRUE(out.isOk());
  const std::string& plug = out->files.at("etc/slurm/plugstack.conf").content;
  EXPECT_NE(plug.find("required /.corral-bin/spank_pyxis-22.05.so runtime_path=/.corral-bin/enroot"),
            std::string::npos)
      << plug;
  // Login and workers see the runtime's configuration; the controller does not need it.
  for (const auto& pod : out->pods) {
    bool has = false;
    for (const auto& m : pod.mounts) has |= m.target == "/etc/enroot";
    EXPECT_EQ(has, pod.role != "controller") << pod.name;
  }
}

TEST(RenderContainersTest, EnrootConfFollowsTheClustersContainerSettings) {
  ClusterRecord r = makeRecord(1, 1, 0);
  std::string plain = renderEnrootConf(r);
  EXPECT_NE(plain.find("ENROOT_CACHE_PATH /var/tmp/enroot-cache-user-$(id -u)"), std::string::npos);
  EXPECT_EQ(plain.find("CORRAL_HTTP_REGISTRIES"), std::string::npos);
  r.spec.containers = {true, "/shared/enroot-cache", {"10.9.9.9:5000"}};
  std::string conf = renderEnrootConf(r);
  EXPECT_NE(conf.find("ENROOT_CACHE_PATH /shared/enroot-cache/user-$(id -u)"), std::string::npos);
  EXPECT_NE(conf.find("CORRAL_HTTP_REGISTRIES registry:5000,10.9.9.9:5000"), std::string::npos)
      << conf;
}

TEST(RenderContainersTest, RegistryPodOnlyWhenAskedFor) {
  ClusterRecord r = makeRecord(1, 1, 0);
  auto out = renderCluster(r);
  ASSERT_TRUE(out.isOk());
  for (const auto& pod : out->pods) EXPECT_NE(pod.role, "registry");
  EXPECT_EQ(renderHosts(r).find("registry"), std::string::npos);
  r.spec.containers.registry = true;
  out = renderCluster(r);
  ASSERT_TRUE(out.isOk());
  const PodSpec* reg = nullptr;
  for (const auto& pod : out->pods)
    if (pod.role == "registry") reg = &pod;
  ASSERT_NE(reg, nullptr);
  EXPECT_EQ(reg->name, "registry");
  ASSERT_EQ(reg->daemons.size(), 1u);  // docker-registry alone: no munge, no Slurm
  EXPECT_EQ(reg->daemons[0].argv[0], "/.corral-bin/docker-registry");
  EXPECT_EQ(reg->daemons[0].ready.tcpPort, 5000);
  EXPECT_NE(renderHosts(r).find(reg->address + "\tregistry"), std::string::npos);
  EXPECT_NE(out->files.at("etc/docker-registry/config.yml").content.find("addr: 0.0.0.0:5000"),
            std::string::npos);
}

}  // namespace
}  // namespace corral
