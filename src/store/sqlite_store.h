#pragma once

// `SqliteStore`: the embedded `Store`, one SQLite database file.
//
// Layout (the schema version is kept in `PRAGMA user_version` so that a later
// corral can migrate it step by step; see kMigrations):
//   clusters(id, name UNIQUE, version, record JSON, created_at, updated_at,
//            status_version, status JSON)   (apart since version 5)
//   revisions(cluster_id, revision, spec JSON, author, created_at, message,
//             state, error, rollback)
//   events(id, cluster, time, type, reason, message, node, revision)
//   sequences(name, value)
//   volumes(name, record JSON)              (version 3)
//   accounts(name, record JSON), tokens(id, hash UNIQUE, user, …)  (version 4)
// A cluster's desired part is `record`, its observed part `status` (see
// `ClusterRecord`), each with its version. The `id`, `version`,
// `status_version` and `updated_at` columns are authoritative; the same
// numbers inside the JSON are a copy. Ids come from AUTOINCREMENT and are never reused,
// not even after the newest cluster is deleted.
//
// The database runs in WAL mode with a busy timeout, so a second process (the
// CLI reading, say) waits instead of failing; a write that still cannot get
// the lock reports Unavailable. Every write that touches more than one row
// runs in one transaction, so a failure leaves nothing half done.

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "corral/spec.h"
#include "corral/status.h"
#include "corral/store.h"

struct sqlite3;
struct sqlite3_stmt;

namespace corral {

class SqliteStore : public Store {
 public:
  // The schema version this build writes and the newest it can read. A
  // database with a newer version is refused rather than misread.
  static constexpr int kSchemaVersion = 5;

  // How long a statement waits for another connection's lock before the
  // call fails with Unavailable.
  static constexpr std::chrono::milliseconds kDefaultBusyTimeout{5000};

  // Opens (creating if needed) the database at `path` and migrates its schema
  // to `kSchemaVersion`. The parent directory must exist; Internal if the file
  // cannot be opened or is not a corral database, FailedPrecondition if a
  // newer corral wrote it.
  static StatusOr<std::unique_ptr<SqliteStore>> open(
      const std::string& path, std::chrono::milliseconds busyTimeout = kDefaultBusyTimeout);

  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  // The `Store` contract, with these specifics, shared with `FakeStore`:
  // - an empty cluster name is InvalidArgument;
  // - `createCluster` records revision `record.revision` when it is above 0;
  // - `writeCluster` follows `applyWrite` (src/model/record.h): Conflict
  //   when the stored cluster has another `id` (it was deleted and created
  //   again) or the written part another version; it records a revision
  //   whenever a spec write raises `record.revision` and is InvalidArgument
  //   when it would lower it;
  // - `deleteCluster` also removes the cluster's revisions;
  // - `appendEvent` and `findEvents` are NotFound for a cluster that does not
  //   exist, so that no orphaned event outlives its cluster and turns up in
  //   the log of a later cluster of the same name; `findEvents` is
  //   InvalidArgument when `limit` is not positive.
  StatusOr<ClusterRecord> createCluster(ClusterRecord record) override;
  StatusOr<ClusterRecord> getCluster(const std::string& name) override;
  StatusOr<std::vector<ClusterRecord>> listClusters() override;
  StatusOr<ClusterRecord> writeCluster(const ClusterRecord& record, RecordPart part) override;
  Status deleteCluster(const std::string& name) override;
  Status appendEvent(const Event& event) override;
  StatusOr<std::vector<Event>> findEvents(const std::string& cluster, int limit,
                                          const EventFilter& filter) override;
  StatusOr<int64_t> nextSequence(const std::string& name) override;
  StatusOr<std::vector<Revision>> listRevisions(const std::string& cluster) override;
  StatusOr<Volume> createVolume(const Volume& volume) override;
  StatusOr<Volume> getVolume(const std::string& name) override;
  StatusOr<std::vector<Volume>> listVolumes() override;
  Status deleteVolume(const std::string& name) override;
  StatusOr<Account> createAccount(const Account& account) override;
  StatusOr<Account> getAccount(const std::string& name) override;
  StatusOr<std::vector<Account>> listAccounts() override;
  Status deleteAccount(const std::string& name) override;
  StatusOr<ApiToken> createToken(const ApiToken& token) override;
  StatusOr<ApiToken> findToken(const std::string& hash) override;
  StatusOr<std::vector<ApiToken>> listTokens() override;
  Status deleteToken(int64_t id) override;
  Status setRevisionState(const std::string& cluster, int64_t revision, RevisionState state,
                          const std::string& error) override;

 private:
  class Statement;
  class Transaction;

  SqliteStore(sqlite3* db, std::string path);

  Status configure(std::chrono::milliseconds busyTimeout);
  Status migrate();
  Status exec(const char* sql);
  // Inserts `record`'s revision row (spec, author, message) in the caller's
  // transaction and supersedes older pending ones.
  Status insertRevision(int64_t clusterId, const ClusterRecord& record);
  StatusOr<Volume> parseVolume(const std::string& text) const;
  // A cached prepared statement for `sql`; the cache owns it.
  StatusOr<sqlite3_stmt*> prepare(const char* sql);
  Status error(int rc, const std::string& what) const;
  // The record in a row of kSelectCluster's columns (id, version,
  // status_version, record, status, updated_at).
  StatusOr<ClusterRecord> readRecord(Statement& row, const std::string& name) const;
  // The cluster named `name`, read under the caller's lock.
  StatusOr<ClusterRecord> selectCluster(const std::string& name);
  // Writes both parts of `record` over its row, versions as given.
  Status writeParts(const ClusterRecord& record);

  // Serialises every use of `db_` and `statements_`: a SQLite connection and
  // its statements must not be used by two threads at once.
  std::mutex mu_;
  sqlite3* db_;
  const std::string path_;
  std::unordered_map<std::string, sqlite3_stmt*> statements_;
};

}  // namespace corral
