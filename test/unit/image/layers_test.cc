// unpackLayers: ordering, whiteouts, opaque directories, links, and entries
// that try to leave the root.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "image/image.h"
#include "support/image_test_util.h"

namespace corral::image {
namespace {

using testing::exists;
using testing::readText;
using testing::TarBuilder;
using testing::TempDir;
using testing::writeText;

class UnpackTest : public ::testing::Test {
 protected:
  // Writes `tar` as the next layer file and returns its path.
  std::string layer(const TarBuilder& tar, bool gzip = true) {
    std::string path = tmp_ / ("layer" + std::to_string(++count_) + (gzip ? ".tar.gz" : ".tar"));
    tar.write(path, gzip);
    return path;
  }
  std::string root() const { return tmp_ / "rootfs"; }
  std::string at(const std::string& rel) const { return root() + "/" + rel; }

  TempDir tmp_;
  int count_ = 0;
};

int modeOf(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return -1;
  return st.st_mode & 07777;
}

TEST_F(UnpackTest, AppliesLayersInOrderAndKeepsModesAndSymlinks) {
  auto l1 = layer(TarBuilder()
                      .dir("bin")
                      .file("bin/tool", "#!/bin/sh\n", 0755)
                      .file("etc/conf", "v1")
                      .symlink("bin/sh", "/bin/busybox")
                      .symlink("etc/rel", "../bin/tool")
                      .dir("ro", 0555)
                      .file("ro/inside", "x", 0444));
  auto l2 =
      layer(TarBuilder().file("etc/conf", "v2").file("ro/added", "later layer"), /*gzip=*/false);
  ASSERT_TRUE(unpackLayers({l1, l2}, root()).isOk());
  EXPECT_EQ(readText(at("etc/conf")), "v2");
  EXPECT_EQ(readText(at("ro/added")), "later layer");
  EXPECT_EQ(modeOf(at("bin/tool")), 0755);
  EXPECT_EQ(modeOf(at("etc/conf")), 0644);
  EXPECT_EQ(modeOf(at("ro/inside")), 0444);
  EXPECT_EQ(std::filesystem::read_symlink(at("bin/sh")), "/bin/busybox");
  EXPECT_EQ(std::filesystem::read_symlink(at("etc/rel")), "../bin/tool");
  // Directories stay writable for the owner so that later layers apply.
  EXPECT_EQ(modeOf(at("ro")) & 0700, 0700);
}

TEST_F(UnpackTest, WhiteoutsRemoveFilesAndTreesFromLowerLayers) {
  auto l1 = layer(TarBuilder()
                      .file("keep", "k")
                      .file("gone", "g")
                      .file("dir/a", "a")
                      .file("dir/sub/b", "b")
                      .file("other/x", "x"));
  auto l2 = layer(TarBuilder()
                      .file(".wh.gone", "")
                      .file(".wh.dir", "")
                      .file("other/.wh.x", "")
                      .file(".wh.never-existed", ""));
  ASSERT_TRUE(unpackLayers({l1, l2}, root()).isOk());
  EXPECT_TRUE(exists(at("keep")));
  EXPECT_FALSE(exists(at("gone")));
  EXPECT_FALSE(exists(at("dir")));
  EXPECT_TRUE(exists(at("other")));
  EXPECT_FALSE(exists(at("other/x")));
  EXPECT_FALSE(exists(at(".wh.gone")));  // Markers are not content.
}

TEST_F(UnpackTest, OpaqueDirectoryDropsOnlyLowerContent) {
  auto l1 = layer(TarBuilder()
                      .file("dir/old1", "1")
                      .file("dir/sub/old2", "2")
                      .file("dir/merged/lower", "3")
                      .file("elsewhere", "e"));
  // Same-layer content before and after the marker survives it, also inside
  // a subdirectory that merges with a lower one.
  auto l2 = layer(TarBuilder()
                      .file("dir/before", "b")
                      .file("dir/merged/upper", "u")
                      .file("dir/.wh..wh..opq", "")
                      .file("dir/after", "a"));
  ASSERT_TRUE(unpackLayers({l1, l2}, root()).isOk());
  EXPECT_FALSE(exists(at("dir/old1")));
  EXPECT_FALSE(exists(at("dir/sub")));
  EXPECT_FALSE(exists(at("dir/merged/lower")));
  EXPECT_EQ(readText(at("dir/merged/upper")), "u");
  EXPECT_EQ(readText(at("dir/before")), "b");
  EXPECT_EQ(readText(at("dir/after")), "a");
  EXPECT_FALSE(exists(at("dir/.wh..wh..opq")));
  EXPECT_TRUE(exists(at("elsewhere")));
}

TEST_F(UnpackTest, HardlinksWithinALayer) {
  auto l1 = layer(TarBuilder().file("usr/bin/a", "same", 0755).hardlink("usr/bin/b", "usr/bin/a"));
  ASSERT_TRUE(unpackLayers({l1}, root()).isOk());
  struct stat a, b;
  ASSERT_EQ(stat(at("usr/bin/a").c_str(), &a), 0);
  ASSERT_EQ(stat(at("usr/bin/b").c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
  EXPECT_EQ(readText(at("usr/bin/b")), "same");
}

TEST_F(UnpackTest, SkipsDeviceNodesAndFifos) {
  auto l1 = layer(TarBuilder().file("dev/readme", "r").chardev("dev/null").fifo("run/pipe"));
  ASSERT_TRUE(unpackLayers({l1}, root()).isOk());
  EXPECT_TRUE(exists(at("dev/readme")));
  EXPECT_FALSE(exists(at("dev/null")));
  EXPECT_FALSE(exists(at("run/pipe")));
}

TEST_F(UnpackTest, ReplacesWhatLowerLayersHadAtAPath) {
  auto l1 = layer(TarBuilder().file("x/inner", "i").file("y", "file").symlink("z", "y"));
  auto l2 = layer(TarBuilder().file("x", "now a file").dir("y").file("z", "regular"));
  ASSERT_TRUE(unpackLayers({l1, l2}, root()).isOk());
  EXPECT_EQ(readText(at("x")), "now a file");
  EXPECT_TRUE(std::filesystem::is_directory(at("y")));
  EXPECT_FALSE(std::filesystem::is_symlink(at("z")));
  EXPECT_EQ(readText(at("z")), "regular");
}

TEST_F(UnpackTest, AbsolutePathsStayInsideTheRoot) {
  auto l1 = layer(TarBuilder().file("/etc/abs", "inside").file("./etc/dot", "d"));
  ASSERT_TRUE(unpackLayers({l1}, root()).isOk());
  EXPECT_EQ(readText(at("etc/abs")), "inside");
  EXPECT_EQ(readText(at("etc/dot")), "d");
}

TEST_F(UnpackTest, RefusesDotDot) {
  auto l1 = layer(TarBuilder().file("a/../../escaped", "x"));
  Status st = unpackLayers({l1}, root());
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("leaves the image root"), std::string::npos) << st.message();
  EXPECT_FALSE(exists(tmp_ / "escaped"));
  auto l2 = layer(TarBuilder().file("a", "x").hardlink("b", "../../../etc/passwd"));
  EXPECT_FALSE(unpackLayers({l2}, tmp_ / "rootfs2").isOk());
}

TEST_F(UnpackTest, NeverWritesThroughSymlinks) {
  std::string outside = tmp_ / "outside";
  writeText(outside + "/victim", "original");
  // Through a symlink from a lower layer, to an absolute and a relative path.
  auto l1 = layer(TarBuilder().symlink("abs", outside).symlink("rel", "../outside"));
  auto l2 = layer(TarBuilder().file("abs/pwned", "x"));
  Status st = unpackLayers({l1, l2}, root());
  EXPECT_FALSE(st.isOk());
  EXPECT_FALSE(exists(outside + "/pwned"));
  auto l3 = layer(TarBuilder().file("rel/pwned", "x"));
  EXPECT_FALSE(unpackLayers({l3}, root()).isOk());
  EXPECT_FALSE(exists(outside + "/pwned"));
  // Within one layer.
  auto l4 = layer(TarBuilder().symlink("same", outside).file("same/pwned", "x"));
  EXPECT_FALSE(unpackLayers({l4}, tmp_ / "rootfs2").isOk());
  EXPECT_FALSE(exists(outside + "/pwned"));
  // A file over a symlink replaces the link, not the file it points at.
  auto l5 = layer(TarBuilder().symlink("link", outside + "/victim"));
  auto l6 = layer(TarBuilder().file("link", "replaced"));
  ASSERT_TRUE(unpackLayers({l5, l6}, tmp_ / "rootfs3").isOk());
  EXPECT_EQ(readText(outside + "/victim"), "original");
  EXPECT_EQ(readText(tmp_ / "rootfs3/link"), "replaced");
  // Whiteouts do not reach through symlinks either.
  auto l7 = layer(TarBuilder().symlink("wl", outside));
  auto l8 = layer(TarBuilder().file("wl/.wh.victim", "").file("wl/.wh..wh..opq", ""));
  EXPECT_TRUE(unpackLayers({l7, l8}, tmp_ / "rootfs4").isOk());
  EXPECT_EQ(readText(outside + "/victim"), "original");
  // Nor hard links.
  auto l9 = layer(TarBuilder().symlink("hl", outside).hardlink("stolen", "hl/victim"));
  EXPECT_FALSE(unpackLayers({l9}, tmp_ / "rootfs5").isOk());
}

TEST_F(UnpackTest, NotATar) {
  std::string bogus = tmp_ / "bogus.tar";
  writeText(bogus, std::string(4096, 'z'));
  Status st = unpackLayers({bogus}, root());
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("layer 1"), std::string::npos) << st.message();
  EXPECT_FALSE(unpackLayers({tmp_ / "missing.tar"}, root()).isOk());
}

TEST_F(UnpackTest, SquashfsRoundTrip) {
  auto l1 = layer(
      TarBuilder().file("bin/tool", "tool", 0755).symlink("bin/sh", "tool").file("etc/a", "a"));
  ASSERT_TRUE(unpackLayers({l1}, root()).isOk());
  std::string sqsh = tmp_ / "image.sqsh";
  Status made = makeSquashfs(root(), sqsh);
  ASSERT_TRUE(made.isOk()) << made.message();
  Status un = unsquash(sqsh, tmp_ / "unsquashed");
  ASSERT_TRUE(un.isOk()) << un.message();
  EXPECT_EQ(readText(tmp_ / "unsquashed/bin/tool"), "tool");
  EXPECT_EQ(modeOf(tmp_ / "unsquashed/bin/tool"), 0755);
  EXPECT_EQ(std::filesystem::read_symlink(tmp_ / "unsquashed/bin/sh"), "tool");

  Status missing = unsquash(tmp_ / "nope.sqsh", tmp_ / "x");
  EXPECT_EQ(missing.code(), Code::kNotFound);
  writeText(tmp_ / "garbage.sqsh", "not squashfs");
  Status bad = unsquash(tmp_ / "garbage.sqsh", tmp_ / "y");
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.message().find("unsquashfs"), std::string::npos);
  Status badOut = makeSquashfs(root(), tmp_ / "no/such/dir/out.sqsh");
  ASSERT_FALSE(badOut.isOk());
  EXPECT_NE(badOut.message().find("mksquashfs"), std::string::npos);
}

}  // namespace
}  // namespace corral::image
