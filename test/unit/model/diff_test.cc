#include "model/diff.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

TEST(UnifiedDiff, EqualTextsGiveNothing) {
  EXPECT_EQ(unifiedDiff("a\nb\n", "a\nb\n", "x", "y"), "");
}

TEST(UnifiedDiff, OneChangedLineWithContext) {
  std::string before = "1\n2\n3\n4\n5\n6\n7\n8\n";
  std::string after = "1\n2\n3\n4\nfive\n6\n7\n8\n";
  EXPECT_EQ(unifiedDiff(before, after, "a/slurm.conf", "b/slurm.conf"),
            "--- a/slurm.conf\n+++ b/slurm.conf\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

TEST(UnifiedDiff, AddedLinesAtTheEnd) {
  EXPECT_EQ(unifiedDiff("a\n", "a\nb\nc\n", "x", "y"), "--- x\n+++ y\n@@ -1,1 +1,3 @@\n a\n+b\n+c\n");
}

TEST(UnifiedDiff, DistantChangesMakeTwoHunks) {
  std::string before, after;
  for (int i = 0; i < 20; ++i) {
    before += std::to_string(i) + "\n";
    after += (i == 2 || i == 17 ? "x" : std::to_string(i)) + "\n";
  }
  std::string d = unifiedDiff(before, after, "x", "y", 1);
  EXPECT_EQ(d, "--- x\n+++ y\n@@ -2,3 +2,3 @@\n 1\n-2\n+x\n 3\n@@ -17,3 +17,3 @@\n 16\n-17\n+x\n 18\n");
}

TEST(UnifiedDiff, EverythingRemoved) {
  EXPECT_EQ(unifiedDiff("a\nb\n", "", "x", "y"), "--- x\n+++ y\n@@ -1,2 +0,0 @@\n-a\n-b\n");
}

}  // namespace
}  // namespace corral
