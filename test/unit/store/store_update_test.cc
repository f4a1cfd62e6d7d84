// updateWithRetry: the one read-modify-write loop over a cluster record.

#include "store/update.h"

#include <gtest/gtest.h>

#include "fakes/fake_store.h"

namespace corral {
namespace {

ClusterRecord named(const std::string& name) {
  ClusterRecord r;
  r.spec.name = name;
  r.spec.gpuNodes = 1;
  return r;
}

TEST(UpdateWithRetry, WritesTheEditAndReturnsTheStoredRecord) {
  FakeStore store;
  ASSERT_TRUE(store.createCluster(named("a")).isOk());
  auto r = updateWithRetry(store, "a", [](ClusterRecord& c) -> StatusOr<Edit> {
    c.phase = "edited";
    return Edit::kWrite;
  });
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(r->phase, "edited");
  EXPECT_EQ(r->version, 2);
  EXPECT_EQ(store.getCluster("a")->phase, "edited");
}

TEST(UpdateWithRetry, AConflictRereadsAndEditsAgain) {
  FakeStore store;
  ASSERT_TRUE(store.createCluster(named("a")).isOk());
  int edits = 0;
  auto r = updateWithRetry(store, "a", [&](ClusterRecord& c) -> StatusOr<Edit> {
    if (++edits == 1) {
      // Someone else writes between this read and its write.
      ClusterRecord other = *store.getCluster("a");
      other.phase = "theirs";
      EXPECT_TRUE(store.updateCluster(other).isOk());
    }
    c.reason = "mine";
    return Edit::kWrite;
  });
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(edits, 2);
  EXPECT_EQ(r->phase, "theirs") << "the second edit started from their write";
  EXPECT_EQ(r->reason, "mine");
}

TEST(UpdateWithRetry, GivesUpAfterTheLastAttemptAndStopsOnOtherErrors) {
  FakeStore store;
  ASSERT_TRUE(store.createCluster(named("a")).isOk());
  int edits = 0;
  auto r = updateWithRetry(store, "a", [&](ClusterRecord&) -> StatusOr<Edit> {
    ++edits;
    store.failNext(Code::kConflict, "stale");  // the write that follows
    return Edit::kWrite;
  });
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_EQ(edits, kMaxUpdateAttempts);

  edits = 0;
  r = updateWithRetry(store, "a", [&](ClusterRecord&) -> StatusOr<Edit> {
    ++edits;
    return failedPrecondition("not now");
  });
  EXPECT_EQ(r.status().message(), "not now");
  EXPECT_EQ(edits, 1);
  EXPECT_EQ(updateWithRetry(store, "nope", [](ClusterRecord&) -> StatusOr<Edit> {
              return Edit::kWrite;
            }).status().code(),
            Code::kNotFound);
}

TEST(UpdateWithRetry, UnchangedWritesNothing) {
  FakeStore store;
  ASSERT_TRUE(store.createCluster(named("a")).isOk());
  int64_t before = store.calls();
  auto r = updateWithRetry(store, "a", [](ClusterRecord&) -> StatusOr<Edit> { return Edit::kUnchanged; });
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(r->version, 1);
  EXPECT_EQ(store.calls() - before, 1) << "one read, no write";
}

}  // namespace
}  // namespace corral
