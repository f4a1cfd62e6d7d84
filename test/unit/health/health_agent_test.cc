#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/files.h"
#include "fakes/fake_clock.h"
#include "health/agent.h"

namespace corral {
namespace {

using Argv = std::vector<std::string>;

constexpr const char* kXid79 =
    "[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off "
    "the bus.";
constexpr const char* kXid48 =
    "NVRM: Xid (PCI:0000:86:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double "
    "bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.";
constexpr const char* kXid13 =
    "NVRM: Xid (PCI:0000:3b:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Illegal "
    "Instruction Encoding";
constexpr const char* kDrain79 =
    "reason=corral: GPU XID 79 on 0000:3b:00 (GPU has fallen off the bus)";

// Plays slurmctld for `scontrol show node NODE -o` and `scontrol update`,
// recording every command. `update` drains the node as Slurm would, so a
// later `show` sees the drain.
class FakeScontrol : public ProcessRunner {
 public:
  std::string state = "IDLE";
  std::string reason;           // Without the " [user@time]" Slurm appends.
  bool cannotStart = false;     // `run` fails as when scontrol is not on PATH.
  bool controllerDown = false;  // Every command exits 1 as when slurmctld is unreachable.
  std::vector<Argv> calls;

  StatusOr<ProcessResult> run(const Argv& argv, const ProcessOptions&) override {
    calls.push_back(argv);
    if (cannotStart) return internalError("cannot run scontrol: No such file or directory");
    ProcessResult r;
    r.exitCode = 0;
    if (controllerDown) {
      r.exitCode = 1;
      r.err = "slurm_load_node error: Unable to contact slurm controller (connect failure)\n";
      return r;
    }
    if (argv.size() == 5 && argv[0] == "scontrol" && argv[1] == "show" && argv[2] == "node" &&
        argv[4] == "-o") {
      r.out = "NodeName=" + argv[3] +
              " Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 CPUEfctv=4 CPUTot=4 CPULoad=0.01 "
              "AvailableFeatures=(null) ActiveFeatures=(null) Gres=gpu:8 NodeAddr=" +
              argv[3] + " NodeHostName=" + argv[3] +
              " Version=22.05.8 OS=Linux 6.1.0 RealMemory=1000 AllocMem=0 FreeMem=900 "
              "Sockets=4 Boards=1 State=" +
              state +
              " ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=gpu "
              "BootTime=2025-11-30T00:00:00 SlurmdStartTime=2025-11-30T00:00:01 "
              "LastBusyTime=2025-11-30T00:00:01 CfgTRES=cpu=4,mem=1000M,billing=4 AllocTRES= "
              "CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 "
              "ExtSensorsTemp=n/s";
      if (!reason.empty()) r.out += " Reason=" + reason + " [root@2025-11-30T00:00:02]";
      r.out += "\n";
      return r;
    }
    if (argv.size() == 5 && argv[0] == "scontrol" && argv[1] == "update" &&
        argv[3] == "state=drain" && argv[4].rfind("reason=", 0) == 0) {
      if (state.find("DRAIN") == std::string::npos) state += "+DRAIN";
      reason = argv[4].substr(7);
      return r;
    }
    r.exitCode = 1;
    r.err = "unexpected command\n";
    return r;
  }

  size_t updates() const {
    size_t n = 0;
    for (const auto& c : calls) n += c.size() > 1 && c[1] == "update";
    return n;
  }
};

class HealthAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = "/var/tmp/corral-health-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    options_.nodeName = "gpu-0";
    options_.kmsgPath = dir_ + "/kmsg";
    options_.reportPath = dir_ + "/health.json";
    options_.slurmdPidFile = dir_ + "/slurmd.pid";
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  HealthAgent& agent() {
    if (!agent_) {
      agent_ = std::make_unique<HealthAgent>(options_, scontrol_, clock_,
                                             [this](const std::string& pidFile) {
                                               checkedPidFiles_.push_back(pidFile);
                                               return slurmdAlive_;
                                             });
    }
    return *agent_;
  }

  void append(const std::string& text) {
    std::ofstream f(options_.kmsgPath, std::ios::app | std::ios::binary);
    f << text;
  }
  void appendLine(const std::string& line) { append(line + "\n"); }

  nlohmann::json report() {
    auto text = readFile(options_.reportPath);
    EXPECT_TRUE(text.isOk()) << text.status().toString();
    if (!text.isOk()) return nullptr;
    auto j = nlohmann::json::parse(*text, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << *text;
    return j;
  }

  std::string dir_;
  HealthAgentOptions options_;
  FakeScontrol scontrol_;
  FakeClock clock_;
  bool slurmdAlive_ = true;
  std::vector<std::string> checkedPidFiles_;
  std::unique_ptr<HealthAgent> agent_;
};

TEST_F(HealthAgentTest, HardwareXidDrainsTheNodeWithCorralsReason) {
  appendLine(kXid79);
  agent().tick();

  ASSERT_EQ(scontrol_.calls.size(), 2u);
  EXPECT_EQ(scontrol_.calls[0], (Argv{"scontrol", "show", "node", "gpu-0", "-o"}));
  EXPECT_EQ(scontrol_.calls[1],
            (Argv{"scontrol", "update", "nodename=gpu-0", "state=drain", kDrain79}));

  auto r = report();
  EXPECT_EQ(r["node"], "gpu-0");
  EXPECT_EQ(r["time"], clock_.unixMillis());
  EXPECT_EQ(r["gpu"], "xid");
  EXPECT_EQ(r["slurmd"], "ok");
  ASSERT_EQ(r["xids"].size(), 1u);
  const auto& x = r["xids"][0];
  EXPECT_EQ(x["time"], clock_.unixMillis());
  EXPECT_EQ(x["code"], 79);
  EXPECT_EQ(x["pci"], "0000:3b:00");
  EXPECT_EQ(x["class"], "hardware");
  EXPECT_EQ(x["description"], "GPU has fallen off the bus");
  EXPECT_EQ(x["action"], "drained");
  EXPECT_EQ(x["line"], kXid79);
}

TEST_F(HealthAgentTest, ApplicationXidIsReportedButNotDrained) {
  appendLine(kXid13);
  agent().tick();

  EXPECT_TRUE(scontrol_.calls.empty());
  auto r = report();
  EXPECT_EQ(r["gpu"], "ok");
  ASSERT_EQ(r["xids"].size(), 1u);
  EXPECT_EQ(r["xids"][0]["code"], 13);
  EXPECT_EQ(r["xids"][0]["class"], "application");
  EXPECT_EQ(r["xids"][0]["description"], "graphics engine exception");
  EXPECT_EQ(r["xids"][0]["action"], "reported");
}

TEST_F(HealthAgentTest, UnknownXidIsReportedButNotDrained) {
  appendLine("NVRM: Xid (PCI:0000:3b:00): 154, pid=1, name=x, GPU recovery action changed");
  agent().tick();

  EXPECT_TRUE(scontrol_.calls.empty());
  auto r = report();
  EXPECT_EQ(r["gpu"], "ok");
  ASSERT_EQ(r["xids"].size(), 1u);
  EXPECT_EQ(r["xids"][0]["class"], "unknown");
  EXPECT_EQ(r["xids"][0]["description"], "unknown XID");
  EXPECT_EQ(r["xids"][0]["action"], "reported");
}

TEST_F(HealthAgentTest, AdminDrainIsKept) {
  scontrol_.state = "IDLE+DRAIN";
  scontrol_.reason = "maintenance";
  appendLine(kXid79);
  agent().tick();

  ASSERT_EQ(scontrol_.calls.size(), 1u);
  EXPECT_EQ(scontrol_.calls[0][1], "show");
  EXPECT_EQ(scontrol_.updates(), 0u);
  EXPECT_EQ(scontrol_.reason, "maintenance");
  auto r = report();
  EXPECT_EQ(r["gpu"], "xid");
  ASSERT_EQ(r["xids"].size(), 1u);
  EXPECT_EQ(r["xids"][0]["action"], "kept admin drain (Reason=maintenance)");
}

TEST_F(HealthAgentTest, NodeDrainedByCorralGetsTheNewReason) {
  scontrol_.state = "MIXED+DRAIN";
  scontrol_.reason = "corral: GPU XID 48 on 0000:86:00 (double-bit ECC error)";
  appendLine(kXid79);
  agent().tick();

  ASSERT_EQ(scontrol_.updates(), 1u);
  EXPECT_EQ(scontrol_.calls.back()[4], kDrain79);
  EXPECT_EQ(report()["xids"][0]["action"], "drained");
}

TEST_F(HealthAgentTest, DownButNotDrainedNodeIsDrained) {
  scontrol_.state = "DOWN*";
  scontrol_.reason = "Not responding";
  appendLine(kXid79);
  agent().tick();
  EXPECT_EQ(scontrol_.updates(), 1u);
}

TEST_F(HealthAgentTest, SeveralHardwareXidsInOneTickDrainOnceNamingTheFirst) {
  appendLine(kXid48);
  appendLine(kXid13);
  appendLine(kXid79);
  agent().tick();

  ASSERT_EQ(scontrol_.updates(), 1u);
  EXPECT_EQ(scontrol_.calls.back()[4],
            "reason=corral: GPU XID 48 on 0000:86:00 (double-bit ECC error)");
  auto r = report();
  ASSERT_EQ(r["xids"].size(), 3u);
  EXPECT_EQ(r["xids"][0]["action"], "drained");
  EXPECT_EQ(r["xids"][1]["action"], "reported");
  EXPECT_EQ(r["xids"][2]["action"], "drained");
}

TEST_F(HealthAgentTest, LinesAppendedAcrossTicksAreProcessedOnce) {
  appendLine(kXid13);
  agent().tick();
  EXPECT_EQ(report()["xids"].size(), 1u);

  // Half a line: the writer has not finished it yet.
  std::string line(kXid79);
  append(line.substr(0, 20));
  agent().tick();
  EXPECT_EQ(report()["xids"].size(), 1u);
  EXPECT_TRUE(scontrol_.calls.empty());

  append(line.substr(20) + "\n");
  agent().tick();
  auto r = report();
  ASSERT_EQ(r["xids"].size(), 2u);
  EXPECT_EQ(r["xids"][1]["code"], 79);
  EXPECT_EQ(r["xids"][1]["line"], kXid79);
  EXPECT_EQ(scontrol_.updates(), 1u);

  appendLine("[ 1235.000000] some unrelated kernel message");
  agent().tick();
  agent().tick();
  EXPECT_EQ(report()["xids"].size(), 2u);
  EXPECT_EQ(scontrol_.updates(), 1u);
}

TEST_F(HealthAgentTest, TruncatedFileIsReadFromTheStart) {
  appendLine(kXid13);
  appendLine(kXid13);
  agent().tick();
  EXPECT_EQ(report()["xids"].size(), 2u);

  {
    std::ofstream f(options_.kmsgPath, std::ios::trunc | std::ios::binary);
    f << "NVRM: Xid (PCI:0000:3b:00): 31, short\n";
  }
  agent().tick();
  auto r = report();
  ASSERT_EQ(r["xids"].size(), 3u);
  EXPECT_EQ(r["xids"][2]["code"], 31);
}

TEST_F(HealthAgentTest, ReplacedFileIsReadFromTheStartEvenWhenLonger) {
  appendLine(kXid13);
  agent().tick();
  EXPECT_EQ(report()["xids"].size(), 1u);

  std::string other = dir_ + "/kmsg.new";
  {
    std::ofstream f(other, std::ios::binary);
    f << kXid13 << "\n" << kXid13 << "\n" << kXid79 << "\n";
  }
  std::filesystem::rename(other, options_.kmsgPath);
  agent().tick();
  EXPECT_EQ(report()["xids"].size(), 4u);
  EXPECT_EQ(scontrol_.updates(), 1u);
}

TEST_F(HealthAgentTest, KmsgFileMayAppearLater) {
  agent().tick();
  auto r = report();
  EXPECT_EQ(r["gpu"], "ok");
  EXPECT_TRUE(r["xids"].empty());

  appendLine(kXid79);
  agent().tick();
  EXPECT_EQ(report()["xids"].size(), 1u);
  EXPECT_EQ(report()["gpu"], "xid");
}

TEST_F(HealthAgentTest, SlurmdCheckIsReported) {
  slurmdAlive_ = true;
  agent().tick();
  EXPECT_EQ(report()["slurmd"], "ok");
  ASSERT_FALSE(checkedPidFiles_.empty());
  EXPECT_EQ(checkedPidFiles_.back(), options_.slurmdPidFile);

  slurmdAlive_ = false;
  agent().tick();
  EXPECT_EQ(report()["slurmd"], "not running");

  slurmdAlive_ = true;
  agent().tick();
  EXPECT_EQ(report()["slurmd"], "ok");
}

TEST_F(HealthAgentTest, ReportIsRewrittenOnChangeOrEveryFiveSeconds) {
  agent().tick();
  EXPECT_EQ(agent().reportWrites(), 1);
  int64_t firstTime = report()["time"];

  clock_.advance(kReportRefresh - std::chrono::milliseconds(1));
  agent().tick();
  EXPECT_EQ(agent().reportWrites(), 1);
  EXPECT_EQ(report()["time"], firstTime);

  clock_.advance(1);
  agent().tick();
  EXPECT_EQ(agent().reportWrites(), 2);
  EXPECT_EQ(report()["time"], firstTime + kReportRefresh.count());

  clock_.advance(10);
  appendLine(kXid13);
  agent().tick();
  EXPECT_EQ(agent().reportWrites(), 3);

  clock_.advance(10);
  slurmdAlive_ = false;
  agent().tick();
  EXPECT_EQ(agent().reportWrites(), 4);
  EXPECT_EQ(report()["slurmd"], "not running");

  agent().tick();
  EXPECT_EQ(agent().reportWrites(), 4);
  EXPECT_FALSE(std::filesystem::exists(options_.reportPath + ".tmp"));
}

TEST_F(HealthAgentTest, FailedDrainIsRetried) {
  scontrol_.controllerDown = true;
  appendLine(kXid79);
  agent().tick();
  ASSERT_EQ(scontrol_.calls.size(), 1u);
  std::string action = report()["xids"][0]["action"];
  EXPECT_EQ(action,
            "scontrol error: show node: exit 1: slurm_load_node error: Unable to contact slurm "
            "controller (connect failure) (retrying)");

  // Not before `kDrainRetry` has passed.
  clock_.advance(kDrainRetry - std::chrono::milliseconds(1));
  agent().tick();
  EXPECT_EQ(scontrol_.calls.size(), 1u);

  scontrol_.controllerDown = false;
  clock_.advance(1);
  agent().tick();
  ASSERT_EQ(scontrol_.calls.size(), 3u);
  EXPECT_EQ(scontrol_.calls[2][4], kDrain79);
  EXPECT_EQ(report()["xids"][0]["action"], "drained");

  clock_.advance(kDrainRetry * 3);
  agent().tick();
  EXPECT_EQ(scontrol_.calls.size(), 3u);
}

TEST_F(HealthAgentTest, ScontrolThatCannotStartIsReported) {
  scontrol_.cannotStart = true;
  appendLine(kXid79);
  agent().tick();
  std::string action = report()["xids"][0]["action"];
  EXPECT_EQ(action.rfind("scontrol error: show node: cannot run scontrol", 0), 0u) << action;
}

TEST_F(HealthAgentTest, KeepsTheNewestFiftyXids) {
  for (int i = 0; i < 60; ++i)
    appendLine("NVRM: Xid (PCI:0000:3b:00): 13, pid=" + std::to_string(i) + ", name=p, text");
  agent().tick();
  auto r = report();
  ASSERT_EQ(r["xids"].size(), kMaxReportedXids);
  EXPECT_NE(r["xids"][0]["line"].get<std::string>().find("pid=10,"), std::string::npos);
  EXPECT_NE(r["xids"][49]["line"].get<std::string>().find("pid=59,"), std::string::npos);
}

TEST_F(HealthAgentTest, LineThatIsNotUtf8DoesNotBreakTheReport) {
  appendLine("NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=\xff\xfe, bad bytes");
  agent().tick();
  auto r = report();
  ASSERT_EQ(r["xids"].size(), 1u);
  EXPECT_EQ(r["xids"][0]["code"], 13);
}

TEST_F(HealthAgentTest, UnwritableReportIsRetriedWithoutThrowing) {
  options_.reportPath = dir_ + "/missing/health.json";
  agent().tick();
  EXPECT_EQ(agent().reportWrites(), 0);
  EXPECT_NE(agent().lastReport().find("\"node\": \"gpu-0\""), std::string::npos);
  std::filesystem::create_directory(dir_ + "/missing");
  agent().tick();
  EXPECT_EQ(agent().reportWrites(), 1);
}

TEST_F(HealthAgentTest, InjectedLogReaderIsUsed) {
  class OneShot : public KernelLogReader {
   public:
    std::vector<std::string> readNewLines() override {
      std::vector<std::string> out;
      if (!done_) out.push_back(std::string("6,1,2,-;") + kXid79);
      done_ = true;
      return out;
    }

   private:
    bool done_ = false;
  };
  HealthAgent a(
      options_, scontrol_, clock_, [](const std::string&) { return true; },
      std::make_unique<OneShot>());
  a.tick();
  a.tick();
  EXPECT_EQ(scontrol_.updates(), 1u);
}

TEST(PidFileProcessAlive, ChecksThePidItHolds) {
  std::string tmpl = "/var/tmp/corral-health-pid-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  std::string pidFile = tmpl + "/slurmd.pid";
  auto write = [&](const std::string& text) {
    std::ofstream f(pidFile, std::ios::trunc);
    f << text;
  };

  EXPECT_FALSE(pidFileProcessAlive(pidFile));  // No file.
  write(std::to_string(getpid()) + "\n");
  EXPECT_TRUE(pidFileProcessAlive(pidFile));
  write("99999999\n");  // Above any pid_max: no such process.
  EXPECT_FALSE(pidFileProcessAlive(pidFile));
  for (const char* bad : {"", "garbage", "0", "-1", "12ab"}) {
    write(bad);
    EXPECT_FALSE(pidFileProcessAlive(pidFile)) << bad;
  }
  std::error_code ec;
  std::filesystem::remove_all(tmpl, ec);
}

TEST(ParseScontrolNode, StateAndReason) {
  auto n = parseScontrolNode(
      "NodeName=w1 Arch=x86_64 State=IDLE+DRAIN ThreadsPerCore=1 NextState=RESUME "
      "CurrentWatts=0 AveWatts=0 Reason=disk replaced, do not use [root@2025-11-30T00:00:00] "
      "Comment=ticket 42\n");
  EXPECT_EQ(n.state, "IDLE+DRAIN");
  EXPECT_EQ(n.reason, "disk replaced, do not use");

  auto plain = parseScontrolNode("NodeName=w1 State=MIXED ThreadsPerCore=1 CurrentWatts=0\n");
  EXPECT_EQ(plain.state, "MIXED");
  EXPECT_EQ(plain.reason, "");

  auto noUser = parseScontrolNode("NodeName=w1 State=DOWN+DRAIN Reason=corral: GPU XID 79");
  EXPECT_EQ(noUser.state, "DOWN+DRAIN");
  EXPECT_EQ(noUser.reason, "corral: GPU XID 79");

  EXPECT_EQ(parseScontrolNode("").state, "");
  EXPECT_EQ(parseScontrolNode("NextState=RESUME").state, "");
}

}  // namespace
}  // namespace corral
