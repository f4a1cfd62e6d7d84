#include "common/beneath.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/files.h"

namespace fs = std::filesystem;

namespace corral {
namespace {

using ::testing::HasSubstr;

// A pod's writable tree, and a file outside it that a hostile pod would
// like corrald to read or write for it.
class BeneathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("corral-beneath-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(base_);
    fs::create_directories(root());
    std::ofstream(outside()) << "host secret\n";
  }
  void TearDown() override { fs::remove_all(base_); }
  std::string root() const { return (base_ / "pod").string(); }
  std::string outside() const { return (base_ / "secret").string(); }
  fs::path base_;
};

TEST_F(BeneathTest, ReadsTheTailOfARegularFile) {
  std::ofstream(root() + "/log") << "0123456789";
  EXPECT_EQ(*readFileBeneath(root(), "log", 4), "6789");
  EXPECT_EQ(*readFileBeneath(root(), "/log", 100), "0123456789");
  EXPECT_EQ(readFileBeneath(root(), "missing", 10).status().code(), Code::kNotFound);
}

TEST_F(BeneathTest, SymlinksOutOfTheTreeLeadNowhere) {
  fs::create_symlink(outside(), root() + "/abs");
  fs::create_symlink("../secret", root() + "/rel");
  for (const char* p : {"abs", "rel", "../secret", "/../secret"}) {
    auto r = readFileBeneath(root(), p, 100);
    EXPECT_FALSE(r.isOk() && r->find("host secret") != std::string::npos) << p;
  }
}

TEST_F(BeneathTest, AFifoNeverBlocksTheReader) {
  ASSERT_EQ(mkfifo((root() + "/health.json").c_str(), 0644), 0);
  auto r = readFileBeneath(root(), "health.json", 100);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
}

TEST_F(BeneathTest, AppendingThroughASymlinkNeverWritesOutside) {
  fs::create_symlink(outside(), root() + "/kmsg");
  (void)appendFileBeneath(root(), "kmsg", "injected\n");
  EXPECT_EQ(*readFile(outside()), "host secret\n");
  ASSERT_TRUE(appendFileBeneath(root(), "fresh", "a\n").isOk());
  ASSERT_TRUE(appendFileBeneath(root(), "fresh", "b\n").isOk());
  EXPECT_EQ(*readFile(root() + "/fresh"), "a\nb\n");
}

TEST_F(BeneathTest, PreparesDirectoriesButNeverThroughASymlink) {
  ASSERT_TRUE(prepareDirectoryBeneath(root(), "home/alice", 1000, 1000, 0700).isOk());
  struct stat st;
  ASSERT_EQ(stat((root() + "/home/alice").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 1000u);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  // A pod that made home/bob a link to a host directory gets nothing chowned.
  fs::create_directories(base_ / "hostdir");
  fs::create_symlink(base_ / "hostdir", root() + "/home/bob");
  Status s = prepareDirectoryBeneath(root(), "home/bob", 1001, 1001, 0700);
  ASSERT_FALSE(s.isOk());
  ASSERT_EQ(stat((base_ / "hostdir").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  fs::create_symlink(base_, root() + "/up");
  EXPECT_FALSE(prepareDirectoryBeneath(root(), "up/hostdir", 1001, 1001, 0700).isOk());
  ASSERT_EQ(stat((base_ / "hostdir").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
}

}  // namespace
}  // namespace corral
