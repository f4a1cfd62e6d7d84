// End-to-end tests of changes (issue 3): every change is a new revision,
// reconciled into a real Slurm cluster; a running job survives them all; a
// change that fails is rolled back; bad input changes nothing.

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "e2e/harness.h"

namespace corral::e2e {
namespace {

using nlohmann::json;

json getJson(Harness& h, const std::vector<std::string>& args) {
  std::vector<std::string> a = args;
  a.insert(a.end(), {"-o", "json"});
  auto r = h.corral(a);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return json::parse(r.out, nullptr, false);
}

json cluster(Harness& h, const std::string& name) { return getJson(h, {"cluster", "get", name}); }

// Waits until `job` has left the queue and returns its sacct state.
std::string waitForJob(Harness& h, const std::string& c, const std::string& job, int seconds) {
  for (int i = 0; i < seconds * 2; ++i) {
    auto q = h.ssh(c, "squeue -h -j " + job + " -o %T 2>/dev/null");
    if (trim(q.out).empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  for (int i = 0; i < 20; ++i) {
    auto s = h.ssh(c, "sacct -n -X -P -j " + job + " -o State");
    std::string state = trim(s.out);
    if (!state.empty() && state != "RUNNING" && state != "PENDING") return state;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return "unknown";
}

std::string submit(Harness& h, const std::string& c, const std::string& args) {
  auto r = h.ssh(c, "sbatch --parsable " + args);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return trim(r.out);
}

// Submits a batch job and waits until it runs.
std::string submitRunning(Harness& h, const std::string& c, const std::string& args) {
  std::string job = submit(h, c, args);
  for (int i = 0; i < 80; ++i) {
    if (trim(h.ssh(c, "squeue -h -j " + job + " -o %T").out) == "RUNNING") return job;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ADD_FAILURE() << "job " << job << " did not start";
  return job;
}

class ChangeE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    harness_ = new Harness();
    harness_->setExtraArgs({"--platform-partition", "llm"});
    harness_->start();
    auto r = harness_->corral({"cluster", "create", "beta", "--gpu-nodes", "2", "--wait"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  }
  static void TearDownTestSuite() {
    if (harness_ && harness_->running()) {
      std::string subnet = cluster(*harness_, "beta")["subnet"];
      auto del = harness_->corral({"cluster", "delete", "beta", "--wait"});
      EXPECT_EQ(del.exitCode, 0) << del.err;
      Leftovers left = harness_->leftoversOf("beta", subnet);
      EXPECT_TRUE(left.empty()) << left.describe();
    }
    delete harness_;
    harness_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(harness_, nullptr); }
  Harness& h() { return *harness_; }

  // The cluster's revision and that it is Running on it, unchanged.
  void expectUnchanged(int64_t revision) {
    json c = cluster(h(), "beta");
    EXPECT_EQ(c["status"], "Running");
    EXPECT_EQ(c["revision"], revision);
    EXPECT_EQ(c["appliedRevision"], revision);
  }

  static Harness* harness_;
};
Harness* ChangeE2E::harness_ = nullptr;

TEST_F(ChangeE2E, ARunningJobSurvivesScaleUpPartitionAndConfigChangesAccepedOrNot) {
  std::string job = submitRunning(h(), "beta", "-w slinky-0 -o /dev/null --wrap 'sleep 20'");
  ASSERT_FALSE(job.empty());

  auto scale = h().corral({"cluster", "scale", "beta", "--gpu-nodes", "4"});
  ASSERT_EQ(scale.exitCode, 0) << scale.out << scale.err;
  auto sinfo = h().ssh("beta", "sinfo -h -o '%P %D %N'");
  EXPECT_EQ(sinfo.out, "all* 4 slinky-[0-3]\nslinky 4 slinky-[0-3]\nllm 4 slinky-[0-3]\n")
      << sinfo.err;

  auto part = h().corral({"partition", "create", "beta", "short", "--nodes", "slinky-[0-1]",
                          "MaxTime=30", "DefaultTime=10"});
  ASSERT_EQ(part.exitCode, 0) << part.out << part.err;
  auto show = h().ssh("beta", "scontrol show partition short -o");
  EXPECT_NE(show.out.find("Nodes=slinky-[0-1]"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("MaxTime=00:30:00"), std::string::npos) << show.out;

  auto set = h().corral({"config", "set", "beta", "MinJobAge=200"});
  ASSERT_EQ(set.exitCode, 0) << set.out << set.err;
  auto conf = h().ssh("beta", "scontrol show config | grep -w MinJobAge");
  EXPECT_NE(conf.out.find("200 sec"), std::string::npos) << conf.out;

  // Well-formed values that only slurmctld knows it cannot use (the cluster
  // tracks no such TRES): the throwaway slurmctld refuses it; rolled back.
  int64_t before = cluster(h(), "beta")["revision"];
  // Slurm's own default, which differs by release (basic in 22.05,
  // multifactor from 23.02 on).
  std::string priorityBefore = h().ssh("beta", "scontrol show config | grep -w PriorityType").out;
  auto bad = h().corral(
      {"config", "set", "beta", "PriorityType=priority/multifactor", "PriorityWeightTRES=GRES/foo=5"});
  EXPECT_EQ(bad.exitCode, 1) << bad.out;
  EXPECT_NE(bad.err.find("slurmctld"), std::string::npos) << bad.err;
  json c = cluster(h(), "beta");
  EXPECT_EQ(c["status"], "Running");
  EXPECT_EQ(c["revision"], before + 2);  // The failed one and its rollback.
  EXPECT_EQ(c["appliedRevision"], before + 2);
  EXPECT_NE(c["reason"].get<std::string>().find("rolled back"), std::string::npos);
  json config = getJson(h(), {"config", "get", "beta"});
  EXPECT_EQ(config["slurmConf"], json({{"MinJobAge", "200"}}));
  auto priority = h().ssh("beta", "scontrol show config | grep -w PriorityType");
  EXPECT_EQ(priority.out, priorityBefore);
  EXPECT_NE(priority.out.find("PriorityType"), std::string::npos) << priority.out;
  auto events = h().corral({"events", "beta"});
  EXPECT_NE(events.out.find("ChangeFailed"), std::string::npos) << events.out;

  auto state = h().ssh("beta", "squeue -h -j " + job + " -o %T");
  EXPECT_EQ(trim(state.out), "RUNNING") << "the job did not survive the changes";
  EXPECT_EQ(waitForJob(h(), "beta", job, 60), "COMPLETED");

  auto history = h().corral({"cluster", "history", "beta"});
  EXPECT_EQ(history.exitCode, 0) << history.err;
  EXPECT_NE(history.out.find("Failed"), std::string::npos) << history.out;
}

TEST_F(ChangeE2E, InvalidChangesAreRefusedWithAClearErrorAndChangeNothing) {
  int64_t revision = cluster(h(), "beta")["revision"];
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  std::vector<Case> cases = {
      {{"config", "set", "beta", "SlurmUser=nobody"}, "not a slurm.conf parameter"},
      {{"config", "set", "beta", "NoSuchKey=1"}, "not a slurm.conf parameter"},
      {{"config", "set", "beta", "MinJobAge=abc"}, "MinJobAge"},
      {{"config", "set", "beta", "MinJobAge=300\nSlurmUser=evil"}, "MinJobAge"},
      {{"config", "set", "beta", "MinJobAge=300 SlurmUser=evil"}, "MinJobAge"},
      {{"config", "set", "beta", "MaxJobCount=0"}, "MaxJobCount"},
      {{"config", "set", "beta", "PreemptType=preempt/partition_prio", "PreemptMode=SUSPEND"},
       "GANG"},
      {{"partition", "create", "beta", "p1", "--nodes", "slinky-[0-9]"}, "does not exist"},
      {{"partition", "create", "beta", "all", "--nodes", "slinky-0"}, "managed by corral"},
      {{"partition", "create", "beta", "llm", "--nodes", "slinky-0"}, "managed by corral"},
      {{"partition", "create", "beta", "p2", "--nodes", "slinky-[0-99999999]"}, ""},
      {{"partition", "create", "beta", "p3", "--nodes", "slinky-0", "Bogus=1"}, "Bogus"},
      {{"partition", "delete", "beta", "slinky"}, "managed by corral"},
      {{"cluster", "scale", "beta", "--gpu-nodes", "500"}, "--gpu-nodes"},
  };
  for (const auto& c : cases) {
    auto r = h().corral(c.args);
    EXPECT_NE(r.exitCode, 0) << "accepted: " << ::testing::PrintToString(c.args);
    EXPECT_NE(r.err.find(c.message), std::string::npos)
        << ::testing::PrintToString(c.args) << " said: " << r.err;
  }
  expectUnchanged(revision);
}

TEST_F(ChangeE2E, TwentyUserPartitionsAtMostAndPlatformOnesStay) {
  int64_t start = cluster(h(), "beta")["revision"];
  json parts = getJson(h(), {"partition", "list", "beta"});
  int existing = parts["userPartitions"];
  for (int i = existing; i < 20; ++i) {
    auto r = h().corral({"partition", "create", "beta", "team" + std::to_string(i), "--nodes",
                         "slinky-" + std::to_string(i % 2), "--no-wait"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
  }
  auto over = h().corral({"partition", "create", "beta", "team20", "--nodes", "slinky-0"});
  EXPECT_NE(over.exitCode, 0);
  EXPECT_NE(over.err.find("at most 20"), std::string::npos) << over.err;
  // The newest revision wins; the ones it superseded never had to be applied.
  for (int i = 0; i < 200; ++i) {
    json c = cluster(h(), "beta");
    if (c["appliedRevision"] == c["revision"]) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  json c = cluster(h(), "beta");
  EXPECT_EQ(c["appliedRevision"], start + 20 - existing);
  auto count = h().ssh("beta", "sinfo -h -o %P | wc -l");
  EXPECT_EQ(trim(count.out), std::to_string(3 + 20)) << count.err;  // all, slinky, llm + 20
  for (int i = existing; i < 20; ++i) {
    auto r = h().corral({"partition", "delete", "beta", "team" + std::to_string(i), "--no-wait"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
  }
  auto wait = h().corral({"cluster", "reconfigure", "beta"});
  EXPECT_EQ(wait.exitCode, 0) << wait.err;
}

TEST_F(ChangeE2E, ScaleDownWithForceCancelsJobsOnRemovedNodesAndLeavesNoStaleNodes) {
  auto up = h().corral({"cluster", "scale", "beta", "--gpu-nodes", "4"});
  ASSERT_EQ(up.exitCode, 0) << up.err;
  std::string job = submitRunning(h(), "beta", "-w slinky-3 -o /dev/null --wrap 'sleep 300'");
  std::string keep = submitRunning(h(), "beta", "-w slinky-0 -o /dev/null --wrap 'sleep 8'");
  auto down = h().corral({"cluster", "scale", "beta", "--gpu-nodes", "2", "--force"});
  ASSERT_EQ(down.exitCode, 0) << down.out << down.err;
  EXPECT_NE((down.out + down.err).find(job), std::string::npos)
      << "--force must say which jobs it cancels:\n" << down.out << down.err;
  auto sinfo = h().ssh("beta", "sinfo -h -N -o %N | sort -u | tr '\\n' ' '");
  EXPECT_EQ(sinfo.out, "slinky-0 slinky-1 ") << sinfo.err;
  EXPECT_EQ(waitForJob(h(), "beta", job, 30).rfind("CANCELLED", 0), 0u);
  EXPECT_EQ(waitForJob(h(), "beta", keep, 60), "COMPLETED");
  EXPECT_FALSE(std::filesystem::exists(h().dataDir() + "/clusters/beta/pods/slinky-3"));
}

TEST_F(ChangeE2E, LoginRestartErasesLocalFilesButNotShared) {
  auto w = h().ssh("beta", "touch /root/local-file /shared/shared-file && echo ok");
  ASSERT_EQ(trim(w.out), "ok") << w.err;
  auto r = h().corral({"login", "restart", "beta"});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  auto after = h().ssh("beta", "ls /root/local-file /shared/shared-file 2>&1; true");
  EXPECT_NE(after.out.find("cannot access '/root/local-file'"), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("\n/shared/shared-file"), std::string::npos) << after.out;
}

TEST_F(ChangeE2E, SetKeysReplacesRootsAuthorizedKeys) {
  std::string other = h().home() + "/.ssh/other_ed25519";
  ASSERT_EQ(std::system(("ssh-keygen -q -t ed25519 -N '' -f " + other + " </dev/null").c_str()), 0);
  auto set = h().corral({"cluster", "set-keys", "beta", "--ssh-key", other + ".pub"});
  ASSERT_EQ(set.exitCode, 0) << set.out << set.err;
  auto refused = h().ssh("beta", "true");
  EXPECT_NE(refused.exitCode, 0) << "the old key still logs in";
  auto back = h().corral({"cluster", "set-keys", "beta", "--ssh-key", h().sshPublicKeyFile()});
  ASSERT_EQ(back.exitCode, 0) << back.err;
  EXPECT_EQ(h().ssh("beta", "echo in").out, "in\n");
}

TEST_F(ChangeE2E, AHandEditOfSlurmConfIsOverwrittenWithAnEvent) {
  std::string path = h().dataDir() + "/clusters/beta/etc/slurm/slurm.conf";
  std::string original;
  {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    original = ss.str();
  }
  {
    std::ofstream out(path, std::ios::app);
    out << "SlurmctldDebug=debug5\n";
  }
  std::string now;
  for (int i = 0; i < 100; ++i) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    now = ss.str();
    if (now == original) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(now, original);
  auto events = h().corral({"events", "beta"});
  EXPECT_NE(events.out.find("DriftCorrected"), std::string::npos) << events.out;
}

TEST(LifecycleE2E, TerminateKeepsTheRecordCloneRunsItAgainAndActionsFollowTheStatus) {
  Harness h;
  h.start();
  ASSERT_EQ(h.corral({"cluster", "create", "old", "--gpu-nodes", "1", "--wait"}).exitCode, 0);
  auto job = h.ssh("old", "srun hostname");
  ASSERT_EQ(job.out, "slinky-0\n");
  std::string subnet = cluster(h, "old")["subnet"];

  auto term = h.corral({"cluster", "terminate", "old", "--wait"});
  ASSERT_EQ(term.exitCode, 0) << term.err;
  json c = cluster(h, "old");
  EXPECT_EQ(c["status"], "Terminated");
  EXPECT_TRUE(std::filesystem::exists(h.dataDir() + "/clusters/old/db"))
      << "accounting data must be kept";
  auto scale = h.corral({"cluster", "scale", "old", "--gpu-nodes", "2"});
  EXPECT_NE(scale.exitCode, 0);
  EXPECT_NE(scale.err.find("allowed only when a cluster is Running"), std::string::npos)
      << scale.err;

  auto clone = h.corral({"cluster", "clone", "old", "new", "--wait"});
  ASSERT_EQ(clone.exitCode, 0) << clone.out << clone.err;
  EXPECT_EQ(h.ssh("new", "srun hostname").out, "slinky-0\n");
  std::string newSubnet = cluster(h, "new")["subnet"];

  for (const auto& [name, net] : {std::pair{std::string("old"), subnet}, {"new", newSubnet}}) {
    ASSERT_EQ(h.corral({"cluster", "delete", name, "--wait"}).exitCode, 0);
    Leftovers left = h.leftoversOf(name, net);
    EXPECT_TRUE(left.empty()) << left.describe();
  }
}

TEST(RecoveryE2E, CorraldKilledDuringAScaleConvergesToOneRevision) {
  Harness h;
  h.start();
  ASSERT_EQ(h.corral({"cluster", "create", "mid", "--gpu-nodes", "2", "--wait"}).exitCode, 0);
  auto r = h.corral({"cluster", "scale", "mid", "--gpu-nodes", "4", "--no-wait"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (int i = 0; i < 200; ++i) {
    std::string phase = cluster(h, "mid")["phase"];
    if (phase.find("restarting") != std::string::npos || phase.find("starting") != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  h.stop(SIGKILL);
  h.start();
  json c;
  for (int i = 0; i < 300; ++i) {
    c = cluster(h, "mid");
    if (c["revision"] == c["appliedRevision"] && c["phase"] == "") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(c["revision"], c["appliedRevision"]) << c.dump(2);
  int nodes = c["spec"]["gpuNodes"];
  EXPECT_TRUE(nodes == 2 || nodes == 4);
  std::string expect;
  for (int i = 0; i < nodes; ++i) expect += "slinky-" + std::to_string(i) + " ";
  auto sinfo = h.ssh("mid", "sinfo -h -N -o %N | sort -u | tr '\\n' ' '");
  EXPECT_EQ(sinfo.out, expect);
  auto run = h.ssh("mid", "srun -N" + std::to_string(nodes) + " hostname | wc -l");
  EXPECT_EQ(trim(run.out), std::to_string(nodes)) << run.err;
  // Exactly the target's pods exist.
  int pods = 0;
  for (const auto& e : std::filesystem::directory_iterator(h.dataDir() + "/clusters/mid/pods")) {
    (void)e;
    ++pods;
  }
  EXPECT_EQ(pods, nodes + 2);
  std::string subnet = c["subnet"];
  ASSERT_EQ(h.corral({"cluster", "delete", "mid", "--wait"}).exitCode, 0);
  Leftovers left = h.leftoversOf("mid", subnet);
  EXPECT_TRUE(left.empty()) << left.describe();
}

}  // namespace
}  // namespace corral::e2e
