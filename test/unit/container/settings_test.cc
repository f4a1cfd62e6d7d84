#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "container/container.h"
#include "common/fs.h"

namespace corral::container {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class SettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/var/tmp/corral-settings-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    who_.uid = 1234;
    who_.gid = 5678;
    who_.user = "alice";
    who_.home = dir_ + "/home";
  }
  void TearDown() override { ASSERT_TRUE(removeTree(dir_).isOk()); }

  std::string writeConf(const std::string& text) {
    std::string path = dir_ + "/enroot.conf";
    std::ofstream(path) << text;
    return path;
  }

  std::string dir_;
  Identity who_;
};

TEST_F(SettingsTest, DefaultsFollowXdgAndHome) {
  auto s = loadSettings(who_, {{"HOME", dir_ + "/h"}}, dir_ + "/missing.conf");
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_EQ(s->dataPath, dir_ + "/h/.local/share/enroot");
  EXPECT_EQ(s->cachePath, dir_ + "/h/.cache/enroot");
  EXPECT_EQ(s->runtimePath, "/run/enroot");
  EXPECT_EQ(s->configPath, dir_ + "/h/.config/enroot");
  EXPECT_FALSE(s->mountHome);
  EXPECT_TRUE(s->writable);
  EXPECT_FALSE(s->remapRoot);
  EXPECT_THAT(s->registry.httpRegistries, IsEmpty());
  EXPECT_EQ(s->registry.credentialsFile, "");
  struct stat st;
  ASSERT_EQ(stat(s->dataPath.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat(s->cachePath.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(SettingsTest, XdgVariablesWin) {
  auto s = loadSettings(who_,
                        {{"HOME", dir_ + "/h"},
                         {"XDG_DATA_HOME", dir_ + "/xd"},
                         {"XDG_CACHE_HOME", dir_ + "/xc"},
                         {"XDG_RUNTIME_DIR", "/run/user/1234"},
                         {"XDG_CONFIG_HOME", dir_ + "/xcfg"}},
                        dir_ + "/missing.conf");
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_EQ(s->dataPath, dir_ + "/xd/enroot");
  EXPECT_EQ(s->cachePath, dir_ + "/xc/enroot");
  EXPECT_EQ(s->runtimePath, "/run/user/1234/enroot");
  EXPECT_EQ(s->configPath, dir_ + "/xcfg/enroot");
}

TEST_F(SettingsTest, FileBothSyntaxesCommentsAndExpansion) {
  std::string conf = writeConf(
      "# Enroot configuration\n"
      "\n"
      "ENROOT_DATA_PATH    " + dir_ + "/data/$(id -u)   # per user\n"
      "ENROOT_CACHE_PATH=" + dir_ + "/cache/${UID}-$USER\n"
      "ENROOT_CONFIG_PATH \"" + dir_ + "/cfg/${NOPE:-fallback}\"\n"
      "ENROOT_MOUNT_HOME yes\n"
      "ENROOT_ROOTFS_WRITABLE=no\n"
      "ENROOT_REMAP_ROOT  true\n"
      "ENROOT_MAX_CONNECTIONS 9\n");
  auto s = loadSettings(who_, {{"HOME", dir_}}, conf);
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_EQ(s->dataPath, dir_ + "/data/1234");
  EXPECT_EQ(s->cachePath, dir_ + "/cache/1234-alice");
  EXPECT_EQ(s->configPath, dir_ + "/cfg/fallback");
  EXPECT_TRUE(s->mountHome);
  EXPECT_FALSE(s->writable);
  EXPECT_TRUE(s->remapRoot);
  EXPECT_EQ(s->registry.parallelDownloads, 9);
}

TEST_F(SettingsTest, EnvironmentOverridesFile) {
  std::string conf = writeConf("ENROOT_DATA_PATH " + dir_ + "/fromfile\nENROOT_MOUNT_HOME yes\n");
  auto s = loadSettings(who_,
                        {{"HOME", dir_},
                         {"ENROOT_DATA_PATH", dir_ + "/fromenv"},
                         {"ENROOT_MOUNT_HOME", "n"}},
                        conf);
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_EQ(s->dataPath, dir_ + "/fromenv");
  EXPECT_FALSE(s->mountHome);
}

TEST_F(SettingsTest, ConfigFileFromEnvironment) {
  std::string conf = writeConf("ENROOT_DATA_PATH " + dir_ + "/viaenvfile\n");
  auto s = loadSettings(who_, {{"HOME", dir_}, {"ENROOT_CONFIG_FILE", conf}},
                        "/nonexistent/enroot.conf");
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_EQ(s->dataPath, dir_ + "/viaenvfile");
}

TEST_F(SettingsTest, HttpRegistries) {
  auto s = loadSettings(who_, {{"HOME", dir_}, {"ENROOT_ALLOW_HTTP", "yes"}}, dir_ + "/none");
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_THAT(s->registry.httpRegistries, ElementsAre("*"));
  s = loadSettings(who_, {{"HOME", dir_}, {"CORRAL_HTTP_REGISTRIES", "reg:5000, other"}},
                   dir_ + "/none");
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_THAT(s->registry.httpRegistries, ElementsAre("reg:5000", "other"));
}

TEST_F(SettingsTest, CredentialsFileWhenPresent) {
  ASSERT_TRUE(makeDirs(dir_ + "/cfg/enroot", 0700).isOk());
  std::ofstream(dir_ + "/cfg/enroot/.credentials") << "machine r login u password p\n";
  auto s = loadSettings(who_, {{"HOME", dir_}, {"XDG_CONFIG_HOME", dir_ + "/cfg"}}, dir_ + "/n");
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_EQ(s->registry.credentialsFile, dir_ + "/cfg/enroot/.credentials");
}

TEST_F(SettingsTest, Errors) {
  auto s = loadSettings(who_, {{"HOME", dir_}, {"ENROOT_MOUNT_HOME", "perhaps"}}, dir_ + "/n");
  ASSERT_FALSE(s.isOk());
  EXPECT_THAT(s.status().message(), HasSubstr("ENROOT_MOUNT_HOME"));
  s = loadSettings(who_, {{"HOME", dir_}, {"ENROOT_DATA_PATH", "relative/path"}}, dir_ + "/n");
  ASSERT_FALSE(s.isOk());
  EXPECT_THAT(s.status().message(), HasSubstr("absolute path"));
  std::string conf = writeConf("ENROOT_DATA_PATH $(rm -rf /)\n");
  s = loadSettings(who_, {{"HOME", dir_}}, conf);
  ASSERT_FALSE(s.isOk());
  EXPECT_THAT(s.status().message(), HasSubstr("$(id -u)"));
  conf = writeConf("!!! nonsense\n");
  s = loadSettings(who_, {{"HOME", dir_}}, conf);
  ASSERT_FALSE(s.isOk());
  EXPECT_THAT(s.status().message(), HasSubstr(":1:"));
  s = loadSettings(who_, {{"HOME", dir_}, {"ENROOT_MAX_CONNECTIONS", "many"}}, dir_ + "/n");
  ASSERT_FALSE(s.isOk());
}

TEST_F(SettingsTest, RemoveTreeHandlesUnwritableDirectories) {
  std::string t = dir_ + "/tree";
  ASSERT_TRUE(makeDirs(t + "/a/b", 0755).isOk());
  std::ofstream(t + "/a/b/f") << "x";
  ASSERT_EQ(symlink("/etc", (t + "/a/link").c_str()), 0);
  ASSERT_EQ(chmod((t + "/a/b").c_str(), 0), 0);
  ASSERT_EQ(chmod((t + "/a").c_str(), 0555), 0);
  ASSERT_TRUE(removeTree(t).isOk());
  EXPECT_FALSE(pathExists(t));
  EXPECT_TRUE(pathExists("/etc/passwd"));
  EXPECT_TRUE(removeTree(t).isOk());  // Missing is fine.
}

}  // namespace
}  // namespace corral::container
