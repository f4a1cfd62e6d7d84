// `KubernetesRuntime` against `FakeKubeApi` (objects in memory, watches that
// stream) and a scripted ssh-keygen: what it applies, the secrets it keeps,
// what it removes, and what it refuses. What the real API server and
// operator make of the objects is test/k8s's (apply-check.cc, cli-e2e.sh).

#include "runtime/kubernetes/kubernetes_runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>

#include "fakes/fake_kube_api.h"
#include "fakes/fake_process_runner.h"
#include "kube/paths.h"

namespace corral {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;
using namespace std::chrono_literals;
namespace res = kube::resources;

// Refuses NodeSets of more than 6 replicas, as an admission policy would.
class AdmittingApi : public kube::FakeKubeApi {
 public:
  StatusOr<Json> apply(const std::string& path, const Json& object) override {
    if (object.value("kind", "") == "NodeSet" &&
        object["spec"].value("replicas", 0) > 6)
      return invalidArgument("nodesets \"slinky\" is forbidden: at most 6 workers per NodeSet");
    return FakeKubeApi::apply(path, object);
  }
};

ClusterRecord record(const std::string& name, int gpuNodes, int cpuNodes = 0) {
  ClusterRecord r;
  r.spec.name = name;
  r.spec.gpuNodes = gpuNodes;
  r.spec.gpusPerNode = 8;
  r.spec.cpuNodes = cpuNodes;
  r.spec.image = {"debian-unstable-slurm26.05", std::string(64, 'c'), "26.05"};
  r.spec.sshKeys = {"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKey alice@laptop"};
  r.revision = 1;
  return r;
}

class KubernetesRuntimeTest : public ::testing::Test {
 protected:
  KubernetesRuntimeTest() {
    api_.setBlockingWatches(true);
    // ssh-keygen writes a key pair where -f says, as the real one does.
    runner_.on("ssh-keygen", [this](const std::vector<std::string>& argv, const ProcessOptions&) {
      std::string type, file;
      for (size_t i = 0; i + 1 < argv.size(); ++i) {
        if (argv[i] == "-t") type = argv[i + 1];
        if (argv[i] == "-f") file = argv[i + 1];
      }
      int n = ++keygens_;  // The three run at once.
      std::ofstream(file) << "PRIVATE " << type << " " << n << "\n";
      std::ofstream(file + ".pub") << "ssh-" << type << " AAAA" << type << "-" << n << " root@login\n";
      return ProcessResult{0, false, "", ""};
    });
  }
  ~KubernetesRuntimeTest() override { runtime_.reset(); }

  KubernetesRuntime& runtime(const std::string& nsTemplate = "corral-{cluster}",
                             bool keysAhead = false) {
    if (!runtime_) {
      KubernetesRuntimeOptions o;
      o.hostKeysAhead = keysAhead;
      o.namespaceTemplate = nsTemplate;
      o.imagePrefix = "registry.example:5000/corral";
      runtime_ = std::make_unique<KubernetesRuntime>(api_, runner_, o);
    }
    return *runtime_;
  }

  std::optional<Json> object(const kube::ResourceType& type, const std::string& ns,
                             const std::string& name) {
    return api_.object(kube::objectPath(type, ns, name));
  }

  std::string secretData(const std::string& ns, const std::string& name, const std::string& key) {
    auto s = object(res::kSecrets, ns, name);
    return s ? (*s)["data"].value(key, "") : "";
  }

  AdmittingApi api_;
  FakeProcessRunner runner_;
  std::atomic<int> keygens_{0};
  std::unique_ptr<KubernetesRuntime> runtime_;
};

TEST(KubernetesRuntimeNames, NamespacesAndImagesFollowTheirTemplates) {
  EXPECT_EQ(clusterNamespace("corral-{cluster}", "demo"), "corral-demo");
  EXPECT_EQ(clusterNamespace("slurm", "demo"), "slurm");
  kube::SlinkyImages images = slinkyImagesFor("reg:5000/corral", "debian-unstable-slurm26.05");
  EXPECT_EQ(images.controller, "reg:5000/corral/slurmctld:debian-unstable-slurm26.05");
  EXPECT_EQ(images.slurmd, "reg:5000/corral/slurmd:debian-unstable-slurm26.05");
  EXPECT_EQ(images.login, "reg:5000/corral/login:debian-unstable-slurm26.05");
  EXPECT_EQ(images.slurmdbd, "reg:5000/corral/slurmdbd:debian-unstable-slurm26.05");
  EXPECT_EQ(images.mariadb, "reg:5000/corral/mariadb:debian-unstable-slurm26.05");
  // The operator's own shell-script containers run in images that exist.
  EXPECT_EQ(images.logfile, images.controller);
  EXPECT_EQ(images.initconf, images.login);
}

TEST_F(KubernetesRuntimeTest, ApplyWritesEveryObjectLabelledInTheClustersNamespace) {
  ASSERT_TRUE(runtime().applyCluster(record("demo", 4, 2)).isOk());
  auto nodeSet = object(res::kNodeSets, "corral-demo", "slinky");
  ASSERT_TRUE(nodeSet.has_value());
  EXPECT_EQ((*nodeSet)["spec"]["replicas"], 4);
  EXPECT_EQ((*nodeSet)["metadata"]["labels"]["corral.dev/cluster"], "demo");
  ASSERT_TRUE(object(res::kNodeSets, "corral-demo", "cpu-workers").has_value());
  auto controller = object(res::kControllers, "corral-demo", "demo");
  ASSERT_TRUE(controller.has_value());
  EXPECT_EQ((*controller)["spec"]["slurmctld"]["image"],
            "registry.example:5000/corral/slurmctld:debian-unstable-slurm26.05");
  EXPECT_TRUE(object(res::kLoginSets, "corral-demo", "demo-login").has_value());
  EXPECT_EQ(secretData("corral-demo", "demo-slurm-key", "slurm.key").size(), 1368u);  // 1024 bytes.
  EXPECT_EQ(keygens_, 3);  // ed25519, rsa, ecdsa.
}

TEST_F(KubernetesRuntimeTest, ASecondApplyChangesNothing) {
  ASSERT_TRUE(runtime().applyCluster(record("demo", 2)).isOk());
  int64_t version = api_.resourceVersion();
  ASSERT_TRUE(runtime().applyCluster(record("demo", 2)).isOk());
  EXPECT_EQ(api_.resourceVersion(), version);
  EXPECT_EQ(keygens_, 3);
}

TEST_F(KubernetesRuntimeTest, SecretsSurviveARestartedCorraldAndMissingOnesAreMade) {
  ASSERT_TRUE(runtime().applyCluster(record("demo", 2)).isOk());
  std::string slurmKey = secretData("corral-demo", "demo-slurm-key", "slurm.key");
  std::string hostKey = *runtime().loginHostKey("demo");
  EXPECT_THAT(hostKey, HasSubstr("ssh-ed25519 AAAAed25519-"));
  std::string jwt = secretData("corral-demo", "demo-jwt-key", "jwt_hs256.key");
  ASSERT_TRUE(api_.remove(kube::objectPath(res::kSecrets, "corral-demo", "demo-jwt-key")).isOk());

  runtime_.reset();  // corrald restarts: the keys come from the Secrets.
  ASSERT_TRUE(runtime().applyCluster(record("demo", 2)).isOk());
  EXPECT_EQ(secretData("corral-demo", "demo-slurm-key", "slurm.key"), slurmKey);
  EXPECT_EQ(*runtime().loginHostKey("demo"), hostKey);
  EXPECT_EQ(keygens_, 3);  // No host key was made again.
  std::string newJwt = secretData("corral-demo", "demo-jwt-key", "jwt_hs256.key");
  EXPECT_FALSE(newJwt.empty());
  EXPECT_NE(newJwt, jwt);
}

TEST_F(KubernetesRuntimeTest, HostKeysMadeAheadServeTheNextCreateAndAreReplaced) {
  KubernetesRuntime& rt = runtime("corral-{cluster}", /*keysAhead=*/true);
  for (int i = 0; i < 500 && keygens_ < 3; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(keygens_, 3);  // Made at start, before any cluster.
  ASSERT_TRUE(rt.applyCluster(record("alpha", 2)).isOk());
  EXPECT_THAT(*rt.loginHostKey("alpha"), HasSubstr("root@login"));
  for (int i = 0; i < 500 && keygens_ < 6; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(keygens_, 6);  // The next set, made after the first was taken.
  ASSERT_TRUE(rt.applyCluster(record("beta", 2)).isOk());
  EXPECT_NE(*rt.loginHostKey("alpha"), *rt.loginHostKey("beta"));  // Never shared.
}

TEST_F(KubernetesRuntimeTest, ARefusedObjectIsInvalidArgumentNamingIt) {
  Status s = runtime().applyCluster(record("demo", 8));
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("applying NodeSet slinky"));
  EXPECT_THAT(s.message(), HasSubstr("at most 6 workers per NodeSet"));
}

TEST_F(KubernetesRuntimeTest, ANodeSetTheClusterNoLongerHasIsRemoved) {
  ASSERT_TRUE(runtime().applyCluster(record("demo", 2, 2)).isOk());
  ASSERT_TRUE(runtime().applyCluster(record("demo", 2, 0)).isOk());
  EXPECT_FALSE(object(res::kNodeSets, "corral-demo", "cpu-workers").has_value());
  EXPECT_TRUE(object(res::kNodeSets, "corral-demo", "slinky").has_value());
}

TEST_F(KubernetesRuntimeTest, OneSharedNamespaceHoldsOneCluster) {
  ASSERT_TRUE(runtime("slurm").applyCluster(record("alpha", 2)).isOk());
  Status s = runtime("slurm").applyCluster(record("beta", 2));
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("namespace slurm already holds cluster alpha"));
  EXPECT_FALSE(object(res::kControllers, "slurm", "beta").has_value());
  ASSERT_TRUE(runtime("slurm").applyCluster(record("alpha", 3)).isOk());  // Its own: fine.
}

TEST_F(KubernetesRuntimeTest, RemoveDeletesWhatCorralMadeAndNothingElse) {
  ASSERT_TRUE(runtime().applyCluster(record("demo", 2, 1)).isOk());
  api_.put(kube::objectPath(res::kConfigMaps, "corral-demo", "theirs"),
           {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "theirs"}}}});
  auto first = runtime().removeCluster("demo");
  ASSERT_TRUE(first.isOk());
  EXPECT_FALSE(*first);  // It deleted things: looks again next pass.
  auto second = runtime().removeCluster("demo");
  ASSERT_TRUE(second.isOk());
  EXPECT_TRUE(*second);
  for (const auto* type : {&res::kSecrets, &res::kConfigMaps, &res::kPersistentVolumeClaims,
                           &res::kControllers, &res::kNodeSets, &res::kLoginSets,
                           &res::kAccountings, &res::kStatefulSets, &res::kServices}) {
    auto left = api_.list(kube::collectionPath(*type, "corral-demo"), kube::clusterSelector("demo"));
    ASSERT_TRUE(left.isOk());
    EXPECT_TRUE(left->items.empty()) << type->plural;
  }
  EXPECT_TRUE(object(res::kConfigMaps, "corral-demo", "theirs").has_value());
}

TEST_F(KubernetesRuntimeTest, SuspendKeepsTheStateAndRemovesWhatRuns) {
  ASSERT_TRUE(runtime().applyCluster(record("demo", 2)).isOk());
  ASSERT_TRUE(runtime().suspendCluster(record("demo", 2)).isOk());
  EXPECT_FALSE(object(res::kControllers, "corral-demo", "demo").has_value());
  EXPECT_FALSE(object(res::kNodeSets, "corral-demo", "slinky").has_value());
  EXPECT_FALSE(object(res::kLoginSets, "corral-demo", "demo-login").has_value());
  EXPECT_FALSE(object(res::kStatefulSets, "corral-demo", "demo-mariadb").has_value());
  EXPECT_TRUE(object(res::kSecrets, "corral-demo", "demo-slurm-key").has_value());
  EXPECT_TRUE(object(res::kPersistentVolumeClaims, "corral-demo", "demo-shared").has_value());
}

TEST_F(KubernetesRuntimeTest, TheViewWaitsForTheWatchToSeeTheApply) {
  ClusterRecord r = record("demo", 2);
  ASSERT_TRUE(runtime().applyCluster(r).isOk());
  // Until the watch has delivered the applied NodeSet, the view says so
  // rather than judging the older objects.
  StatusOr<ClusterView> view = unavailable("not yet");
  for (int i = 0; i < 500; ++i) {
    view = runtime().viewCluster(r);
    if (view.isOk() && view->nodes.empty()) {
      EXPECT_THAT(view->phase, HasSubstr("waiting for the watch to see")) << view->phase;
    }
    if (view.isOk() && !view->nodes.empty()) break;
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(view.isOk()) << view.status().toString();
  EXPECT_EQ(view->state, ClusterView::State::kProgressing);
  EXPECT_THAT(view->phase, HasSubstr("waiting for"));
  ASSERT_EQ(view->nodes.size(), 2u);
  EXPECT_EQ(view->nodes[0].name, "slinky-0");
}

TEST_F(KubernetesRuntimeTest, LookingAtASteadyClusterCostsNoRequest) {
  ClusterRecord r = record("demo", 4);
  ASSERT_TRUE(runtime().applyCluster(r).isOk());
  // The watcher's 8 kinds: one LIST each, then one WATCH each held open.
  ASSERT_TRUE(api_.awaitOpenWatches(8, 10s));
  for (int i = 0; i < 200 && !runtime().viewCluster(r).isOk(); ++i) std::this_thread::sleep_for(10ms);
  uint64_t before = api_.requestCount();
  for (int pass = 0; pass < 100; ++pass) ASSERT_TRUE(runtime().viewCluster(r).isOk());
  EXPECT_EQ(api_.requestCount(), before);
  EXPECT_EQ(api_.openWatches(), 8u);
}

TEST_F(KubernetesRuntimeTest, PodOperationsAreRefusedSayingWhy) {
  PodSpec pod;
  pod.cluster = "demo";
  pod.name = "slinky-0";
  Status s = runtime().startPod(pod);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("Slinky's operator makes and runs the pods"));
  EXPECT_EQ(runtime().exec("demo", "controller", {"sinfo"}).status().code(),
            Code::kFailedPrecondition);
}

TEST(KubernetesRuntimeSettled, AScaleDownIsSettledOnlyOnceItsPodsAreGone) {
  kube::ClusterObservation o;
  o.verdict = kube::Verdict::kRunning;
  o.allObserved = true;
  kube::NodeSetObservation set;
  set.name = "slinky";
  set.replicas = 2;
  o.nodeSets.push_back(set);
  kube::ObjectSet objects;
  for (const char* name : {"slinky-0", "slinky-1", "slinky-2", "demo-login-abc-def"})
    objects.put(kube::ObjectKind::kPod, {{"metadata", {{"name", name}}}});
  EXPECT_FALSE(settled(o, objects));
  objects.of(kube::ObjectKind::kPod).erase("slinky-2");
  EXPECT_TRUE(settled(o, objects));
  o.allObserved = false;
  EXPECT_FALSE(settled(o, objects));
}

}  // namespace
}  // namespace corral
