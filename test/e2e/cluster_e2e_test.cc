// End-to-end tests: real corrald, real CLI, real Slurm clusters.

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "e2e/harness.h"

namespace corral::e2e {
namespace {

using nlohmann::json;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l))
    if (!l.empty()) out.push_back(l);
  return out;
}

json getCluster(Harness& h, const std::string& name) {
  auto r = h.corral({"cluster", "get", name, "-o", "json"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return json::parse(r.out, nullptr, false);
}

void expectDeletedCleanly(Harness& h, const std::string& name, const std::string& subnet) {
  auto del = h.corral({"cluster", "delete", name, "--wait"});
  ASSERT_EQ(del.exitCode, 0) << del.err;
  auto get = h.corral({"cluster", "get", name});
  EXPECT_EQ(get.exitCode, 1);
  EXPECT_NE(get.err.find("no cluster named"), std::string::npos) << get.err;
  EXPECT_FALSE(std::ifstream(h.home() + "/.cache/corral/known_hosts-" + name).good())
      << "the CLI kept the deleted cluster's host key";
  Leftovers left = h.leftoversOf(name, subnet);
  EXPECT_TRUE(left.empty()) << "left behind by " << name << ":\n" << left.describe();
}

// One corrald and one 4-node cluster shared by the tests of this suite:
// creating a cluster per test would multiply the suite's time.
class ClusterE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    harness_ = new Harness();
    harness_->start();
    auto r = harness_->corral({"cluster", "create", "alpha", "--wait"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    subnet_ = getCluster(*harness_, "alpha")["subnet"].get<std::string>();
  }
  static void TearDownTestSuite() {
    if (harness_ && harness_->running()) expectDeletedCleanly(*harness_, "alpha", subnet_);
    delete harness_;
    harness_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(harness_, nullptr);
    ASSERT_TRUE(harness_->running());
  }
  Harness& h() { return *harness_; }

  static Harness* harness_;
  static std::string subnet_;
};
Harness* ClusterE2E::harness_ = nullptr;
std::string ClusterE2E::subnet_;

TEST_F(ClusterE2E, FirstSinfoPrintsWhatTheSeedPrints) {
  auto r = h().ssh("alpha", "sinfo");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out,
            "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "all*         up   infinite      4   idle slinky-[0-3]\n"
            "slinky       up   infinite      4   idle slinky-[0-3]\n");
}

TEST_F(ClusterE2E, GetShowsStatusNodesPhysicalIdsAndLogin) {
  json c = getCluster(h(), "alpha");
  EXPECT_EQ(c["status"], "Running");
  ASSERT_EQ(c["nodes"].size(), 4u);
  std::set<std::string> ids;
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(c["nodes"][i]["name"], "slinky-" + std::to_string(i));
    EXPECT_EQ(c["nodes"][i]["gpus"], 8);
    EXPECT_EQ(c["nodes"][i]["state"], "idle");
    ids.insert(c["nodes"][i]["physicalId"].get<std::string>());
  }
  EXPECT_EQ(ids.size(), 4u) << "physical ids must be distinct";
  EXPECT_FALSE(c["login"]["address"].get<std::string>().empty());
  auto table = h().corral({"cluster", "get", "alpha"});
  EXPECT_NE(table.out.find("(slinky-0)"), std::string::npos) << table.out;
}

TEST_F(ClusterE2E, SrunOnTwoWorkersWithTwoGpusEach) {
  auto r = h().ssh("alpha",
                   "srun -N2 --gres=gpu:2 sh -c 'echo $(hostname) $CUDA_VISIBLE_DEVICES' | sort");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto out = lines(r.out);
  ASSERT_EQ(out.size(), 2u) << r.out;
  std::set<std::string> hosts;
  for (const auto& l : out) {
    std::istringstream f(l);
    std::string host, gpus;
    f >> host >> gpus;
    hosts.insert(host);
    EXPECT_EQ(host.rfind("slinky-", 0), 0u) << l;
    EXPECT_EQ(gpus, "0,1") << l;
  }
  EXPECT_EQ(hosts.size(), 2u) << r.out;
}

TEST_F(ClusterE2E, NodelistBracketRangesWork) {
  auto r = h().ssh("alpha", "srun --nodelist='slinky-[0-1,3]' -N3 hostname | sort");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "slinky-0\nslinky-1\nslinky-3\n");
}

TEST_F(ClusterE2E, SbatchOutputLandsInTheWorkingDirectoryAndSacctListsJobs) {
  auto r = h().ssh("alpha",
                   "mkdir -p /shared/sb && cd /shared/sb && "
                   "printf '#!/bin/bash\\n#SBATCH -N2\\nsrun hostname | sort\\n' > ok.sh && "
                   "printf '#!/bin/bash\\nexit 3\\n' > bad.sh && "
                   "sbatch --wait --parsable ok.sh && (sbatch --wait --parsable bad.sh; true)");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto ids = lines(r.out);
  ASSERT_EQ(ids.size(), 2u) << r.out;
  auto out = h().ssh("alpha", "cat /shared/sb/slurm-" + ids[0] + ".out");
  ASSERT_EQ(out.exitCode, 0) << out.err;
  EXPECT_EQ(lines(out.out).size(), 2u) << out.out;
  // Accounting: both jobs, with the states Slurm gave them.
  auto acct = h().ssh("alpha", "sacct -X -n -P -j " + ids[0] + "," + ids[1] +
                                   " --format=JobID,State,ExitCode");
  ASSERT_EQ(acct.exitCode, 0) << acct.err;
  EXPECT_NE(acct.out.find(ids[0] + "|COMPLETED|0:0"), std::string::npos) << acct.out;
  EXPECT_NE(acct.out.find(ids[1] + "|FAILED|3:0"), std::string::npos) << acct.out;
}

TEST_F(ClusterE2E, EveryJobGetsAPrivateTmp) {
  auto r = h().ssh("alpha",
                   "srun -w slinky-1 sh -c 'touch /tmp/mark; ls /tmp' && "
                   "srun -w slinky-1 sh -c 'ls /tmp | wc -l'");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto out = lines(r.out);
  ASSERT_EQ(out.size(), 2u) << r.out;
  EXPECT_EQ(out[0], "mark");
  EXPECT_EQ(out[1], "0") << "the second job saw the first job's /tmp";
}

TEST_F(ClusterE2E, LoginNodeIsNotAComputeNodeAndHasNoGpus) {
  auto r = h().ssh("alpha", "hostname; ls /dev/nvidia* 2>/dev/null | wc -l; "
                            "scontrol show node login >/dev/null 2>&1 && echo node || echo not-node");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(lines(r.out), (std::vector<std::string>{"login", "0", "not-node"}));
}

TEST_F(ClusterE2E, CorraldRestartDoesNotDisturbTheCluster) {
  auto before = h().podExec("alpha", "controller", "cat /run/slurmctld.pid");
  ASSERT_EQ(before.exitCode, 0) << before.err;
  h().stop(SIGKILL);
  h().start();
  auto after = h().podExec("alpha", "controller", "cat /run/slurmctld.pid");
  EXPECT_EQ(before.out, after.out) << "slurmctld was restarted";
  json c = getCluster(h(), "alpha");
  EXPECT_EQ(c["status"], "Running");
  auto r = h().ssh("alpha", "srun -N4 hostname | sort | tr '\\n' ' '");
  EXPECT_EQ(r.out, "slinky-0 slinky-1 slinky-2 slinky-3 ") << r.err;
}

// Bad input: a clear error, a non-zero exit, and nothing changes.
class BadInputE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    harness_ = new Harness();
    harness_->start();
  }
  static void TearDownTestSuite() {
    delete harness_;
    harness_ = nullptr;
  }
  Harness& h() { return *harness_; }
  void expectRejected(const std::vector<std::string>& args, const std::string& message) {
    auto before = h().corral({"cluster", "list", "-o", "json"});
    auto r = h().corral(args);
    EXPECT_NE(r.exitCode, 0) << "accepted: " << ::testing::PrintToString(args);
    EXPECT_NE(r.err.find(message), std::string::npos)
        << ::testing::PrintToString(args) << " said: " << r.err;
    auto after = h().corral({"cluster", "list", "-o", "json"});
    EXPECT_EQ(before.out, after.out) << "state changed";
  }
  static Harness* harness_;
};
Harness* BadInputE2E::harness_ = nullptr;

TEST_F(BadInputE2E, CreateRejectsBadSpecs) {
  expectRejected({"cluster", "create", "Not_A_Label"}, "invalid cluster name");
  expectRejected({"cluster", "create", "-x"}, "");
  expectRejected({"cluster", "create", "zero", "--gpu-nodes", "0"}, "at least one node");
  expectRejected({"cluster", "create", "many", "--gpu-nodes", "1", "--cpu-nodes", "9"},
                 "--cpu-nodes");
  expectRejected({"cluster", "create", "neg", "--gpu-nodes", "-3"}, "--gpu-nodes");
  expectRejected({"cluster", "create", "huge", "--gpu-nodes", "100000"}, "--gpu-nodes");
  expectRejected({"cluster", "create", "gpus", "--gpus-per-node", "99"}, "--gpus-per-node");
  expectRejected({"cluster", "create", "nokey", "--ssh-key", "/nonexistent/key.pub"},
                 "/nonexistent/key.pub");
  expectRejected({"cluster", "create", "abc", "--gpu-nodes", "abc"}, "");
}

TEST_F(BadInputE2E, UnknownClustersAreNotFound) {
  expectRejected({"cluster", "get", "nosuch"}, "no cluster named \"nosuch\"");
  expectRejected({"cluster", "delete", "nosuch"}, "no cluster named \"nosuch\"");
  expectRejected({"ssh", "nosuch", "--", "true"}, "no cluster named \"nosuch\"");
  expectRejected({"cluster", "get", "../../etc"}, "no cluster named");
}

TEST_F(BadInputE2E, MalformedApiBodiesGet400AndChangeNothing) {
  for (const std::string& body :
       {std::string("{"), std::string("[]"), std::string("{\"name\": 5}"),
        std::string("{\"name\":\"x\",\"gpuNodes\":\"4\"}"),
        std::string("{\"name\":\"x\",\"gpuNode\":4}"), std::string(2 << 20, 'x')}) {
    auto r = realProcessRunner().run({"curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                                      "-X", "POST", "-H", "Content-Type: application/json",
                                      "-H", "Authorization: Bearer " + h().token(),
                                      "--data-binary", "@-", h().url() + "/api/v1/clusters"},
                                     {body, std::chrono::seconds(30), {}, {}});
    ASSERT_TRUE(r.isOk());
    EXPECT_TRUE(r->out == "400" || r->out == "413") << body.substr(0, 40) << " -> " << r->out;
  }
  auto list = h().corral({"cluster", "list", "-o", "json"});
  EXPECT_EQ(json::parse(list.out)["clusters"].size(), 0u);
}

// Who may do what, against the real corrald and CLI: tokens made with
// `corrald admin`, projects, and 404 (not 403) for another project's things.
TEST_F(BadInputE2E, TokensKeepOneUsersThingsFromAnother) {
  auto code = [&](const std::string& token, const std::string& path) {
    std::vector<std::string> argv = {"curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}"};
    if (!token.empty()) argv.insert(argv.end(), {"-H", "Authorization: Bearer " + token});
    argv.push_back(h().url() + path);
    auto r = realProcessRunner().run(argv);
    return r.isOk() ? r->out : "curl failed";
  };
  EXPECT_EQ(code("", "/api/v1/clusters"), "401");
  EXPECT_EQ(code("corral_not-a-token", "/api/v1/clusters"), "401");
  EXPECT_EQ(code("", "/healthz"), "200");

  ASSERT_EQ(h().admin({"user", "add", "alice", "--project", "ml"}).exitCode, 0);
  ASSERT_EQ(h().admin({"user", "add", "bob", "--project", "cv"}).exitCode, 0);
  auto token = [&](const std::string& user) {
    auto t = h().admin({"token", "create", user});
    EXPECT_EQ(t.exitCode, 0) << t.err;
    return t.out.substr(0, t.out.find('\n'));
  };
  std::string alice = token("alice"), bob = token("bob");
  auto as = [&](const std::string& t, std::vector<std::string> args) {
    args.insert(args.begin(), {"--token", t});
    return h().corral(args);
  };
  auto made = as(alice, {"volume", "create", "alice-data"});
  ASSERT_EQ(made.exitCode, 0) << made.err;
  EXPECT_NE(as(alice, {"volume", "list"}).out.find("alice-data"), std::string::npos);
  EXPECT_EQ(as(bob, {"volume", "list"}).out.find("alice-data"), std::string::npos);
  auto get = as(bob, {"volume", "get", "alice-data"});
  EXPECT_NE(get.exitCode, 0);
  EXPECT_NE(get.err.find("no volume named"), std::string::npos) << get.err;
  EXPECT_EQ(code(bob, "/api/v1/volumes/alice-data"), "404");
  EXPECT_NE(as(bob, {"volume", "delete", "alice-data"}).exitCode, 0);
  auto clash = as(bob, {"volume", "create", "alice-data"});
  EXPECT_NE(clash.err.find("not available"), std::string::npos) << clash.err;
  // The admin sees it; its owner deletes it.
  EXPECT_NE(h().corral({"volume", "list"}).out.find("alice-data"), std::string::npos);
  EXPECT_EQ(as(alice, {"volume", "delete", "alice-data"}).exitCode, 0);

  // A revoked token stops working at once.
  auto list = h().admin({"token", "list"});
  std::istringstream lines(list.out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find(" bob ") != std::string::npos) {
      ASSERT_EQ(h().admin({"token", "revoke", line.substr(0, line.find(' '))}).exitCode, 0);
    }
  }
  EXPECT_EQ(code(bob, "/api/v1/volumes"), "401");
  // The log never carries a token.
  std::ifstream in(h().dataDir() + "-corrald.log");
  std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(log.find(alice), std::string::npos);
  EXPECT_EQ(log.find(h().token()), std::string::npos);
}

TEST(RecoveryE2E, CorraldKilledDuringCreateFinishesTheCreateAfterRestart) {
  Harness h;
  h.start();
  auto r = h.corral({"cluster", "create", "phoenix", "--gpu-nodes", "2"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  // Let the create get under way (network, files, some pods), then crash.
  for (int i = 0; i < 100; ++i) {
    json c = getCluster(h, "phoenix");
    if (c["phase"] == "starting pods") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  h.stop(SIGKILL);
  h.start();
  auto wait = h.corral({"cluster", "get", "phoenix", "-o", "json"});
  for (int i = 0; i < 600; ++i) {
    json c = getCluster(h, "phoenix");
    if (c["status"] != "Creating") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  json c = getCluster(h, "phoenix");
  ASSERT_EQ(c["status"], "Running") << c.dump(2);
  auto s = h.ssh("phoenix", "srun -N2 hostname | sort");
  EXPECT_EQ(s.out, "slinky-0\nslinky-1\n") << s.err;
  expectDeletedCleanly(h, "phoenix", c["subnet"]);
}

TEST(TwoClustersE2E, RunSideBySideIsolatedAndDeleteCleanly) {
  Harness h;
  h.start();
  auto a = h.corral({"cluster", "create", "left", "--gpu-nodes", "2", "--gpus-per-node", "2",
                     "--wait"});
  ASSERT_EQ(a.exitCode, 0) << a.err;
  auto b = h.corral({"cluster", "create", "right", "--gpu-nodes", "1", "--gpus-per-node", "1",
                     "--cpu-nodes", "2", "--wait"});
  ASSERT_EQ(b.exitCode, 0) << b.err;
  json left = getCluster(h, "left"), right = getCluster(h, "right");
  EXPECT_NE(left["subnet"], right["subnet"]);

  auto sl = h.ssh("left", "sinfo -h -o '%P %D %N'");
  EXPECT_EQ(sl.out, "all* 2 slinky-[0-1]\nslinky 2 slinky-[0-1]\n") << sl.err;
  auto sr = h.ssh("right", "sinfo -h -o '%P %D %N'");
  EXPECT_EQ(sr.out,
            "all* 3 cpu-workers-[0-1],slinky-0\nslinky 1 slinky-0\n"
            "cpu-workers 2 cpu-workers-[0-1]\n")
      << sr.err;
  auto cpu = h.ssh("right", "srun -p cpu-workers -N2 hostname | sort");
  EXPECT_EQ(cpu.out, "cpu-workers-0\ncpu-workers-1\n") << cpu.err;

  // Isolation: each cluster has its own munge key, so a credential from one
  // is refused by the other; and one cluster's network cannot reach the other.
  auto keyL = h.podExec("left", "controller", "md5sum < /etc/munge/munge.key");
  auto keyR = h.podExec("right", "controller", "md5sum < /etc/munge/munge.key");
  EXPECT_NE(keyL.out, keyR.out);
  std::string rightLogin = right["login"]["address"];
  auto reach = h.podExec("left", "login",
                         "timeout 2 bash -c 'echo > /dev/tcp/" + rightLogin + "/22' && echo open"
                         " || echo closed");
  EXPECT_EQ(reach.out, "closed\n");

  expectDeletedCleanly(h, "right", right["subnet"]);
  auto still = h.ssh("left", "srun -N2 hostname | sort");
  EXPECT_EQ(still.out, "slinky-0\nslinky-1\n") << still.err;
  expectDeletedCleanly(h, "left", left["subnet"]);
}

}  // namespace
}  // namespace corral::e2e
