// The `Store` contract, run against every implementation: `FakeStore` must
// behave as `SqliteStore` does, or tests written against the fake would pass
// for code that fails against the real store.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "corral/store.h"
#include "fakes/fake_store.h"
#include "store/sqlite_store.h"

namespace corral {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ClusterRecord makeRecord(const std::string& name, int64_t revision = 1) {
  ClusterRecord record;
  record.spec.name = name;
  record.spec.gpuNodes = 2;
  record.spec.sshKeys = {"ssh-ed25519 AAAA " + name};
  record.revision = revision;
  record.createdAt = 1764464400;
  record.updatedAt = 1764464400;
  return record;
}

Event makeEvent(const std::string& cluster, const std::string& reason, int64_t time) {
  return Event{0, cluster, time, "Normal", reason, reason + " happened", "", 0};
}

std::vector<std::string> reasons(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const Event& e : events) out.push_back(e.reason);
  return out;
}

// Each environment opens a fresh, empty store and can reach the methods that
// are not (yet) part of `Store`.
class FakeStoreEnv {
 public:
  static constexpr const char* kName = "Fake";
  std::unique_ptr<Store> open() { return std::make_unique<FakeStore>(); }
};

class SqliteStoreEnv {
 public:
  static constexpr const char* kName = "Sqlite";
  SqliteStoreEnv() {
    char tmpl[] = "/var/tmp/corral_store_contract.XXXXXX";
    const char* dir = mkdtemp(tmpl);
    if (dir != nullptr) dir_ = dir;
  }
  ~SqliteStoreEnv() {
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  std::unique_ptr<Store> open() {
    StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::open(dir_ + "/corral.db");
    if (!store.isOk()) {
      ADD_FAILURE() << store.status().toString();
      return nullptr;
    }
    return std::move(store).value();
  }
 private:
  std::string dir_;
};

template <typename Env>
class StoreContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = env_.open();
    ASSERT_NE(store_, nullptr);
  }

  ClusterRecord create(const std::string& name, int64_t revision = 1) {
    StatusOr<ClusterRecord> record = store_->createCluster(makeRecord(name, revision));
    EXPECT_TRUE(record.isOk()) << record.status().toString();
    return record.isOk() ? *record : ClusterRecord{};
  }

  std::vector<std::string> names() {
    StatusOr<std::vector<ClusterRecord>> all = store_->listClusters();
    EXPECT_TRUE(all.isOk()) << all.status().toString();
    std::vector<std::string> out;
    if (all.isOk()) {
      for (const ClusterRecord& r : *all) out.push_back(r.spec.name);
    }
    return out;
  }

  StatusOr<std::vector<Revision>> revisions(const std::string& name) {
    return store_->listRevisions(name);
  }

  Env env_;
  std::unique_ptr<Store> store_;
};

class EnvNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return T::kName;
  }
};

using Envs = ::testing::Types<FakeStoreEnv, SqliteStoreEnv>;
TYPED_TEST_SUITE(StoreContractTest, Envs, EnvNames);

TYPED_TEST(StoreContractTest, CreateAssignsIdAndFirstVersion) {
  ClusterRecord a = this->create("a");
  ClusterRecord b = this->create("b");
  EXPECT_GT(a.id, 0);
  EXPECT_GT(b.id, a.id);
  EXPECT_EQ(a.version, 1);
  EXPECT_EQ(b.version, 1);
}

TYPED_TEST(StoreContractTest, GetReturnsWhatWasStored) {
  ClusterRecord in = makeRecord("demo", 2);
  in.appliedRevision = 1;
  in.status = ClusterStatus::kRunning;
  in.phase = "ready";
  in.reason = "none";
  in.subnet = "172.29.1.0/24";
  in.loginAddress = "172.29.1.3";
  in.loginHostKey = "ssh-ed25519 HOST";
  in.nodes = {{"slinky-0", "slinky", "corral_node_1", "172.29.1.10"}};
  in.id = 999;     // Ignored: the store assigns ids.
  in.version = 7;  // Ignored: the store starts at 1.
  ASSERT_TRUE(this->store_->createCluster(in).isOk());

  StatusOr<ClusterRecord> out = this->store_->getCluster("demo");
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  EXPECT_NE(out->id, 999);
  EXPECT_EQ(out->version, 1);
  EXPECT_EQ(out->spec.gpuNodes, 2);
  EXPECT_EQ(out->spec.sshKeys, in.spec.sshKeys);
  EXPECT_EQ(out->revision, 2);
  EXPECT_EQ(out->appliedRevision, 1);
  EXPECT_EQ(out->status, ClusterStatus::kRunning);
  EXPECT_EQ(out->phase, "ready");
  EXPECT_EQ(out->reason, "none");
  EXPECT_EQ(out->subnet, "172.29.1.0/24");
  EXPECT_EQ(out->loginAddress, "172.29.1.3");
  EXPECT_EQ(out->loginHostKey, "ssh-ed25519 HOST");
  ASSERT_EQ(out->nodes.size(), 1u);
  EXPECT_EQ(out->nodes[0].physicalId, "corral_node_1");
  EXPECT_EQ(out->createdAt, 1764464400);
}

TYPED_TEST(StoreContractTest, CreateRejectsADuplicateName) {
  this->create("a");
  StatusOr<ClusterRecord> again = this->store_->createCluster(makeRecord("a"));
  ASSERT_FALSE(again.isOk());
  EXPECT_EQ(again.status().code(), Code::kConflict);
  EXPECT_EQ(again.status().message(), R"(a cluster named "a" already exists)");
  EXPECT_THAT(this->names(), ElementsAre("a"));
}

TYPED_TEST(StoreContractTest, CreateRejectsAnEmptyName) {
  StatusOr<ClusterRecord> r = this->store_->createCluster(makeRecord(""));
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(this->names().empty());
}

TYPED_TEST(StoreContractTest, FailedCreateLeavesNothing) {
  ClusterRecord bad = makeRecord("bad");
  bad.reason = "\xff\xfe not UTF-8";
  StatusOr<ClusterRecord> r = this->store_->createCluster(bad);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(this->names().empty());
  EXPECT_EQ(this->store_->getCluster("bad").status().code(), Code::kNotFound);
}

TYPED_TEST(StoreContractTest, GetMissingIsNotFound) {
  StatusOr<ClusterRecord> r = this->store_->getCluster("nope");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_EQ(r.status().message(), R"(no cluster named "nope")");
}

TYPED_TEST(StoreContractTest, ListIsOrderedById) {
  EXPECT_TRUE(this->names().empty());
  this->create("c");
  this->create("a");
  this->create("b");
  EXPECT_THAT(this->names(), ElementsAre("c", "a", "b"));
}

TYPED_TEST(StoreContractTest, UpdateBumpsVersion) {
  ClusterRecord r = this->create("a");
  r.status = ClusterStatus::kRunning;
  r.phase = "done";
  StatusOr<ClusterRecord> updated = this->store_->updateCluster(r);
  ASSERT_TRUE(updated.isOk()) << updated.status().toString();
  EXPECT_EQ(updated->version, 2);
  EXPECT_EQ(updated->id, r.id);

  StatusOr<ClusterRecord> got = this->store_->getCluster("a");
  ASSERT_TRUE(got.isOk());
  EXPECT_EQ(got->version, 2);
  EXPECT_EQ(got->status, ClusterStatus::kRunning);
  EXPECT_EQ(got->phase, "done");

  StatusOr<ClusterRecord> again = this->store_->updateCluster(*updated);
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  EXPECT_EQ(again->version, 3);
}

TYPED_TEST(StoreContractTest, StaleUpdateIsConflictAndChangesNothing) {
  ClusterRecord first = this->create("a");
  ClusterRecord second = first;
  first.phase = "first";
  ASSERT_TRUE(this->store_->updateCluster(first).isOk());

  second.phase = "second";
  StatusOr<ClusterRecord> stale = this->store_->updateCluster(second);
  ASSERT_FALSE(stale.isOk());
  EXPECT_EQ(stale.status().code(), Code::kConflict);
  EXPECT_EQ(stale.status().message(),
            R"(the spec of cluster "a" was changed concurrently (version 2, expected 1); retry)");

  StatusOr<ClusterRecord> got = this->store_->getCluster("a");
  ASSERT_TRUE(got.isOk());
  EXPECT_EQ(got->phase, "first");
  EXPECT_EQ(got->version, 2);
}

TYPED_TEST(StoreContractTest, UpdateOfARecreatedClusterIsConflict) {
  ClusterRecord old = this->create("a");
  ASSERT_TRUE(this->store_->deleteCluster("a").isOk());
  ClusterRecord fresh = this->create("a");
  ASSERT_EQ(old.version, fresh.version);  // Versions alone cannot tell them apart.

  old.phase = "stale writer";
  StatusOr<ClusterRecord> r = this->store_->updateCluster(old);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_THAT(r.status().message(), HasSubstr("was deleted and created again"));
  EXPECT_EQ(this->store_->getCluster("a")->phase, "");
}

TYPED_TEST(StoreContractTest, UpdateMissingIsNotFound) {
  StatusOr<ClusterRecord> r = this->store_->updateCluster(makeRecord("ghost"));
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
}

TYPED_TEST(StoreContractTest, FailedUpdateLeavesNothing) {
  ClusterRecord r = this->create("a");
  r.reason = "\xc3 truncated UTF-8";
  r.revision = 5;
  StatusOr<ClusterRecord> bad = this->store_->updateCluster(r);
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  StatusOr<ClusterRecord> got = this->store_->getCluster("a");
  ASSERT_TRUE(got.isOk());
  EXPECT_EQ(got->version, 1);
  EXPECT_EQ(got->revision, 1);
  auto revisions = this->revisions("a");
  ASSERT_TRUE(revisions.isOk());
  EXPECT_EQ(revisions->size(), 1u);
}

TYPED_TEST(StoreContractTest, RevisionsFollowTheRecord) {
  ClusterRecord r = this->create("a", /*revision=*/1);
  r.phase = "no new revision";
  ASSERT_TRUE(this->store_->updateCluster(r).isOk());
  r = *this->store_->getCluster("a");
  r.revision = 2;
  r.spec.gpuNodes = 6;
  ASSERT_TRUE(this->store_->updateCluster(r).isOk());

  auto revisions = this->revisions("a");
  ASSERT_TRUE(revisions.isOk()) << revisions.status().toString();
  ASSERT_EQ(revisions->size(), 2u);
  EXPECT_EQ((*revisions)[0].number, 1);
  EXPECT_EQ((*revisions)[0].spec.gpuNodes, 2);
  EXPECT_EQ((*revisions)[1].number, 2);
  EXPECT_EQ((*revisions)[1].spec.gpuNodes, 6);

  r = *this->store_->getCluster("a");
  r.revision = 1;
  StatusOr<ClusterRecord> back = this->store_->updateCluster(r);
  ASSERT_FALSE(back.isOk());
  EXPECT_EQ(back.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(this->store_->getCluster("a")->revision, 2);
}

TYPED_TEST(StoreContractTest, RevisionHistoryKeepsAuthorMessageAndOutcome) {
  ClusterRecord r = this->create("a", /*revision=*/1);
  ASSERT_TRUE(this->store_->setRevisionState("a", 1, RevisionState::kApplied, "").isOk());
  r = *this->store_->getCluster("a");
  r.revision = 2;
  r.changeAuthor = "alice";
  r.changeMessage = "scale to 6 GPU nodes";
  r = *this->store_->updateCluster(r);
  r.revision = 3;
  r.changeMessage = "config set MinJobAge=60";
  ASSERT_TRUE(this->store_->updateCluster(r).isOk());
  ASSERT_TRUE(
      this->store_->setRevisionState("a", 3, RevisionState::kFailed, "slurmctld: fatal").isOk());

  auto revisions = this->revisions("a");
  ASSERT_TRUE(revisions.isOk()) << revisions.status().toString();
  ASSERT_EQ(revisions->size(), 3u);
  EXPECT_EQ((*revisions)[0].state, RevisionState::kApplied);
  // Revision 2 was never applied before 3 replaced it.
  EXPECT_EQ((*revisions)[1].state, RevisionState::kSuperseded);
  EXPECT_EQ((*revisions)[1].author, "alice");
  EXPECT_EQ((*revisions)[1].message, "scale to 6 GPU nodes");
  EXPECT_EQ((*revisions)[2].state, RevisionState::kFailed);
  EXPECT_EQ((*revisions)[2].error, "slurmctld: fatal");

  EXPECT_EQ(this->store_->setRevisionState("a", 9, RevisionState::kApplied, "").code(),
            Code::kNotFound);
  EXPECT_EQ(this->store_->setRevisionState("ghost", 1, RevisionState::kApplied, "").code(),
            Code::kNotFound);
}

TYPED_TEST(StoreContractTest, VolumesAreKeptByName) {
  Volume v{"data", "dataset", "/srv/data", false, 42, "default"};
  ASSERT_TRUE(this->store_->createVolume(v).isOk());
  EXPECT_EQ(this->store_->createVolume(v).status().code(), Code::kConflict);
  ASSERT_TRUE(this->store_->createVolume({"pfs", "pfs", "/var/lib/corral/volumes/pfs", true, 43, "default"}).isOk());
  auto got = this->store_->getVolume("data");
  ASSERT_TRUE(got.isOk());
  EXPECT_EQ(*got, v);
  auto all = this->store_->listVolumes();
  ASSERT_TRUE(all.isOk());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "data");
  EXPECT_EQ((*all)[1].name, "pfs");
  ASSERT_TRUE(this->store_->deleteVolume("data").isOk());
  EXPECT_EQ(this->store_->deleteVolume("data").code(), Code::kNotFound);
  EXPECT_EQ(this->store_->getVolume("data").status().code(), Code::kNotFound);
}

TYPED_TEST(StoreContractTest, CreateAtRevisionZeroRecordsNoRevision) {
  this->create("a", /*revision=*/0);
  auto revisions = this->revisions("a");
  ASSERT_TRUE(revisions.isOk());
  EXPECT_TRUE(revisions->empty());
  EXPECT_EQ(this->revisions("ghost").status().code(), Code::kNotFound);
}

TYPED_TEST(StoreContractTest, DeleteRemovesClusterEventsAndRevisions) {
  this->create("a");
  this->create("b");
  ASSERT_TRUE(this->store_->appendEvent(makeEvent("a", "Created", 1)).isOk());
  ASSERT_TRUE(this->store_->appendEvent(makeEvent("b", "Created", 2)).isOk());

  ASSERT_TRUE(this->store_->deleteCluster("a").isOk());
  EXPECT_THAT(this->names(), ElementsAre("b"));
  EXPECT_EQ(this->store_->getCluster("a").status().code(), Code::kNotFound);
  EXPECT_EQ(this->store_->deleteCluster("a").code(), Code::kNotFound);

  // A new cluster of the same name starts with a clean history.
  this->create("a", /*revision=*/0);
  StatusOr<std::vector<Event>> events = this->store_->listEvents("a", 10);
  ASSERT_TRUE(events.isOk());
  EXPECT_TRUE(events->empty());
  EXPECT_TRUE(this->revisions("a")->empty());
  // The other cluster kept its events.
  EXPECT_THAT(reasons(*this->store_->listEvents("b", 10)), ElementsAre("Created"));
}

TYPED_TEST(StoreContractTest, IdsAreNotReusedAfterDelete) {
  this->create("a");
  ClusterRecord b = this->create("b");
  ASSERT_TRUE(this->store_->deleteCluster("b").isOk());
  ClusterRecord c = this->create("c");
  EXPECT_GT(c.id, b.id);
  ClusterRecord b2 = this->create("b");
  EXPECT_GT(b2.id, c.id);
}

TYPED_TEST(StoreContractTest, EventsAreNewestLimitOldestFirst) {
  this->create("a");
  this->create("b");
  for (int i = 1; i <= 5; ++i) {
    ASSERT_TRUE(this->store_->appendEvent(makeEvent("a", "E" + std::to_string(i), i)).isOk());
    ASSERT_TRUE(this->store_->appendEvent(makeEvent("b", "other", i)).isOk());
  }
  StatusOr<std::vector<Event>> last3 = this->store_->listEvents("a", 3);
  ASSERT_TRUE(last3.isOk()) << last3.status().toString();
  EXPECT_THAT(reasons(*last3), ElementsAre("E3", "E4", "E5"));
  EXPECT_LT((*last3)[0].id, (*last3)[1].id);
  EXPECT_LT((*last3)[1].id, (*last3)[2].id);
  EXPECT_EQ((*last3)[2].cluster, "a");
  EXPECT_EQ((*last3)[2].time, 5);
  EXPECT_EQ((*last3)[2].type, "Normal");
  EXPECT_EQ((*last3)[2].message, "E5 happened");

  StatusOr<std::vector<Event>> all = this->store_->listEvents("a", 100);
  ASSERT_TRUE(all.isOk());
  EXPECT_THAT(reasons(*all), ElementsAre("E1", "E2", "E3", "E4", "E5"));
  EXPECT_EQ(this->store_->listEvents("a", 1)->front().reason, "E5");
}

TYPED_TEST(StoreContractTest, EventsNeedAnExistingCluster) {
  Status st = this->store_->appendEvent(makeEvent("ghost", "Created", 1));
  EXPECT_EQ(st.code(), Code::kNotFound);
  EXPECT_EQ(this->store_->listEvents("ghost", 10).status().code(), Code::kNotFound);
}

TYPED_TEST(StoreContractTest, EventLimitMustBePositive) {
  this->create("a");
  EXPECT_EQ(this->store_->listEvents("a", 0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(this->store_->listEvents("a", -1).status().code(), Code::kInvalidArgument);
}

TYPED_TEST(StoreContractTest, SequencesCountFromOneIndependently) {
  EXPECT_EQ(*this->store_->nextSequence("subnet"), 1);
  EXPECT_EQ(*this->store_->nextSequence("subnet"), 2);
  EXPECT_EQ(*this->store_->nextSequence("node"), 1);
  EXPECT_EQ(*this->store_->nextSequence("subnet"), 3);
  EXPECT_EQ(this->store_->nextSequence("").status().code(), Code::kInvalidArgument);
}

TYPED_TEST(StoreContractTest, ConcurrentSequencesAreDistinct) {
  constexpr int kThreads = 4;
  constexpr int kEach = 20;
  std::vector<std::vector<int64_t>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        StatusOr<int64_t> v = this->store_->nextSequence("n");
        if (v.isOk()) got[t].push_back(*v);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<int64_t> all;
  for (const auto& values : got) all.insert(values.begin(), values.end());
  EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kEach));
  EXPECT_EQ(*all.begin(), 1);
  EXPECT_EQ(*all.rbegin(), kThreads * kEach);
}

// Read-modify-write with retry on Conflict loses no increment: the version
// check is a real compare-and-swap.
TYPED_TEST(StoreContractTest, ConcurrentUpdatesLoseNothing) {
  this->create("a");
  constexpr int kThreads = 4;
  constexpr int kEach = 10;
  std::atomic<int> conflicts{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        while (true) {
          StatusOr<ClusterRecord> r = this->store_->getCluster("a");
          if (!r.isOk()) {
            ++failures;
            break;
          }
          r->appliedRevision += 1;
          StatusOr<ClusterRecord> w = this->store_->updateCluster(*r);
          if (w.isOk()) break;
          if (w.status().code() != Code::kConflict) {
            ++failures;
            break;
          }
          ++conflicts;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  StatusOr<ClusterRecord> r = this->store_->getCluster("a");
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(r->appliedRevision, kThreads * kEach);
  EXPECT_EQ(r->version, 1 + kThreads * kEach);
}

// Spec and status are written and versioned apart: the reconciler's status
// writes and the API's spec writes neither conflict nor undo each other.
TYPED_TEST(StoreContractTest, SpecAndStatusAreWrittenApart) {
  ClusterRecord read = this->create("a");
  EXPECT_EQ(read.statusVersion, 1);

  ClusterRecord progress = read;
  progress.phase = "starting pods";
  progress.spec.gpuNodes = 9;  // A stale or stray spec value in a status write is ignored.
  StatusOr<ClusterRecord> s = this->store_->writeCluster(progress, RecordPart::kStatus);
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  EXPECT_EQ(s->statusVersion, 2);
  EXPECT_EQ(s->version, 1);
  EXPECT_EQ(s->spec.gpuNodes, 2);

  ClusterRecord change = read;  // Read before the status write: its statusVersion is stale.
  change.spec.gpuNodes = 3;
  change.revision = 2;
  change.changeAuthor = "alice";
  change.phase = "stale";  // Ignored by a spec write.
  StatusOr<ClusterRecord> c = this->store_->writeCluster(change, RecordPart::kSpec);
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->version, 2);
  EXPECT_EQ(c->statusVersion, 2);
  EXPECT_EQ(c->phase, "starting pods");

  StatusOr<ClusterRecord> got = this->store_->getCluster("a");
  ASSERT_TRUE(got.isOk());
  EXPECT_EQ(got->spec.gpuNodes, 3);
  EXPECT_EQ(got->revision, 2);
  EXPECT_EQ(got->phase, "starting pods");
  EXPECT_EQ(got->version, 2);
  EXPECT_EQ(got->statusVersion, 2);
  auto history = this->revisions("a");
  ASSERT_TRUE(history.isOk());
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[1].author, "alice");

  // A stale status write conflicts; so does a write of both with either stale.
  EXPECT_EQ(this->store_->writeCluster(progress, RecordPart::kStatus).status().code(),
            Code::kConflict);
  ClusterRecord both = *got;
  both.statusVersion -= 1;
  EXPECT_EQ(this->store_->writeCluster(both, RecordPart::kAll).status().code(), Code::kConflict);
  both = *got;
  both.version -= 1;
  EXPECT_EQ(this->store_->writeCluster(both, RecordPart::kAll).status().code(), Code::kConflict);
  both = *got;
  both.status = ClusterStatus::kTerminating;
  StatusOr<ClusterRecord> all = this->store_->writeCluster(both, RecordPart::kAll);
  ASSERT_TRUE(all.isOk()) << all.status().toString();
  EXPECT_EQ(all->version, 3);
  EXPECT_EQ(all->statusVersion, 3);
  // A status write cannot make a revision.
  ClusterRecord sneaky = *all;
  sneaky.revision = 7;
  ASSERT_TRUE(this->store_->writeCluster(sneaky, RecordPart::kStatus).isOk());
  EXPECT_EQ(this->store_->getCluster("a")->revision, 2);
  EXPECT_EQ(this->revisions("a")->size(), 2u);
}

TYPED_TEST(StoreContractTest, UpdatedAtIsTheNewestOfEitherWrite) {
  ClusterRecord r = this->create("a");
  r.updatedAt = 2000000000;
  ASSERT_TRUE(this->store_->writeCluster(r, RecordPart::kSpec).isOk());
  ClusterRecord older = *this->store_->getCluster("a");
  older.updatedAt = 1900000000;  // A writer whose clock read earlier.
  older.phase = "x";
  ASSERT_TRUE(this->store_->writeCluster(older, RecordPart::kStatus).isOk());
  EXPECT_EQ(this->store_->getCluster("a")->updatedAt, 2000000000);
}

TYPED_TEST(StoreContractTest, RevisionsSayWhetherTheyAreRollbacks) {
  ClusterRecord r = this->create("a");
  r.revision = 2;
  r.spec.gpuNodes = 5;
  ASSERT_TRUE(this->store_->writeCluster(r, RecordPart::kSpec).isOk());
  r = *this->store_->getCluster("a");
  r.revision = 3;
  r.spec.gpuNodes = 2;
  r.changeAuthor = "corral";
  r.changeRollback = true;
  ASSERT_TRUE(this->store_->writeCluster(r, RecordPart::kSpec).isOk());
  auto history = this->revisions("a");
  ASSERT_TRUE(history.isOk());
  ASSERT_EQ(history->size(), 3u);
  EXPECT_FALSE((*history)[0].rollback);
  EXPECT_FALSE((*history)[1].rollback);
  EXPECT_TRUE((*history)[2].rollback);
  EXPECT_TRUE(this->store_->getCluster("a")->changeRollback);
}

TYPED_TEST(StoreContractTest, EventsAreFoundByNodeAndRevision) {
  this->create("a");
  this->create("b");
  auto add = [&](const std::string& cluster, const std::string& reason, const std::string& node,
                 int64_t revision) {
    Event e = makeEvent(cluster, reason, 1);
    e.node = node;
    e.revision = revision;
    ASSERT_TRUE(this->store_->appendEvent(e).isOk());
  };
  add("a", "ChangeRequested", "", 2);
  add("a", "PodRecreated", "slinky-1", 2);
  add("a", "GpuXid", "slinky-1", 0);
  add("a", "PodRestarted", "slinky-0", 0);
  add("b", "GpuXid", "slinky-1", 0);
  auto of = [&](const std::string& node, int64_t revision, int limit = 100) {
    auto events = this->store_->findEvents("a", limit, EventFilter{node, revision});
    EXPECT_TRUE(events.isOk()) << events.status().toString();
    return events.isOk() ? reasons(*events) : std::vector<std::string>{};
  };
  EXPECT_THAT(of("slinky-1", 0), ElementsAre("PodRecreated", "GpuXid"));
  EXPECT_THAT(of("", 2), ElementsAre("ChangeRequested", "PodRecreated"));
  EXPECT_THAT(of("slinky-1", 2), ElementsAre("PodRecreated"));
  EXPECT_THAT(of("slinky-1", 0, 1), ElementsAre("GpuXid")) << "the newest of the node's";
  EXPECT_THAT(of("", 0), ElementsAre("ChangeRequested", "PodRecreated", "GpuXid", "PodRestarted"));
  EXPECT_THAT(of("nope", 0), ElementsAre());
  auto events = this->store_->findEvents("a", 100, EventFilter{"slinky-0", 0});
  ASSERT_TRUE(events.isOk());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].node, "slinky-0");
  EXPECT_EQ((*events)[0].revision, 0);
}

}  // namespace
}  // namespace corral
