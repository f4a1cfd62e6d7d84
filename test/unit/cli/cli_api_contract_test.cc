// `corral`'s change commands against corrald's real REST API (`ApiServer`
// over `FakeStore`, on 127.0.0.1, port 0), so that the bodies the CLI sends
// and the answers it reads are the ones the server really uses. The
// reconciler is never started: the test plays its part by writing revision
// states into the store while the CLI waits (from the CLI clock's `sleepFor`).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <utility>

#include "api/server.h"
#include "fakes/fake_clock.h"
#include "fakes/fake_runtime.h"
#include "fakes/fake_store.h"
#include "reconcile/reconciler.h"
#include "support/cli_test_support.h"

namespace corral {
namespace {

class CliApiContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reconciler_ = std::make_unique<Reconciler>(store_, runtime_, serverClock_, ReconcilerOptions{});
    ApiOptions options;
    options.dataDir = dataDir_.path();
    options.metricsPeriod = std::chrono::milliseconds(0);
    api_ = std::make_unique<ApiServer>(store_, *reconciler_, serverClock_, options);
    ASSERT_TRUE(store_.createAccount({"admin", true, {}, 0}).isOk());
    auto token = issueToken(store_, serverClock_, "admin", "unit test");
    ASSERT_TRUE(token.isOk());
    token_ = *token;
    ASSERT_TRUE(api_->bind("127.0.0.1", 0).isOk());
    serving_ = std::thread([this] { api_->serve(); });

    ClusterRecord r;
    r.spec.name = "demo";
    r.project = kDefaultProject;
    r.spec.gpuNodes = 4;
    r.spec.gpusPerNode = 8;
    r.spec.sshKeys = {
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMxZgP62Li7d1LTEBDNuh75IrP8c8RRx0Noyqk6unAPc me"};
    r.status = ClusterStatus::kRunning;
    r.revision = 1;
    r.subnet = "172.29.1.0/24";
    for (int i = 0; i < 4; ++i) {
      NodeRecord n;
      n.name = "slinky-" + std::to_string(i);
      n.group = kGpuGroup;
      n.physicalId = "corral_node_" + std::to_string(i + 1);
      n.address = "172.29.1." + std::to_string(10 + i);
      r.nodes.push_back(n);
    }
    r.changeAuthor = "api";
    r.changeMessage = "create requested";
    auto created = store_.createCluster(r);
    ASSERT_TRUE(created.isOk()) << created.status().toString();
    markApplied(1);
  }

  void TearDown() override {
    api_->stop();
    serving_.join();
  }

  CliResult run(std::vector<std::string> args) {
    CliContext ctx;
    ctx.clock = &cliClock_;
    args.insert(args.begin(), {"--server", "http://127.0.0.1:" + std::to_string(api_->port()),
                               "--token", token_});
    return runCorral(std::move(args), ctx);
  }

  ClusterRecord record() {
    auto r = store_.getCluster("demo");
    EXPECT_TRUE(r.isOk());
    return r.isOk() ? *r : ClusterRecord{};
  }

  // What the reconciler records when it has applied `revision`.
  void markApplied(int64_t revision) {
    ASSERT_TRUE(store_.setRevisionState("demo", revision, RevisionState::kApplied, "").isOk());
    ClusterRecord r = record();
    r.appliedRevision = revision;
    ASSERT_TRUE(store_.updateCluster(r).isOk());
  }

  // What the reconciler records when `revision` fails: the failure, then the
  // rollback to `restore`'s spec as the next revision, by "corral".
  void failAndRollBack(int64_t revision, int64_t restore, const std::string& error) {
    ASSERT_TRUE(store_.setRevisionState("demo", revision, RevisionState::kFailed, error).isOk());
    auto history = store_.listRevisions("demo");
    ASSERT_TRUE(history.isOk());
    ClusterRecord r = record();
    for (const auto& rev : *history)
      if (rev.number == restore) r.spec = rev.spec;
    r.revision = revision + 1;
    r.changeAuthor = "corral";
    r.changeRollback = true;
    r.changeMessage = "roll back to revision " + std::to_string(restore);
    ASSERT_TRUE(store_.updateCluster(r).isOk());
  }

  // corrald's --data-dir: where volumes without a --source are made.
  TempDir dataDir_;
  FakeStore store_;
  FakeRuntime runtime_;
  FakeClock serverClock_;
  std::unique_ptr<Reconciler> reconciler_;
  std::unique_ptr<ApiServer> api_;
  std::string token_;
  std::thread serving_;
  // The CLI's clock; its `onSleep` plays the reconciler's part.
  FakeCliClock cliClock_{1764460800000 + 60 * 1000};
};

TEST_F(CliApiContractTest, PartitionsConfigAndScaleRoundTrip) {
  CliResult r = run({"partition", "create", "demo", "short", "--nodes", "slinky-[0-1]",
                     "MaxTime=30", "--no-wait"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "revision 2: create partition short\n"
            "revision 2 requested; follow it with: corral cluster history demo\n");

  r = run({"partition", "update", "demo", "short", "maxtime=60", "--no-wait"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("revision 3: update partition short\n", 0), 0u) << r.out;
  ASSERT_EQ(record().spec.partitions.size(), 1u);
  EXPECT_EQ(record().spec.partitions[0].nodes, "slinky-[0-1]");
  EXPECT_EQ(record().spec.partitions[0].options.at("MaxTime"), "60");

  r = run({"partition", "list", "demo"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\nshort    slinky-[0-1]   no        user         MaxTime=60\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n1 of 20 user partitions\n"), std::string::npos) << r.out;

  // The change is applied while the CLI waits.
  cliClock_.onSleep = [this](int n) {
    if (n == 2) markApplied(4);
  };
  r = run({"config", "set", "demo", "MaxJobCount=5000"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "revision 4: config MaxJobCount=5000\nrevision 4 applied\n");
  cliClock_.onSleep = nullptr;

  r = run({"config", "get", "demo"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "MaxJobCount=5000\n");

  r = run({"config", "set", "demo", "MaxJobCount=5000"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "nothing to change\n");

  r = run({"cluster", "scale", "demo", "--gpu-nodes", "1", "--no-wait"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "revision 5: scale to 1 GPU node and 0 CPU nodes\n"
            "removes nodes slinky-[1-3]\n"
            "revision 5 requested; follow it with: corral cluster history demo\n");

  r = run({"cluster", "history", "demo"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("4          Applied (current)   admin    "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("5          Pending             admin    "), std::string::npos) << r.out;
}

TEST_F(CliApiContractTest, FailedChangeIsFollowedToItsRollback) {
  cliClock_.onSleep = [this](int n) {
    if (n == 2) failAndRollBack(2, 1, "slurmctld did not start");
    if (n == 4) markApplied(3);
  };
  CliResult r = run({"config", "set", "demo", "MaxJobCount=5000"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "revision 2: config MaxJobCount=5000\n");
  EXPECT_EQ(r.err,
            "error: revision 2 failed: slurmctld did not start\n"
            "the cluster was rolled back to revision 1\n");
}

TEST_F(CliApiContractTest, ConfigDiffShowsTheRenderedChange) {
  CliResult r = run({"config", "diff", "demo", "MaxJobCount=5000"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("+MaxJobCount=5000\n"), std::string::npos) << r.out;

  r = run({"config", "diff", "demo"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "no change\n");
}

TEST_F(CliApiContractTest, ServerErrorsArePrintedAsTheyCome) {
  CliResult r = run({"config", "set", "demo", "NoSuchParameter=1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("NoSuchParameter"), std::string::npos) << r.err;

  r = run({"partition", "update", "demo", "all", "MaxTime=5"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "error: partition \"all\" is managed by corral and cannot be changed; create one of "
            "your own with: corral partition create\n");
}

TEST_F(CliApiContractTest, VolumesRoundTrip) {
  CliResult r = run({"volume", "create", "data"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::string hostPath = "/var/lib/corral-fake/volumes/data";  // The runtime's storage.
  EXPECT_EQ(r.out, "volume \"data\" created at " + hostPath +
                       " (pfs)\n"
                       "attach it with: corral volume attach CLUSTER data --path /pfs\n");
  EXPECT_TRUE(runtime_.volumeExists("data"));

  r = run({"volume", "attach", "demo", "data", "--path", "/pfs", "--no-wait"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "revision 2: attach volume data at /pfs\n"
            "revision 2 requested; follow it with: corral cluster history demo\n");
  ASSERT_EQ(record().spec.volumes.size(), 1u);
  EXPECT_EQ(record().spec.volumes[0].path, "/pfs");

  r = run({"volume", "list"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\ndata   pfs    " + hostPath + "   demo:/pfs\n"), std::string::npos)
      << r.out;

  r = run({"volume", "delete", "data"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: volume \"data\" is attached to demo:/pfs; detach it first\n");

  // The detach is applied while the CLI waits.
  cliClock_.onSleep = [this](int n) {
    if (n == 2) markApplied(3);
  };
  r = run({"volume", "detach", "demo", "data"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "revision 3: detach volume data\nrevision 3 applied\n");
  cliClock_.onSleep = nullptr;

  r = run({"volume", "delete", "data"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "volume \"data\" deleted with its directory " + hostPath + "\n");
  EXPECT_FALSE(runtime_.volumeExists("data"));
}

TEST_F(CliApiContractTest, UsersRoundTrip) {
  std::string key = dataDir_.path() + "/alice.pub";
  std::ofstream(key)
      << "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMxZgP62Li7d1LTEBDNuh75IrP8c8RRx0Noyqk6unAPc alice\n";
  CliResult r = run({"user", "add", "demo", "alice", "--ssh-key", key, "--no-wait"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "revision 2: add login user alice\n"
            "revision 2 requested; follow it with: corral cluster history demo\n");

  r = run({"user", "list", "demo"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "NAME    UID     HOME                 KEYS\n"
            "alice   20000   /shared/home/alice   1\n");

  r = run({"user", "add", "demo", "alice", "--ssh-key", key});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: user \"alice\" already exists\n");

  r = run({"user", "remove", "demo", "alice", "--no-wait"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("revision 3: remove login user alice\n", 0), 0u) << r.out;
  EXPECT_TRUE(record().spec.users.empty());
}

TEST_F(CliApiContractTest, NodesListAndReboot) {
  CliResult r = run({"node", "list", "demo"});
  ASSERT_EQ(r.code, 0) << r.err;
  // The reconciler never ran: Slurm has not reported and no agent has either.
  EXPECT_EQ(r.out,
            "NODE                       STATE   REASON   GPUS   HEALTH\n"
            "corral_node_1 (slinky-0)   -       -        8      unknown\n"
            "corral_node_2 (slinky-1)   -       -        8      unknown\n"
            "corral_node_3 (slinky-2)   -       -        8      unknown\n"
            "corral_node_4 (slinky-3)   -       -        8      unknown\n");

  r = run({"node", "get", "demo", "slinky-1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("Node:       corral_node_2 (slinky-1)\n", 0), 0u) << r.out;

  r = run({"node", "reboot", "demo", "slinky-1", "--no-wait"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "revision 2: reboot node slinky-1\n"
            "revision 2 requested; follow it with: corral cluster history demo\n");
  EXPECT_EQ(record().spec.nodeGenerations["slinky-1"], 1);

  r = run({"node", "get", "demo", "slinky-9"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: cluster \"demo\" has no node named \"slinky-9\"\n");
}

}  // namespace
}  // namespace corral
