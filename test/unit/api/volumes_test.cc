// `Volumes` (src/api/volumes.h) over a fake store, runtime and clock: what a
// volume may be, who may back one with a host directory, and when one may be
// attached or deleted, without HTTP.

#include "api/volumes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "fakes/fake_clock.h"
#include "fakes/fake_runtime.h"
#include "fakes/fake_store.h"

namespace corral {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

class VolumesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Host directories may not lie under /tmp (part of the host's system):
    // the test's own go under the working directory (the build directory).
    root_ = fs::weakly_canonical(fs::current_path() / ("volumes-test-" + std::to_string(getpid())));
    fs::create_directories(root_ / "data");
    volumes_ = std::make_unique<Volumes>(store_, runtime_, clock_,
                                         Volumes::Options{"/var/lib/corral", {root_.string()}});
  }
  void TearDown() override { fs::remove_all(root_); }

  ClusterRecord cluster(const std::string& name, const std::string& project,
                        std::vector<VolumeAttachment> volumes) {
    ClusterRecord r;
    r.spec.name = name;
    r.project = project;
    r.spec.volumes = std::move(volumes);
    auto created = store_.createCluster(r);
    EXPECT_TRUE(created.isOk()) << created.status().toString();
    return created.isOk() ? *created : r;
  }

  FakeStore store_;
  FakeRuntime runtime_;
  FakeClock clock_{1764460800000};
  fs::path root_;
  std::unique_ptr<Volumes> volumes_;
  const Caller admin_{"root", true, {}};
  const Caller alice_{"alice", false, {"ml"}};
  const Caller bob_{"bob", false, {"cv"}};
};

TEST_F(VolumesTest, AManagedVolumeGetsTheRuntimesStorage) {
  auto v = volumes_->create(alice_, "scratch", "pfs", "", "ml");
  ASSERT_TRUE(v.isOk()) << v.status().toString();
  EXPECT_EQ(*v, (Volume{"scratch", "pfs", "/var/lib/corral-fake/volumes/scratch", true, 1764460800,
                        "ml"}));
  EXPECT_TRUE(runtime_.volumeExists("scratch"));
  auto stored = store_.getVolume("scratch");
  ASSERT_TRUE(stored.isOk());
  EXPECT_EQ(*stored, *v);
}

TEST_F(VolumesTest, RefusesABadNameOrType) {
  Status name = volumes_->create(alice_, "Bad_Name", "pfs", "", "ml").status();
  EXPECT_EQ(name.code(), Code::kInvalidArgument);
  EXPECT_EQ(name.message(), "invalid volume name \"Bad_Name\": use lowercase letters, digits and '-'");
  Status type = volumes_->create(alice_, "ok", "nfs", "", "ml").status();
  EXPECT_EQ(type.code(), Code::kInvalidArgument);
  EXPECT_EQ(type.message(), "--type must be pfs, sfs, weka or dataset, not \"nfs\"");
  EXPECT_EQ(runtime_.calls("createVolume"), 0);
}

TEST_F(VolumesTest, ATakenNameSaysWhoseOnlyToWhoMaySee) {
  ASSERT_TRUE(volumes_->create(alice_, "data", "pfs", "", "ml").isOk());
  Status own = volumes_->create(alice_, "data", "sfs", "", "ml").status();
  EXPECT_EQ(own.code(), Code::kConflict);
  EXPECT_EQ(own.message(), "a volume named \"data\" already exists");
  Status other = volumes_->create(bob_, "data", "sfs", "", "cv").status();
  EXPECT_EQ(other.code(), Code::kConflict);
  EXPECT_EQ(other.message(), "the volume name \"data\" is not available; choose another");
}

TEST_F(VolumesTest, OnlyAnAdminNamesAHostDirectoryAndOnlyUnderARoot) {
  std::string data = (root_ / "data").string();
  Status user = volumes_->create(alice_, "hostdir", "pfs", data, "ml").status();
  EXPECT_EQ(user.code(), Code::kPermissionDenied);
  EXPECT_EQ(user.message(),
            "only an administrator may back a volume with an existing host directory (--source); "
            "leave --source out and corral makes a managed volume");
  Status outside = volumes_->create(admin_, "hostdir", "pfs", "/srv/elsewhere", "default").status();
  EXPECT_EQ(outside.code(), Code::kPermissionDenied);
  EXPECT_EQ(outside.message(), "--source \"/srv/elsewhere\" is not under a directory this corrald "
                               "lets volumes use (" + root_.string() +
                               "; corrald --volume-source-root DIR adds one)");
  auto v = volumes_->create(admin_, "hostdir", "dataset", data + "/", "default");
  ASSERT_TRUE(v.isOk()) << v.status().toString();
  EXPECT_EQ(v->hostPath, data);
  EXPECT_FALSE(v->managed);
  EXPECT_EQ(runtime_.calls("createVolume"), 0);
}

// A store that loses the race for a name between the check and the write.
class RacedStore : public FakeStore {
 public:
  StatusOr<Volume> createVolume(const Volume&) override { return conflict("UNIQUE constraint"); }
};

TEST_F(VolumesTest, AFailedStoreWriteRemovesTheStorageItMade) {
  RacedStore raced;
  Volumes volumes(raced, runtime_, clock_, Volumes::Options{"/var/lib/corral", {}});
  Status s = volumes.create(alice_, "scratch", "pfs", "", "ml").status();
  EXPECT_EQ(s.code(), Code::kConflict);
  EXPECT_EQ(s.message(), "the volume name \"scratch\" is not available; choose another");
  EXPECT_EQ(runtime_.calls("createVolume"), 1);
  EXPECT_FALSE(runtime_.volumeExists("scratch"));
}

TEST_F(VolumesTest, AttachmentsOnTheClustersTheCallerSees) {
  cluster("a", "ml", {{"data", "/data", "/x", false}});
  cluster("b", "cv", {{"data", "/d", "/x", false}});
  cluster("c", "ml", {{"other", "/o", "/y", false}, {"data", "/mnt/data", "/x", false}});
  auto seen = volumes_->attachments(alice_, "data");
  ASSERT_TRUE(seen.isOk());
  EXPECT_THAT(*seen, ElementsAre("a:/data", "c:/mnt/data"));
  EXPECT_THAT(*volumes_->attachments(alice_, "none"), IsEmpty());
}

TEST_F(VolumesTest, AnAttachedVolumeIsNotRemoved) {
  auto v = volumes_->create(alice_, "data", "pfs", "", "ml");
  ASSERT_TRUE(v.isOk());
  cluster("a", "ml", {{"data", "/data", v->hostPath, false}});
  cluster("c", "ml", {{"data", "/d", v->hostPath, false}});
  Status s = volumes_->remove(alice_, *v);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_EQ(s.message(), "volume \"data\" is attached to a:/data, c:/d; detach it first");
  EXPECT_TRUE(store_.getVolume("data").isOk());
  EXPECT_TRUE(runtime_.volumeExists("data"));
}

TEST_F(VolumesTest, RemovingAManagedVolumeRemovesItsStorage) {
  auto v = volumes_->create(alice_, "data", "pfs", "", "ml");
  ASSERT_TRUE(v.isOk());
  ASSERT_TRUE(volumes_->remove(alice_, *v).isOk());
  EXPECT_EQ(store_.getVolume("data").status().code(), Code::kNotFound);
  EXPECT_FALSE(runtime_.volumeExists("data"));
}

TEST_F(VolumesTest, AttachableWithinItsProjectAndUnderARoot) {
  Volume managed{"data", "pfs", "/var/lib/corral/volumes/data", true, 0, "ml"};
  ClusterRecord ml = cluster("a", "ml", {});
  ClusterRecord cv = cluster("b", "cv", {});
  EXPECT_TRUE(volumes_->checkAttachable(managed, ml).isOk());
  Status across = volumes_->checkAttachable(managed, cv);
  EXPECT_EQ(across.code(), Code::kFailedPrecondition);
  EXPECT_EQ(across.message(), "volume \"data\" belongs to project \"ml\" and cluster \"b\" to "
                              "\"cv\"; a volume is attached within its project");
  Volume host{"old", "pfs", "/srv/old", false, 0, "ml"};
  Status unrooted = volumes_->checkAttachable(host, ml);
  EXPECT_EQ(unrooted.code(), Code::kPermissionDenied);
  EXPECT_EQ(unrooted.message(),
            "volume \"old\" is backed by the host directory /srv/old, which is not under a "
            "directory this corrald lets volumes use (" + root_.string() +
            "); an administrator must allow it (corrald --volume-source-root)");
  host.hostPath = (root_ / "data").string();
  EXPECT_TRUE(volumes_->checkAttachable(host, ml).isOk());
}

TEST(UnderVolumeSourceRoot, TheRootOrBelowItOnly) {
  EXPECT_TRUE(underVolumeSourceRoot("/srv/data", {"/srv/data"}));
  EXPECT_TRUE(underVolumeSourceRoot("/srv/data/x", {"/opt", "/srv/data"}));
  EXPECT_FALSE(underVolumeSourceRoot("/srv/database", {"/srv/data"}));
  EXPECT_FALSE(underVolumeSourceRoot("/srv", {"/srv/data"}));
  EXPECT_FALSE(underVolumeSourceRoot("/srv/data", {}));
}

}  // namespace
}  // namespace corral
