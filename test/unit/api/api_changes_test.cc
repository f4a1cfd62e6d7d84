// The change endpoints of the REST API against FakeStore: what they accept,
// what they refuse (and that a refusal stores nothing), and the status
// matrix. The reconciler is constructed but never started, so requests only
// write desired state, as they do in corrald.

#include <httplib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "api/server.h"
#include "fakes/fake_clock.h"
#include "fakes/fake_runtime.h"
#include "fakes/fake_store.h"
#include "slurm/renderer.h"
#include "store/update.h"

namespace corral {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

class ApiChangesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reconciler_ = std::make_unique<Reconciler>(store_, runtime_, clock_, ReconcilerOptions{});
    ApiOptions options;
    options.platformPartitions = {"llm"};
    options.metricsPeriod = std::chrono::milliseconds(0);
    api_ = std::make_unique<ApiServer>(store_, *reconciler_, clock_, options);
    ASSERT_TRUE(api_->bind("127.0.0.1", 0).isOk());
    thread_ = std::thread([this] { api_->serve(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", api_->port());
    ASSERT_TRUE(store_.createAccount({"admin", true, {}, 0}).isOk());
    auto token = issueToken(store_, clock_, "admin", "unit test");
    ASSERT_TRUE(token.isOk());
    client_->set_bearer_token_auth(token->c_str());
    for (int i = 0; i < 200 && !client_->Get("/healthz"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    addCluster("a", ClusterStatus::kRunning, 4);
  }
  void TearDown() override {
    api_->stop();
    thread_.join();
  }

  void addCluster(const std::string& name, ClusterStatus status, int gpuNodes) {
    ClusterRecord r;
    r.spec.name = name;
    r.spec.gpuNodes = gpuNodes;
    r.status = status;
    r.revision = r.appliedRevision = 1;
    r.platformPartitions = {"llm"};
    ASSERT_TRUE(store_.createCluster(r).isOk());
  }

  struct Answer {
    int status = 0;
    json body;
  };
  Answer send(const std::string& method, const std::string& path, const std::string& body = "") {
    httplib::Result res = method == "POST"    ? client_->Post(path, body, "application/json")
                          : method == "PUT"   ? client_->Put(path, body, "application/json")
                          : method == "PATCH" ? client_->Patch(path, body, "application/json")
                          : method == "DELETE" ? client_->Delete(path)
                                               : client_->Get(path);
    if (!res) return {};
    return {res->status, json::parse(res->body, nullptr, false)};
  }

  // The request is refused with `status` and a message containing `text`,
  // and cluster "a" is exactly as it was.
  void expectRefused(const std::string& method, const std::string& path, const std::string& body,
                     int status, const std::string& text) {
    ClusterRecord before = *store_.getCluster("a");
    Answer a = send(method, path, body);
    EXPECT_EQ(a.status, status) << method << " " << path << " " << body << " -> " << a.body.dump();
    EXPECT_THAT(a.body["error"]["message"].get<std::string>(), HasSubstr(text)) << body;
    ClusterRecord after = *store_.getCluster("a");
    EXPECT_EQ(after.version, before.version) << "a refused change wrote the record";
    EXPECT_EQ(after.spec, before.spec);
  }

  FakeStore store_;
  FakeRuntime runtime_;
  FakeClock clock_;
  std::unique_ptr<Reconciler> reconciler_;
  std::unique_ptr<ApiServer> api_;
  std::unique_ptr<httplib::Client> client_;
  std::thread thread_;
};

TEST_F(ApiChangesTest, ConfigSetStoresANormalisedRevision) {
  Answer a = send("PATCH", "/api/v1/clusters/a/config", R"({"set": {"minjobage": "0300"}})");
  ASSERT_EQ(a.status, 202) << a.body.dump();
  EXPECT_EQ(a.body["change"]["revision"], 2);
  EXPECT_EQ(a.body["change"]["made"], true);
  ClusterRecord r = *store_.getCluster("a");
  EXPECT_EQ(r.revision, 2);
  EXPECT_EQ(r.appliedRevision, 1);
  EXPECT_EQ(r.spec.slurmConf.at("MinJobAge"), "300");
  EXPECT_EQ(r.changeAuthor, "admin") << "a revision names the account that asked for it";
  // The same again changes nothing and stores nothing.
  Answer same = send("PATCH", "/api/v1/clusters/a/config", R"({"set": {"MinJobAge": "300"}})");
  EXPECT_EQ(same.status, 200);
  EXPECT_EQ(same.body["change"]["made"], false);
  EXPECT_EQ(store_.getCluster("a")->revision, 2);
}

TEST_F(ApiChangesTest, BadConfigChangesAreRefusedAndStoreNothing) {
  const std::string path = "/api/v1/clusters/a/config";
  expectRefused("PATCH", path, R"({"set": {"SlurmUser": "nobody"}})", 400, "not a slurm.conf parameter");
  expectRefused("PATCH", path, R"({"set": {"MinJobAge": "300\nSlurmUser=evil"}})", 400, "MinJobAge");
  expectRefused("PATCH", path, R"({"set": {"MinJobAge": "300 SlurmUser=evil"}})", 400, "MinJobAge");
  expectRefused("PATCH", path, R"({"set": {"MinJobAge": 300}})", 400, "must be a string");
  expectRefused("PATCH", path, R"({"unset": ["MinJobAge"]})", 400, "is not set");
  expectRefused("PATCH", path, R"({"set": {}})", 400, "nothing to change");
  expectRefused("PATCH", path, R"({"sett": {}})", 400, "unknown field");
  expectRefused("PATCH", path, "not json", 400, "JSON object");
  expectRefused("PATCH", path,
                R"({"set": {"PreemptType": "preempt/partition_prio", "PreemptMode": "SUSPEND"}})",
                400, "GANG");
}

TEST_F(ApiChangesTest, PartitionsAreCheckedAgainstNodesNamesAndTheLimit) {
  const std::string path = "/api/v1/clusters/a/partitions";
  expectRefused("POST", path, R"({"name": "p", "nodes": "slinky-[0-9]"})", 400, "does not exist");
  expectRefused("POST", path, R"({"name": "all", "nodes": "slinky-0"})", 400, "managed by corral");
  expectRefused("POST", path, R"({"name": "llm", "nodes": "slinky-0"})", 400, "managed by corral");
  expectRefused("POST", path, R"({"name": "p", "nodes": "slinky-[0-99999999999]"})", 400, "");
  expectRefused("POST", path, R"({"name": "p", "nodes": ""})", 400, "needs nodes");
  expectRefused("POST", path, R"({"name": "p q", "nodes": "slinky-0"})", 400, "invalid partition name");
  expectRefused("POST", path, R"({"name": "p", "nodes": "slinky-0", "options": {"Nodes": "x"}})", 400,
                "not a partition parameter");
  expectRefused("DELETE", path + "/slinky", "", 400, "managed by corral");
  expectRefused("DELETE", path + "/nosuch", "", 404, "no partition named");

  for (int i = 0; i < kMaxUserPartitions; ++i) {
    Answer a = send("POST", path, json{{"name", "p" + std::to_string(i)}, {"nodes", "slinky-[0-1]"},
                                       {"options", {{"maxtime", "30"}}}}
                                      .dump());
    ASSERT_EQ(a.status, 202) << a.body.dump();
  }
  expectRefused("POST", path, R"({"name": "p20", "nodes": "slinky-0"})", 400, "at most 20");
  ClusterRecord r = *store_.getCluster("a");
  EXPECT_EQ(r.spec.partitions.size(), 20u);
  EXPECT_EQ(r.spec.partitions[0].options.at("MaxTime"), "30");

  Answer list = send("GET", path);
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.body["userPartitions"], 20);
  EXPECT_EQ(list.body["partitions"][0]["name"], "all");
  EXPECT_EQ(list.body["partitions"][0]["managedBy"], "corral");
  EXPECT_EQ(list.body["partitions"][2]["name"], "llm");
}

TEST_F(ApiChangesTest, ScaleDownPrunesPartitionsAndReportsEmptiedOnes) {
  ASSERT_EQ(send("POST", "/api/v1/clusters/a/partitions",
                 R"({"name": "top", "nodes": "slinky-[2-3]"})")
                .status,
            202);
  ASSERT_EQ(send("POST", "/api/v1/clusters/a/partitions",
                 R"({"name": "mixed", "nodes": "slinky-[1-2]"})")
                .status,
            202);
  Answer a = send("POST", "/api/v1/clusters/a/scale", R"({"gpuNodes": 2, "force": true})");
  ASSERT_EQ(a.status, 202) << a.body.dump();
  EXPECT_EQ(a.body["change"]["removedNodes"], "slinky-[2-3]");
  EXPECT_EQ(a.body["change"]["emptiedPartitions"], json::array({"top"}));
  ClusterRecord r = *store_.getCluster("a");
  EXPECT_TRUE(r.changeForce);
  EXPECT_EQ(r.spec.partitions[0].nodes, "");
  EXPECT_EQ(r.spec.partitions[1].nodes, "slinky-1");
  expectRefused("POST", "/api/v1/clusters/a/scale", R"({"gpuNodes": 201})", 400, "--gpu-nodes");
  expectRefused("POST", "/api/v1/clusters/a/scale", R"({"gpuNodes": "4"})", 400, "integer");
  expectRefused("POST", "/api/v1/clusters/a/scale", R"({"gpuNodes": 0})", 400, "at least one node");
}

TEST_F(ApiChangesTest, ActionsFollowTheStatusTable) {
  addCluster("old", ClusterStatus::kTerminated, 1);
  Answer scale = send("POST", "/api/v1/clusters/old/scale", R"({"gpuNodes": 2})");
  EXPECT_EQ(scale.status, 409);
  EXPECT_EQ(scale.body["error"]["message"],
            "cannot scale cluster \"old\": it is Terminated; that is allowed only when a cluster "
            "is Running");
  Answer get = send("GET", "/api/v1/clusters/old");
  EXPECT_EQ(get.body["actions"]["scale"]["allowed"], false);
  EXPECT_EQ(get.body["actions"]["clone"]["allowed"], true);

  Answer clone = send("POST", "/api/v1/clusters/old/clone", R"({"name": "new"})");
  ASSERT_EQ(clone.status, 201) << clone.body.dump();
  ClusterRecord created = *store_.getCluster("new");
  EXPECT_EQ(created.status, ClusterStatus::kCreating);
  EXPECT_EQ(created.spec.gpuNodes, 1);
  EXPECT_EQ(created.revision, 1);
  EXPECT_EQ(send("POST", "/api/v1/clusters/old/clone", R"({"name": "new"})").status, 409);
  EXPECT_EQ(send("POST", "/api/v1/clusters/old/clone", R"({"name": "Bad_Name"})").status, 400);

  EXPECT_EQ(send("POST", "/api/v1/clusters/old/terminate").status, 409);
  Answer term = send("POST", "/api/v1/clusters/a/terminate");
  EXPECT_EQ(term.status, 202);
  EXPECT_EQ(store_.getCluster("a")->status, ClusterStatus::kTerminating);
  EXPECT_EQ(send("POST", "/api/v1/clusters/a/login/restart").status, 409);
}

TEST_F(ApiChangesTest, LoginRestartAndReconfigureAlwaysMakeARevision) {
  Answer login = send("POST", "/api/v1/clusters/a/login/restart");
  ASSERT_EQ(login.status, 202);
  EXPECT_EQ(store_.getCluster("a")->spec.loginGeneration, 1);
  Answer again = send("POST", "/api/v1/clusters/a/reconfigure");
  ASSERT_EQ(again.status, 202);
  ClusterRecord r = *store_.getCluster("a");
  EXPECT_EQ(r.revision, 3);
  EXPECT_THAT(r.changeMessage, HasSubstr("reconfigure"));
  auto history = store_.listRevisions("a");
  ASSERT_TRUE(history.isOk());
  ASSERT_EQ(history->size(), 3u);
  EXPECT_EQ((*history)[1].state, RevisionState::kSuperseded);
  Answer revisions = send("GET", "/api/v1/clusters/a/revisions");
  EXPECT_EQ(revisions.body["revisions"].size(), 3u);
  EXPECT_EQ(revisions.body["revisions"][2]["state"], "Pending");
}

// A change request while the reconciler works on the cluster: its progress
// (phase, node table) is written between the request's read and its write,
// as during a long apply. The change is stored at its first attempt: no
// conflict, no retry, and the progress written meanwhile is kept.
TEST_F(ApiChangesTest, StatusWritesDuringAnApplyDoNotMakeAChangeRetry) {
  int progress = 0;
  store_.beforeWrite([&](const ClusterRecord&, RecordPart part) {
    if (part != RecordPart::kSpec) return;
    for (int i = 0; i < 3; ++i) {
      auto r = updateWithRetry(store_, "a", RecordPart::kStatus, [&](ClusterRecord& c) -> StatusOr<Edit> {
        c.phase = "waiting for slinky-" + std::to_string(i) + "'s jobs";
        return Edit::kWrite;
      });
      EXPECT_TRUE(r.isOk());
      ++progress;
    }
  });
  const int64_t specWrites = store_.writes(RecordPart::kSpec);
  Answer a = send("POST", "/api/v1/clusters/a/scale", R"({"gpuNodes": 6})");
  store_.beforeWrite(nullptr);
  ASSERT_EQ(a.status, 202) << a.body.dump();
  EXPECT_EQ(progress, 3);
  EXPECT_EQ(store_.conflicts(), 0) << "the change retried";
  EXPECT_EQ(store_.writes(RecordPart::kSpec) - specWrites, 1);
  ClusterRecord now = *store_.getCluster("a");
  EXPECT_EQ(now.spec.gpuNodes, 6);
  EXPECT_EQ(now.revision, 2);
  EXPECT_EQ(now.phase, "waiting for slinky-2's jobs");
}

// Terminate writes both parts: a change request racing it reads again and
// is refused by the new status rather than making a revision of a cluster
// being terminated.
TEST_F(ApiChangesTest, AChangeRacingATerminateIsRefused) {
  bool once = false;
  store_.beforeWrite([&](const ClusterRecord&, RecordPart part) {
    if (part != RecordPart::kSpec || once) return;
    once = true;
    auto r = updateWithRetry(store_, "a", RecordPart::kAll, [&](ClusterRecord& c) -> StatusOr<Edit> {
      c.status = ClusterStatus::kTerminating;
      return Edit::kWrite;
    });
    EXPECT_TRUE(r.isOk());
  });
  Answer a = send("POST", "/api/v1/clusters/a/scale", R"({"gpuNodes": 6})");
  store_.beforeWrite(nullptr);
  EXPECT_EQ(a.status, 409) << a.body.dump();
  EXPECT_EQ(store_.conflicts(), 1);
  EXPECT_EQ(store_.getCluster("a")->revision, 1);
}

TEST_F(ApiChangesTest, ConfigDiffShowsTheRenderedChangeWithoutStoringIt) {
  ClusterRecord r = *store_.getCluster("a");
  r.subnet = "172.29.9.0/24";
  r.nodes = *planNodes(r.spec, r.subnet, {});
  ASSERT_TRUE(store_.updateCluster(r).isOk());
  Answer a = send("POST", "/api/v1/clusters/a/config/diff", R"({"set": {"MinJobAge": "60"}})");
  ASSERT_EQ(a.status, 200) << a.body.dump();
  std::string diff = a.body["diff"];
  EXPECT_THAT(diff, HasSubstr("--- a/etc/slurm/slurm.conf\n+++ b/etc/slurm/slurm.conf\n"));
  EXPECT_THAT(diff, HasSubstr("\n-MinJobAge=300\n+MinJobAge=60\n"));
  EXPECT_EQ(a.body["restartsSlurmctld"], false);
  Answer restart =
      send("POST", "/api/v1/clusters/a/config/diff", R"({"set": {"SchedulerType": "sched/builtin"}})");
  EXPECT_EQ(restart.body["restartsSlurmctld"], true);
  EXPECT_EQ(store_.getCluster("a")->revision, 1);
}

TEST_F(ApiChangesTest, SshKeysMustBeValidAndNotEmpty) {
  const std::string path = "/api/v1/clusters/a/ssh-keys";
  expectRefused("PUT", path, R"({"sshKeys": []})", 400, "at least one");
  expectRefused("PUT", path, R"({"sshKeys": ["not a key"]})", 400, "ssh-key");
  Answer ok = send("PUT", path,
                   R"({"sshKeys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEhtcyl2DnmY8rvK8gUTkjFaqqVzLt3v6s5kEHPr2t+T you@laptop"]})");
  EXPECT_EQ(ok.status, 202) << ok.body.dump();
}

}  // namespace
}  // namespace corral
