// `corral`'s change commands (scale, partitions, config, login, history,
// terminate, clone) against a canned corrald: a real httplib::Server on
// 127.0.0.1, port 0, answering from per-test handlers, and the pure layouts
// those commands print.

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <mutex>

#include "cli/client.h"
#include "cli/cluster_cmd.h"
#include "cli/command.h"
#include "cli/config_cmd.h"
#include "cli/http.h"
#include "cli/output.h"
#include "cli/partition_cmd.h"
#include "support/cli_test_support.h"

namespace corral {
namespace {

Json cluster(const std::string& status, const std::string& phase = "") {
  Json c = Json::parse(R"({"name": "demo", "status": "", "phase": "", "reason": "",
      "revision": 4, "appliedRevision": 3,
      "spec": {"name": "demo", "gpuNodes": 2, "gpusPerNode": 8, "cpuNodes": 0, "sshKeys": ["k"]},
      "subnet": "172.29.1.0/24",
      "login": {"address": "172.29.1.3", "port": 22, "hostKey": "ssh-ed25519 HOSTKEY"},
      "nodes": [], "createdAt": 1764464400, "updatedAt": 1764464405})");
  c["status"] = status;
  c["phase"] = phase;
  return c;
}

// A 202 change answer for `revision`.
Json changeAnswer(int64_t revision, const std::string& message, Json extra = Json::object()) {
  Json change = {{"revision", revision}, {"made", true}, {"message", message}};
  for (auto it = extra.begin(); it != extra.end(); ++it) change[it.key()] = *it;
  return {{"change", change}, {"cluster", cluster("Running")}};
}

Json nothingChanged() {
  return {{"change", {{"revision", 3}, {"made", false}, {"message", "nothing to change"}}},
          {"cluster", cluster("Running")}};
}

Json revision(int64_t n, const std::string& state, const std::string& author = "api",
              const std::string& error = "", const std::string& message = "") {
  return {{"revision", n},     {"author", author}, {"message", message},
          {"createdAt", kCliNow - 60}, {"state", state},   {"error", error},
          {"rollback", false}, {"spec", Json::object()}};
}

// corrald's automatic rollback after a failed revision.
Json rollback(int64_t n, const std::string& state) {
  Json r = revision(n, state, "corral");
  r["rollback"] = true;
  return r;
}

Json history(std::vector<Json> revisions, int64_t applied) {
  return {{"revisions", revisions}, {"appliedRevision", applied}};
}

class CliChangesTest : public FakeCorraldTest {
 protected:
  // Serves GET /clusters/demo with `clusters` and GET /clusters/demo/revisions
  // with `revisions`, one answer per poll, repeating the last.
  void serveSequences(std::vector<Json> clusters, std::vector<Json> revisions) {
    clusters_ = std::move(clusters);
    revisions_ = std::move(revisions);
    corrald_.server().Get("/api/v1/clusters/demo",
                          [this](const httplib::Request&, httplib::Response& res) {
                            size_t i = std::min<size_t>(clusterGets_++, clusters_.size() - 1);
                            reply(res, 200, clusters_[i]);
                          });
    corrald_.server().Get("/api/v1/clusters/demo/revisions",
                          [this](const httplib::Request&, httplib::Response& res) {
                            size_t i = std::min<size_t>(revisionGets_++, revisions_.size() - 1);
                            reply(res, 200, revisions_[i]);
                          });
  }

  // Answers PATCH /clusters/demo/config with `answer` and records the body.
  void serveConfigPatch(const Json& answer, int status = 202) {
    corrald_.server().Patch(
        "/api/v1/clusters/demo/config",
        [this, answer, status](const httplib::Request& req, httplib::Response& res) {
          std::lock_guard<std::mutex> lock(mu_);
          received_ = Json::parse(req.body);
          ++requests_;
          reply(res, status, answer);
        });
  }

  Json received() {
    std::lock_guard<std::mutex> lock(mu_);
    return received_;
  }

  std::vector<Json> clusters_;
  std::vector<Json> revisions_;
  std::atomic<int> clusterGets_{0};
  std::atomic<int> revisionGets_{0};
  std::mutex mu_;
  Json received_;
  std::atomic<int> requests_{0};
};

// ---- scale ----

TEST_F(CliChangesTest, ScaleSendsOnlyWhatWasGivenAndSaysWhatWillHappen) {
  std::string path;
  corrald_.server().Post(
      "/api/v1/clusters/demo/scale", [&](const httplib::Request& req, httplib::Response& res) {
        std::lock_guard<std::mutex> lock(mu_);
        received_ = Json::parse(req.body);
        reply(res, 202,
              changeAnswer(5, "scale to 2 GPU nodes and 0 CPU nodes (--force)",
                           {{"removedNodes", "slinky-[2-3]"},
                            {"emptiedPartitions", {"big", "late"}},
                            {"jobsOnRemovedNodes", {"12 alice train", "13 bob eval"}},
                            {"jobsWillBe", "cancelled"}}));
      });
  CliResult r = run({"cluster", "scale", "demo", "--gpu-nodes", "2", "--force", "--no-wait"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(received().dump(), R"({"gpuNodes":2,"force":true})");
  EXPECT_EQ(r.out,
            "revision 5: scale to 2 GPU nodes and 0 CPU nodes (--force)\n"
            "removes nodes slinky-[2-3]\n"
            "warning: partition \"big\" has no nodes left after this change\n"
            "warning: partition \"late\" has no nodes left after this change\n"
            "--force cancels these jobs on slinky-[2-3]: 12 alice train, 13 bob eval\n"
            "revision 5 requested; follow it with: corral cluster history demo\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(CliChangesTest, ScaleWithoutForceWaitsForJobsThenForTheRevision) {
  corrald_.server().Post("/api/v1/clusters/demo/scale",
                         [&](const httplib::Request& req, httplib::Response& res) {
                           std::lock_guard<std::mutex> lock(mu_);
                           received_ = Json::parse(req.body);
                           reply(res, 202,
                                 changeAnswer(5, "scale to 1 GPU nodes and 3 CPU nodes",
                                              {{"removedNodes", "slinky-1"},
                                               {"emptiedPartitions", Json::array()},
                                               {"jobsOnRemovedNodes", {"12 alice train"}},
                                               {"jobsWillBe", "waited for"}}));
                         });
  serveSequences({cluster("Running", "draining slinky-1"), cluster("Running")},
                 {history({revision(5, "Pending")}, 4), history({revision(5, "Applied")}, 5)});
  CliResult r = run({"cluster", "scale", "demo", "--gpu-nodes", "1", "--cpu-nodes", "3"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(received().dump(), R"({"gpuNodes":1,"cpuNodes":3})");
  EXPECT_EQ(r.out,
            "revision 5: scale to 1 GPU nodes and 3 CPU nodes\n"
            "removes nodes slinky-1\n"
            "waiting for jobs 12 alice train to finish on the removed nodes (use --force to "
            "cancel them)\n"
            "revision 5 applied\n");
  EXPECT_EQ(r.err, "Running: draining slinky-1\nRunning\n");
}

TEST_F(CliChangesTest, ScaleWithoutASizeIsAUsageError) {
  CliResult r = run({"cluster", "scale", "demo", "--force"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("give the new size: --gpu-nodes N, --cpu-nodes M or both"),
            std::string::npos)
      << r.err;
}

TEST(CliChangesPureTest, ScaleSummaryIsEmptyWhenNothingGoesAway) {
  EXPECT_EQ(scaleSummary(Json::parse(R"({"revision": 2, "made": true, "removedNodes": "",
      "emptiedPartitions": [], "jobsOnRemovedNodes": [], "jobsWillBe": "none"})")),
            "");
}

// ---- config set and waiting ----

TEST_F(CliChangesTest, ConfigSetSplitsAtTheFirstEqualsAndWaitsUntilApplied) {
  serveConfigPatch(changeAnswer(4, "config MaxJobCount=5000 SchedulerParameters=bf_window=60"));
  serveSequences({cluster("Running", "applying revision 4"), cluster("Running")},
                 {history({revision(3, "Applied"), revision(4, "Pending")}, 3),
                  history({revision(3, "Applied"), revision(4, "Pending")}, 3),
                  history({revision(3, "Applied"), revision(4, "Applied")}, 4)});
  CliResult r =
      run({"config", "set", "demo", "MaxJobCount=5000", "SchedulerParameters=bf_window=60"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(received().dump(),
            R"({"set":{"MaxJobCount":"5000","SchedulerParameters":"bf_window=60"}})");
  EXPECT_EQ(r.out,
            "revision 4: config MaxJobCount=5000 SchedulerParameters=bf_window=60\n"
            "revision 4 applied\n");
  EXPECT_EQ(r.err, "Running: applying revision 4\nRunning\n");
  EXPECT_EQ(revisionGets_.load(), 3);
  EXPECT_EQ(clock_.sleeps(), 3);
}

TEST_F(CliChangesTest, ConfigSetRejectsABareWordBeforeSendingAnything) {
  serveConfigPatch(changeAnswer(4, "unused"));
  CliResult r = run({"config", "set", "demo", "MaxJobCount=5000", "MinJobAge"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("\"MinJobAge\" is not Key=Value; write it as MinJobAge=VALUE"),
            std::string::npos)
      << r.err;
  r = run({"config", "set", "demo", "=5"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("\"=5\" has no key before '='"), std::string::npos) << r.err;
  EXPECT_EQ(requests_.load(), 0);
}

TEST(CliChangesPureTest, ParseKeyValueSplitsAtTheFirstEquals) {
  auto kv = parseKeyValue("SlurmctldParameters=enable_configless=1");
  ASSERT_TRUE(kv.isOk());
  EXPECT_EQ(kv->first, "SlurmctldParameters");
  EXPECT_EQ(kv->second, "enable_configless=1");
  kv = parseKeyValue("Key=");
  ASSERT_TRUE(kv.isOk());
  EXPECT_EQ(kv->second, "");
  EXPECT_EQ(parseKeyValue("Key").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(parseKeyValue("=x").status().code(), Code::kInvalidArgument);
}

TEST_F(CliChangesTest, FailedChangeReportsTheErrorThenTheRollbackAndExitsOne) {
  serveConfigPatch(changeAnswer(4, "config MaxJobCount=1"));
  serveSequences(
      {cluster("Running", "applying revision 4"), cluster("Running", "rolling back"),
       cluster("Running", "rolling back"), cluster("Running")},
      {history({revision(3, "Applied"), revision(4, "Pending")}, 3),
       history({revision(3, "Applied"), revision(4, "Failed", "api", "slurmctld did not start"),
                rollback(5, "Pending")},
               3),
       history({revision(3, "Applied"), revision(4, "Failed", "api", "slurmctld did not start"),
                rollback(5, "Pending")},
               3),
       history({revision(3, "Applied"), revision(4, "Failed", "api", "slurmctld did not start"),
                rollback(5, "Applied")},
               5)});
  CliResult r = run({"config", "set", "demo", "MaxJobCount=1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "revision 4: config MaxJobCount=1\n");
  EXPECT_EQ(r.err,
            "Running: applying revision 4\n"
            "Running: rolling back\n"
            "error: revision 4 failed: slurmctld did not start\n"
            "Running\n"
            "the cluster was rolled back to revision 3\n");
  EXPECT_EQ(revisionGets_.load(), 4);
}

TEST_F(CliChangesTest, RollbackAlreadyAppliedStillNamesTheRestoredRevision) {
  serveConfigPatch(changeAnswer(7, "config MaxJobCount=1"));
  // By the first poll corrald has failed revision 7 and applied its
  // rollback, so the applied revision is the rollback itself.
  serveSequences({cluster("Running")}, {history({revision(5, "Applied"), revision(6, "Superseded"),
                                                 revision(7, "Failed", "api", "bad value"),
                                                 rollback(8, "Applied")},
                                                8)});
  CliResult r = run({"config", "set", "demo", "MaxJobCount=1", "-o", "json"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(Json::parse(r.out)["state"], "Failed");
  EXPECT_EQ(r.err,
            "revision 7: config MaxJobCount=1\n"
            "error: revision 7 failed: bad value\n"
            "the cluster was rolled back to revision 5\n");
}

TEST_F(CliChangesTest, SupersededChangeFollowsTheNewerChangeThatCarriesIt) {
  serveConfigPatch(changeAnswer(4, "config MaxJobCount=1"));
  serveSequences({cluster("Running")},
                 {history({revision(4, "Superseded"), revision(5, "Pending", "api", "", "config A=1")}, 3),
                  history({revision(4, "Superseded"), revision(5, "Applied", "api", "", "config A=1")}, 5)});
  CliResult r = run({"config", "set", "demo", "MaxJobCount=1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err,
            "revision 4 was superseded by revision 5 (config A=1), which includes it; following "
            "revision 5\n");
  EXPECT_NE(r.out.find("revision 5 applied"), std::string::npos) << r.out;
}

TEST_F(CliChangesTest, SupersededByCorralsRollbackExitsOne) {
  serveConfigPatch(changeAnswer(4, "config MaxJobCount=1"));
  serveSequences({cluster("Running")},
                 {history({revision(4, "Superseded"), rollback(5, "Pending")}, 3)});
  CliResult r = run({"config", "set", "demo", "MaxJobCount=1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "error: revision 4 was superseded by revision 5, a newer change, before it was "
            "applied; see: corral cluster history demo\n");
}

// A revision corral made that is not a rollback (the image recorded for a
// cluster from before images) is followed like anyone's: the CLI goes by the
// revision's `rollback`, not by who wrote it.
TEST_F(CliChangesTest, SupersededByCorralsOwnNonRollbackRevisionIsFollowed) {
  serveConfigPatch(changeAnswer(4, "config MaxJobCount=1"));
  Json recorded = revision(5, "Applied", "corral", "", "record image debian12-slurm22.05");
  serveSequences({cluster("Running")}, {history({revision(4, "Superseded"), recorded}, 5)});
  CliResult r = run({"config", "set", "demo", "MaxJobCount=1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err,
            "revision 4 was superseded by revision 5 (record image debian12-slurm22.05), which "
            "includes it; following revision 5\n");
}

TEST_F(CliChangesTest, WaitingTimesOutSayingHowToFollowTheChange) {
  serveConfigPatch(changeAnswer(4, "config MaxJobCount=1"));
  serveSequences({cluster("Running", "applying revision 4")},
                 {history({revision(4, "Pending")}, 3)});
  CliResult r = run({"config", "set", "demo", "MaxJobCount=1", "--timeout", "1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(revisionGets_.load(), 4);  // 1 s at 250 ms a poll.
  EXPECT_EQ(r.err,
            "Running: applying revision 4\n"
            "error: timed out after 1s waiting for revision 4 of cluster \"demo\" to be applied; "
            "it is Pending; the cluster is Running: applying revision 4; follow it with: corral "
            "cluster history demo\n");
}

TEST_F(CliChangesTest, WaitingStopsWhenTheClusterIsBeingDeleted) {
  serveConfigPatch(changeAnswer(4, "config MaxJobCount=1"));
  serveSequences({cluster("Deleting", "stopping nodes")}, {history({revision(4, "Pending")}, 3)});
  CliResult r = run({"config", "set", "demo", "MaxJobCount=1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "Deleting: stopping nodes\n"
            "error: cluster \"demo\" is Deleting; revision 4 will not be applied\n");
  EXPECT_EQ(clock_.sleeps(), 1);
}

TEST_F(CliChangesTest, NothingToChangeExitsZeroWithoutWaiting) {
  serveConfigPatch(nothingChanged(), 200);
  serveSequences({cluster("Running")}, {history({}, 3)});
  CliResult r = run({"config", "set", "demo", "MaxJobCount=5000"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "nothing to change\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(revisionGets_.load(), 0);
  EXPECT_EQ(clock_.sleeps(), 0);
}

TEST_F(CliChangesTest, ConfigUnsetSendsTheKeys) {
  serveConfigPatch(changeAnswer(4, "config unset MaxJobCount unset MinJobAge"));
  CliResult r = run({"config", "unset", "demo", "MaxJobCount", "MinJobAge", "--no-wait"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(received().dump(), R"({"unset":["MaxJobCount","MinJobAge"]})");
  EXPECT_EQ(r.out,
            "revision 4: config unset MaxJobCount unset MinJobAge\n"
            "revision 4 requested; follow it with: corral cluster history demo\n");
}

TEST_F(CliChangesTest, ConfigGetListsSettingsOrSaysThereAreNone) {
  Json body = {{"slurmConf", {{"MaxJobCount", "5000"}, {"MinJobAge", "300"}}},
               {"revision", 4},
               {"appliedRevision", 4}};
  corrald_.server().Get(
      "/api/v1/clusters/demo/config",
      [&](const httplib::Request&, httplib::Response& res) { reply(res, 200, body); });
  CliResult r = run({"config", "get", "demo"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "MaxJobCount=5000\nMinJobAge=300\n");
  body["slurmConf"] = Json::object();
  r = run({"config", "get", "demo"});
  EXPECT_EQ(r.out, "no settings; corral's defaults apply\n");
}

TEST_F(CliChangesTest, ConfigDiffSendsTheSettingsAndPrintsTheDiff) {
  Json answer = {{"diff",
                  "--- a/etc/slurm/slurm.conf\n+++ b/etc/slurm/slurm.conf\n@@ -1 +1 @@\n"
                  "-MaxJobCount=10000\n+MaxJobCount=5000\n"},
                 {"restartsSlurmctld", true}};
  corrald_.server().Post("/api/v1/clusters/demo/config/diff",
                         [&](const httplib::Request& req, httplib::Response& res) {
                           std::lock_guard<std::mutex> lock(mu_);
                           received_ = Json::parse(req.body);
                           reply(res, 200, answer);
                         });
  CliResult r = run({"config", "diff", "demo", "MaxJobCount=5000"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(received().dump(), R"({"set":{"MaxJobCount":"5000"}})");
  EXPECT_EQ(r.out, answer["diff"].get<std::string>() + "this change restarts slurmctld\n");

  answer = {{"diff", ""}, {"restartsSlurmctld", false}};
  r = run({"config", "diff", "demo"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(received().dump(), "{}");
  EXPECT_EQ(r.out, "no change\n");
}

TEST(CliChangesPureTest, SlurmParamsTableShowsRangesValuesAndRestarts) {
  Json body = Json::parse(R"({
    "slurmConf": [
      {"name": "MaxJobCount", "type": "int", "needsRestart": true, "help": "Most jobs kept",
       "min": 1, "max": 65533, "allowUnlimited": false},
      {"name": "SelectTypeParameters", "type": "enumList", "needsRestart": false,
       "help": "How resources are allocated", "values": ["CR_Core", "CR_Memory"]}],
    "partition": [
      {"name": "MaxNodes", "type": "int", "needsRestart": false, "help": "Most nodes a job gets",
       "min": 0, "max": 100, "allowUnlimited": true}]})");
  EXPECT_EQ(slurmParamsTable(body),
            "slurm.conf parameters (corral config set CLUSTER Key=Value):\n"
            "NAME                   TYPE       RANGE/VALUES        RESTART   HELP\n"
            "MaxJobCount            int        1..65533            yes       Most jobs kept\n"
            "SelectTypeParameters   enumList   CR_Core,CR_Memory   no        How resources are "
            "allocated\n"
            "\n"
            "partition options (corral partition create|update CLUSTER NAME Key=Value):\n"
            "NAME       TYPE   RANGE/VALUES       RESTART   HELP\n"
            "MaxNodes   int    0..100, INFINITE   no        Most nodes a job gets\n");
}

// ---- partitions ----

Json partitionList() {
  return Json::parse(R"({"partitions": [
      {"name": "all", "nodes": "ALL", "managedBy": "corral", "default": false,
       "options": {"MaxTime": "INFINITE"}},
      {"name": "debug", "nodes": "slinky-[0-1]", "options": {"Default": "YES", "MaxTime": "60"},
       "managedBy": "user", "default": true}],
    "userPartitions": 1, "limit": 20})");
}

TEST_F(CliChangesTest, PartitionUpdateMergesIntoWhatIsThereAndPutsTheWhole) {
  corrald_.server().Get(
      "/api/v1/clusters/demo/partitions",
      [&](const httplib::Request&, httplib::Response& res) { reply(res, 200, partitionList()); });
  std::string path;
  corrald_.server().Put(R"(/api/v1/clusters/demo/partitions/([^/]+))",
                        [&](const httplib::Request& req, httplib::Response& res) {
                          std::lock_guard<std::mutex> lock(mu_);
                          path = req.matches[1].str();
                          received_ = Json::parse(req.body);
                          reply(res, 202, changeAnswer(6, "update partition debug"));
                        });
  CliResult r = run({"partition", "update", "demo", "debug", "maxtime=120", "PriorityTier=2",
                     "--unset", "default", "--no-wait"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(path, "debug");
  // Keys keep corrald's spelling; Default is gone; nodes stay as they were.
  EXPECT_EQ(received().dump(), R"({"name":"debug","nodes":"slinky-[0-1]",)"
                               R"("options":{"MaxTime":"120","PriorityTier":"2"}})");
  EXPECT_EQ(r.out,
            "revision 6: update partition debug\n"
            "revision 6 requested; follow it with: corral cluster history demo\n");

  r = run({"partition", "update", "demo", "debug", "--nodes", "slinky-[0-3]", "--no-wait"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(received().dump(), R"({"name":"debug","nodes":"slinky-[0-3]",)"
                               R"("options":{"Default":"YES","MaxTime":"60"}})");
}

TEST(CliChangesPureTest, PartitionUpdateRefusesWhatItCannotMerge) {
  PartitionOptions o;
  o.cluster = "demo";
  o.name = "all";
  auto merged = mergePartitionUpdate(partitionList(), o);
  ASSERT_FALSE(merged.isOk());
  EXPECT_EQ(merged.status().message(),
            "partition \"all\" is managed by corral and cannot be changed; create one of your "
            "own with: corral partition create");

  o.name = "nope";
  merged = mergePartitionUpdate(partitionList(), o);
  EXPECT_EQ(merged.status().code(), Code::kNotFound);
  EXPECT_EQ(merged.status().message(),
            "no partition named \"nope\" in cluster \"demo\"; see: corral partition list demo");

  o.name = "debug";
  o.unset = {"PriorityTier"};
  merged = mergePartitionUpdate(partitionList(), o);
  EXPECT_EQ(merged.status().message(),
            "\"PriorityTier\" is not set on partition \"debug\"; see: corral partition list demo");

  o.unset = {"MaxTime"};
  o.settings = {"maxTime=5"};
  merged = mergePartitionUpdate(partitionList(), o);
  EXPECT_EQ(merged.status().message(), "\"MaxTime\" is both set and unset; give one or the other");
}

TEST_F(CliChangesTest, PartitionCreateSendsNodesAndOptionsThenWaits) {
  corrald_.server().Post("/api/v1/clusters/demo/partitions",
                         [&](const httplib::Request& req, httplib::Response& res) {
                           std::lock_guard<std::mutex> lock(mu_);
                           received_ = Json::parse(req.body);
                           reply(res, 202, changeAnswer(6, "create partition short"));
                         });
  serveSequences({cluster("Running")}, {history({revision(6, "Applied")}, 6)});
  CliResult r = run({"partition", "create", "demo", "short", "--nodes", "slinky-[0-1]",
                     "MaxTime=30", "Default=YES"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(received().dump(), R"({"name":"short","nodes":"slinky-[0-1]",)"
                               R"("options":{"MaxTime":"30","Default":"YES"}})");
  EXPECT_EQ(r.out, "revision 6: create partition short\nrevision 6 applied\n");
}

TEST_F(CliChangesTest, PartitionDeleteForceAsksForItAndNamesTheJobs) {
  std::string force;
  corrald_.server().Delete(
      "/api/v1/clusters/demo/partitions/short",
      [&](const httplib::Request& req, httplib::Response& res) {
        std::lock_guard<std::mutex> lock(mu_);
        force = req.get_param_value("force");
        reply(res, 202,
              changeAnswer(7, "delete partition short", {{"jobsInPartition", {"21 carol sweep"}}}));
      });
  CliResult r = run({"partition", "delete", "demo", "short", "--force", "--no-wait"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(force, "true");
  EXPECT_EQ(r.out,
            "revision 7: delete partition short\n"
            "warning: these jobs lose partition \"short\" (running ones keep running, pending "
            "ones fail): 21 carol sweep\n"
            "revision 7 requested; follow it with: corral cluster history demo\n");
}

TEST_F(CliChangesTest, PartitionDeleteWithJobsAndNoForceShowsCorraldsReason) {
  corrald_.server().Delete("/api/v1/clusters/demo/partitions/short",
                           [&](const httplib::Request& req, httplib::Response& res) {
                             EXPECT_EQ(req.get_param_value("force"), "");
                             replyError(res, 409, "FailedPrecondition",
                                        "partition \"short\" has 1 pending or running jobs");
                           });
  CliResult r = run({"partition", "delete", "demo", "short"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: partition \"short\" has 1 pending or running jobs\n");
}

TEST(CliChangesPureTest, PartitionTableShowsOwnersOptionsAndTheLimit) {
  EXPECT_EQ(partitionTable(partitionList()),
            "NAME    NODES          DEFAULT   MANAGED-BY   OPTIONS\n"
            "all     ALL            no        corral       MaxTime=INFINITE\n"
            "debug   slinky-[0-1]   yes       user         Default=YES MaxTime=60\n"
            "1 of 20 user partitions\n");
}

// ---- history ----

TEST(CliChangesPureTest, HistoryTableShowsAFailedRevisionsErrorUnderIt) {
  Json body = Json::parse(R"({"revisions": [
      {"revision": 1, "author": "api", "message": "create requested", "createdAt": 700,
       "state": "Applied", "error": ""},
      {"revision": 2, "author": "api", "message": "config MaxJobCount=5", "createdAt": 880,
       "state": "Failed", "error": "slurmctld did not start"},
      {"revision": 3, "author": "corral",
       "message": "roll back to revision 1 after revision 2 failed", "createdAt": 940,
       "state": "Applied", "error": ""}],
    "appliedRevision": 3})");
  EXPECT_EQ(historyTable(body, 1000),
            "REVISION   STATE               AUTHOR   AGE   MESSAGE\n"
            "1          Applied             api      5m    create requested\n"
            "2          Failed              api      2m    config MaxJobCount=5\n"
            "           error: slurmctld did not start\n"
            "3          Applied (current)   corral   1m    roll back to revision 1 after revision "
            "2 failed\n");
  EXPECT_EQ(historyTable(Json::object(), 1000), "No revisions.\n");
}

TEST_F(CliChangesTest, HistoryAsTableAndJson) {
  Json body = history({revision(1, "Applied", "api", "", "create requested")}, 1);
  corrald_.server().Get(
      "/api/v1/clusters/demo/revisions",
      [&](const httplib::Request&, httplib::Response& res) { reply(res, 200, body); });
  CliResult r = run({"cluster", "history", "demo"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "REVISION   STATE               AUTHOR   AGE   MESSAGE\n"
            "1          Applied (current)   api      1m    create requested\n");
  r = run({"cluster", "history", "demo", "-o", "json"});
  EXPECT_EQ(Json::parse(r.out), body);
}

// ---- login, reconfigure, set-keys, terminate, clone ----

TEST_F(CliChangesTest, LoginRestartFollowsItsRevision) {
  std::atomic<int> posts{0};
  corrald_.server().Post("/api/v1/clusters/demo/login/restart",
                         [&](const httplib::Request&, httplib::Response& res) {
                           ++posts;
                           reply(res, 202, changeAnswer(9, "restart the login service"));
                         });
  serveSequences({cluster("Running")}, {history({revision(9, "Applied")}, 9)});
  CliResult r = run({"login", "restart", "demo"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(posts.load(), 1);
  EXPECT_EQ(r.out, "revision 9: restart the login service\nrevision 9 applied\n");
}

TEST_F(CliChangesTest, ReconfigureWhileCreatingSaysAnotherPassIsComing) {
  corrald_.server().Post("/api/v1/clusters/demo/reconfigure",
                         [&](const httplib::Request&, httplib::Response& res) {
                           Json a = nothingChanged();
                           a["cluster"] = cluster("Creating", "starting workers");
                           reply(res, 202, a);
                         });
  CliResult r = run({"cluster", "reconfigure", "demo"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "cluster \"demo\" is still being created; corrald makes another creation pass; "
            "follow it with: corral cluster get demo\n");
}

TEST_F(CliChangesTest, SetKeysReadsTheFilesAndSendsTheKeys) {
  std::string file = home_.path() + "/a.pub";
  std::ofstream(file) << "# laptop\nssh-ed25519 AAAA me@laptop\n";
  corrald_.server().Put("/api/v1/clusters/demo/ssh-keys",
                        [&](const httplib::Request& req, httplib::Response& res) {
                          std::lock_guard<std::mutex> lock(mu_);
                          received_ = Json::parse(req.body);
                          reply(res, 202, changeAnswer(4, "set 1 SSH keys for root"));
                        });
  CliResult r = run({"cluster", "set-keys", "demo", "--ssh-key", file, "--no-wait"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(received().dump(), R"({"sshKeys":["ssh-ed25519 AAAA me@laptop"]})");

  r = run({"cluster", "set-keys", "demo"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--ssh-key is required"), std::string::npos) << r.err;
}

TEST_F(CliChangesTest, TerminateWaitsUntilTerminated) {
  corrald_.server().Post("/api/v1/clusters/demo/terminate",
                         [&](const httplib::Request&, httplib::Response& res) {
                           reply(res, 202, cluster("Terminating", "queued"));
                         });
  serveSequences({cluster("Terminating", "stopping nodes"), cluster("Terminated")}, {});
  CliResult r = run({"cluster", "terminate", "demo", "--wait"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "Terminating: queued\nTerminating: stopping nodes\nTerminated\n");
  EXPECT_EQ(r.out, "cluster \"demo\" terminated\n");
}

TEST_F(CliChangesTest, CloneNamesTheNewClusterAndWaitsForRunning) {
  corrald_.server().Post("/api/v1/clusters/old/clone",
                         [&](const httplib::Request& req, httplib::Response& res) {
                           std::lock_guard<std::mutex> lock(mu_);
                           received_ = Json::parse(req.body);
                           reply(res, 201, cluster("Creating", "queued"));
                         });
  serveSequences({cluster("Creating", "allocating nodes"), cluster("Running")}, {});
  CliResult r = run({"cluster", "clone", "old", "demo", "--wait"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(received().dump(), R"({"name":"demo"})");
  EXPECT_EQ(r.err, "Creating: queued\nCreating: allocating nodes\nRunning\n");
  EXPECT_EQ(r.out.rfind("Name:       demo\nStatus:     Running\n", 0), 0u) << r.out;

  r = run({"cluster", "clone", "old", "demo"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "cluster \"demo\" is being created as a clone of \"old\"; follow it with: corral "
            "cluster get demo\n");
}

// ---- the command tree ----

TEST_F(CliChangesTest, UnknownSubcommandsAreNamedWithTheChoices) {
  CliResult r = run({"partition", "frobnicate", "demo"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "error: unknown command \"corral partition frobnicate\"; the commands are: list, "
            "create, update, delete\n");
  r = run({"cluster", "resize", "demo"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "error: unknown command \"corral cluster resize\"; the commands are: create, list, "
            "get, delete, history, scale, reconfigure, set-keys, set-image, restart-workers, "
            "terminate, clone\n");
  r = run({"settings"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "error: unknown command \"corral settings\"; the commands are: cluster, partition, "
            "config, login, controller, volume, node, user, image, events, ssh, version\n");
  r = run({"cluster"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "error: \"corral cluster\" needs a command: create, list, get, delete, history, "
            "scale, reconfigure, set-keys, set-image, restart-workers, terminate, clone; see: "
            "corral cluster --help\n");
}

}  // namespace
}  // namespace corral
