// Layouts of `corral`'s human output and JSON pass-through.

#include <gtest/gtest.h>

#include "cli/output.h"
#include "support/cli_test_support.h"

namespace corral {
namespace {

Json sampleCluster() {
  return Json::parse(R"({
    "name": "demo", "status": "Running", "phase": "", "reason": "",
    "revision": 2, "appliedRevision": 1,
    "spec": {"name": "demo", "gpuNodes": 4, "gpusPerNode": 8, "cpuNodes": 1, "sshKeys": ["k"],
             "image": {"name": "debian13-slurm24.11", "id": "a77507f78e91675e", "slurmVersion": "24.11"}},
    "subnet": "172.29.1.0/24",
    "login": {"address": "172.29.1.3", "port": 22, "hostKey": "ssh-ed25519 AAAA"},
    "nodes": [
      {"name": "slinky-0", "group": "slinky", "physicalId": "corral_node_1",
       "address": "172.29.1.10", "gpus": 8, "state": "idle"},
      {"name": "cpu-workers-0", "group": "cpu-workers", "physicalId": "corral_node_12",
       "address": "172.29.1.20", "gpus": 0, "state": ""}
    ],
    "createdAt": 1000, "updatedAt": 1005})");
}

TEST(CliOutputTest, FormatAgeUsesLargestUnit) {
  EXPECT_EQ(formatAge(0), "0s");
  EXPECT_EQ(formatAge(5), "5s");
  EXPECT_EQ(formatAge(59), "59s");
  EXPECT_EQ(formatAge(60), "1m");
  EXPECT_EQ(formatAge(3 * 60 + 59), "3m");
  EXPECT_EQ(formatAge(3599), "59m");
  EXPECT_EQ(formatAge(3600), "1h");
  EXPECT_EQ(formatAge(2 * 3600 + 1), "2h");
  EXPECT_EQ(formatAge(86399), "23h");
  EXPECT_EQ(formatAge(86400), "1d");
  EXPECT_EQ(formatAge(4 * 86400 + 7), "4d");
  EXPECT_EQ(formatAge(400 * 86400), "400d");
}

TEST(CliOutputTest, FormatAgeClampsClockSkewToZero) { EXPECT_EQ(formatAge(-30), "0s"); }

TEST(CliOutputTest, FormatLocalTimeInUtc) {
  ScopedTz tz("UTC0");
  EXPECT_EQ(formatLocalTime(1764464405123), "2025-11-30T01:00:05+00:00");
  EXPECT_EQ(formatLocalTime(0), "1970-01-01T00:00:00+00:00");
}

TEST(CliOutputTest, FormatLocalTimeCarriesTheOffset) {
  {
    ScopedTz tz("<+0530>-5:30");
    EXPECT_EQ(formatLocalTime(1764464405000), "2025-11-30T06:30:05+05:30");
  }
  {
    ScopedTz tz("<-03>3");
    EXPECT_EQ(formatLocalTime(1764464405000), "2025-11-29T22:00:05-03:00");
  }
}

TEST(CliOutputTest, FormatLocalTimeRoundsNegativeMillisDown) {
  ScopedTz tz("UTC0");
  EXPECT_EQ(formatLocalTime(-1), "1969-12-31T23:59:59+00:00");
}

TEST(CliOutputTest, RenderTablePadsColumnsAndTrimsLines) {
  std::string t = renderTable({{"A", "BB", "C"}, {"long-value", "x", ""}, {"y", "wide-cell", "z"}});
  EXPECT_EQ(t,
            "A            BB          C\n"
            "long-value   x\n"
            "y            wide-cell   z\n");
}

TEST(CliOutputTest, RenderTableNeutralisesControlCharacters) {
  std::string t = renderTable({{"MSG", "X"}, {"line1\nline2\x1b[31m", "y"}});
  EXPECT_EQ(t.find('\x1b'), std::string::npos);
  EXPECT_EQ(t, "MSG                X\nline1 line2 [31m   y\n");
}

TEST(CliOutputTest, RenderTableCountsUtf8AsOneColumnPerCodePoint) {
  std::string t = renderTable({{"A", "B"}, {"…", "x"}});
  EXPECT_EQ(t, "A   B\n…   x\n");
}

TEST(CliOutputTest, RenderJsonKeepsServerOrderAndIndentsTwoSpaces) {
  Json j = Json::parse(R"({"zeta": 1, "alpha": {"b": [1, 2]}})");
  EXPECT_EQ(renderJson(j),
            "{\n  \"zeta\": 1,\n  \"alpha\": {\n    \"b\": [\n      1,\n      2\n    ]\n  }\n}\n");
}

TEST(CliOutputTest, ClusterListTable) {
  Json body;
  body["clusters"] = Json::array({sampleCluster()});
  Json creating = Json::parse(R"({"name": "second-one", "status": "Creating",
      "spec": {"gpuNodes": 200, "cpuNodes": 0}, "createdAt": 1000, "login": {}})");
  body["clusters"].push_back(creating);
  EXPECT_EQ(clusterListTable(body, 1000 + 3 * 3600),
            "NAME         STATUS     IMAGE                 GPU-NODES   CPU-NODES   LOGIN        AGE\n"
            "demo         Running    debian13-slurm24.11   4           1           172.29.1.3   3h\n"
            "second-one   Creating   -                     200         0           -            3h\n");
}

TEST(CliOutputTest, ClusterListTableWhenEmpty) {
  EXPECT_EQ(clusterListTable(Json::parse(R"({"clusters": []})"), 0),
            "No clusters yet; create one with: corral cluster create NAME\n");
}

TEST(CliOutputTest, ClusterDetailShowsFieldsAndNodes) {
  EXPECT_EQ(
      clusterDetail(sampleCluster(), 1000 + 125),
      "Name:       demo\n"
      "Status:     Running\n"
      "Revision:   2 (applied 1)\n"
      "Image:      debian13-slurm24.11 (Slurm 24.11, build a77507f78e91)\n"
      "Size:       4 GPU nodes x 8 GPUs, 1 CPU nodes\n"
      "Subnet:     172.29.1.0/24\n"
      "Login:      ssh root@172.29.1.3   (or: corral ssh demo)\n"
      "Age:        2m\n"
      "\n"
      "NODE            PHYSICAL-ID                      GROUP         GPUS   STATE   ADDRESS\n"
      "slinky-0        corral_node_1 (slinky-0)         slinky        8      idle    "
      "172.29.1.10\n"
      "cpu-workers-0   corral_node_12 (cpu-workers-0)   cpu-workers   0      -       "
      "172.29.1.20\n");
}

TEST(CliOutputTest, ClusterDetailShowsPhaseReasonAndMissingLogin) {
  Json c = Json::parse(R"js({"name": "x", "status": "Creating",
      "phase": "starting workers (3/4 ready)",
      "reason": "retrying after: image pull failed", "revision": 1, "appliedRevision": 1,
      "login": {"address": "", "port": 22}, "nodes": []})js");
  EXPECT_EQ(clusterDetail(c, 0),
            "Name:       x\n"
            "Status:     Creating\n"
            "Phase:      starting workers (3/4 ready)\n"
            "Reason:     retrying after: image pull failed\n"
            "Revision:   1\n"
            "Login:      not yet known\n"
            "Nodes:      none yet\n");
}

TEST(CliOutputTest, ClusterDetailShowsNonDefaultSshPort) {
  Json c = sampleCluster();
  c["login"]["port"] = 2222;
  EXPECT_NE(clusterDetail(c, 1000).find("Login:      ssh -p 2222 root@172.29.1.3"),
            std::string::npos);
}

TEST(CliOutputTest, ClusterDetailToleratesGarbage) {
  // Wrong types and a non-object must not throw; they show as "-".
  Json c =
      Json::parse(R"({"name": 5, "status": null, "revision": "two", "nodes": [7, {"gpus": "x"}],
      "spec": [], "login": "nope"})");
  std::string out = clusterDetail(c, 0);
  EXPECT_NE(out.find("Name:       -\n"), std::string::npos);
  EXPECT_NE(out.find("Revision:   -\n"), std::string::npos);
  EXPECT_EQ(clusterDetail(Json(42), 0).substr(0, 16), "Name:       -\nSt");
  EXPECT_NO_THROW(clusterListTable(Json::parse(R"({"clusters": [1, "x", null]})"), 0));
  EXPECT_NO_THROW(eventsTable(Json::parse(R"({"events": [1, {"time": "x"}]})")));
}

TEST(CliOutputTest, NodeDisplayNameMatchesTheConsole) {
  EXPECT_EQ(nodeDisplayName(Json::parse(R"({"name": "slinky-0", "physicalId": "corral_node_1"})")),
            "corral_node_1 (slinky-0)");
  EXPECT_EQ(nodeDisplayName(Json::parse(R"({"name": "slinky-0", "physicalId": ""})")), "slinky-0");
}

TEST(CliOutputTest, EventsTable) {
  ScopedTz tz("UTC0");
  Json body = Json::parse(R"({"events": [
      {"time": 1764464400000, "type": "Normal", "reason": "Created", "message": "cluster accepted"},
      {"time": 1764464405999, "type": "Warning", "reason": "NodeUnhealthy",
       "message": "slinky-1: XID 79\nGPU fell off the bus"}]})");
  EXPECT_EQ(eventsTable(body),
            "TIME                        TYPE      REASON          MESSAGE\n"
            "2025-11-30T01:00:00+00:00   Normal    Created         cluster accepted\n"
            "2025-11-30T01:00:05+00:00   Warning   NodeUnhealthy   slinky-1: XID 79 GPU fell off "
            "the bus\n");
  EXPECT_EQ(eventsTable(Json::parse(R"({"events": []})")), "No events.\n");
}

TEST(CliOutputTest, ProgressLine) {
  EXPECT_EQ(progressLine(Json::parse(
                R"js({"status": "Creating", "phase": "starting workers (3/4 ready)"})js")),
            "Creating: starting workers (3/4 ready)");
  EXPECT_EQ(progressLine(Json::parse(R"({"status": "Running", "phase": ""})")), "Running");
  EXPECT_EQ(progressLine(Json::parse(R"({})")), "-");
}

}  // namespace
}  // namespace corral
