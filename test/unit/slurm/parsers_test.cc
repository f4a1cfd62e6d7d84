#include "slurm/parsers.h"

#include <gtest/gtest.h>

#include <string>

namespace corral {
namespace {

TEST(ParseSinfoNodesTest, ListsEachNodeOnceAcrossPartitions) {
  // `sinfo -N` prints a node once per partition it belongs to.
  std::string text =
      "slinky-0|idle|none\n"
      "slinky-1|allocated|none\n"
      "cpu-workers-0|mixed|none\n"
      "slinky-0|idle|none\n"
      "slinky-1|allocated|none\n"
      "cpu-workers-0|mixed|none\n";
  auto nodes = parseSinfoNodes(text);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes.at("slinky-0").state, "idle");
  EXPECT_EQ(nodes.at("slinky-1").state, "allocated");
  EXPECT_EQ(nodes.at("cpu-workers-0").state, "mixed");
}

TEST(ParseSinfoNodesTest, NoneReasonBecomesEmpty) {
  auto nodes = parseSinfoNodes("slinky-0|idle|none\n");
  ASSERT_EQ(nodes.count("slinky-0"), 1u);
  EXPECT_EQ(nodes.at("slinky-0").reason, "");
  // Only the exact word: a reason that merely contains it is kept.
  nodes = parseSinfoNodes("slinky-0|drained|none left\n");
  EXPECT_EQ(nodes.at("slinky-0").reason, "none left");
}

TEST(ParseSinfoNodesTest, KeepsReasonsWithSpacesAndBars) {
  auto nodes = parseSinfoNodes(
      "slinky-2|drained|GPU XID 79 on /dev/nvidia3\n"
      "slinky-3|down*|Not responding\n"
      "slinky-4|drained|admin: a|b test\n");
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes.at("slinky-2").state, "drained");
  EXPECT_EQ(nodes.at("slinky-2").reason, "GPU XID 79 on /dev/nvidia3");
  EXPECT_EQ(nodes.at("slinky-3").state, "down*");
  EXPECT_EQ(nodes.at("slinky-3").reason, "Not responding");
  // The reason is the last field, so a bar inside it belongs to it.
  EXPECT_EQ(nodes.at("slinky-4").reason, "admin: a|b test");
}

TEST(ParseSinfoNodesTest, KeepsStateSuffixesVerbatim) {
  auto nodes = parseSinfoNodes(
      "slinky-0|down*|Not responding\n"
      "slinky-1|drained|maintenance\n"
      "slinky-2|draining|maintenance\n"
      "slinky-3|idle~|none\n"
      "slinky-4|allocated+|none\n");
  ASSERT_EQ(nodes.size(), 5u);
  EXPECT_EQ(nodes.at("slinky-0").state, "down*");
  EXPECT_EQ(nodes.at("slinky-1").state, "drained");
  EXPECT_EQ(nodes.at("slinky-2").state, "draining");
  EXPECT_EQ(nodes.at("slinky-3").state, "idle~");
  EXPECT_EQ(nodes.at("slinky-4").state, "allocated+");
}

TEST(ParseSinfoNodesTest, IgnoresJunkLines) {
  auto nodes = parseSinfoNodes(
      "\n"
      "sinfo: error: slurm_load_partitions: Unable to contact slurm controller\n"
      "|idle|none\n"
      "slinky-9|idle\n"
      "NODELIST STATE REASON\n"
      "slinky-0|idle|none\n");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes.count("slinky-0"), 1u);
  EXPECT_EQ(nodes.count("slinky-9"), 0u);
}

TEST(ParseSinfoNodesTest, EmptyOutputAndMissingFinalNewline) {
  EXPECT_TRUE(parseSinfoNodes("").empty());
  auto nodes = parseSinfoNodes("slinky-0|idle|none");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes.at("slinky-0").state, "idle");
}

}  // namespace
}  // namespace corral
