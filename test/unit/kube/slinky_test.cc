// `renderSlinkyObjects`: the objects, their order and names, what the
// operator reads from them, and that rendering is pure.

#include "kube/slinky.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "slurm/renderer.h"

namespace corral::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

ClusterRecord demo(int gpuNodes = 4, int cpuNodes = 2) {
  ClusterRecord r;
  r.spec.name = "demo";
  r.spec.image = {"debian13-slurm24.11", "abc", "24.11"};
  r.spec.gpuNodes = gpuNodes;
  r.spec.cpuNodes = cpuNodes;
  r.spec.sshKeys = {"ssh-ed25519 AAAAC3one alice", "ssh-ed25519 AAAAC3two bob"};
  r.spec.partitions = {{"short", "slinky-[0-1]", {{"MaxTime", "01:00:00"}}}};
  r.spec.slurmConf = {{"MinJobAge", "600"}, {"PriorityType", "priority/multifactor"}};
  r.spec.volumes = {{"data", "/data", "/srv/data", false}, {"imagenet", "/datasets/imagenet", "/srv/in", true}};
  return r;
}

SlinkyOptions options() {
  SlinkyOptions o;
  o.ns = "corral-demo";
  o.images = {"reg/ctl:1", "reg/slurmd:1", "reg/login:1", "reg/dbd:1", "reg/mariadb:1", "reg/log:1",
              "reg/initconf:1"};
  o.slurmKey = std::string("\x00\x01\xff key", 7);
  o.jwtKey = "jwt";
  o.sshHostKeys = {"ed", "ed.pub", "rsa", "rsa.pub", "ec", "ec.pub"};
  o.mariadbPassword = "pw";
  o.rwxStorageClass = "nfs";
  return o;
}

std::vector<Json> render(const ClusterRecord& r, const SlinkyOptions& o = options()) {
  auto objects = renderSlinkyObjects(r, o);
  EXPECT_TRUE(objects.isOk()) << objects.status().message();
  return objects.isOk() ? *objects : std::vector<Json>{};
}

std::vector<std::string> kindsAndNames(const std::vector<Json>& objects) {
  std::vector<std::string> out;
  for (const auto& o : objects)
    out.push_back(o["kind"].get<std::string>() + "/" + o["metadata"]["name"].get<std::string>());
  return out;
}

const Json& find(const std::vector<Json>& objects, const std::string& kind, const std::string& name) {
  for (const auto& o : objects)
    if (o["kind"] == kind && o["metadata"]["name"] == name) return o;
  static const Json kNone;
  ADD_FAILURE() << "no " << kind << "/" << name;
  return kNone;
}

TEST(SlinkyTest, RendersEveryObjectInApplyOrder) {
  EXPECT_THAT(kindsAndNames(render(demo())),
              ElementsAre("Secret/demo-slurm-key", "Secret/demo-jwt-key",
                          "Secret/demo-login-ssh-host-keys", "Secret/demo-sssd-conf",
                          "Secret/demo-mariadb", "ConfigMap/demo-slurm-files",
                          "ConfigMap/demo-corral-conf", "PersistentVolumeClaim/demo-shared",
                          "PersistentVolumeClaim/demo-volume-data",
                          "PersistentVolumeClaim/demo-volume-imagenet", "Service/demo-mariadb",
                          "StatefulSet/demo-mariadb", "Accounting/demo", "Controller/demo",
                          "NodeSet/slinky", "NodeSet/cpu-workers", "LoginSet/demo-login"));
}

TEST(SlinkyTest, NoCpuWorkersNodeSetWithoutCpuNodes) {
  auto names = kindsAndNames(render(demo(4, 0)));
  EXPECT_THAT(names, Not(::testing::Contains("NodeSet/cpu-workers")));
  EXPECT_THAT(names, ::testing::Contains("NodeSet/slinky"));
}

TEST(SlinkyTest, EveryObjectIsLabelledAndNamespaced) {
  for (const auto& o : render(demo())) {
    SCOPED_TRACE(o["kind"].get<std::string>() + "/" + o["metadata"]["name"].get<std::string>());
    EXPECT_EQ(o["metadata"]["labels"]["app.kubernetes.io/managed-by"], "corral");
    EXPECT_EQ(o["metadata"]["labels"]["corral.dev/cluster"], "demo");
    EXPECT_EQ(o["metadata"]["namespace"], "corral-demo");
    auto path = objectPathOf(o);
    ASSERT_TRUE(path.isOk()) << path.status().message();
    EXPECT_THAT(*path, HasSubstr("/namespaces/corral-demo/"));
  }
  EXPECT_EQ(clusterSelector("demo"), "app.kubernetes.io/managed-by=corral,corral.dev/cluster=demo");
}

TEST(SlinkyTest, NodeSetsHaveReplicasHostnamesAndPartitions) {
  auto objects = render(demo());
  const Json& gpu = find(objects, "NodeSet", "slinky");
  EXPECT_EQ(gpu["spec"]["replicas"], 4);
  EXPECT_EQ(gpu["spec"]["template"]["spec"]["hostname"], "slinky-");
  EXPECT_EQ(gpu["spec"]["partition"]["enabled"], true);
  EXPECT_EQ(gpu["spec"]["partition"]["config"], "MaxTime=INFINITE State=UP");
  EXPECT_EQ(gpu["spec"]["controllerRef"], (Json{{"name", "demo"}, {"namespace", "corral-demo"}}));
  EXPECT_EQ(gpu["spec"]["slurmd"]["image"], "reg/slurmd:1");
  EXPECT_EQ(gpu["spec"]["logfile"]["image"], "reg/log:1");
  const Json& cpu = find(objects, "NodeSet", "cpu-workers");
  EXPECT_EQ(cpu["spec"]["replicas"], 2);
  EXPECT_EQ(cpu["spec"]["template"]["spec"]["hostname"], "cpu-workers-");
}

TEST(SlinkyTest, GpuResourceOnlyWhenAskedFor) {
  auto objects = render(demo());
  EXPECT_FALSE(find(objects, "NodeSet", "slinky")["spec"]["slurmd"].contains("resources"));
  SlinkyOptions o = options();
  o.gpuResource = "nvidia.com/gpu";
  objects = render(demo(), o);
  EXPECT_EQ(find(objects, "NodeSet", "slinky")["spec"]["slurmd"]["resources"]["limits"]["nvidia.com/gpu"], "8");
  EXPECT_FALSE(find(objects, "NodeSet", "cpu-workers")["spec"]["slurmd"].contains("resources"));
}

TEST(SlinkyTest, ExtraConfCarriesCorralsSettingsAndPartitions) {
  ClusterRecord r = demo();
  auto objects = render(r);
  std::string extra = find(objects, "Controller", "demo")["spec"]["extraConf"];
  // corral's partition over every node names the NodeSets (dynamic nodes).
  EXPECT_THAT(extra, HasSubstr("\nPartitionName=all Nodes=slinky,cpu-workers Default=YES "
                               "MaxTime=INFINITE State=UP\n"));
  // The node groups' partitions are the NodeSets', not repeated here.
  EXPECT_THAT(extra, Not(HasSubstr("PartitionName=slinky ")));
  EXPECT_THAT(extra, Not(HasSubstr("PartitionName=cpu-workers ")));
  EXPECT_THAT(extra, Not(HasSubstr("NodeName=")));
  // The users' partition, exactly as corral's renderer writes it.
  const std::string userLine = "PartitionName=short Nodes=slinky-[0-1] MaxTime=01:00:00 State=UP\n";
  ClusterRecord local = r;
  local.nodes = {{"slinky-0", "slinky", "", "10.0.0.10"}, {"slinky-1", "slinky", "", "10.0.0.11"}};
  ASSERT_THAT(renderSlurmConf(local), HasSubstr(userLine));
  EXPECT_THAT(extra, HasSubstr(userLine));
  // Settings: corral's overridable defaults as overridden, then the users'.
  EXPECT_THAT(extra, HasSubstr("\nMinJobAge=600\n"));
  EXPECT_THAT(extra, HasSubstr("\nSchedulerType=sched/backfill\n"));
  EXPECT_THAT(extra, HasSubstr("\nPriorityType=priority/multifactor\n"));
  // Not corral's local daemon settings: the operator writes those.
  EXPECT_THAT(extra, Not(HasSubstr("AuthType")));
  EXPECT_THAT(extra, Not(HasSubstr("SlurmctldHost")));
  EXPECT_EQ(extra, renderSlinkyExtraConf(r));
  EXPECT_EQ(find(objects, "ConfigMap", "demo-corral-conf")["data"]["corral.conf"], extra);
}

TEST(SlinkyTest, ControllerRefersToItsSecretsConfigAndAccounting) {
  auto objects = render(demo());
  const Json& spec = find(objects, "Controller", "demo")["spec"];
  EXPECT_EQ(spec["clusterName"], "demo");
  EXPECT_EQ(spec["slurmKeyRef"], (Json{{"name", "demo-slurm-key"}, {"key", "slurm.key"}}));
  EXPECT_EQ(spec["jwtKeyRef"], (Json{{"name", "demo-jwt-key"}, {"key", "jwt_hs256.key"}}));
  EXPECT_EQ(spec["accountingRef"], (Json{{"name", "demo"}, {"namespace", "corral-demo"}}));
  EXPECT_EQ(spec["slurmctld"]["image"], "reg/ctl:1");
  EXPECT_EQ(spec["reconfigure"]["image"], "reg/ctl:1");
  EXPECT_EQ(spec["logfile"]["image"], "reg/log:1");
  EXPECT_EQ(spec["persistence"]["enabled"], true);
  EXPECT_EQ(spec["persistence"]["accessModes"], Json::array({"ReadWriteOnce"}));
  EXPECT_EQ(spec["persistence"]["resources"]["requests"]["storage"], "4Gi");
  EXPECT_EQ(spec["configFileRefs"].size(), 2u);
  const Json& files = find(objects, "ConfigMap", "demo-slurm-files")["data"];
  EXPECT_THAT(files["gres.conf"].get<std::string>(), HasSubstr("NodeName=slinky-[0-3] Name=gpu File=/dev/nvidia[0-7]"));
  EXPECT_THAT(files["plugstack.conf"].get<std::string>(), HasSubstr("spank_pyxis-24.11.so"));
  EXPECT_THAT(files["cgroup.conf"].get<std::string>(), HasSubstr("CgroupPlugin=disabled"));
}

TEST(SlinkyTest, SecretsCarryTheKeysBase64) {
  auto objects = render(demo());
  EXPECT_EQ(find(objects, "Secret", "demo-slurm-key")["data"]["slurm.key"], "AAH/IGtleQ==");
  EXPECT_EQ(find(objects, "Secret", "demo-jwt-key")["data"]["jwt_hs256.key"], "and0");
  const Json& hostKeys = find(objects, "Secret", "demo-login-ssh-host-keys");
  EXPECT_EQ(hostKeys["immutable"], true);
  EXPECT_EQ(hostKeys["data"].size(), 6u);
  EXPECT_EQ(hostKeys["data"]["ssh_host_ed25519_key.pub"], "ZWQucHVi");
  EXPECT_EQ(find(objects, "Secret", "demo-mariadb")["data"]["password"], "cHc=");
}

TEST(SlinkyTest, AccountingOverCorralsMariadb) {
  auto objects = render(demo());
  const Json& storage = find(objects, "Accounting", "demo")["spec"]["storageConfig"];
  EXPECT_EQ(storage["host"], "demo-mariadb");
  EXPECT_EQ(storage["port"], 3306);
  EXPECT_EQ(storage["passwordKeyRef"], (Json{{"name", "demo-mariadb"}, {"key", "password"}}));
  const Json& sts = find(objects, "StatefulSet", "demo-mariadb");
  EXPECT_EQ(sts["spec"]["serviceName"], "demo-mariadb");
  EXPECT_EQ(sts["spec"]["template"]["spec"]["containers"][0]["image"], "reg/mariadb:1");
  EXPECT_EQ(find(objects, "Service", "demo-mariadb")["spec"]["selector"],
            sts["spec"]["selector"]["matchLabels"]);
}

TEST(SlinkyTest, LoginSetHasAuthorizedKeysAndSshService) {
  auto objects = render(demo());
  const Json& spec = find(objects, "LoginSet", "demo-login")["spec"];
  EXPECT_EQ(spec["rootSshAuthorizedKeys"], "ssh-ed25519 AAAAC3one alice\nssh-ed25519 AAAAC3two bob\n");
  EXPECT_EQ(spec["service"]["port"], 22);
  EXPECT_EQ(spec["service"]["spec"]["type"], "ClusterIP");
  EXPECT_EQ(spec["sssdConfRef"], (Json{{"name", "demo-sssd-conf"}, {"key", "sssd.conf"}}));
  EXPECT_EQ(spec["login"]["image"], "reg/login:1");
  EXPECT_EQ(spec["initconf"]["image"], "reg/initconf:1") << "without it the operator makes no login Deployment";
}

TEST(SlinkyTest, ClaimsPerVolumeMountedOnLoginAndWorkers) {
  auto objects = render(demo());
  const Json& shared = find(objects, "PersistentVolumeClaim", "demo-shared")["spec"];
  EXPECT_EQ(shared["accessModes"], Json::array({"ReadWriteMany"}));
  EXPECT_EQ(shared["storageClassName"], "nfs");
  const Json& data = find(objects, "PersistentVolumeClaim", "demo-volume-data");
  EXPECT_EQ(data["spec"]["accessModes"], Json::array({"ReadWriteMany"}));
  EXPECT_EQ(data["metadata"]["labels"]["corral.dev/volume"], "data");
  for (const auto& [kind, name, container] :
       {std::tuple{"NodeSet", "slinky", "slurmd"}, std::tuple{"LoginSet", "demo-login", "login"}}) {
    SCOPED_TRACE(name);
    const Json& spec = find(objects, kind, name)["spec"];
    const Json& mounts = spec[container]["volumeMounts"];
    ASSERT_EQ(mounts.size(), 3u);
    EXPECT_EQ(mounts[0], (Json{{"name", "shared"}, {"mountPath", "/shared"}}));
    EXPECT_EQ(mounts[1], (Json{{"name", "volume-data"}, {"mountPath", "/data"}}));
    EXPECT_EQ(mounts[2], (Json{{"name", "volume-imagenet"}, {"mountPath", "/datasets/imagenet"}, {"readOnly", true}}));
    const Json& volumes = spec["template"]["spec"]["volumes"];
    ASSERT_EQ(volumes.size(), 3u);
    EXPECT_EQ(volumes[1]["persistentVolumeClaim"]["claimName"], "demo-volume-data");
  }
}

TEST(SlinkyTest, PodsGetLeastPrivilege) {
  auto objects = render(demo());
  for (const auto& o : objects) {
    if (!o.contains("spec") || !o["spec"].contains("template")) continue;
    SCOPED_TRACE(o["metadata"]["name"].get<std::string>());
    const Json& pod = o["spec"]["template"]["spec"];
    EXPECT_EQ(pod["hostUsers"], false);
    EXPECT_EQ(pod["automountServiceAccountToken"], false);
    for (const auto& v : pod.value("volumes", Json::array())) EXPECT_FALSE(v.contains("hostPath"));
  }
  const Json& slurmd = find(objects, "NodeSet", "slinky")["spec"]["slurmd"]["securityContext"];
  EXPECT_EQ(slurmd["privileged"], false);
  EXPECT_EQ(slurmd["capabilities"]["add"], Json::array({"SYS_ADMIN"}));
  const Json& ctld = find(objects, "Controller", "demo")["spec"]["slurmctld"]["securityContext"];
  EXPECT_EQ(ctld["runAsUser"], 401);
  EXPECT_EQ(ctld["capabilities"]["drop"], Json::array({"ALL"}));
  EXPECT_THAT(Json(objects).dump(), Not(HasSubstr("hostPath")));
  EXPECT_THAT(Json(objects).dump(), Not(HasSubstr("\"privileged\":true")));
}

TEST(SlinkyTest, Deterministic) {
  EXPECT_EQ(Json(render(demo())).dump(), Json(render(demo())).dump());
  // The record's observed part (addresses, ids) does not matter here.
  ClusterRecord other = demo();
  other.subnet = "172.29.3.0/24";
  other.nodes = {{"slinky-0", "slinky", "corral_node_1", "172.29.3.10"}};
  other.appliedRevision = 7;
  EXPECT_EQ(Json(render(demo())).dump(), Json(render(other)).dump());
}

TEST(SlinkyTest, RefusesMissingInputsByName) {
  SlinkyOptions o = options();
  o.ns.clear();
  auto r = renderSlinkyObjects(demo(), o);
  ASSERT_FALSE(r.isOk());
  EXPECT_THAT(r.status().message(), HasSubstr("options.ns"));
  o = options();
  o.sshHostKeys.rsaPub.clear();
  r = renderSlinkyObjects(demo(), o);
  ASSERT_FALSE(r.isOk());
  EXPECT_THAT(r.status().message(), HasSubstr("options.sshHostKeys.rsaPub"));
  ClusterRecord unnamed = demo();
  unnamed.spec.name.clear();
  EXPECT_FALSE(renderSlinkyObjects(unnamed, options()).isOk());
}

TEST(SlinkyTest, ResourceTypes) {
  auto t = resourceTypeOf({{"apiVersion", "slinky.slurm.net/v1beta1"}, {"kind", "NodeSet"}});
  ASSERT_TRUE(t.isOk());
  EXPECT_EQ(t->plural, "nodesets");
  EXPECT_FALSE(resourceTypeOf({{"apiVersion", "slinky.slurm.net/v1beta1"}, {"kind", "RestApi"}}).isOk());
  auto path = objectPathOf(find(render(demo()), "NodeSet", "slinky"));
  ASSERT_TRUE(path.isOk());
  EXPECT_EQ(*path, "/apis/slinky.slurm.net/v1beta1/namespaces/corral-demo/nodesets/slinky");
}

}  // namespace
}  // namespace corral::kube
