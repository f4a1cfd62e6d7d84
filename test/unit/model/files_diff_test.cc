// `unifiedDiff` of two sets of rendered files (src/model/diff.h).

#include <gtest/gtest.h>

#include "model/diff.h"

namespace corral {
namespace {

TEST(FilesDiff, EqualFilesGiveNothing) {
  RenderedFiles files = {{"etc/hosts", {"a\n", 0644}}};
  EXPECT_EQ(unifiedDiff(files, files), "");
}

TEST(FilesDiff, EachChangedFileInPathOrderNewOnesAgainstNothing) {
  RenderedFiles before = {{"etc/slurm/slurm.conf", {"A=1\n", 0644}}, {"etc/hosts", {"h\n", 0644}}};
  RenderedFiles after = {{"etc/slurm/slurm.conf", {"A=2\n", 0644}},
                         {"etc/hosts", {"h\n", 0644}},
                         {"etc/new", {"n\n", 0600}}};
  EXPECT_EQ(unifiedDiff(before, after),
            "--- a/etc/new\n+++ b/etc/new\n@@ -0,0 +1,1 @@\n+n\n"
            "--- a/etc/slurm/slurm.conf\n+++ b/etc/slurm/slurm.conf\n@@ -1,1 +1,1 @@\n-A=1\n+A=2\n");
}

TEST(FilesDiff, AFileOnlyBeforeHasIsNotShown) {
  RenderedFiles before = {{"etc/gone", {"g\n", 0644}}};
  EXPECT_EQ(unifiedDiff(before, RenderedFiles{}), "");
}

}  // namespace
}  // namespace corral
