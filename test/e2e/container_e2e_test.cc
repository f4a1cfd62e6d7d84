// End-to-end tests of container jobs (issue 5): the Pyxis-compatible SPANK
// plugin and the Enroot-compatible runtime on a real cluster, pulling from
// the cluster's own docker-registry, filled from local content with
// corral-imagectl. Nothing comes from the internet.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "e2e/harness.h"

namespace corral::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kCluster = "delta";
constexpr const char* kBusybox = "registry:5000/test/busybox:1";
constexpr const char* kOther = "registry:5000/test/other:2";

int countOf(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

// A root filesystem of busybox-static and an os-release naming it.
void makeBusyboxRoot(const std::string& dir, const std::string& osName) {
  fs::create_directories(dir + "/bin");
  fs::create_directories(dir + "/etc");
  fs::create_directories(dir + "/tmp");
  fs::copy_file("/bin/busybox", dir + "/bin/busybox", fs::copy_options::overwrite_existing);
  for (const char* tool : {"sh", "ls", "cat", "echo", "hostname", "id", "env", "pwd", "sleep",
                           "true", "touch", "test", "grep", "wc", "mkdir", "rm", "head"})
    fs::create_symlink("busybox", dir + "/bin/" + tool);
  std::ofstream(dir + "/etc/os-release") << "NAME=\"" << osName << "\"\nID=" << osName << "\n";
  std::ofstream(dir + "/etc/passwd") << "root:x:0:0:root:/root:/bin/sh\n";
}

class ContainerE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!fs::exists("/bin/busybox") || !fs::exists("/usr/bin/docker-registry")) {
      skip_ = "busybox-static and docker-registry are needed (scripts/install-deps.sh)";
      return;
    }
    harness_ = new Harness();
    harness_->start();
    auto r = harness_->corral({"cluster", "create", kCluster, "--gpu-nodes", "2", "--gpus-per-node",
                               "4", "--registry", "--image-cache", "/shared/enroot-cache",
                               "--wait"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    auto get = harness_->corral({"cluster", "get", kCluster, "-o", "json"});
    json c = json::parse(get.out, nullptr, false);
    subnet_ = c["subnet"];
    // The registry pod is .4 of the cluster network; the host reaches it on
    // the cluster bridge.
    std::string base = subnet_.substr(0, subnet_.rfind('.'));
    registry_ = base + ".4:5000";
    std::string images = harness_->dataDir() + "/images";
    makeBusyboxRoot(images + "/busybox", "corral-busybox");
    makeBusyboxRoot(images + "/other", "corral-other");
    fs::create_directories(images + "/layer2/etc");
    std::ofstream(images + "/layer2/etc/motd") << "second layer\n";
    for (auto [ref, dirs] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"/test/busybox:1", {images + "/busybox", images + "/layer2"}},
             {"/test/other:2", {images + "/other"}}}) {
      std::vector<std::string> argv = {binary("corral-imagectl"), "push", "--http",
                                       "--env", "CORRAL_IMAGE=" + ref, "--workdir", "/tmp",
                                       registry_ + ref};
      argv.insert(argv.end(), dirs.begin(), dirs.end());
      auto p = realProcessRunner().run(argv, {"", std::chrono::seconds(120), {}, {}});
      ASSERT_TRUE(p.isOk());
      ASSERT_EQ(p->exitCode, 0) << p->out << p->err;
    }
  }
  static void TearDownTestSuite() {
    if (harness_ && harness_->running()) {
      EXPECT_EQ(harness_->corral({"cluster", "delete", kCluster, "--wait"}).exitCode, 0);
      Leftovers left = harness_->leftoversOf(kCluster, subnet_);
      EXPECT_TRUE(left.empty()) << left.describe();
      harness_->corral({"volume", "delete", "cpfs"});
    }
    delete harness_;
    harness_ = nullptr;
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_NE(harness_, nullptr);
  }
  Harness& h() { return *harness_; }
  ProcessResult run(const std::string& command) { return h().ssh(kCluster, command, 180); }
  // What steps left on a node: containers, holders ("0" when nothing).
  // A step's container is removed as its slurmstepd ends, which may be just
  // after srun returns: give it a few seconds.
  std::string residue(const std::string& node) {
    std::string left;
    for (int i = 0; i < 50; ++i) {
      left = trim(h().podExec(kCluster, node,
                              "ls /var/tmp/enroot-data-user-0 2>/dev/null; "
                              "ps -eo args | grep -c '^/.corral-bin/enroot start' ")
                      .out);
      if (left == "0") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return left;
  }
  static Harness* harness_;
  static std::string subnet_, registry_, skip_;
};
Harness* ContainerE2E::harness_ = nullptr;
std::string ContainerE2E::subnet_, ContainerE2E::registry_, ContainerE2E::skip_;

TEST_F(ContainerE2E, SrunRunsInTheImageOnTwoNodesAndSeesOnlyItsMounts) {
  ASSERT_EQ(h().corral({"volume", "create", "cpfs", "--type", "pfs"}).exitCode, 0);
  ASSERT_EQ(h().corral({"volume", "attach", kCluster, "cpfs", "--path", "/pfs"}).exitCode, 0);
  ASSERT_EQ(run("touch /pfs/visible").exitCode, 0);
  auto r = run(std::string("srun -N2 --container-image=") + kBusybox +
               " --container-mounts=/pfs:/pfs sh -c 'echo host=$(hostname); cat /etc/os-release; "
               "ls /pfs; cat /etc/motd; pwd; echo image=$CORRAL_IMAGE; "
               "for p in /shared /etc/slurm/slurm.conf /usr/bin/srun /etc/munge; do "
               "test -e $p && echo LEAK $p; done; true'");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("host=slinky-0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("host=slinky-1"), std::string::npos) << r.out;
  EXPECT_EQ(countOf(r.out, "NAME=\"corral-busybox\""), 2) << r.out;
  EXPECT_EQ(countOf(r.out, "visible"), 2) << r.out;
  EXPECT_EQ(countOf(r.out, "second layer"), 2) << r.out;
  EXPECT_EQ(countOf(r.out, "image=/test/busybox:1"), 2) << r.out;
  EXPECT_EQ(countOf(r.out, "\n/tmp\n"), 2) << "the image's workdir: " << r.out;
  EXPECT_EQ(r.out.find("LEAK"), std::string::npos) << r.out;
  // An unnamed container goes with its step; so does the holder.
  EXPECT_EQ(residue("slinky-0"), "0");
  // One import served both nodes: the cache is shared.
  auto cache = run("find /shared/enroot-cache/user-0/rootfs -mindepth 1 -maxdepth 1 -type d | wc -l");
  EXPECT_EQ(trim(cache.out), "1") << cache.out << cache.err;
}

TEST_F(ContainerE2E, ContainersSeeExactlyTheirGpus) {
  auto two = run(std::string("srun --gres=gpu:2 --container-image=") + kBusybox +
                 " sh -c 'ls /dev | grep -E \"^nvidia[0-9]+$\" | wc -l; echo cuda=$CUDA_VISIBLE_DEVICES'");
  ASSERT_EQ(two.exitCode, 0) << two.out << two.err;
  EXPECT_EQ(two.out, "2\ncuda=0,1\n");
  auto none = run(std::string("srun --container-image=") + kBusybox +
                  " sh -c 'ls /dev | grep -c nvidia; true'");
  ASSERT_EQ(none.exitCode, 0) << none.err;
  EXPECT_EQ(trim(none.out), "0");
  // Outside a container too, a step sees exactly its GPUs (and the control
  // device), as Slurm's ConstrainDevices would make it.
  auto plain = run("srun --gres=gpu:2 ls /dev");
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  EXPECT_EQ(countOf(plain.out, "nvidia"), 3) << plain.out;
  EXPECT_NE(plain.out.find("nvidiactl"), std::string::npos) << plain.out;
  EXPECT_EQ(trim(run("srun ls /dev | grep -c nvidia; true").out), "0");
}

TEST_F(ContainerE2E, NamedContainerKeepsFilesBetweenStepsOfAJob) {
  auto r = run(std::string("salloc -N1 -w slinky-1 sh -c '") +
               "srun --container-name=keep --container-image=" + kBusybox +
               " sh -c \"echo step1 > /kept\"; srun --container-name=keep cat /kept'");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(trim(r.out), "step1");
  // The job's named containers go with the job.
  EXPECT_EQ(residue("slinky-1"), "0");
}

TEST_F(ContainerE2E, TwoJobsUseTwoImagesAtOnce) {
  auto r = run(std::string("srun -w slinky-0 --container-image=") + kBusybox +
               " sh -c 'sleep 1; cat /etc/os-release' > /tmp/a & srun -w slinky-1 --container-image=" +
               kOther + " sh -c 'sleep 1; cat /etc/os-release' > /tmp/b & wait; cat /tmp/a /tmp/b");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("corral-busybox"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("corral-other"), std::string::npos) << r.out;
}

TEST_F(ContainerE2E, BatchScriptRunsInsideTheContainer) {
  auto r = run(std::string("cd /shared && sbatch --wait -o /shared/batch.out --container-image=") +
               kBusybox + " --wrap 'cat /etc/os-release; test -e /etc/slurm || echo no-slurm' && "
               "cat /shared/batch.out");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("corral-busybox"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no-slurm"), std::string::npos) << r.out;
}

TEST_F(ContainerE2E, UnprivilegedUsersAreThemselvesOrRootInside) {
  std::string key = h().home() + "/.ssh/carol_ed25519";
  ASSERT_EQ(std::system(("ssh-keygen -q -t ed25519 -N '' -f " + key + " </dev/null").c_str()), 0);
  ASSERT_EQ(h().corral({"user", "add", kCluster, "carol", "--ssh-key", key + ".pub"}).exitCode, 0);
  std::string img = kBusybox;
  auto r = run("su carol -s /bin/sh -c 'srun --container-image=" + img +
               " id -u; srun --no-container-remap-root --container-image=" + img +
               " id -u; id -u'");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  std::vector<std::string> ids;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) ids.push_back(l);
  ASSERT_EQ(ids.size(), 3u) << r.out;
  EXPECT_EQ(ids[0], "0") << "remapped to root by default";
  EXPECT_EQ(ids[1], ids[2]) << "--no-container-remap-root keeps the user's uid";
  EXPECT_NE(ids[2], "0");
  ASSERT_EQ(h().corral({"user", "remove", kCluster, "carol"}).exitCode, 0);
}

TEST_F(ContainerE2E, BadRequestsFailClearlyAndLeaveNothing) {
  struct Case {
    std::string args, expect;
  };
  for (const Case& c : std::vector<Case>{
           {"--container-image=registry:5000/test/nope:1", "not found"},
           {"--container-image=registry:5999/test/busybox:1", "unreachable"},
           {"--container-image='Not A Reference'", "malformed image reference"},
           {std::string("--container-image=") + kBusybox + " --container-mounts=/nonexistent:/x",
            "/nonexistent"}}) {
    auto r = run("srun -w slinky-0 " + c.args + " true");
    EXPECT_NE(r.exitCode, 0) << c.args;
    EXPECT_NE((r.out + r.err).find(c.expect), std::string::npos)
        << c.args << ": " << r.out << r.err;
    EXPECT_EQ(residue("slinky-0"), "0") << c.args;
  }
}

}  // namespace
}  // namespace corral::e2e
