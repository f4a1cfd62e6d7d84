// A store written by an earlier corral opens, migrates and serves everything
// it held, unchanged: test/data/store-v4.sql was dumped from a database that
// SqliteStore wrote at schema version 4, and store-v4-expected.json is what
// that corral read back from it (every cluster with its revisions and
// events, every volume, account and token).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "model/spec_json.h"
#include "store/sqlite_store.h"

namespace corral {
namespace {

using nlohmann::json;

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every member of `want` is in `got` with the same value (arrays element by
// element, of the same length); `got` may have members `want` lacks, which
// is what a migration adds.
void expectContains(const json& want, const json& got, const std::string& path) {
  if (want.is_object()) {
    ASSERT_TRUE(got.is_object()) << path;
    for (auto it = want.begin(); it != want.end(); ++it) {
      ASSERT_TRUE(got.contains(it.key())) << path << "." << it.key() << " is missing";
      expectContains(*it, got[it.key()], path + "." + it.key());
    }
  } else if (want.is_array()) {
    ASSERT_TRUE(got.is_array()) << path;
    ASSERT_EQ(want.size(), got.size()) << path;
    for (size_t i = 0; i < want.size(); ++i)
      expectContains(want[i], got[i], path + "[" + std::to_string(i) + "]");
  } else {
    EXPECT_EQ(want, got) << path;
  }
}

class StoreMigrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/var/tmp/corral_store_migration.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    db_ = dir_ + "/corral.db";
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
    std::string dump = readText(std::string(CORRAL_TEST_DATA) + "/store-v4.sql");
    ASSERT_FALSE(dump.empty());
    char* error = nullptr;
    int rc = sqlite3_exec(db, dump.c_str(), nullptr, nullptr, &error);
    std::string message = error ? error : "";
    sqlite3_free(error);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK) << message;
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  // What a corral reads back from the store, in the same shape as the
  // expected file.
  static json contents(Store& store) {
    json out;
    auto clusters = store.listClusters();
    EXPECT_TRUE(clusters.isOk()) << clusters.status().toString();
    if (!clusters.isOk()) return out;
    for (const auto& c : *clusters) {
      json revisions = json::array();
      auto history = store.listRevisions(c.spec.name);
      EXPECT_TRUE(history.isOk());
      if (history.isOk())
        for (const auto& r : *history) revisions.push_back(revisionToJson(r));
      json events = json::array();
      auto log = store.listEvents(c.spec.name, 1000);
      EXPECT_TRUE(log.isOk());
      if (log.isOk())
        for (const auto& e : *log) events.push_back(eventToJson(e));
      out["clusters"].push_back(
          {{"record", recordToJson(c)}, {"revisions", revisions}, {"events", events}});
    }
    auto volumes = store.listVolumes();
    auto accounts = store.listAccounts();
    auto tokens = store.listTokens();
    EXPECT_TRUE(volumes.isOk() && accounts.isOk() && tokens.isOk());
    if (!volumes.isOk() || !accounts.isOk() || !tokens.isOk()) return out;
    for (const auto& v : *volumes)
      out["volumes"].push_back({{"name", v.name}, {"type", v.type}, {"hostPath", v.hostPath},
                                {"managed", v.managed}, {"createdAt", v.createdAt},
                                {"project", v.project}});
    for (const auto& a : *accounts) out["accounts"].push_back(accountToJson(a));
    for (const auto& t : *tokens)
      out["tokens"].push_back({{"id", t.id}, {"user", t.user}, {"hash", t.hash},
                               {"description", t.description}, {"createdAt", t.createdAt}});
    return out;
  }

  static int userVersion(const std::string& path) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &stmt, nullptr);
    int version = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int(stmt, 0) : -1;
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return version;
  }

  std::string dir_;
  std::string db_;
};

TEST_F(StoreMigrationTest, AVersion4StoreServesEverythingUnchanged) {
  ASSERT_EQ(userVersion(db_), 4);
  json expected = json::parse(readText(std::string(CORRAL_TEST_DATA) + "/store-v4-expected.json"));
  {
    auto store = SqliteStore::open(db_);
    ASSERT_TRUE(store.isOk()) << store.status().toString();
    json got = contents(**store);
    expectContains(expected, got, "");
    EXPECT_EQ(got["clusters"].size(), 2u);
  }
  EXPECT_EQ(userVersion(db_), SqliteStore::kSchemaVersion);
  // Opening again finds the schema in place and changes nothing.
  auto again = SqliteStore::open(db_);
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  expectContains(expected, contents(**again), "");
}

TEST_F(StoreMigrationTest, WhatWasOnlyInWordsBecomesFields) {
  auto opened = SqliteStore::open(db_);
  ASSERT_TRUE(opened.isOk()) << opened.status().toString();
  Store& store = **opened;
  // Revision 4 of alpha was corral's rollback; the others were people's.
  auto history = store.listRevisions("alpha");
  ASSERT_TRUE(history.isOk());
  ASSERT_EQ(history->size(), 6u);
  for (const auto& r : *history) EXPECT_EQ(r.rollback, r.number == 4) << r.number;
  auto alpha = store.getCluster("alpha");
  ASSERT_TRUE(alpha.isOk());
  EXPECT_FALSE(alpha->changeRollback) << "its newest revision (6) is alice's";
  EXPECT_EQ(alpha->version, 9) << "the spec keeps its version";
  EXPECT_EQ(alpha->statusVersion, 1);
  EXPECT_TRUE(alpha->changeForce);
  EXPECT_EQ(alpha->phase, "draining slinky-1");
  EXPECT_EQ(alpha->nodes.size(), 3u);

  // Events say which node and revision they are about.
  auto events = store.listEvents("alpha", 100);
  ASSERT_TRUE(events.isOk());
  auto of = [&](const std::string& reason) {
    std::vector<std::pair<std::string, int64_t>> out;
    for (const auto& e : *events)
      if (e.reason == reason) out.push_back({e.node, e.revision});
    return out;
  };
  using P = std::pair<std::string, int64_t>;
  EXPECT_THAT(of("CreateRequested"), ::testing::ElementsAre(P{"", 1}));
  EXPECT_THAT(of("Running"), ::testing::ElementsAre(P{"", 0}));
  EXPECT_THAT(of("ChangeRequested"), ::testing::ElementsAre(P{"", 2}, P{"", 3}, P{"", 5}));
  EXPECT_THAT(of("Applied"), ::testing::ElementsAre(P{"", 2}));
  EXPECT_THAT(of("ChangeFailed"), ::testing::ElementsAre(P{"", 3}));
  EXPECT_THAT(of("RolledBack"), ::testing::ElementsAre(P{"", 4}));
  EXPECT_THAT(of("PodRecreated"), ::testing::ElementsAre(P{"slinky-1", 0}));
  EXPECT_THAT(of("PodRestarted"), ::testing::ElementsAre(P{"cpu-workers-0", 0}));
  EXPECT_THAT(of("XidInjected"), ::testing::ElementsAre(P{"slinky-0", 0}));
  EXPECT_THAT(of("GpuXid"), ::testing::ElementsAre(P{"slinky-0", 0}));
  EXPECT_THAT(of("JobsCancelled"), ::testing::ElementsAre(P{"", 0}));
  auto node = store.findEvents("alpha", 100, EventFilter{"slinky-0", 0});
  ASSERT_TRUE(node.isOk());
  EXPECT_EQ(node->size(), 2u);
}

TEST_F(StoreMigrationTest, AMigratedStoreTakesNewWritesWithoutReusingIds) {
  auto opened = SqliteStore::open(db_);
  ASSERT_TRUE(opened.isOk()) << opened.status().toString();
  Store& store = **opened;
  // A status write and a spec write from the same read both land.
  ClusterRecord read = *store.getCluster("alpha");
  ClusterRecord progress = read;
  progress.phase = "waiting for slinky-1's jobs";
  ASSERT_TRUE(store.writeCluster(progress, RecordPart::kStatus).isOk());
  ClusterRecord change = read;
  change.revision = 7;
  change.spec.gpuNodes = 2;
  change.changeMessage = "scale slinky to 2";
  auto changed = store.writeCluster(change, RecordPart::kSpec);
  ASSERT_TRUE(changed.isOk()) << changed.status().toString();
  EXPECT_EQ(changed->phase, "waiting for slinky-1's jobs");
  EXPECT_EQ(changed->version, 10);
  EXPECT_EQ(changed->nodes.size(), 3u);
  EXPECT_EQ(store.listRevisions("alpha")->back().number, 7);

  // Counters and ids carry on from where the old corral left them.
  EXPECT_EQ(*store.nextSequence("subnet"), 4);
  ClusterRecord gamma;
  gamma.spec.name = "gamma";
  gamma.revision = 1;
  auto created = store.createCluster(gamma);
  ASSERT_TRUE(created.isOk());
  EXPECT_EQ(created->id, 3);
  auto token = store.createToken({0, "alice", "0123456789abcdef", "new", 1764600000});
  ASSERT_TRUE(token.isOk()) << token.status().toString();
  EXPECT_EQ(token->id, 4) << "token 3 was deleted; its id is not reused";
  EXPECT_EQ(store.getCluster("beta")->status, ClusterStatus::kTerminated);
}

}  // namespace
}  // namespace corral
