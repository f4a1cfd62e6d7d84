#include "container/namespaces.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>

#include "common/fs.h"

namespace corral::container {
namespace {

class OpenInRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/var/tmp/corral-inroot-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_TRUE(makeDirs(dir_ + "/root/etc", 0755).isOk());
    rootFd_ = open((dir_ + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(rootFd_, 0);
  }
  void TearDown() override {
    if (rootFd_ >= 0) close(rootFd_);
    ASSERT_TRUE(removeTree(dir_).isOk());
  }
  std::string dir_;
  int rootFd_ = -1;
};

TEST_F(OpenInRootTest, CreatesMissingDirectoriesAndFiles) {
  auto fd = openInRoot(rootFd_, "/a/b/c", Create::kDirectory);
  ASSERT_TRUE(fd.isOk()) << fd.status().message();
  close(*fd);
  EXPECT_TRUE(isDirectory(dir_ + "/root/a/b/c"));
  fd = openInRoot(rootFd_, "/etc/hosts", Create::kFile);
  ASSERT_TRUE(fd.isOk()) << fd.status().message();
  close(*fd);
  EXPECT_TRUE(pathExists(dir_ + "/root/etc/hosts"));
  EXPECT_FALSE(isDirectory(dir_ + "/root/etc/hosts"));
}

TEST_F(OpenInRootTest, MissingWithoutCreateIsNotFound) {
  auto fd = openInRoot(rootFd_, "/nope/x", Create::kNo);
  ASSERT_FALSE(fd.isOk());
  EXPECT_EQ(fd.status().code(), Code::kNotFound);
}

TEST_F(OpenInRootTest, SymlinksStayInsideTheRoot) {
  // Absolute and climbing links resolve against the container's root, never
  // the node's.
  ASSERT_EQ(symlink("/", (dir_ + "/root/up").c_str()), 0);
  ASSERT_EQ(symlink("../../../..", (dir_ + "/root/climb").c_str()), 0);
  auto fd = openInRoot(rootFd_, "/up/created-via-abs", Create::kFile);
  ASSERT_TRUE(fd.isOk()) << fd.status().message();
  close(*fd);
  EXPECT_TRUE(pathExists(dir_ + "/root/created-via-abs"));
  fd = openInRoot(rootFd_, "/climb/created-via-dots", Create::kDirectory);
  ASSERT_TRUE(fd.isOk()) << fd.status().message();
  close(*fd);
  EXPECT_TRUE(isDirectory(dir_ + "/root/created-via-dots"));
  EXPECT_FALSE(pathExists("/created-via-abs"));
  EXPECT_FALSE(pathExists("/created-via-dots"));
}

}  // namespace
}  // namespace corral::container
