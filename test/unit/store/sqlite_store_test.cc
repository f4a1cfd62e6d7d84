// What only the SQLite store has to get right: durability across reopen, the
// schema and its version, WAL, errors from the file system and from other
// connections. The behaviour it shares with `FakeStore` is in
// store_contract_test.cc.

#include "store/sqlite_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace corral {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A directory under /var/tmp (not /tmp, which may be a small tmpfs), removed
// with everything in it when the test ends.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/var/tmp/corral_sqlite_store_test.XXXXXX";
    const char* dir = mkdtemp(tmpl);
    if (dir != nullptr) path_ = dir;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

ClusterRecord makeRecord(const std::string& name, int64_t revision = 1) {
  ClusterRecord record;
  record.spec.name = name;
  record.revision = revision;
  record.createdAt = 100;
  record.updatedAt = 100;
  return record;
}

// A second, raw connection to the database, to look behind the store's back
// and to tamper with what it wrote.
class RawDb {
 public:
  explicit RawDb(const std::string& path) { sqlite3_open(path.c_str(), &db_); }
  ~RawDb() { sqlite3_close(db_); }
  // The first column of the first row, as text ("" if none).
  std::string query(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    std::string out;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sqlite3_errmsg(db_) << " in " << sql;
      return out;
    }
    if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
    return out;
  }
  void exec(const std::string& sql) {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      ADD_FAILURE() << (error != nullptr ? error : "?") << " in " << sql;
    }
    sqlite3_free(error);
  }

 private:
  sqlite3* db_ = nullptr;
};

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.path().empty()) << "mkdtemp failed"; }

  std::unique_ptr<SqliteStore> open() {
    StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::open(path_);
    EXPECT_TRUE(store.isOk()) << store.status().toString();
    return store.isOk() ? std::move(store).value() : nullptr;
  }

  TempDir dir_;
  std::string path_ = dir_.path() + "/corral.db";
};

TEST_F(SqliteStoreTest, FactoryOpensAStore) {
  StatusOr<std::unique_ptr<Store>> store = openSqliteStore(path_);
  ASSERT_TRUE(store.isOk()) << store.status().toString();
  EXPECT_TRUE((*store)->createCluster(makeRecord("a")).isOk());
  EXPECT_TRUE(std::filesystem::exists(path_));
}

TEST_F(SqliteStoreTest, EverythingSurvivesReopen) {
  {
    auto store = open();
    ASSERT_NE(store, nullptr);
    ClusterRecord a = *store->createCluster(makeRecord("a"));
    a.status = ClusterStatus::kRunning;
    a.revision = 2;
    a.spec.cpuNodes = 3;
    ASSERT_TRUE(store->updateCluster(a).isOk());
    ASSERT_TRUE(store->appendEvent({0, "a", 5, "Normal", "Created", "made", "", 0}).isOk());
    ASSERT_TRUE(store->appendEvent({0, "a", 6, "Warning", "Slow", "slow", "", 0}).isOk());
    EXPECT_EQ(*store->nextSequence("subnet"), 1);
    EXPECT_EQ(*store->nextSequence("subnet"), 2);
  }
  auto store = open();
  ASSERT_NE(store, nullptr);
  StatusOr<ClusterRecord> a = store->getCluster("a");
  ASSERT_TRUE(a.isOk()) << a.status().toString();
  EXPECT_EQ(a->status, ClusterStatus::kRunning);
  EXPECT_EQ(a->version, 2);
  EXPECT_EQ(a->spec.cpuNodes, 3);
  StatusOr<std::vector<Event>> events = store->listEvents("a", 10);
  ASSERT_TRUE(events.isOk());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[1].type, "Warning");
  EXPECT_EQ(*store->nextSequence("subnet"), 3);
  auto revisions = store->listRevisions("a");
  ASSERT_TRUE(revisions.isOk());
  ASSERT_EQ(revisions->size(), 2u);
  EXPECT_EQ((*revisions)[1].spec.cpuNodes, 3);
}

TEST_F(SqliteStoreTest, IdsAreNotReusedAfterDeletingTheNewestAndReopening) {
  int64_t deletedId = 0;
  {
    auto store = open();
    ASSERT_NE(store, nullptr);
    store->createCluster(makeRecord("a")).value();
    deletedId = store->createCluster(makeRecord("b"))->id;
    ASSERT_TRUE(store->deleteCluster("b").isOk());
  }
  auto store = open();
  ASSERT_NE(store, nullptr);
  EXPECT_GT(store->createCluster(makeRecord("c"))->id, deletedId);
}

TEST_F(SqliteStoreTest, UsesWalAndRecordsTheSchemaVersion) {
  ASSERT_NE(open(), nullptr);
  RawDb raw(path_);
  EXPECT_EQ(raw.query("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw.query("PRAGMA user_version"), std::to_string(SqliteStore::kSchemaVersion));
  EXPECT_EQ(raw.query("SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master "
                      "WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name)"),
            "accounts,clusters,events,revisions,sequences,tokens,volumes");
}

TEST_F(SqliteStoreTest, ReopeningDoesNotMigrateAgain) {
  {
    auto store = open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->createCluster(makeRecord("a")).isOk());
  }
  auto store = open();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->getCluster("a").isOk());
}

TEST_F(SqliteStoreTest, RefusesANewerSchema) {
  ASSERT_NE(open(), nullptr);
  RawDb(path_).exec("PRAGMA user_version = 99");
  StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::open(path_);
  ASSERT_FALSE(store.isOk());
  EXPECT_EQ(store.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("schema version 99"));
  EXPECT_THAT(store.status().message(), HasSubstr("upgrade corral"));
}

TEST_F(SqliteStoreTest, OpenInAMissingDirectoryFailsClearly) {
  const std::string path = dir_.path() + "/no/such/dir/corral.db";
  StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::open(path);
  ASSERT_FALSE(store.isOk());
  EXPECT_EQ(store.status().code(), Code::kInternal);
  EXPECT_THAT(store.status().message(), HasSubstr(path));
  EXPECT_THAT(store.status().message(), HasSubstr("directory exists"));
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/no"));
}

TEST_F(SqliteStoreTest, OpenOfANonDatabaseFileFails) {
  std::ofstream(path_) << "this is not a database, but it is long enough to look like a header "
                          "to anyone who does not check the magic string at its start\n";
  StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::open(path_);
  ASSERT_FALSE(store.isOk());
  EXPECT_EQ(store.status().code(), Code::kInternal);
  EXPECT_THAT(store.status().message(), HasSubstr("not a database"));
}

TEST_F(SqliteStoreTest, CorruptRecordIsInternalAndNamesTheCluster) {
  auto store = open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->createCluster(makeRecord("a")).isOk());
  RawDb(path_).exec("UPDATE clusters SET record = '{\"spec\": 5' WHERE name = 'a'");
  StatusOr<ClusterRecord> a = store->getCluster("a");
  ASSERT_FALSE(a.isOk());
  EXPECT_EQ(a.status().code(), Code::kInternal);
  EXPECT_THAT(a.status().message(), HasSubstr("cluster \"a\" is corrupt"));
  EXPECT_EQ(store->listClusters().status().code(), Code::kInternal);
  // A corrupt record can still be deleted.
  EXPECT_TRUE(store->deleteCluster("a").isOk());
}

TEST_F(SqliteStoreTest, ColumnsAreAuthoritativeOverTheJsonCopy) {
  auto store = open();
  ASSERT_NE(store, nullptr);
  ClusterRecord a = *store->createCluster(makeRecord("a"));
  RawDb raw(path_);
  EXPECT_EQ(raw.query("SELECT json_extract(record, '$.id') FROM clusters"), std::to_string(a.id));
  EXPECT_EQ(raw.query("SELECT json_extract(record, '$.version') FROM clusters"), "1");
  ASSERT_TRUE(store->updateCluster(a).isOk());
  EXPECT_EQ(raw.query("SELECT version FROM clusters"), "2");
  EXPECT_EQ(raw.query("SELECT json_extract(record, '$.version') FROM clusters"), "2");
}

TEST_F(SqliteStoreTest, RevisionRowsCarryTheSpecAndTime) {
  auto store = open();
  ASSERT_NE(store, nullptr);
  ClusterRecord a = *store->createCluster(makeRecord("a", /*revision=*/1));
  a.revision = 3;  // A jump records only the revision reached.
  a.spec.gpuNodes = 9;
  a.updatedAt = 200;
  ASSERT_TRUE(store->updateCluster(a).isOk());
  RawDb raw(path_);
  EXPECT_EQ(raw.query("SELECT group_concat(revision, ',') FROM revisions"), "1,3");
  EXPECT_EQ(raw.query("SELECT created_at FROM revisions WHERE revision = 3"), "200");
  EXPECT_EQ(raw.query("SELECT json_extract(spec, '$.gpuNodes') FROM revisions WHERE revision = 3"),
            "9");
}

TEST_F(SqliteStoreTest, TwoConnectionsShareOneSequence) {
  auto first = open();
  auto second = open();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  std::vector<int64_t> a;
  std::vector<int64_t> b;
  std::thread ta([&] {
    for (int i = 0; i < 25; ++i) a.push_back(first->nextSequence("n").value());
  });
  std::thread tb([&] {
    for (int i = 0; i < 25; ++i) b.push_back(second->nextSequence("n").value());
  });
  ta.join();
  tb.join();
  std::set<int64_t> all(a.begin(), a.end());
  all.insert(b.begin(), b.end());
  EXPECT_EQ(all.size(), 50u);
  EXPECT_EQ(*all.rbegin(), 50);
}

TEST_F(SqliteStoreTest, ConflictingUpdateThroughAnotherConnection) {
  auto first = open();
  auto second = open();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ClusterRecord a = *first->createCluster(makeRecord("a"));
  ClusterRecord viaSecond = *second->getCluster("a");
  ASSERT_TRUE(second->updateCluster(viaSecond).isOk());
  StatusOr<ClusterRecord> stale = first->updateCluster(a);
  ASSERT_FALSE(stale.isOk());
  EXPECT_EQ(stale.status().code(), Code::kConflict);
}

TEST_F(SqliteStoreTest, LockedDatabaseIsUnavailableAndChangesNothing) {
  StatusOr<std::unique_ptr<SqliteStore>> opened =
      SqliteStore::open(path_, std::chrono::milliseconds(20));
  ASSERT_TRUE(opened.isOk()) << opened.status().toString();
  std::unique_ptr<SqliteStore> store = std::move(opened).value();
  ASSERT_TRUE(store->createCluster(makeRecord("a")).isOk());

  RawDb raw(path_);
  raw.exec("BEGIN IMMEDIATE");  // Another process holds the write lock.
  StatusOr<ClusterRecord> blocked = store->createCluster(makeRecord("b"));
  ASSERT_FALSE(blocked.isOk());
  EXPECT_EQ(blocked.status().code(), Code::kUnavailable);
  EXPECT_THAT(blocked.status().message(), HasSubstr("retry"));
  EXPECT_EQ(store->nextSequence("n").status().code(), Code::kUnavailable);
  // WAL: readers are not blocked by the writer.
  EXPECT_TRUE(store->getCluster("a").isOk());
  raw.exec("ROLLBACK");

  EXPECT_TRUE(store->createCluster(makeRecord("b")).isOk());
  EXPECT_EQ(*store->nextSequence("n"), 1);
}

TEST_F(SqliteStoreTest, ListRevisionsOfAMissingClusterIsNotFound) {
  auto store = open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->listRevisions("ghost").status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace corral
