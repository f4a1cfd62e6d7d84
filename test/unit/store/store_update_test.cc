// updateWithRetry: the one read-modify-write loop over a cluster record.

#include "store/update.h"

#include <gtest/gtest.h>

#include "fakes/fake_store.h"
#include "model/record.h"

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
  auto r = updateWithRetry(store, "a", RecordPart::kStatus, [](ClusterRecord& c) -> StatusOr<Edit> {
    c.phase = "edited";
    return Edit::kWrite;
  });
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(r->phase, "edited");
  EXPECT_EQ(r->statusVersion, 2);
  EXPECT_EQ(r->version, 1) << "a status write leaves the spec's version alone";
  EXPECT_EQ(store.getCluster("a")->phase, "edited");
}

TEST(UpdateWithRetry, AConflictRereadsAndEditsAgain) {
  FakeStore store;
  ASSERT_TRUE(store.createCluster(named("a")).isOk());
  int edits = 0;
  auto r = updateWithRetry(store, "a", RecordPart::kStatus, [&](ClusterRecord& c) -> StatusOr<Edit> {
    if (++edits == 1) {
      // Someone else writes the same part between this read and its write.
      ClusterRecord other = *store.getCluster("a");
      other.phase = "theirs";
      EXPECT_TRUE(store.writeCluster(other, RecordPart::kStatus).isOk());
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
  auto r = updateWithRetry(store, "a", RecordPart::kAll, [&](ClusterRecord&) -> StatusOr<Edit> {
    ++edits;
    store.failNext(Code::kConflict, "stale");  // the write that follows
    return Edit::kWrite;
  });
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_EQ(edits, kMaxUpdateAttempts);

  edits = 0;
  r = updateWithRetry(store, "a", RecordPart::kAll, [&](ClusterRecord&) -> StatusOr<Edit> {
    ++edits;
    return failedPrecondition("not now");
  });
  EXPECT_EQ(r.status().message(), "not now");
  EXPECT_EQ(edits, 1);
  EXPECT_EQ(updateWithRetry(store, "nope", RecordPart::kAll, [](ClusterRecord&) -> StatusOr<Edit> {
              return Edit::kWrite;
            }).status().code(),
            Code::kNotFound);
}

TEST(UpdateWithRetry, UnchangedWritesNothing) {
  FakeStore store;
  ASSERT_TRUE(store.createCluster(named("a")).isOk());
  int64_t before = store.calls();
  auto r = updateWithRetry(store, "a", RecordPart::kSpec,
                           [](ClusterRecord&) -> StatusOr<Edit> { return Edit::kUnchanged; });
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(r->version, 1);
  EXPECT_EQ(store.calls() - before, 1) << "one read, no write";
}

// The reconciler's progress (status writes) between a change request's read
// and its write: the change is written at the first attempt, and nothing of
// the progress is lost. Before spec and status were apart, every such write
// cost the change a retry.
TEST(UpdateWithRetry, StatusWritesDoNotMakeASpecChangeRetry) {
  FakeStore store;
  ASSERT_TRUE(store.createCluster(named("a")).isOk());
  int edits = 0;
  auto r = updateWithRetry(store, "a", RecordPart::kSpec, [&](ClusterRecord& c) -> StatusOr<Edit> {
    ++edits;
    for (int i = 0; i < 5; ++i) {
      auto progress = updateWithRetry(store, "a", RecordPart::kStatus, [&](ClusterRecord& p) -> StatusOr<Edit> {
        p.phase = "step " + std::to_string(i);
        return Edit::kWrite;
      });
      EXPECT_TRUE(progress.isOk());
    }
    c.spec.gpuNodes = 3;
    c.revision += 1;
    return Edit::kWrite;
  });
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(edits, 1);
  EXPECT_EQ(store.conflicts(), 0);
  EXPECT_EQ(store.writes(RecordPart::kSpec), 1);
  EXPECT_EQ(store.writes(RecordPart::kStatus), 5);
  auto now = store.getCluster("a");
  EXPECT_EQ(now->spec.gpuNodes, 3);
  EXPECT_EQ(now->phase, "step 4") << "the spec write kept the status written meanwhile";
  EXPECT_EQ(now->version, 2);
  EXPECT_EQ(now->statusVersion, 6);
}

TEST(UpdateWithRetry, ASpecChangeDoesNotMakeAStatusWriteRetry) {
  FakeStore store;
  ASSERT_TRUE(store.createCluster(named("a")).isOk());
  int edits = 0;
  auto r = updateWithRetry(store, "a", RecordPart::kStatus, [&](ClusterRecord& c) -> StatusOr<Edit> {
    if (++edits == 1) {
      ClusterRecord other = *store.getCluster("a");
      other.spec.cpuNodes = 2;
      other.revision += 1;
      EXPECT_TRUE(store.writeCluster(other, RecordPart::kSpec).isOk());
    }
    c.phase = "applying";
    return Edit::kWrite;
  });
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(edits, 1);
  EXPECT_EQ(r->spec.cpuNodes, 2) << "the status write did not undo the change (stale spec in hand)";
  EXPECT_EQ(r->revision, 1);
  EXPECT_EQ(r->phase, "applying");
}

// Terminate and delete write both parts: a change request racing one reads
// again (and is then refused by the new status).
TEST(UpdateWithRetry, AWriteOfBothPartsConflictsWithEither) {
  FakeStore store;
  ASSERT_TRUE(store.createCluster(named("a")).isOk());
  for (RecordPart other : {RecordPart::kSpec, RecordPart::kStatus}) {
    int edits = 0;
    auto r = updateWithRetry(store, "a", RecordPart::kAll, [&](ClusterRecord& c) -> StatusOr<Edit> {
      if (++edits == 1) {
        ClusterRecord them = *store.getCluster("a");
        them.phase = "theirs";
        them.spec.gpusPerNode = 4;
        EXPECT_TRUE(store.writeCluster(them, other).isOk());
      }
      c.status = ClusterStatus::kTerminating;
      return Edit::kWrite;
    });
    ASSERT_TRUE(r.isOk()) << r.status().message();
    EXPECT_EQ(edits, 2) << recordPartName(other);
  }
}

TEST(UpdateWithRetry, AnEditOutsideItsPartIsRefusedAndWritesNothing) {
  FakeStore store;
  ASSERT_TRUE(store.createCluster(named("a")).isOk());
  auto r = updateWithRetry(store, "a", RecordPart::kStatus, [](ClusterRecord& c) -> StatusOr<Edit> {
    c.phase = "fine";
    c.changeForce = true;  // the spec's: would be dropped silently
    return Edit::kWrite;
  });
  EXPECT_EQ(r.status().code(), Code::kInternal);
  EXPECT_NE(r.status().message().find("outside"), std::string::npos) << r.status().message();
  auto spec = updateWithRetry(store, "a", RecordPart::kSpec, [](ClusterRecord& c) -> StatusOr<Edit> {
    c.nodes.push_back({"slinky-0", "slinky", "x", "1.2.3.4"});  // the status's
    return Edit::kWrite;
  });
  EXPECT_EQ(spec.status().code(), Code::kInternal);
  EXPECT_EQ(store.getCluster("a")->phase, "");
  EXPECT_EQ(store.writes(RecordPart::kStatus) + store.writes(RecordPart::kSpec), 0);
}

}  // namespace
}  // namespace corral
