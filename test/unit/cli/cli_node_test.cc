// `corral node …` against a canned corrald: the node table with health and
// XIDs, a node's details and history, a reboot followed to its revision and
// the node's state after it, and XID injection.

#include <gtest/gtest.h>

#include "cli/node_cmd.h"
#include "support/cli_test_support.h"

namespace corral {
namespace {

constexpr const char* kXid79Line =
    "NVRM: Xid (PCI:0000:3b:00): 79, pid=0, name=, GPU has fallen off the bus.";

Json xid(int64_t timeMillis, int code, const std::string& cls, const std::string& action,
         const std::string& description) {
  return {{"time", timeMillis},
          {"code", code},
          {"pci", "0000:3b:00.0"},
          {"class", cls},
          {"description", description},
          {"action", action},
          {"line", "NVRM: Xid (PCI:0000:3b:00): " + std::to_string(code) + ", ..."}};
}

Json node(const std::string& name, const std::string& physicalId, int gpus,
          const std::string& state, const std::string& reason, const std::string& health,
          Json xids = Json::array()) {
  return {{"name", name},
          {"group", gpus > 0 ? "slinky" : "cpu-workers"},
          {"physicalId", physicalId},
          {"address", "172.29.1.10"},
          {"gpus", gpus},
          {"state", state},
          {"reason", reason},
          {"health", health},
          {"xids", xids},
          {"reboots", 0}};
}

// slinky-0 drained by a hardware XID and then hit by an application one.
Json drainedNode() {
  return node("slinky-0", "corral_node_1", 8, "drained", "corral: GPU XID 79", "GPU XID",
              {xid(1764464405000, 79, "hardware", "drained", "GPU has fallen off the bus"),
               xid(1764464407000, 13, "application", "reported", "graphics engine exception")});
}

Json nodeList() {
  return {{"nodes",
           {drainedNode(), node("slinky-1", "corral_node_2", 8, "idle", "", "ok"),
            node("cpu-workers-0", "corral_node_3", 0, "down*", "Not responding",
                 "slurmd not running")}}};
}

using CliNodeTest = FakeCorraldTest;

TEST_F(CliNodeTest, ListNamesNodesLikeTheConsoleAndShowsTheXidBehindTheirHealth) {
  serve("GET", "/api/v1/clusters/demo/nodes", 200, nodeList());
  CliResult r = run({"node", "list", "demo"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "NODE                            STATE     REASON               GPUS   HEALTH\n"
            "corral_node_1 (slinky-0)        drained   corral: GPU XID 79   8      GPU XID 79\n"
            "corral_node_2 (slinky-1)        idle      -                    8      ok\n"
            "corral_node_3 (cpu-workers-0)   down*     Not responding       0      slurmd not "
            "running\n");
  EXPECT_EQ(r.err, "");

  r = run({"node", "list", "demo", "-o", "json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out), nodeList());
}

TEST(CliNodePureTest, HealthNamesTheXidThatMatters) {
  EXPECT_EQ(nodeHealthText(drainedNode()), "GPU XID 79");
  EXPECT_EQ(nodeHealthText(node("a", "p", 8, "idle", "", "ok")), "ok");
  EXPECT_EQ(nodeHealthText(node("a", "p", 8, "idle", "", "")), "unknown");
  EXPECT_EQ(nodeHealthText(
                node("a", "p", 8, "idle", "", "ok", {xid(1, 13, "application", "reported", "x")})),
            "ok; XID 13");
  EXPECT_EQ(nodeHealthText(node("a", "p", 8, "down*", "", "slurmd not running",
                                {xid(1, 48, "hardware", "drained", "x")})),
            "slurmd not running; GPU XID 48");
  // A report whose XIDs were cut off still says what kind of trouble it is.
  EXPECT_EQ(nodeHealthText(node("a", "p", 8, "drained", "", "GPU XID")), "GPU XID");
}

TEST(CliNodePureTest, ListWithoutNodes) {
  EXPECT_EQ(nodeListTable(Json{{"nodes", Json::array()}}), "No nodes yet.\n");
}

TEST_F(CliNodeTest, GetShowsDetailsXidsAndHistory) {
  ScopedTz tz("UTC0");
  Json n = drainedNode();
  n["reboots"] = 1;
  n["history"] = {{{"id", 7},
                   {"cluster", "demo"},
                   {"time", 1764464406000},
                   {"type", "Warning"},
                   {"reason", "GpuXid"},
                   {"message", "slinky-0 (corral_node_1): GPU XID 79 on 0000:3b:00.0"}},
                  {{"id", 9},
                   {"cluster", "demo"},
                   {"time", 1764464460000},
                   {"type", "Normal"},
                   {"reason", "NodeRebooted"},
                   {"message", "pod slinky-0 restarted"}}};
  serve("GET", "/api/v1/clusters/demo/nodes/slinky-0", 200, n);
  CliResult r = run({"node", "get", "demo", "slinky-0"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "Node:       corral_node_1 (slinky-0)\n"
            "Group:      slinky\n"
            "Address:    172.29.1.10\n"
            "GPUs:       8\n"
            "State:      drained\n"
            "Reason:     corral: GPU XID 79\n"
            "Health:     GPU XID 79\n"
            "Reboots:    1\n"
            "\n"
            "XIDs:\n"
            "TIME                        XID   PCI            CLASS         ACTION     "
            "DESCRIPTION\n"
            "2025-11-30T01:00:05+00:00   79    0000:3b:00.0   hardware      drained    GPU has "
            "fallen off the bus\n"
            "2025-11-30T01:00:07+00:00   13    0000:3b:00.0   application   reported   graphics "
            "engine exception\n"
            "\n"
            "History:\n"
            "TIME                        TYPE      REASON         MESSAGE\n"
            "2025-11-30T01:00:06+00:00   Warning   GpuXid         slinky-0 (corral_node_1): GPU "
            "XID 79 on 0000:3b:00.0\n"
            "2025-11-30T01:01:00+00:00   Normal    NodeRebooted   pod slinky-0 restarted\n");
}

TEST(CliNodePureTest, DetailOfAHealthyNodeWithoutHistory) {
  Json n = node("slinky-1", "corral_node_2", 8, "idle", "", "ok");
  n["history"] = Json::array();
  EXPECT_EQ(nodeDetail(n),
            "Node:       corral_node_2 (slinky-1)\n"
            "Group:      slinky\n"
            "Address:    172.29.1.10\n"
            "GPUs:       8\n"
            "State:      idle\n"
            "Reason:     -\n"
            "Health:     ok\n"
            "Reboots:    0\n"
            "XIDs:       none\n"
            "History:    none\n");
}

TEST_F(CliNodeTest, GetOfAnUnknownNodePassesTheErrorThrough) {
  corrald_.server().Get(
      "/api/v1/clusters/demo/nodes/slinky-9", [](const httplib::Request&, httplib::Response& res) {
        replyError(res, 404, "NotFound", "cluster \"demo\" has no node named \"slinky-9\"");
      });
  CliResult r = run({"node", "get", "demo", "slinky-9"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: cluster \"demo\" has no node named \"slinky-9\"\n");
}

TEST_F(CliNodeTest, RebootWaitsUntilAppliedThenPrintsTheNodesState) {
  serve("POST", "/api/v1/clusters/demo/nodes/slinky-0/reboot", 202,
        changeAccepted(5, "reboot node slinky-0", runningCluster("demo")));
  serveChangeOutcome("demo", runningCluster("demo"), 5);
  serve("GET", "/api/v1/clusters/demo/nodes/slinky-0", 200,
        node("slinky-0", "corral_node_1", 8, "idle", "", "ok"));
  CliResult r = run({"node", "reboot", "demo", "slinky-0"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "revision 5: reboot node slinky-0\n"
            "revision 5 applied\n"
            "node corral_node_1 (slinky-0) is idle\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(requests_.lines(),
            (std::vector<std::string>{"POST /api/v1/clusters/demo/nodes/slinky-0/reboot {}",
                                      "GET /api/v1/clusters/demo/nodes/slinky-0"}));
}

TEST_F(CliNodeTest, RebootSaysWhenSlurmHasNotSeenTheNodeYet) {
  serve("POST", "/api/v1/clusters/demo/nodes/slinky-0/reboot", 202,
        changeAccepted(5, "reboot node slinky-0", runningCluster("demo")));
  serveChangeOutcome("demo", runningCluster("demo"), 5);
  serve("GET", "/api/v1/clusters/demo/nodes/slinky-0", 200,
        node("slinky-0", "corral_node_1", 8, "", "", "unknown"));
  CliResult r = run({"node", "reboot", "demo", "slinky-0"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "revision 5: reboot node slinky-0\n"
            "revision 5 applied\n"
            "node corral_node_1 (slinky-0) rebooted; Slurm has not reported its state yet; "
            "see: corral node get demo slinky-0\n");
}

TEST_F(CliNodeTest, RebootWithNoWaitDoesNotLookAtTheNode) {
  serve("POST", "/api/v1/clusters/demo/nodes/slinky-0/reboot", 202,
        changeAccepted(5, "reboot node slinky-0", runningCluster("demo")));
  CliResult r = run({"node", "reboot", "demo", "slinky-0", "--no-wait"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "revision 5: reboot node slinky-0\n"
            "revision 5 requested; follow it with: corral cluster history demo\n");
  EXPECT_EQ(requests_.lines(),
            std::vector<std::string>{"POST /api/v1/clusters/demo/nodes/slinky-0/reboot {}"});
}

TEST_F(CliNodeTest, RebootAsJsonKeepsStdoutOneDocument) {
  serve("POST", "/api/v1/clusters/demo/nodes/slinky-0/reboot", 202,
        changeAccepted(5, "reboot node slinky-0", runningCluster("demo")));
  serveChangeOutcome("demo", runningCluster("demo"), 5);
  serve("GET", "/api/v1/clusters/demo/nodes/slinky-0", 200,
        node("slinky-0", "corral_node_1", 8, "idle", "", "ok"));
  CliResult r = run({"node", "reboot", "demo", "slinky-0", "-o", "json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out), revisionsWith(5, "Applied")["revisions"][0]);
  EXPECT_EQ(r.err,
            "revision 5: reboot node slinky-0\n"
            "revision 5 applied\n"
            "node corral_node_1 (slinky-0) is idle\n");
}

TEST_F(CliNodeTest, RebootWhileTheClusterIsBusyPassesCorraldsReasonThrough) {
  corrald_.server().Post("/api/v1/clusters/demo/nodes/slinky-0/reboot",
                         [](const httplib::Request&, httplib::Response& res) {
                           replyError(res, 409, "FailedPrecondition",
                                      "cluster \"demo\" is Creating; wait until it is Running");
                         });
  CliResult r = run({"node", "reboot", "demo", "slinky-0"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: cluster \"demo\" is Creating; wait until it is Running\n");
}

TEST_F(CliNodeTest, InjectXidSendsTheCodeAndSaysWhatHappensNext) {
  serve("POST", "/api/v1/clusters/demo/nodes/slinky-0/inject-xid", 202,
        Json{{"node", "slinky-0"}, {"line", kXid79Line}});
  CliResult r = run({"node", "inject-xid", "demo", "slinky-0", "79"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(requests_.lines(),
            std::vector<std::string>{
                R"(POST /api/v1/clusters/demo/nodes/slinky-0/inject-xid {"code":79})"});
  EXPECT_EQ(r.out, std::string("wrote to slinky-0's kernel log: ") + kXid79Line +
                       "\n"
                       "hardware XIDs (48, 63, 64, 74, 79, 92, 94, 95, …) drain the node within "
                       "a second; application XIDs (13, 31, 43, …) are only reported; watch it "
                       "with: corral node get demo slinky-0\n");

  r = run({"node", "inject-xid", "demo", "slinky-0", "79", "-o", "json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out), (Json{{"node", "slinky-0"}, {"line", kXid79Line}}));
}

TEST_F(CliNodeTest, InjectXidChecksTheCodeBeforeSending) {
  for (const char* bad : {"0", "1000", "79x", "-5"}) {
    CliResult r = run({"node", "inject-xid", "demo", "slinky-0", bad});
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_EQ(r.out, "") << bad;
  }
  CliResult r = run({"node", "inject-xid", "demo", "slinky-0", "1000"});
  EXPECT_EQ(r.err.rfind("CODE: must be an XID number from 1 to 999, not 1000\n", 0), 0u) << r.err;
  EXPECT_TRUE(requests_.lines().empty());
}

TEST_F(CliNodeTest, InjectXidOnACpuNodePassesCorraldsReasonThrough) {
  corrald_.server().Post("/api/v1/clusters/demo/nodes/cpu-workers-0/inject-xid",
                         [](const httplib::Request&, httplib::Response& res) {
                           replyError(res, 400, "InvalidArgument", "cpu-workers-0 has no GPUs");
                         });
  CliResult r = run({"node", "inject-xid", "demo", "cpu-workers-0", "79"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: cpu-workers-0 has no GPUs\n");
}

TEST_F(CliNodeTest, BareAndUnknownNodeCommandsNameTheChoices) {
  CliResult r = run({"node"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "error: \"corral node\" needs a command: list, get, reboot, inject-xid; see: corral "
            "node --help\n");
  r = run({"node", "drain", "demo", "slinky-0"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "error: unknown command \"corral node drain\"; the commands are: list, get, reboot, "
            "inject-xid\n");
  r = run({"node", "--help"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("inject-xid"), std::string::npos) << r.out;
  r = run({"node", "list"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("CLUSTER is required\n", 0), 0u) << r.err;
}

}  // namespace
}  // namespace corral
