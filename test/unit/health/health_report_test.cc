// The health report's one format and parser (src/health/report.h).

#include "health/report.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

TEST(HealthReport, RoundTripsWhatTheAgentWrites) {
  HealthReport r;
  r.node = "slinky-0";
  r.slurmdOk = true;
  r.gpuOk = false;
  r.time = 1764460800123;
  r.xids.push_back({1764460800000, 79, "0000:3b:00.0", "hardware", "GPU has fallen off the bus",
                    "drained slinky-0", "NVRM: Xid (PCI:0000:3b:00): 79, …"});
  auto back = parseHealthReport(healthReportJson(r));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->node, "slinky-0");
  EXPECT_TRUE(back->slurmdOk);
  EXPECT_FALSE(back->gpuOk);
  EXPECT_EQ(back->time, r.time);
  EXPECT_EQ(back->xids, r.xids);
  EXPECT_EQ(back->summary(), "GPU XID");
}

TEST(HealthReport, SummarySaysWhatIsWrongFirst) {
  HealthReport r;
  EXPECT_EQ(r.summary(), "slurmd not running");
  r.slurmdOk = true;
  EXPECT_EQ(r.summary(), "ok");
  r.gpuOk = false;
  EXPECT_EQ(r.summary(), "GPU XID");
}

TEST(HealthReport, TakesOnlyTheExpectedShape) {
  // A pod's users can write the file: nothing they put there may throw, and
  // wrong types fall back to defaults.
  for (const char* junk : {"", "[]", "null", "\"text\"", "{", "42"})
    EXPECT_FALSE(parseHealthReport(junk).has_value()) << junk;
  auto r = parseHealthReport(
      R"({"slurmd": 1, "gpu": ["x"], "xids": [7, {"code": "79", "class": "cosmic", "pci": 5,
          "time": 1.5, "line": "l"}], "time": "soon"})");
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->slurmdOk);
  EXPECT_TRUE(r->gpuOk) << "a gpu field of the wrong type is not an XID";
  EXPECT_EQ(r->time, 0);
  ASSERT_EQ(r->xids.size(), 1u) << "the non-object entry is skipped";
  EXPECT_EQ(r->xids[0].code, 0);
  EXPECT_EQ(r->xids[0].cls, "unknown");
  EXPECT_EQ(r->xids[0].pci, "");
  EXPECT_EQ(r->xids[0].line, "l");
  auto empty = parseHealthReport("{}");
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->summary(), "slurmd not running");
}

}  // namespace
}  // namespace corral
