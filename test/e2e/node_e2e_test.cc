// End-to-end tests of storage, node failure and recovery, GPU health and
// login users (issue 4), on one real cluster with three GPU workers.

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "e2e/harness.h"

namespace corral::e2e {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

json getJson(Harness& h, const std::vector<std::string>& args) {
  std::vector<std::string> a = args;
  a.insert(a.end(), {"-o", "json"});
  auto r = h.corral(a);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return json::parse(r.out, nullptr, false);
}

// Polls `command` on the login node until its output (trimmed) satisfies
// `done`, at most `seconds`; returns the last output.
template <typename Done>
std::string waitFor(Harness& h, const std::string& c, const std::string& command, Done done,
                    int seconds = 30) {
  std::string out;
  auto deadline = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < deadline) {
    out = trim(h.ssh(c, command).out);
    if (done(out)) return out;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return out;
}

// Waits (at most `seconds`) for an event of cluster `c` about `node` with
// `reason` whose message contains every one of `words`; returns its message,
// or "" if none came.
std::string waitForEvent(Harness& h, const std::string& c, const std::string& node,
                         const std::string& reason, const std::vector<std::string>& words,
                         int seconds = 30) {
  auto deadline = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < deadline) {
    json events = getJson(h, {"events", c});
    for (const auto& e : events["events"]) {
      if (e.value("node", "") != node || e.value("reason", "") != reason) continue;
      std::string message = e.value("message", "");
      bool all = true;
      for (const auto& w : words) all = all && message.find(w) != std::string::npos;
      if (all) return message;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return "";
}

std::string nodeState(Harness& h, const std::string& c, const std::string& node) {
  return trim(h.ssh(c, "sinfo -h -N -n " + node + " -o %T | head -1").out);
}

class NodeE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    harness_ = new Harness();
    harness_->start();
    auto r = harness_->corral({"cluster", "create", "gamma", "--gpu-nodes", "3", "--wait"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  }
  static void TearDownTestSuite() {
    if (harness_ && harness_->running()) {
      std::string subnet = getJson(*harness_, {"cluster", "get", "gamma"})["subnet"];
      EXPECT_EQ(harness_->corral({"cluster", "delete", "gamma", "--wait"}).exitCode, 0);
      Leftovers left = harness_->leftoversOf("gamma", subnet);
      EXPECT_TRUE(left.empty()) << left.describe();
      harness_->corral({"volume", "delete", "pfs"});
    }
    delete harness_;
    harness_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(harness_, nullptr); }
  Harness& h() { return *harness_; }
  static Harness* harness_;
};
Harness* NodeE2E::harness_ = nullptr;

TEST_F(NodeE2E, VolumesAreSharedPersistAcrossRebootAndDatasetsAreReadOnly) {
  ASSERT_EQ(h().corral({"volume", "create", "pfs", "--type", "pfs"}).exitCode, 0);
  ASSERT_EQ(h().corral({"volume", "create", "ds", "--type", "dataset"}).exitCode, 0);
  auto attach = h().corral({"volume", "attach", "gamma", "pfs", "--path", "/pfs"});
  ASSERT_EQ(attach.exitCode, 0) << attach.out << attach.err;
  ASSERT_EQ(h().corral({"volume", "attach", "gamma", "ds", "--path", "/datasets"}).exitCode, 0);

  auto write = h().ssh("gamma", "srun -w slinky-2 sh -c 'echo from-2 > /pfs/file'");
  ASSERT_EQ(write.exitCode, 0) << write.err;
  EXPECT_EQ(h().ssh("gamma", "cat /pfs/file").out, "from-2\n");
  EXPECT_EQ(h().ssh("gamma", "srun -w slinky-0 cat /pfs/file").out, "from-2\n");
  auto ro = h().ssh("gamma", "srun -w slinky-0 touch /datasets/x 2>&1; true");
  EXPECT_NE(ro.out.find("Read-only file system"), std::string::npos) << ro.out;

  // Local files go with a reboot; the volume stays.
  ASSERT_EQ(h().ssh("gamma", "srun -w slinky-0 touch /root/local").exitCode, 0);
  auto reboot = h().corral({"node", "reboot", "gamma", "slinky-0"});
  ASSERT_EQ(reboot.exitCode, 0) << reboot.out << reboot.err;
  EXPECT_EQ(waitFor(h(), "gamma", "sinfo -h -N -n slinky-0 -o %T | head -1",
                    [](const std::string& s) { return s == "idle"; }),
            "idle");
  auto after = h().ssh("gamma", "srun -w slinky-0 sh -c 'ls /root/local 2>&1; cat /pfs/file'");
  EXPECT_NE(after.out.find("No such file"), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("from-2"), std::string::npos) << after.out;

  // A volume in use cannot be deleted; detached, it can.
  auto del = h().corral({"volume", "delete", "ds"});
  EXPECT_NE(del.exitCode, 0);
  EXPECT_NE(del.err.find("attached to gamma"), std::string::npos) << del.err;
  ASSERT_EQ(h().corral({"volume", "detach", "gamma", "ds"}).exitCode, 0);
  auto gone = h().ssh("gamma", "ls -ld /datasets 2>&1; grep -c ' /datasets ' /proc/self/mountinfo");
  EXPECT_NE(gone.out.find("No such file"), std::string::npos) << gone.out;
  EXPECT_EQ(h().corral({"volume", "delete", "ds"}).exitCode, 0);
}

TEST_F(NodeE2E, NodeListShowsBothNamesStateGpusAndHealth) {
  json nodes = getJson(h(), {"node", "list", "gamma"});
  ASSERT_EQ(nodes["nodes"].size(), 3u);
  for (const auto& n : nodes["nodes"]) {
    EXPECT_EQ(n["physicalId"].get<std::string>().rfind("corral_node_", 0), 0u);
    EXPECT_EQ(n["gpus"], 8);
    EXPECT_EQ(n["health"], "ok") << n.dump();
  }
  auto table = h().corral({"node", "list", "gamma"});
  EXPECT_NE(table.out.find("(slinky-1)"), std::string::npos) << table.out;
}

TEST_F(NodeE2E, AWorkerThatDiesEndsItsJobNodeFailAndReturnsByItself) {
  std::string job = trim(h().ssh("gamma", "sbatch --parsable -w slinky-1 -o /dev/null --wrap 'sleep 300'").out);
  ASSERT_EQ(waitFor(h(), "gamma", "squeue -h -j " + job + " -o %T",
                    [](const std::string& s) { return s == "RUNNING"; }),
            "RUNNING");
  std::string other = trim(h().ssh("gamma", "sbatch --parsable -w slinky-2 -o /dev/null --wrap 'sleep 6'").out);
  int pid = h().podPid("gamma", "slinky-1");
  ASSERT_GT(pid, 0);
  ASSERT_EQ(kill(pid, SIGKILL), 0);  // Every process of the node dies with its PID 1.
  // The controller answers throughout and the job ends NODE_FAIL, not requeued.
  EXPECT_EQ(h().ssh("gamma", "scontrol ping | grep -c UP").out, "1\n");
  EXPECT_EQ(waitFor(h(), "gamma", "sacct -n -X -P -j " + job + " -o State",
                    [](const std::string& s) { return s == "NODE_FAIL"; }),
            "NODE_FAIL");
  EXPECT_EQ(waitFor(h(), "gamma", "sinfo -h -N -n slinky-1 -o %T | head -1",
                    [](const std::string& s) { return s == "idle"; }),
            "idle");
  EXPECT_EQ(waitFor(h(), "gamma", "sacct -n -X -P -j " + other + " -o State",
                    [](const std::string& s) { return s == "COMPLETED"; }),
            "COMPLETED");
  auto events = h().corral({"events", "gamma"});
  EXPECT_NE(events.out.find("PodRestarted"), std::string::npos) << events.out;
}

TEST_F(NodeE2E, ControllerRestartKeepsPendingAndRunningJobsAndHistory) {
  std::string running =
      trim(h().ssh("gamma", "sbatch --parsable -N3 --exclusive -o /dev/null --wrap 'sleep 12'").out);
  std::string pending = trim(h().ssh("gamma", "sbatch --parsable -N3 -o /dev/null --wrap true").out);
  ASSERT_EQ(waitFor(h(), "gamma", "squeue -h -j " + running + " -o %T",
                    [](const std::string& s) { return s == "RUNNING"; }),
            "RUNNING");
  auto restart = h().corral({"controller", "restart", "gamma"});
  ASSERT_EQ(restart.exitCode, 0) << restart.out << restart.err;
  EXPECT_EQ(trim(h().ssh("gamma", "squeue -h -j " + running + " -o %T").out), "RUNNING");
  EXPECT_EQ(trim(h().ssh("gamma", "squeue -h -j " + pending + " -o %T").out), "PENDING");
  EXPECT_EQ(waitFor(h(), "gamma", "sacct -n -X -P -j " + pending + " -o State",
                    [](const std::string& s) { return s == "COMPLETED"; }, 40),
            "COMPLETED");
  EXPECT_EQ(trim(h().ssh("gamma", "sacct -n -X -P -j " + running + " -o State").out), "COMPLETED");
  // Every earlier job is still in the history.
  auto all = h().ssh("gamma", "sacct -n -X -P -o JobID | wc -l");
  EXPECT_GE(std::stoi(trim(all.out)), 4) << all.out;
}

// How fast a drain follows an XID is measured by bench/, not asserted here;
// the test waits for what it expects, each wait ending at the event that
// shows the node's health agent has acted.
TEST_F(NodeE2E, HardwareXidDrainsApplicationXidDoesNotAdminDrainSurvives) {
  ASSERT_EQ(h().corral({"node", "inject-xid", "gamma", "slinky-2", "79"}).exitCode, 0);
  std::string st = waitFor(h(), "gamma", "sinfo -h -N -n slinky-2 -o '%T|%E' | head -1",
                           [](const std::string& s) { return s.rfind("drain", 0) == 0; });
  EXPECT_EQ(st.rfind("drain", 0), 0u) << st;
  EXPECT_NE(st.find("corral: GPU XID 79"), std::string::npos) << st;

  // The agent reports an application XID without draining: once corral has
  // recorded its report, the node is still idle.
  ASSERT_EQ(h().corral({"node", "inject-xid", "gamma", "slinky-0", "13"}).exitCode, 0);
  EXPECT_NE(waitForEvent(h(), "gamma", "slinky-0", "GpuXid", {"GPU XID 13", "reported"}), "");
  EXPECT_EQ(nodeState(h(), "gamma", "slinky-0"), "idle");
  json node = getJson(h(), {"node", "get", "gamma", "slinky-0"});
  ASSERT_FALSE(node["xids"].empty()) << node.dump();
  EXPECT_EQ(node["xids"][0]["code"], 13);

  // An administrator's drain is theirs: corral keeps it through passes and
  // through a hardware XID on that node.
  ASSERT_EQ(h().ssh("gamma", "scontrol update nodename=slinky-1 state=drain reason=maintenance").exitCode, 0);
  ASSERT_EQ(h().corral({"node", "inject-xid", "gamma", "slinky-1", "48"}).exitCode, 0);
  std::string kept = waitForEvent(h(), "gamma", "slinky-1", "GpuXid", {"GPU XID 48", "kept admin drain"});
  EXPECT_NE(kept, "") << "the agent neither drained nor kept the admin's drain";
  EXPECT_EQ(trim(h().ssh("gamma", "sinfo -h -N -n slinky-1 -o %E | head -1").out), "maintenance");

  // A reboot clears the fault and corral resumes the node it drained.
  ASSERT_EQ(h().corral({"node", "reboot", "gamma", "slinky-2"}).exitCode, 0);
  EXPECT_EQ(waitFor(h(), "gamma", "sinfo -h -N -n slinky-2 -o %T | head -1",
                    [](const std::string& s) { return s == "idle"; }),
            "idle");
  EXPECT_EQ(trim(h().ssh("gamma", "sinfo -h -N -n slinky-1 -o %E | head -1").out), "maintenance");
  ASSERT_EQ(h().ssh("gamma", "scontrol update nodename=slinky-1 state=resume").exitCode, 0);
  auto events = h().corral({"events", "gamma"});
  EXPECT_NE(events.out.find("GPU XID 79"), std::string::npos) << events.out;
}

TEST_F(NodeE2E, LoginUsersLogInRunJobsAsThemselvesAndKeepTheirHome) {
  std::string key = h().home() + "/.ssh/alice_ed25519";
  ASSERT_EQ(std::system(("ssh-keygen -q -t ed25519 -N '' -f " + key + " </dev/null").c_str()), 0);
  auto add = h().corral({"user", "add", "gamma", "alice", "--ssh-key", key + ".pub"});
  ASSERT_EQ(add.exitCode, 0) << add.out << add.err;
  std::string login = getJson(h(), {"cluster", "get", "gamma"})["login"]["address"];
  auto ssh = [&](const std::string& command) {
    auto r = realProcessRunner().run(
        {"ssh", "-i", key, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o",
         "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "alice@" + login, command},
        {"", std::chrono::seconds(60), {}, {}});
    return r.isOk() ? *r : ProcessResult{};
  };
  auto who = ssh("id -un; pwd; echo kept > ~/notes; srun -N2 id -un");
  EXPECT_EQ(who.out, "alice\n/shared/home/alice\nalice\nalice\n") << who.err;
  std::string job = trim(ssh("sbatch --parsable -o /dev/null --wrap true").out);
  ASSERT_FALSE(job.empty());
  EXPECT_EQ(waitFor(h(), "gamma", "sacct -a -n -X -P -j " + job + " -o User,State",
                    [](const std::string& s) { return s == "alice|COMPLETED"; }),
            "alice|COMPLETED");
  // The home is on shared storage: a login restart keeps it.
  ASSERT_EQ(h().corral({"login", "restart", "gamma"}).exitCode, 0);
  EXPECT_EQ(ssh("cat ~/notes").out, "kept\n");
  ASSERT_EQ(h().corral({"user", "remove", "gamma", "alice"}).exitCode, 0);
  EXPECT_NE(ssh("true").exitCode, 0);
}

}  // namespace
}  // namespace corral::e2e
