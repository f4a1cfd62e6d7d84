#include "runtime/local/local_runtime.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "common/files.h"
#include "fakes/fake_process_runner.h"
#include "runtime/local/firewall.h"
#include "runtime/local/pod_supervisor.h"

// The local runtime's host commands, in order, over a `FakeProcessRunner`
// that plays the kernel: its `ip` makes and removes the interfaces and
// namespaces the runtime looks for under `netStateRoot`, and its
// `corral-pod start` leaves a stand-in PID 1 (a shell that waits on a pipe,
// started as `corral-pod start SPEC` so the runtime recognises it). No root,
// and nothing of the host's network is touched.

namespace corral {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// Cluster demo's network, and its pod slinky-0 at 172.29.3.10 (0x0a).
const std::string kSubnet = "172.29.3.0/24";
const std::string kKey = "ac1d0300";
const std::string kBridge = "crl-ac1d0300";
const std::string kNs = "crl-ac1d0300-demo.slinky-0";
const std::string kHostVeth = "cac1d0300-0a";

std::string bridgeBatch() {
  return "link add crl-ac1d0300 type bridge\naddr add 172.29.3.1/24 dev crl-ac1d0300\n"
         "link set crl-ac1d0300 up\n";
}

std::string vethBatch() {
  return "link add cac1d0300-0a type veth peer name pac1d0300-0a address 02:63:ac:1d:03:0a\n"
         "link set pac1d0300-0a netns crl-ac1d0300-demo.slinky-0\n"
         "link set cac1d0300-0a master crl-ac1d0300 up\n";
}

std::string podBatch() {
  return "link set lo up\nlink set pac1d0300-0a name eth0\naddr add 172.29.3.10/24 dev eth0\n"
         "link set eth0 up\n";
}

// The value of `r`, or (a failure of the test) T's default.
template <typename T>
T valueOf(const StatusOr<T>& r) {
  if (r.isOk()) return r.value();
  ADD_FAILURE() << r.status().toString();
  return T{};
}

ProcessResult exited(int code, std::string out = "", std::string err = "") {
  ProcessResult r;
  r.exitCode = code;
  r.out = std::move(out);
  r.err = std::move(err);
  return r;
}

std::vector<std::string> linesOfText(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> wordsOf(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

class LocalRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "corral-local-runtime-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    net_ = root_ + "/net";
    fs::create_directories(net_ + "/run/netns");
    fs::create_directories(net_ + "/sys/class/net");
    fs::create_directories(root_ + "/bin");
    fs::create_directories(root_ + "/rootfs");
    runner_.on("ip", [this](const std::vector<std::string>& argv, const ProcessOptions& o) {
      return kernelIp(argv, o);
    });
    runner_.on("ssh-keygen", [](const std::vector<std::string>& argv, const ProcessOptions&) {
      std::string key = argv.back();  // -f KEY comes last.
      std::ofstream(key) << "PRIVATE\n";
      std::ofstream(key + ".pub") << "ssh-ed25519 AAAAC3Nza " << argv[argv.size() - 3] << "\n";
      return exited(0);
    });
    runner_.on("corral-pod", [this](const std::vector<std::string>& argv, const ProcessOptions&) {
      if (argv.size() == 3 && argv[1] == "start") startStandIn(argv[2]);
      return exited(0);
    });
    makeRuntime("");
  }

  void TearDown() override {
    for (const auto& [spec, pid] : standIns_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    for (int fd : pipes_) close(fd);
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  void makeRuntime(const std::string& egress, const std::string& pool = "172.29.0.0/16") {
    LocalRuntimeOptions o;
    o.dataDir = root_ + "/data";
    o.subnetPool = pool;
    o.podBinary = root_ + "/bin/corral-pod";
    o.runner = &runner_;
    o.imageRootfs = [this](const ImageRef& ref) {
      return ref.id == "unbuilt" ? root_ + "/missing" : root_ + "/rootfs";
    };
    o.idRegistryDir = root_ + "/ids";
    o.loginEgressInterface = egress;
    o.netStateRoot = net_;
    runtime_ = std::make_unique<LocalRuntime>(o);
    ASSERT_TRUE(runtime_->initialize().isOk());
  }

  // What the kernel does for the `ip` commands the runtime runs: only what
  // the runtime later looks at (interfaces, namespaces, a pod's address).
  ProcessResult kernelIp(const std::vector<std::string>& a, const ProcessOptions& o) {
    std::lock_guard<std::mutex> l(kernelMu_);  // stopCluster stops pods concurrently.
    if (a.size() == 4 && a[1] == "netns" && a[2] == "add") {
      std::ofstream(net_ + "/run/netns/" + a[3]).flush();
      return exited(0);
    }
    if (a.size() == 4 && a[1] == "netns" && a[2] == "del") {
      addresses_.erase(a[3]);
      if (fs::remove(net_ + "/run/netns/" + a[3])) return exited(0);
      return exited(1, "", "Cannot remove namespace file: No such file or directory\n");
    }
    if (a.size() == 4 && a[1] == "link" && a[2] == "del") {
      if (!fs::exists(net_ + "/sys/class/net/" + a[3]))
        return exited(1, "", "Cannot find device \"" + a[3] + "\"\n");
      removeInterface(a[3]);
      return exited(0);
    }
    if (a == std::vector<std::string>{"ip", "-batch", "-"}) {
      for (const auto& line : linesOfText(o.input)) {
        auto w = wordsOf(line);
        if (w.size() >= 3 && w[0] == "link" && w[1] == "add") addInterface(w[2]);
      }
      return exited(0);
    }
    if (a.size() == 5 && a[1] == "-n" && a[3] == "-batch") {
      for (const auto& line : linesOfText(o.input)) {
        auto w = wordsOf(line);
        if (w.size() == 5 && w[0] == "addr" && w[1] == "add" && w[4] == "eth0")
          addresses_[a[2]] = w[2];
      }
      return exited(0);
    }
    if (a.size() == 8 && a[1] == "-n" && a[4] == "addr" && a[5] == "show") {
      auto addr = addresses_.find(a[2]);
      if (addr == addresses_.end()) return exited(1, "", "Device \"eth0\" does not exist.\n");
      return exited(0, "2: eth0    inet " + addr->second + " brd 172.29.3.255 scope global eth0\n");
    }
    return exited(0);
  }

  void addInterface(const std::string& dev) {
    fs::create_directories(net_ + "/sys/class/net/" + dev);
    fs::create_directories(net_ + "/proc/sys/net/ipv4/conf/" + dev);
    std::ofstream(net_ + "/proc/sys/net/ipv4/conf/" + dev + "/forwarding") << "0\n";
  }

  void removeInterface(const std::string& dev) {
    fs::remove_all(net_ + "/sys/class/net/" + dev);
    fs::remove_all(net_ + "/proc/sys/net/ipv4/conf/" + dev);
  }

  bool hasInterface(const std::string& dev) const {
    return fs::exists(net_ + "/sys/class/net/" + dev);
  }
  bool hasNetns(const std::string& ns) const { return fs::exists(net_ + "/run/netns/" + ns); }

  // What `corral-pod start` leaves: a PID 1 whose command line names the
  // spec, and its pid file. It lives until its stdin (a pipe) closes; it
  // answers on stdout once it runs, since until its exec is done its
  // command line may still read empty.
  void startStandIn(const std::string& specPath) {
    int in[2], ready[2];
    ASSERT_EQ(pipe2(in, O_CLOEXEC), 0);
    ASSERT_EQ(pipe2(ready, O_CLOEXEC), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, ready[1], 1);
    std::vector<std::string> args = {"sh",         "-c",    "echo; read line",
                                     "corral-pod", "start", specPath};
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, "/bin/sh", &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(ready[1]);
    char c = 0;
    bool runs = rc == 0 && read(ready[0], &c, 1) == 1;
    close(ready[0]);
    std::lock_guard<std::mutex> l(kernelMu_);
    pipes_.push_back(in[1]);
    if (rc == 0) standIns_[specPath] = pid;
    ASSERT_TRUE(runs);
    std::string state = fs::path(specPath).parent_path().string() + "/" + kPodStateDir;
    fs::create_directories(state);
    std::ofstream(state + "/" + kPodPidFile) << pid << "\n";
  }

  // The stand-in PID 1 of `pod`, reaped once it died: how it ended (waitpid's status).
  int reapStandIn(const std::string& pod) {
    std::string spec = podDir(pod) + "/" + kPodSpecFile;
    pid_t pid = standIns_.at(spec);
    standIns_.erase(spec);
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
  }

  // The pod's PID 1 dies under the runtime (a node reboot, an OOM kill).
  void crashPod(const std::string& pod) {
    kill(standIns_.at(podDir(pod) + "/" + kPodSpecFile), SIGKILL);
    reapStandIn(pod);
  }

  std::string clusterDir(const std::string& cluster = "demo") const {
    return root_ + "/data/clusters/" + cluster;
  }
  std::string podDir(const std::string& pod) const { return clusterDir() + "/pods/" + pod; }
  std::string specPath(const std::string& pod) const { return podDir(pod) + "/" + kPodSpecFile; }
  std::string podStart(const std::string& pod) const {
    return root_ + "/bin/corral-pod start " + specPath(pod);
  }

  PodSpec pod(const std::string& name = "slinky-0", const std::string& address = "172.29.3.10",
              const std::string& role = "worker") const {
    PodSpec s;
    s.cluster = "demo";
    s.name = name;
    s.role = role;
    s.address = address;
    s.image = {"debian13-slurm24.11", std::string(64, 'a'), "24.11"};
    return s;
  }

  ClusterNetwork demo() const { return {"demo", 1, kSubnet}; }
  std::string keygenLine() const {
    return "ssh-keygen -q -t ed25519 -N  -C root@login.demo -f " + clusterDir() +
           "/etc/ssh/ssh_host_ed25519_key";
  }
  std::string forwarding(const std::string& dev) const {
    return net_ + "/proc/sys/net/ipv4/conf/" + dev + "/forwarding";
  }

  void prepared() {
    ASSERT_TRUE(runtime_->prepareCluster(demo()).isOk());
    mark();
  }

  void started(const PodSpec& spec) {
    Status s = runtime_->startPod(spec);
    ASSERT_TRUE(s.isOk()) << s.toString();
    mark();
  }

  // The commands run since the last `mark()`.
  void mark() { mark_ = runner_.calls().size(); }
  std::vector<FakeProcessRunner::Call> calls() const {
    auto all = runner_.calls();
    return {all.begin() + static_cast<long>(mark_), all.end()};
  }
  // The stdin of the `i`th command since the last `mark()`.
  std::string input(size_t i) const {
    auto c = calls();
    if (i < c.size()) return c[i].input;
    ADD_FAILURE() << "no command #" << i << " ran";
    return "";
  }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const auto& c : calls()) out.push_back(c.line());
    return out;
  }

  std::string root_;
  std::string net_;  // The runtime's `netStateRoot`.
  FakeProcessRunner runner_;
  std::unique_ptr<LocalRuntime> runtime_;
  size_t mark_ = 0;
  std::mutex kernelMu_;
  std::map<std::string, std::string> addresses_;  // eth0's address, by namespace.
  std::map<std::string, pid_t> standIns_;         // By spec path.
  std::vector<int> pipes_;
};

// --- prepareCluster ---------------------------------------------------------

TEST_F(LocalRuntimeTest, PrepareClusterMakesTheHostKeyThenTheBridgeThenTheFirewall) {
  ASSERT_TRUE(runtime_->prepareCluster(demo()).isOk());
  EXPECT_THAT(lines(), ElementsAre(keygenLine(), "ip -batch -", "nft -f -"));
  auto c = calls();
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[1].input, bridgeBatch());
  EXPECT_EQ(c[2].input, renderFirewall({kKey, kBridge, "", ""}));
  EXPECT_EQ(valueOf(readFile(clusterDir() + "/netkey")), kKey);
  EXPECT_TRUE(fs::exists(clusterDir() + "/secrets/munge/munge.key"));
  EXPECT_EQ(valueOf(runtime_->loginHostKey("demo")), "ssh-ed25519 AAAAC3Nza root@login.demo\n");
  auto ids = runtime_->idRange("demo");
  ASSERT_TRUE(ids.isOk());
  EXPECT_EQ(*ids, (IdRange{kIdPoolStart, kIdRangeSize}));
}

TEST_F(LocalRuntimeTest, PrepareClusterAgainOnlyReappliesTheFirewall) {
  prepared();
  ASSERT_TRUE(runtime_->prepareCluster(demo()).isOk());
  EXPECT_THAT(lines(), ElementsAre("nft -f -"));
  EXPECT_EQ(input(0), renderFirewall({kKey, kBridge, "", ""}));
  EXPECT_EQ(valueOf(runtime_->idRange("demo")).base, kIdPoolStart);
}

TEST_F(LocalRuntimeTest, PrepareClusterRemakesABridgeThatVanished) {
  prepared();
  removeInterface(kBridge);  // The host rebooted.
  ASSERT_TRUE(runtime_->prepareCluster(demo()).isOk());
  EXPECT_THAT(lines(), ElementsAre("ip -batch -", "nft -f -"));
  EXPECT_EQ(input(0), bridgeBatch());
}

TEST_F(LocalRuntimeTest, WithEgressForwardingIsOnForTheBridgeAndTheEgressInterfaceOnly) {
  makeRuntime("eth9");
  addInterface("eth9");
  addInterface("eth0");
  ASSERT_TRUE(runtime_->prepareCluster(demo()).isOk());
  EXPECT_THAT(lines(), ElementsAre(keygenLine(), "ip -batch -", "nft -f -"));
  EXPECT_EQ(input(2), renderFirewall({kKey, kBridge, "eth9", "172.29.3.3"}));
  EXPECT_EQ(valueOf(readFile(forwarding(kBridge))), "1\n");
  EXPECT_EQ(valueOf(readFile(forwarding("eth9"))), "1\n");
  EXPECT_EQ(valueOf(readFile(forwarding("eth0"))), "0\n");
}

TEST_F(LocalRuntimeTest, AMissingEgressInterfaceFailsPrepareClusterAfterTheFirewall) {
  makeRuntime("eth9");
  Status s = runtime_->prepareCluster(demo());
  EXPECT_EQ(s.message(), "cannot enable forwarding on eth9: No such file or directory");
  EXPECT_THAT(lines(), ElementsAre(keygenLine(), "ip -batch -", "nft -f -"));
}

TEST_F(LocalRuntimeTest, AFailingBridgeStopsPrepareClusterBeforeTheFirewall) {
  runner_.failNextMatching({"ip", "-batch"}, 2, "RTNETLINK answers: Operation not permitted\n");
  Status s = runtime_->prepareCluster(demo());
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_EQ(s.message(),
            "creating bridge crl-ac1d0300: `ip -batch -` exited 2: RTNETLINK answers: Operation "
            "not permitted");
  EXPECT_THAT(lines(), ElementsAre(keygenLine(), "ip -batch -"));
  // The next pass makes what is missing, and only that.
  mark();
  ASSERT_TRUE(runtime_->prepareCluster(demo()).isOk());
  EXPECT_THAT(lines(), ElementsAre("ip -batch -", "nft -f -"));
  EXPECT_EQ(input(0), bridgeBatch());
}

TEST_F(LocalRuntimeTest, AFailingFirewallFailsPrepareClusterNamingNftAndItsError) {
  runner_.failNext("nft", 1, "Error: Could not process rule: No such file or directory\n");
  Status s = runtime_->prepareCluster(demo());
  EXPECT_EQ(s.message(),
            "isolating the cluster network (nftables): `nft -f -` exited 1: Error: Could not "
            "process rule: No such file or directory");
  EXPECT_THAT(lines(), ElementsAre(keygenLine(), "ip -batch -", "nft -f -"));
}

TEST_F(LocalRuntimeTest, ACommandThatCannotStartIsNamedAndStopsPrepareCluster) {
  runner_.refuseNext("ssh-keygen",
                     internalError("cannot run ssh-keygen: No such file or directory"));
  Status s = runtime_->prepareCluster(demo());
  EXPECT_EQ(s.message(),
            "generating the login node's host key: cannot run ssh-keygen: No such file or "
            "directory");
  EXPECT_THAT(lines(), ElementsAre(keygenLine()));

  mark();
  runner_.refuseNext("ip", internalError("cannot run ip: No such file or directory"));
  s = runtime_->prepareCluster(demo());
  EXPECT_EQ(s.message(), "creating bridge crl-ac1d0300: cannot run ip: No such file or directory");
  EXPECT_THAT(lines(), ElementsAre(keygenLine(), "ip -batch -"));
}

// --- startPod ---------------------------------------------------------------

TEST_F(LocalRuntimeTest, StartPodMakesTheNamespaceConnectsItThenStartsTheSupervisor) {
  prepared();
  ASSERT_TRUE(runtime_->startPod(pod()).isOk());
  EXPECT_THAT(lines(), ElementsAre("ip netns add " + kNs, "ip -batch -",
                                   "ip -n " + kNs + " -batch -", podStart("slinky-0")));
  auto c = calls();
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[1].input, vethBatch());
  EXPECT_EQ(c[2].input, podBatch());
  // The supervisor joins the namespace just made.
  auto spec = nlohmann::json::parse(valueOf(readFile(specPath("slinky-0"))));
  EXPECT_EQ(spec["netnsPath"], net_ + "/run/netns/" + kNs);
  EXPECT_EQ(spec["address"], "172.29.3.10");
  auto st = runtime_->podStatus("demo", "slinky-0");
  ASSERT_TRUE(st.isOk());
  EXPECT_TRUE(st->exists);
  EXPECT_TRUE(st->running);
}

TEST_F(LocalRuntimeTest, WithEgressOnlyTheLoginPodGetsADefaultRoute) {
  makeRuntime("eth9");
  addInterface("eth9");
  prepared();
  ASSERT_TRUE(runtime_->startPod(pod("login", "172.29.3.3", "login")).isOk());
  ASSERT_TRUE(runtime_->startPod(pod()).isOk());
  auto c = calls();
  ASSERT_EQ(c.size(), 8u);
  EXPECT_EQ(c[2].line(), "ip -n crl-ac1d0300-demo.login -batch -");
  EXPECT_EQ(c[2].input,
            "link set lo up\nlink set pac1d0300-03 name eth0\naddr add 172.29.3.3/24 dev eth0\n"
            "link set eth0 up\nroute add default via 172.29.3.1\n");
  EXPECT_EQ(c[6].line(), "ip -n " + kNs + " -batch -");
  EXPECT_EQ(c[6].input, podBatch());
}

TEST_F(LocalRuntimeTest, WithoutEgressTheLoginPodGetsNoDefaultRoute) {
  prepared();
  ASSERT_TRUE(runtime_->startPod(pod("login", "172.29.3.3", "login")).isOk());
  auto c = calls();
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[2].input,
            "link set lo up\nlink set pac1d0300-03 name eth0\naddr add 172.29.3.3/24 dev eth0\n"
            "link set eth0 up\n");
}

TEST_F(LocalRuntimeTest, StartPodOfARunningPodRunsNothing) {
  prepared();
  started(pod());
  ASSERT_TRUE(runtime_->startPod(pod()).isOk());
  EXPECT_THAT(lines(), IsEmpty());
}

TEST_F(LocalRuntimeTest, ARestartedPodKeepsAWorkingNetwork) {
  prepared();
  started(pod());
  crashPod("slinky-0");
  ASSERT_TRUE(runtime_->startPod(pod()).isOk());
  EXPECT_THAT(lines(),
              ElementsAre("ip -n " + kNs + " -o addr show dev eth0", podStart("slinky-0")));
}

TEST_F(LocalRuntimeTest, StartPodRunsNothingBeforePrepareClusterOrForAnUnbuiltImage) {
  Status s = runtime_->startPod(pod());
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_THAT(runner_.calls(), IsEmpty());
  prepared();
  PodSpec unbuilt = pod();
  unbuilt.image.id = "unbuilt";
  s = runtime_->startPod(unbuilt);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_EQ(s.message(), "image debian13-slurm24.11 (unbuilt) is not built on this host");
  EXPECT_THAT(lines(), IsEmpty());
}

TEST_F(LocalRuntimeTest, AFailingNamespaceStopsStartPodWithNothingMade) {
  prepared();
  runner_.failNextMatching({"ip", "netns", "add"}, 1,
                           "Cannot create namespace file \"/run/netns/x\": File exists\n");
  Status s = runtime_->startPod(pod());
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_EQ(s.message(),
            "creating network namespace " + kNs + ": `ip netns add " + kNs +
                "` exited 1: Cannot create namespace file \"/run/netns/x\": File exists");
  EXPECT_THAT(lines(), ElementsAre("ip netns add " + kNs));
  EXPECT_FALSE(fs::exists(podDir("slinky-0")));
  EXPECT_FALSE(valueOf(runtime_->podStatus("demo", "slinky-0")).exists);
}

// startPod does not undo the namespace it made before a failure: the next
// start reuses it, and stopCluster sweeps it (below). No pod directory is
// made, so nothing looks like a pod.
TEST_F(LocalRuntimeTest, AFailingVethPairStopsStartPodAndTheRetryReusesTheNamespace) {
  prepared();
  runner_.failNextMatching({"ip", "-batch"}, 2, "RTNETLINK answers: File exists\n");
  Status s = runtime_->startPod(pod());
  EXPECT_EQ(s.message(),
            "connecting pod slinky-0: `ip -batch -` exited 2: RTNETLINK answers: File exists");
  EXPECT_THAT(lines(), ElementsAre("ip netns add " + kNs, "ip -batch -"));
  EXPECT_FALSE(fs::exists(podDir("slinky-0")));
  EXPECT_THAT(valueOf(runtime_->listPods("demo")), IsEmpty());
  EXPECT_TRUE(hasNetns(kNs));

  mark();
  ASSERT_TRUE(runtime_->startPod(pod()).isOk());
  EXPECT_THAT(lines(),
              ElementsAre("ip -batch -", "ip -n " + kNs + " -batch -", podStart("slinky-0")));
  EXPECT_EQ(input(0), vethBatch());
}

TEST_F(LocalRuntimeTest, AVethWhosePodEndWasNeverConfiguredIsMadeAgain) {
  prepared();
  runner_.failNextMatching({"ip", "-n", kNs, "-batch"}, 2,
                           "Error: argument \"eth0\" is wrong: Device does not exist\n");
  Status s = runtime_->startPod(pod());
  EXPECT_EQ(s.message(), "configuring pod slinky-0 network: `ip -n " + kNs +
                             " -batch -` exited 2: Error: argument \"eth0\" is wrong: Device does "
                             "not exist");
  EXPECT_THAT(lines(),
              ElementsAre("ip netns add " + kNs, "ip -batch -", "ip -n " + kNs + " -batch -"));
  EXPECT_FALSE(fs::exists(podDir("slinky-0")));
  EXPECT_TRUE(hasInterface(kHostVeth));

  mark();
  ASSERT_TRUE(runtime_->startPod(pod()).isOk());
  EXPECT_THAT(lines(), ElementsAre("ip -n " + kNs + " -o addr show dev eth0",
                                   "ip link del " + kHostVeth, "ip -batch -",
                                   "ip -n " + kNs + " -batch -", podStart("slinky-0")));
  auto c = calls();
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c[2].input, vethBatch());
  EXPECT_EQ(c[3].input, podBatch());
}

TEST_F(LocalRuntimeTest, AFailingSupervisorLeavesAStoppedPodThatStopPodRemoves) {
  prepared();
  runner_.failNext("corral-pod", 1, "corral-pod: cannot mount the image: Permission denied\n");
  Status s = runtime_->startPod(pod());
  EXPECT_EQ(s.message(), "starting pod slinky-0: `" + podStart("slinky-0") +
                             "` exited 1: corral-pod: cannot mount the image: Permission denied");
  EXPECT_THAT(lines(), ElementsAre("ip netns add " + kNs, "ip -batch -",
                                   "ip -n " + kNs + " -batch -", podStart("slinky-0")));
  auto st = runtime_->podStatus("demo", "slinky-0");
  ASSERT_TRUE(st.isOk());
  EXPECT_TRUE(st->exists);
  EXPECT_FALSE(st->running);
  EXPECT_EQ(st->message, "pod is not running");

  mark();
  ASSERT_TRUE(runtime_->stopPod("demo", "slinky-0").isOk());
  EXPECT_THAT(lines(), ElementsAre("ip link del " + kHostVeth, "ip netns del " + kNs));
  EXPECT_FALSE(fs::exists(podDir("slinky-0")));
  EXPECT_FALSE(hasNetns(kNs));
  EXPECT_FALSE(hasInterface(kHostVeth));
}

TEST_F(LocalRuntimeTest, ASupervisorThatCannotStartIsNamed) {
  prepared();
  runner_.refuseNext("corral-pod", internalError("cannot run corral-pod: Permission denied"));
  Status s = runtime_->startPod(pod());
  EXPECT_EQ(s.message(), "starting pod slinky-0: cannot run corral-pod: Permission denied");
  EXPECT_FALSE(valueOf(runtime_->podStatus("demo", "slinky-0")).running);
}

TEST_F(LocalRuntimeTest, ANetworkCommandThatCannotStartStopsStartPod) {
  prepared();
  runner_.refuseNextMatching({"ip", "netns", "add"},
                             internalError("cannot run ip: Resource temporarily unavailable"));
  Status s = runtime_->startPod(pod());
  EXPECT_EQ(s.message(), "creating network namespace " + kNs +
                             ": cannot run ip: Resource temporarily unavailable");
  EXPECT_THAT(lines(), ElementsAre("ip netns add " + kNs));
  EXPECT_FALSE(fs::exists(podDir("slinky-0")));
}

// --- stopPod, stopCluster, destroyCluster -----------------------------------

TEST_F(LocalRuntimeTest, StopPodStopsItsPid1ThenRemovesTheVethThenTheNamespace) {
  prepared();
  started(pod());
  ASSERT_TRUE(runtime_->stopPod("demo", "slinky-0").isOk());
  int end = reapStandIn("slinky-0");
  EXPECT_TRUE(WIFSIGNALED(end) && WTERMSIG(end) == SIGTERM);
  EXPECT_THAT(lines(), ElementsAre("ip link del " + kHostVeth, "ip netns del " + kNs));
  EXPECT_FALSE(fs::exists(podDir("slinky-0")));
  EXPECT_FALSE(hasNetns(kNs));
  EXPECT_TRUE(hasInterface(kBridge));
}

TEST_F(LocalRuntimeTest, StopClusterStopsPodsSweepsNamespacesThenRemovesBridgeAndFirewall) {
  prepared();
  started(pod());
  // Left by a crash between a pod's network and its directory; only this
  // cluster's namespaces go.
  for (const char* ns : {"crl-ac1d0300-demo.slinky-9", "crl-ac1d0300-demo2.slinky-0",
                         "crl-ac1d0400-demo.slinky-0"})
    std::ofstream(net_ + "/run/netns/" + ns).flush();
  ASSERT_TRUE(runtime_->stopCluster(demo()).isOk());
  reapStandIn("slinky-0");
  EXPECT_THAT(lines(), ElementsAre("ip link del " + kHostVeth, "ip netns del " + kNs,
                                   "ip netns del crl-ac1d0300-demo.slinky-9",
                                   "ip link del " + kBridge, "nft -f -"));
  EXPECT_EQ(input(4), renderFirewallRemoval(kKey));
  EXPECT_FALSE(hasInterface(kBridge));
  EXPECT_TRUE(hasNetns("crl-ac1d0300-demo2.slinky-0"));
  EXPECT_TRUE(hasNetns("crl-ac1d0400-demo.slinky-0"));
  // What the cluster is stays, for its next start or destroyCluster.
  EXPECT_TRUE(runtime_->idRange("demo").isOk());
  EXPECT_THAT(valueOf(runtime_->listClusters()), ElementsAre("demo"));
}

TEST_F(LocalRuntimeTest, StopClusterStopsEveryPodBeforeTheBridge) {
  prepared();
  started(pod("slinky-0", "172.29.3.10"));
  started(pod("slinky-1", "172.29.3.11"));
  ASSERT_TRUE(runtime_->stopCluster(demo()).isOk());
  reapStandIn("slinky-0");
  reapStandIn("slinky-1");
  auto l = lines();
  ASSERT_EQ(l.size(), 6u);
  // The pods stop concurrently; each one's veth goes before its namespace.
  std::vector<std::string> pods(l.begin(), l.begin() + 4);
  EXPECT_THAT(pods, UnorderedElementsAre("ip link del " + kHostVeth, "ip netns del " + kNs,
                                         "ip link del cac1d0300-0b",
                                         "ip netns del crl-ac1d0300-demo.slinky-1"));
  auto at = [&](const std::string& line) {
    return std::find(l.begin(), l.end(), line) - l.begin();
  };
  EXPECT_LT(at("ip link del " + kHostVeth), at("ip netns del " + kNs));
  EXPECT_LT(at("ip link del cac1d0300-0b"), at("ip netns del crl-ac1d0300-demo.slinky-1"));
  EXPECT_EQ(l[4], "ip link del " + kBridge);
  EXPECT_EQ(l[5], "nft -f -");
}

TEST_F(LocalRuntimeTest, StopClusterSweepsANamespaceOfAPodThatNeverStarted) {
  prepared();
  runner_.failNextMatching({"ip", "-batch"}, 2, "RTNETLINK answers: File exists\n");
  ASSERT_FALSE(runtime_->startPod(pod()).isOk());
  mark();
  ASSERT_TRUE(runtime_->stopCluster(demo()).isOk());
  EXPECT_THAT(lines(), ElementsAre("ip netns del " + kNs, "ip link del " + kBridge, "nft -f -"));
  EXPECT_FALSE(hasNetns(kNs));
}

TEST_F(LocalRuntimeTest, AFailingPodStopsTheTeardownBeforeTheBridge) {
  prepared();
  started(pod());
  runner_.failNextMatching({"ip", "netns", "del"}, 1,
                           "Cannot remove namespace file: Device or resource busy\n");
  Status s = runtime_->stopCluster(demo());
  EXPECT_EQ(s.message(), "`ip netns del " + kNs +
                             "` exited 1: Cannot remove namespace file: Device or resource busy");
  EXPECT_THAT(lines(), ElementsAre("ip link del " + kHostVeth, "ip netns del " + kNs));
  EXPECT_TRUE(hasInterface(kBridge));
  reapStandIn("slinky-0");  // Its PID 1 was stopped all the same.

  // The pod's directory stayed, so the next pass finishes the pod, then the rest.
  mark();
  ASSERT_TRUE(runtime_->stopCluster(demo()).isOk());
  EXPECT_THAT(lines(), ElementsAre("ip netns del " + kNs, "ip link del " + kBridge, "nft -f -"));
}

TEST_F(LocalRuntimeTest, TheSweepContinuesPastANamespaceThatWillNotGo) {
  prepared();
  std::string stale = "crl-ac1d0300-demo.slinky-9";
  std::ofstream(net_ + "/run/netns/" + stale).flush();
  runner_.failNextMatching({"ip", "netns", "del"}, 1,
                           "Cannot remove namespace file: Device or resource busy\n");
  ASSERT_TRUE(runtime_->stopCluster(demo()).isOk());
  EXPECT_THAT(lines(), ElementsAre("ip netns del " + stale, "ip link del " + kBridge, "nft -f -"));
  EXPECT_TRUE(hasNetns(stale));
}

TEST_F(LocalRuntimeTest, AFailingBridgeDeleteStopsTheTeardownBeforeTheFirewall) {
  prepared();
  runner_.failNextMatching({"ip", "link", "del", kBridge}, 2,
                           "RTNETLINK answers: Operation not permitted\n");
  Status s = runtime_->stopCluster(demo());
  EXPECT_EQ(s.message(),
            "`ip link del crl-ac1d0300` exited 2: RTNETLINK answers: Operation not permitted");
  EXPECT_THAT(lines(), ElementsAre("ip link del " + kBridge));
}

TEST_F(LocalRuntimeTest, DestroyClusterTearsDownThenFreesItsSubnetIdRangeAndDirectory) {
  makeRuntime("", kSubnet);  // A pool of one subnet.
  ASSERT_EQ(valueOf(runtime_->allocateNetwork("demo")), kSubnet);
  EXPECT_EQ(runtime_->allocateNetwork("next").status().code(), Code::kUnavailable);
  prepared();
  started(pod());
  ASSERT_TRUE(runtime_->destroyCluster(demo()).isOk());
  reapStandIn("slinky-0");
  EXPECT_THAT(lines(), ElementsAre("ip link del " + kHostVeth, "ip netns del " + kNs,
                                   "ip link del " + kBridge, "nft -f -"));
  EXPECT_FALSE(fs::exists(clusterDir()));
  EXPECT_FALSE(fs::is_symlink(root_ + "/ids/0"));
  EXPECT_THAT(valueOf(runtime_->listClusters()), IsEmpty());
  // Both are free for the next cluster.
  EXPECT_EQ(valueOf(runtime_->allocateNetwork("next")), kSubnet);
  ASSERT_TRUE(runtime_->prepareCluster({"next", 2, kSubnet}).isOk());
  EXPECT_EQ(valueOf(runtime_->idRange("next")).base, kIdPoolStart);
}

TEST_F(LocalRuntimeTest, AFailedDestroyClusterKeepsWhatARetryNeeds) {
  prepared();
  runner_.failNext("nft", 1, "netlink: Error: Could not process rule: Operation not permitted\n");
  Status s = runtime_->destroyCluster(demo());
  EXPECT_EQ(s.message(),
            "removing the cluster's firewall: `nft -f -` exited 1: netlink: Error: Could not "
            "process rule: Operation not permitted");
  EXPECT_THAT(lines(), ElementsAre("ip link del " + kBridge, "nft -f -"));
  EXPECT_TRUE(fs::exists(clusterDir() + "/netkey"));
  EXPECT_TRUE(fs::is_symlink(root_ + "/ids/0"));
  EXPECT_TRUE(runtime_->idRange("demo").isOk());

  mark();
  ASSERT_TRUE(runtime_->destroyCluster(demo()).isOk());
  EXPECT_THAT(lines(), ElementsAre("nft -f -"));
  EXPECT_FALSE(fs::exists(clusterDir()));
}

// --- allocateNetwork and id ranges ------------------------------------------

TEST_F(LocalRuntimeTest, AllocateNetworkGivesEachClusterItsOwn24AndTheSameOneAgain) {
  EXPECT_EQ(valueOf(runtime_->allocateNetwork("a")), "172.29.0.0/24");
  EXPECT_EQ(valueOf(runtime_->allocateNetwork("b")), "172.29.1.0/24");
  EXPECT_EQ(valueOf(runtime_->allocateNetwork("a")), "172.29.0.0/24");
  EXPECT_EQ(valueOf(readFile(clusterDir("b") + "/netkey")), "ac1d0100");
  EXPECT_THAT(runner_.calls(), IsEmpty());
}

TEST_F(LocalRuntimeTest, AllocateNetworkRefusesWhenThePoolIsFull) {
  makeRuntime("", "10.9.0.0/23");
  EXPECT_EQ(valueOf(runtime_->allocateNetwork("a")), "10.9.0.0/24");
  EXPECT_EQ(valueOf(runtime_->allocateNetwork("b")), "10.9.1.0/24");
  auto c = runtime_->allocateNetwork("c");
  EXPECT_EQ(c.status().code(), Code::kUnavailable);
  EXPECT_EQ(c.status().message(),
            "every /24 of the subnet pool 10.9.0.0/23 is in use; delete a cluster or give corrald "
            "a larger --subnet-pool");
}

TEST_F(LocalRuntimeTest, EachClusterClaimsItsOwnIdRangeAndAStaleClaimIsFree) {
  EXPECT_EQ(runtime_->idRange("demo").status().code(), Code::kNotFound);
  fs::create_directories(root_ + "/ids");
  fs::create_directory_symlink(root_ + "/gone", root_ + "/ids/0");    // Its cluster was removed.
  fs::create_directory_symlink(root_ + "/rootfs", root_ + "/ids/1");  // Another corrald's.
  ASSERT_TRUE(runtime_->prepareCluster(demo()).isOk());
  ASSERT_TRUE(runtime_->prepareCluster({"other", 2, "172.29.4.0/24"}).isOk());
  EXPECT_EQ(valueOf(runtime_->idRange("demo")).base, kIdPoolStart);
  EXPECT_EQ(valueOf(runtime_->idRange("other")).base, kIdPoolStart + 2 * kIdRangeSize);
  EXPECT_EQ(fs::read_symlink(root_ + "/ids/0"), clusterDir("demo"));
  EXPECT_EQ(fs::read_symlink(root_ + "/ids/1"), root_ + "/rootfs");
  EXPECT_EQ(fs::read_symlink(root_ + "/ids/2"), clusterDir("other"));
}

// --- exec and updateMounts --------------------------------------------------

TEST_F(LocalRuntimeTest, ExecEntersEveryNamespaceOfThePodAsItsRoot) {
  prepared();
  started(pod());
  ProcessOptions seen;
  runner_.on("nsenter", [&seen](const std::vector<std::string>&, const ProcessOptions& o) {
    seen = o;
    return exited(0, "up\n");
  });
  ProcessOptions po;
  po.input = "hello";
  po.env = {{"SLURM_CONF", "/etc/slurm/slurm.conf"}};
  auto r = runtime_->exec("demo", "slinky-0", {"sinfo", "-h"}, po);
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(r->out, "up\n");
  std::string pid = std::to_string(standIns_.at(specPath("slinky-0")));
  EXPECT_THAT(lines(),
              ElementsAre("nsenter -t " + pid +
                          " -U -n -m -u -i -p -C -r -w -- env -i "
                          "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "
                          "HOME=/root LANG=C.UTF-8 USER=root "
                          "SLURM_CONF=/etc/slurm/slurm.conf sinfo -h"));
  // The pod's environment is env's arguments, none of the host's.
  EXPECT_THAT(seen.env, IsEmpty());
  EXPECT_EQ(seen.input, "hello");
}

TEST_F(LocalRuntimeTest, ExecInAPodThatIsNotRunningRunsNothing) {
  prepared();
  started(pod());
  crashPod("slinky-0");
  auto r = runtime_->exec("demo", "slinky-0", {"true"}, {});
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_THAT(lines(), IsEmpty());
}

TEST_F(LocalRuntimeTest, UpdateMountsUnmountsWhatChangedBeforeMountingTheNew) {
  prepared();
  PodSpec had = pod();
  had.mounts = {
      {"shared", "/shared", false}, {"/srv/data", "/data", true}, {"/srv/keep", "/keep", true}};
  started(had);
  PodSpec want = pod();
  want.mounts = {{"/srv/keep", "/keep", true},
                 {"volumes/home", "/shared", false},
                 {"/srv/new", "/new", false}};
  std::string bin = root_ + "/bin/corral-pod ", spec = specPath("slinky-0");
  std::vector<std::string> sequence = {
      bin + "umount " + spec + " /shared", bin + "umount " + spec + " /data",
      bin + "mount " + spec + " " + clusterDir() + "/volumes/home /shared rw",
      bin + "mount " + spec + " /srv/new /new rw"};

  runner_.failNext("corral-pod", 1, "umount /shared: target is busy\n");
  Status s = runtime_->updateMounts(want);
  EXPECT_EQ(s.message(), "changing the mounts of pod slinky-0: `" + sequence[0] +
                             "` exited 1: umount /shared: target is busy");
  EXPECT_THAT(lines(), ElementsAre(sequence[0]));

  // The spec still lists the old mounts, so the retry does it all.
  mark();
  ASSERT_TRUE(runtime_->updateMounts(want).isOk());
  EXPECT_EQ(lines(), sequence);
  // Now it lists the new ones: nothing is left to change.
  mark();
  ASSERT_TRUE(runtime_->updateMounts(want).isOk());
  EXPECT_THAT(lines(), IsEmpty());
}

}  // namespace
}  // namespace corral
