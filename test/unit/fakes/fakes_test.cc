// The fakes' own features: `FakeStore`'s fault injection and `FakeClock`. Their
// `Store` behaviour is checked in store_contract_test.cc.

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "fakes/fake_clock.h"
#include "fakes/fake_store.h"

namespace corral {
namespace {

ClusterRecord makeRecord(const std::string& name) {
  ClusterRecord record;
  record.spec.name = name;
  record.revision = 1;
  return record;
}

TEST(FakeStoreTest, FailNextFailsOneCallAndChangesNothing) {
  FakeStore store;
  store.failNext(Code::kUnavailable, "disk on fire");
  StatusOr<ClusterRecord> failed = store.createCluster(makeRecord("a"));
  ASSERT_FALSE(failed.isOk());
  EXPECT_EQ(failed.status().code(), Code::kUnavailable);
  EXPECT_EQ(failed.status().message(), "disk on fire");
  EXPECT_TRUE(store.listClusters()->empty());

  // The fault was used up; the id it did not take is still the first.
  StatusOr<ClusterRecord> created = store.createCluster(makeRecord("a"));
  ASSERT_TRUE(created.isOk());
  EXPECT_EQ(created->id, 1);
}

TEST(FakeStoreTest, FailNextAppliesToEveryMethod) {
  FakeStore store;
  ClusterRecord a = *store.createCluster(makeRecord("a"));
  ASSERT_TRUE(store.appendEvent({0, "a", 1, "Normal", "Created", "", "", 0}).isOk());

  store.failNext(Code::kInternal, "x");
  EXPECT_EQ(store.getCluster("a").status().code(), Code::kInternal);
  store.failNext(Code::kInternal, "x");
  EXPECT_EQ(store.listClusters().status().code(), Code::kInternal);
  store.failNext(Code::kConflict, "x");
  EXPECT_EQ(store.updateCluster(a).status().code(), Code::kConflict);
  EXPECT_EQ(store.getCluster("a")->version, 1);
  store.failNext(Code::kInternal, "x");
  EXPECT_EQ(store.deleteCluster("a").code(), Code::kInternal);
  EXPECT_TRUE(store.getCluster("a").isOk());
  store.failNext(Code::kInternal, "x");
  EXPECT_EQ(store.appendEvent({0, "a", 2, "Normal", "Again", "", "", 0}).code(), Code::kInternal);
  store.failNext(Code::kInternal, "x");
  EXPECT_EQ(store.listEvents("a", 10).status().code(), Code::kInternal);
  EXPECT_EQ(store.listEvents("a", 10)->size(), 1u);
  store.failNext(Code::kInternal, "x");
  EXPECT_EQ(store.nextSequence("n").status().code(), Code::kInternal);
  EXPECT_EQ(*store.nextSequence("n"), 1);
  store.failNext(Code::kInternal, "x");
  EXPECT_EQ(store.listRevisions("a").status().code(), Code::kInternal);
}

TEST(FakeStoreTest, FailNextWithOkCancels) {
  FakeStore store;
  store.failNext(Code::kInternal, "x");
  store.failNext(Code::kOk, "");
  EXPECT_TRUE(store.nextSequence("n").isOk());
}

TEST(FakeStoreTest, CountsCalls) {
  FakeStore store;
  EXPECT_EQ(store.calls(), 0);
  (void)store.getCluster("a");
  store.failNext(Code::kInternal, "x");
  (void)store.listClusters();
  EXPECT_EQ(store.calls(), 2);
}

TEST(FakeClockTest, SleepAdvancesInsteadOfBlocking) {
  FakeClock clock;
  auto start = clock.now();
  int64_t startMillis = clock.unixMillis();
  EXPECT_EQ(startMillis, 1764460800000);
  auto realStart = std::chrono::steady_clock::now();
  clock.sleepFor(std::chrono::hours(24));
  EXPECT_LT(std::chrono::steady_clock::now() - realStart, std::chrono::hours(1));
  EXPECT_EQ(clock.now() - start, std::chrono::hours(24));
  EXPECT_EQ(clock.unixMillis() - startMillis, 24 * 3600 * 1000);
  EXPECT_EQ(clock.slept(), std::chrono::hours(24));
  EXPECT_EQ(clock.sleeps(), 1);
}

TEST(FakeClockTest, AdvanceMovesTimeButIsNotSleep) {
  FakeClock clock(1000);
  clock.advance(250);
  clock.advance(std::chrono::seconds(1));
  clock.advance(-5);  // Ignored.
  EXPECT_EQ(clock.unixMillis(), 2250);
  EXPECT_EQ(clock.slept(), std::chrono::milliseconds(0));
  EXPECT_EQ(clock.sleeps(), 0);
}

TEST(FakeClockTest, ThreadSafe) {
  FakeClock clock(0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) clock.sleepFor(std::chrono::milliseconds(1));
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(clock.unixMillis(), 4000);
  EXPECT_EQ(clock.sleeps(), 4000);
}

}  // namespace
}  // namespace corral
