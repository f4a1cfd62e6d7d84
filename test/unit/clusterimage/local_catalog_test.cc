#include "clusterimage/local_catalog.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fakes/fake_clock.h"
#include "fakes/fake_process_runner.h"

namespace fs = std::filesystem;

namespace corral {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

constexpr const char* kBase = R"(name: base-img
os: Debian 13 (trixie)
suite: trixie
slurm: "24.11"
packages: [slurm-wlm, munge]
setup: [echo one]
)";

// What a real mmdebstrap leaves behind, as far as the catalog checks it.
void fakeRootfs(const std::string& root, const std::string& slurmVersion) {
  for (const char* f : {"/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/slurmdbd",
                        "/usr/bin/sinfo", "/usr/sbin/munged", "/usr/sbin/mariadbd", "/usr/sbin/sshd",
                        "/usr/bin/unsquashfs", "/usr/share/corral/mysql-template/.complete"}) {
    fs::create_directories(fs::path(root + f).parent_path());
    std::ofstream(root + f) << "x";
  }
  fs::create_directories(root + "/var/lib/dpkg");
  std::ofstream(root + "/var/lib/dpkg/status")
      << "Package: munge\nStatus: install ok installed\nVersion: 0.5\n\n"
      << "Package: slurmctld\nStatus: install ok installed\nVersion: " << slurmVersion << "\n\n";
}

class LocalCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("corral-catalog-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    runner_.on("setpriv", [this](const std::vector<std::string>& argv, const ProcessOptions& o) {
      if (o.onLine) o.onLine("I: success");
      fakeRootfs(argv[argv.size() - 2], slurm_);
      ProcessResult r;
      r.exitCode = 0;
      return r;
    });
  }
  void TearDown() override { fs::remove_all(dir_); }
  LocalImageCatalog catalog() {
    LocalImageCatalogOptions o;
    o.cacheDir = dir_.string();
    o.mirror = "http://mirror.example/debian";
    o.builtInRecipes = {{"base-img", kBase}};
    o.runner = &runner_;
    o.clock = &clock_;
    return LocalImageCatalog(o);
  }
  bool leftovers() {
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().filename().string().rfind(".build-", 0) == 0) return true;
    return false;
  }

  fs::path dir_;
  FakeProcessRunner runner_;
  FakeClock clock_;
  std::string slurm_ = "24.11.5-4+deb13u1";
};

TEST_F(LocalCatalogTest, BuildsOnceWithMmdebstrapAndRecordsWhatItBuilt) {
  auto c = catalog();
  auto info = c.find("base-img");
  ASSERT_TRUE(info.isOk());
  EXPECT_FALSE(info->built);
  EXPECT_TRUE(info->builtIn);
  std::vector<std::string> progress;
  ASSERT_TRUE(c.ensureBuilt(info->ref, [&](const std::string& l) { progress.push_back(l); }).isOk());
  auto lines = runner_.linesOf("setpriv");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("setpriv --pdeathsig KILL -- unshare --mount --propagation private "
                                  "--pid --fork --kill-child --mount-proc -- mmdebstrap --mode=root "
                                  "--variant=apt"));
  EXPECT_THAT(lines[0], HasSubstr("--include=slurm-wlm,munge"));
  EXPECT_THAT(lines[0], HasSubstr("chroot \"$1\" /bin/sh -e /setup.sh"));
  EXPECT_THAT(lines[0], HasSubstr(" trixie " + dir_.string() + "/.build-" + info->ref.id +
                                  "/rootfs http://mirror.example/debian"));
  EXPECT_THAT(progress, Contains("I: success"));
  auto built = c.find("base-img");
  ASSERT_TRUE(built.isOk());
  EXPECT_TRUE(built->built);
  EXPECT_EQ(built->slurmPackage, "24.11.5-4+deb13u1");
  EXPECT_GT(built->sizeBytes, 0);
  EXPECT_TRUE(fs::exists(c.rootfsOf(info->ref.id) + "/usr/sbin/slurmd"));
  EXPECT_FALSE(leftovers());
  // Built is built: nothing runs again.
  ASSERT_TRUE(c.ensureBuilt(info->ref, nullptr).isOk());
  EXPECT_EQ(runner_.linesOf("setpriv").size(), 1u);
}

// Debian unstable's Release expires within a week; the build must not
// refuse a mirror a little behind (the signature is still checked).
TEST_F(LocalCatalogTest, BuildsAnUnstableSuiteWhoseReleaseHasExpired) {
  slurm_ = "26.05.5-1";
  LocalImageCatalogOptions o;
  o.cacheDir = dir_.string();
  o.mirror = "http://mirror.example/debian";
  o.builtInRecipes = {{"sid-img", R"(name: sid-img
suite: unstable
slurm: "26.05"
packages: [slurm-wlm, sackd]
)"}};
  o.runner = &runner_;
  o.clock = &clock_;
  LocalImageCatalog c(o);
  auto info = c.find("sid-img");
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_EQ(info->ref.slurmVersion, "26.05");
  ASSERT_TRUE(c.ensureBuilt(info->ref, nullptr).isOk());
  auto lines = runner_.linesOf("setpriv");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("--aptopt=Acquire::Check-Valid-Until \"false\""));
  EXPECT_THAT(lines[0], HasSubstr(" unstable " + dir_.string() + "/.build-"));
  EXPECT_EQ(c.find("sid-img")->slurmPackage, "26.05.5-1");
}

TEST_F(LocalCatalogTest, ABrokenBuildSaysWhyAndLeavesNothing) {
  auto c = catalog();
  auto info = c.find("base-img");
  runner_.failNext("setpriv", 1, "I: downloading\nE: Unable to locate package slurm-wlm\n");
  Status s = c.ensureBuilt(info->ref, nullptr);
  ASSERT_FALSE(s.isOk());
  EXPECT_THAT(s.message(), HasSubstr("Unable to locate package slurm-wlm"));
  EXPECT_FALSE(fs::exists(dir_ / info->ref.id));
  EXPECT_FALSE(leftovers());
  EXPECT_FALSE(c.find("base-img")->built);
}

TEST_F(LocalCatalogTest, AnImageWithoutWhatPodsRunIsRefused) {
  auto c = catalog();
  auto info = c.find("base-img");
  runner_.on("setpriv", [](const std::vector<std::string>& argv, const ProcessOptions&) {
    fakeRootfs(argv[argv.size() - 2], "24.11.5-4");
    fs::remove(argv[argv.size() - 2] + "/usr/sbin/sshd");
    ProcessResult r;
    r.exitCode = 0;
    return r;
  });
  Status s = c.ensureBuilt(info->ref, nullptr);
  ASSERT_FALSE(s.isOk());
  EXPECT_THAT(s.message(), HasSubstr("sshd"));
  EXPECT_FALSE(fs::exists(dir_ / info->ref.id));
  EXPECT_FALSE(leftovers());
}

TEST_F(LocalCatalogTest, AnImageWhoseSlurmIsNotWhatItSaysIsRefused) {
  slurm_ = "22.05.8-4+deb12u3";
  auto c = catalog();
  Status s = c.ensureBuilt(c.find("base-img")->ref, nullptr);
  ASSERT_FALSE(s.isOk());
  EXPECT_THAT(s.message(), HasSubstr("says it holds Slurm 24.11"));
  EXPECT_THAT(s.message(), HasSubstr("22.05.8-4+deb12u3"));
}

TEST_F(LocalCatalogTest, OperatorsAddImagesThatExtendCorralsOwn) {
  auto c = catalog();
  auto added = c.addRecipe("name: with-htop\nextends: base-img\npackages: [htop]\n");
  ASSERT_TRUE(added.isOk()) << added.status().toString();
  EXPECT_EQ(added->ref.slurmVersion, "24.11");
  EXPECT_EQ(added->base, "base-img");
  EXPECT_FALSE(added->builtIn);
  EXPECT_NE(added->ref.id, c.find("base-img")->ref.id);
  auto all = c.list();
  ASSERT_TRUE(all.isOk());
  ASSERT_EQ(all->size(), 2u);
  ASSERT_TRUE(c.ensureBuilt(added->ref, nullptr).isOk());
  EXPECT_THAT(runner_.linesOf("setpriv")[0], HasSubstr("--include=slurm-wlm,munge,htop"));
  ASSERT_TRUE(c.removeRecipe("with-htop").isOk());
  EXPECT_EQ(c.find("with-htop").status().code(), Code::kNotFound);
  // Its build stays for the clusters that run it.
  EXPECT_TRUE(fs::exists(c.rootfsOf(added->ref.id)));
}

TEST_F(LocalCatalogTest, CorralsOwnImagesAreNotReplacedOrRemoved) {
  auto c = catalog();
  auto r = c.addRecipe(kBase);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_THAT(r.status().message(), HasSubstr("extends: base-img"));
  EXPECT_EQ(c.removeRecipe("base-img").code(), Code::kFailedPrecondition);
}

TEST_F(LocalCatalogTest, ARecipeWhoseBaseIsMissingIsNotAdded) {
  auto c = catalog();
  auto r = c.addRecipe("name: orphan\nextends: nothing-like-it\n");
  ASSERT_FALSE(r.isOk());
  EXPECT_THAT(r.status().message(), HasSubstr("extends nothing-like-it"));
  EXPECT_EQ(c.find("orphan").status().code(), Code::kNotFound);
}

TEST_F(LocalCatalogTest, UnknownNamesAreNotFoundAndListTheKnownOnes) {
  auto c = catalog();
  auto r = c.find("nope");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("there are: base-img"));
  EXPECT_EQ(c.find("../../etc").status().code(), Code::kNotFound);
}

TEST_F(LocalCatalogTest, ABuildWhoseRecipeChangedSinceIsNotRebuiltFromTheNewOne) {
  auto c = catalog();
  ASSERT_TRUE(c.addRecipe("name: mine\nextends: base-img\npackages: [htop]\n").isOk());
  ImageRef old = c.find("mine")->ref;
  ASSERT_TRUE(c.addRecipe("name: mine\nextends: base-img\npackages: [htop, tmux]\n").isOk());
  Status s = c.ensureBuilt(old, nullptr);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("changed since this cluster chose it"));
  EXPECT_TRUE(runner_.linesOf("setpriv").empty());
}

TEST(DpkgStatusTest, FindsTheInstalledVersionOnly) {
  std::string status =
      "Package: slurmctld\nStatus: deinstall ok config-files\nVersion: 1.0\n\n"
      "Package: slurmd\nStatus: install ok installed\nVersion: 24.11.5-4\n";
  EXPECT_EQ(dpkgVersionOf(status, "slurmd"), "24.11.5-4");
  EXPECT_EQ(dpkgVersionOf(status, "slurmctld"), "");
  EXPECT_EQ(dpkgVersionOf(status, "munge"), "");
}

}  // namespace
}  // namespace corral
