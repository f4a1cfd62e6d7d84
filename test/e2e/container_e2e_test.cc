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
// An image whose entrypoint fails before it hands over to the command.
constexpr const char* kBrokenEntrypoint = "registry:5000/test/broken-entrypoint:1";

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
    fs::create_directories(images + "/entry");
    std::ofstream(images + "/entry/entrypoint.sh") << "#!/bin/sh\necho entrypoint gives up >&2\nexit 3\n";
    fs::permissions(images + "/entry/entrypoint.sh", fs::perms::owner_all | fs::perms::group_exec |
                                                         fs::perms::others_exec,
                    fs::perm_options::add);
    for (auto [ref, dirs] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"/test/busybox:1", {images + "/busybox", images + "/layer2"}},
             {"/test/other:2", {images + "/other"}},
             {"/test/broken-entrypoint:1", {images + "/busybox", images + "/entry"}}}) {
      std::vector<std::string> argv = {binary("corral-imagectl"), "push", "--http",
                                       "--env", "CORRAL_IMAGE=" + ref, "--workdir", "/tmp",
                                       registry_ + ref};
      if (ref.find("entrypoint") != std::string::npos) {
        argv.insert(argv.begin() + 3, {"--entrypoint", "/entrypoint.sh"});
      }
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
                              "ls /var/tmp/enroot-runtime-user-0/holders 2>/dev/null; "
                              "grep -c ' /var/tmp/enroot-data' /proc/mounts; "
                              "ps -eo args | grep -c '^/.corral-bin/enroot start' ")
                      .out);
      // No container, holder record, container mount or holder process.
      if (left == "0\n0") left = "0";
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
            "/nonexistent"},
           {std::string("--container-image=") + kBusybox + " --container-mounts=/tmp:../../x",
            "leaves the container's root"},
           {std::string("--container-image=") + kBusybox +
                " --container-mounts=tmpfs:/scratch:size=lots",
            "cannot mount a tmpfs at /scratch"},
           {std::string("--container-image=") + kBusybox + " --container-workdir=/no/such/dir",
            "/no/such/dir: No such file or directory"},
           {std::string("--container-image=") + kBrokenEntrypoint + " --container-entrypoint",
            "entrypoint exited with status 3 before running the command: entrypoint gives up"},
           {std::string("--container-image=") + kBusybox + " --container-unshare=pid",
            "unknown namespace"},
           {std::string("--container-image=") + kBusybox +
                " --container-readonly --container-writable",
            "mutually exclusive"}}) {
    auto r = run("srun -w slinky-0 " + c.args + " true");
    EXPECT_NE(r.exitCode, 0) << c.args;
    EXPECT_NE((r.out + r.err).find(c.expect), std::string::npos)
        << c.args << ": " << r.out << r.err;
    EXPECT_EQ(residue("slinky-0"), "0") << c.args;
  }
}

TEST_F(ContainerE2E, ABrokenEntrypointIsSkippedWithoutTheFlag) {
  // The default is not to run it (plugstack.conf: execute_entrypoint off).
  auto r = run(std::string("srun --container-image=") + kBrokenEntrypoint + " echo ran");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(trim(r.out), "ran");
}

TEST_F(ContainerE2E, MpiJobsStartUnderPmixOnTwoNodes) {
  // Open MPI (mpi4py) from the cluster image, wired by Slurm's PMIx server:
  // four ranks on two nodes, a collective across both.
  if (Harness::image() == "debian-unstable-slurm26.05") {
    // Debian unstable's slurm-wlm 26.05.5-1 is built without PMIx (no
    // mpi_pmix.so in any of its packages; sid's PMIx is 7.0.0~rc1). Every
    // other image must have it, so only this one is let off.
    auto listed = run("srun --mpi=list 2>&1");
    if (listed.out.find("pmix") == std::string::npos)
      GTEST_SKIP() << "this image's Slurm has no PMIx plugin: " << listed.out;
  }
  auto r = run("cat > /shared/mpi_hello.py <<'EOF'\n"
               "from mpi4py import MPI\n"
               "c = MPI.COMM_WORLD\n"
               "s = c.allreduce(c.Get_rank())\n"
               "print('rank', c.Get_rank(), 'of', c.Get_size(), 'on', MPI.Get_processor_name(),"
               " 'sum', s, flush=True)\n"
               "EOF\n"
               "srun --mpi=pmix -N2 -n4 python3 /shared/mpi_hello.py | sort");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(countOf(r.out, "of 4 on"), 4) << r.out;
  EXPECT_EQ(countOf(r.out, "sum 6"), 4) << r.out;
  EXPECT_NE(r.out.find("on slinky-0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on slinky-1"), std::string::npos) << r.out;
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_NE(r.out.find("rank " + std::to_string(rank) + " of 4"), std::string::npos) << r.out;
}

TEST_F(ContainerE2E, StepsJoinARunningNamedContainerAndItsNamespaces) {
  // A step with its own network namespace keeps running; a later step of the
  // job that names it joins it (same namespace, and its own mounts are
  // ignored with a notice); enroot list -f shows the holder.
  std::string script = R"(
srun -n1 --container-image=IMAGE --container-name=svc --container-unshare=net sleep 30 &
for i in $(seq 100); do
  srun --overlap -n1 enroot list -f | grep -q "_svc  *[0-9]" && break
  sleep 0.2
done
echo host=$(srun --overlap -n1 readlink /proc/self/ns/net)
srun --overlap -n1 --container-name=svc --container-mounts=/tmp:/mnt/x \
  sh -c 'echo inside=$(readlink /proc/self/ns/net); test -e /mnt/x || echo no-x'
srun --overlap -n1 --container-name=svc:no_exec sh -c 'echo fresh=$(readlink /proc/self/ns/net)'
kill %1
wait
)";
  script.replace(script.find("IMAGE"), 5, kBusybox);
  ASSERT_EQ(h().podExec(kCluster, "login", "cat > /shared/attach.sh <<'EOF'\n" + script + "EOF\n").exitCode, 0);
  auto r = run("salloc -N1 -w slinky-0 bash /shared/attach.sh");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  auto value = [&](const std::string& key) {
    auto p = r.out.find(key + "=");
    return p == std::string::npos ? std::string() : r.out.substr(p + key.size() + 1, r.out.find('\n', p) - p - key.size() - 1);
  };
  ASSERT_FALSE(value("inside").empty()) << r.out << r.err;
  EXPECT_NE(value("inside"), value("host")) << r.out;
  EXPECT_EQ(value("fresh"), value("host")) << ":no_exec starts it again, without --container-unshare";
  EXPECT_NE(r.out.find("no-x"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("ignoring --container-mounts"), std::string::npos) << r.err;
  EXPECT_EQ(residue("slinky-0"), "0");
}

}  // namespace
}  // namespace corral::e2e
