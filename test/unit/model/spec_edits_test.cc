#include "model/spec_edits.h"

#include <gtest/gtest.h>

#include "model/validation.h"

namespace corral {
namespace {

// A uid sequence as the store keeps one: 1, 2, 3, … counting its calls.
struct Sequence {
  int64_t next = 1;
  int calls = 0;
  std::function<StatusOr<int64_t>()> fn() {
    return [this]() -> StatusOr<int64_t> {
      ++calls;
      return next++;
    };
  }
};

TEST(AddLoginUser, GivesUidsFromTheSequence) {
  ClusterSpec spec;
  Sequence seq;
  ASSERT_TRUE(addLoginUser(spec, {"alice", 0, {"key-a"}}, seq.fn()).isOk());
  ASSERT_TRUE(addLoginUser(spec, {"bob", 0, {}}, seq.fn()).isOk());
  ASSERT_EQ(spec.users.size(), 2u);
  EXPECT_EQ(spec.users[0], (LoginUser{"alice", kFirstLoginUid, {"key-a"}}));
  EXPECT_EQ(spec.users[1], (LoginUser{"bob", kFirstLoginUid + 1, {}}));
}

TEST(AddLoginUser, ATakenNameUsesNoUid) {
  ClusterSpec spec;
  spec.users = {{"alice", 20000, {}}};
  Sequence seq;
  Status s = addLoginUser(spec, {"alice", 0, {}}, seq.fn());
  EXPECT_EQ(s.code(), Code::kConflict);
  EXPECT_EQ(s.message(), "user \"alice\" already exists");
  EXPECT_EQ(seq.calls, 0);
  EXPECT_EQ(spec.users.size(), 1u);
}

TEST(AddLoginUser, StopsAfterTenThousandUids) {
  ClusterSpec spec;
  Sequence seq;
  seq.next = 10000;
  ASSERT_TRUE(addLoginUser(spec, {"last", 0, {}}, seq.fn()).isOk());
  EXPECT_EQ(spec.users.back().uid, kFirstLoginUid + 9999);
  Status s = addLoginUser(spec, {"onemore", 0, {}}, seq.fn());
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_EQ(s.message(), "this cluster has used all its uids");
  EXPECT_EQ(spec.users.size(), 1u);
}

TEST(AddLoginUser, ASequenceErrorIsReturned) {
  ClusterSpec spec;
  Status s = addLoginUser(spec, {"alice", 0, {}}, []() -> StatusOr<int64_t> {
    return unavailable("store down");
  });
  EXPECT_EQ(s.code(), Code::kUnavailable);
  EXPECT_TRUE(spec.users.empty());
}

TEST(RemoveLoginUser, RemovesByNameOrSaysWhichClusterLacksIt) {
  ClusterSpec spec;
  spec.users = {{"alice", 20000, {}}, {"bob", 20001, {}}};
  ASSERT_TRUE(removeLoginUser(spec, "demo", "alice").isOk());
  ASSERT_EQ(spec.users.size(), 1u);
  EXPECT_EQ(spec.users[0].name, "bob");
  Status s = removeLoginUser(spec, "demo", "alice");
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_EQ(s.message(), "cluster \"demo\" has no login user \"alice\"");
}

TEST(AddAttachment, DatasetsAreReadOnly) {
  ClusterSpec spec;
  Volume data{"data", "dataset", "/srv/data", false, 0, "default"};
  Volume scratch{"scratch", "pfs", "/var/lib/corral/volumes/scratch", true, 0, "default"};
  addAttachment(spec, data, "/data");
  addAttachment(spec, scratch, "/scratch");
  ASSERT_EQ(spec.volumes.size(), 2u);
  EXPECT_EQ(spec.volumes[0], (VolumeAttachment{"data", "/data", "/srv/data", true}));
  EXPECT_EQ(spec.volumes[1],
            (VolumeAttachment{"scratch", "/scratch", "/var/lib/corral/volumes/scratch", false}));
}

TEST(RemoveAttachment, RemovesByVolumeOrSaysItIsNotAttached) {
  ClusterSpec spec;
  spec.volumes = {{"data", "/data", "/srv/data", true}, {"scratch", "/s", "/x", false}};
  ASSERT_TRUE(removeAttachment(spec, "demo", "data").isOk());
  ASSERT_EQ(spec.volumes.size(), 1u);
  EXPECT_EQ(spec.volumes[0].volume, "scratch");
  Status s = removeAttachment(spec, "demo", "data");
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_EQ(s.message(), "volume \"data\" is not attached to \"demo\"");
}

}  // namespace
}  // namespace corral
