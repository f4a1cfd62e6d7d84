#include "store/sqlite_store.h"

#include <sqlite3.h>

#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "model/record.h"
#include "model/spec_json.h"

namespace corral {

namespace {

using nlohmann::json;

// `kMigrations[v]` takes a database from schema version `v` to `v + 1`. A
// later schema appends an entry; an existing one never changes, because
// databases in the field have already run it.
constexpr const char* kMigrations[] = {
    // 0 -> 1: the first schema.
    R"sql(
      CREATE TABLE clusters (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL UNIQUE,
        version INTEGER NOT NULL,
        record TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE TABLE revisions (
        cluster_id INTEGER NOT NULL,
        revision INTEGER NOT NULL,
        spec TEXT NOT NULL,
        author TEXT NOT NULL DEFAULT '',
        created_at INTEGER NOT NULL,
        PRIMARY KEY (cluster_id, revision)
      );
      CREATE TABLE events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        cluster TEXT NOT NULL,
        time INTEGER NOT NULL,
        type TEXT NOT NULL,
        reason TEXT NOT NULL,
        message TEXT NOT NULL
      );
      CREATE INDEX events_by_cluster ON events (cluster, id);
      CREATE TABLE sequences (
        name TEXT PRIMARY KEY,
        value INTEGER NOT NULL
      );
    )sql",
    // 1 -> 2: revision history says what each change was and how it ended.
    R"sql(
      ALTER TABLE revisions ADD COLUMN message TEXT NOT NULL DEFAULT '';
      ALTER TABLE revisions ADD COLUMN state TEXT NOT NULL DEFAULT 'Pending';
      ALTER TABLE revisions ADD COLUMN error TEXT NOT NULL DEFAULT '';
      UPDATE revisions SET state = 'Applied' WHERE revision <=
        (SELECT json_extract(record, '$.appliedRevision') FROM clusters
         WHERE clusters.id = revisions.cluster_id);
    )sql",
    // 2 -> 3: volumes, which outlive clusters.
    R"sql(
      CREATE TABLE volumes (
        name TEXT PRIMARY KEY,
        record TEXT NOT NULL
      );
    )sql",
    // 3 -> 4: who may use the API. Tokens are kept only as their hash.
    R"sql(
      CREATE TABLE accounts (
        name TEXT PRIMARY KEY,
        record TEXT NOT NULL
      );
      CREATE TABLE tokens (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        hash TEXT NOT NULL UNIQUE,
        user TEXT NOT NULL,
        description TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
    )sql",
    // 4 -> 5: a cluster's spec and status kept and versioned apart, so that
    // the reconciler's progress never makes a change request retry;
    // revisions say whether corral made them to roll back; events say which
    // node and revision they are about, for the API to filter on. What was
    // recorded only in words before is read out of them once, here.
    R"sql(
      ALTER TABLE clusters ADD COLUMN status_version INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE clusters ADD COLUMN status TEXT NOT NULL DEFAULT '{}';
      UPDATE clusters SET status = json_remove(record, '$.id', '$.name', '$.project',
        '$.revision', '$.spec', '$.platformPartitions', '$.changeAuthor', '$.changeMessage',
        '$.changeForce', '$.createdAt', '$.updatedAt', '$.version');
      UPDATE clusters SET record = json_remove(record, '$.status', '$.phase', '$.reason',
        '$.appliedRevision', '$.subnet', '$.login', '$.nodes', '$.controllerConfigKey',
        '$.updatedAt');
      UPDATE clusters SET record = json_set(record, '$.changeRollback', json('true'))
        WHERE json_extract(record, '$.changeAuthor') = 'corral'
          AND json_extract(record, '$.changeMessage') GLOB 'roll back to revision *';
      ALTER TABLE revisions ADD COLUMN rollback INTEGER NOT NULL DEFAULT 0;
      UPDATE revisions SET rollback = 1
        WHERE author = 'corral' AND message GLOB 'roll back to revision *';
      ALTER TABLE events ADD COLUMN node TEXT NOT NULL DEFAULT '';
      ALTER TABLE events ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
      UPDATE events SET revision = CAST(substr(message, 10) AS INTEGER)
        WHERE message GLOB 'revision [0-9]*';
      UPDATE events SET revision = 1 WHERE reason = 'CreateRequested';
      UPDATE events SET node = CASE reason
          WHEN 'PodRecreated' THEN substr(message, 16, instr(substr(message, 16), ' ') - 1)
          WHEN 'PodRestarted' THEN substr(message, 5, instr(substr(message, 5), ' ') - 1)
          WHEN 'WorkerRolled' THEN substr(message, 12, instr(substr(message, 12), ' ') - 1)
          WHEN 'XidInjected' THEN substr(message, 1, instr(message, ':') - 1)
          WHEN 'GpuXid' THEN substr(message, 1, instr(message, ' ') - 1)
        END
        WHERE reason IN ('PodRecreated', 'PodRestarted', 'WorkerRolled', 'XidInjected', 'GpuXid');
      -- Only Slurm nodes are nodes (not the login or controller pod).
      UPDATE events SET node = '' WHERE node IS NULL OR NOT
        (node GLOB 'slinky-[0-9]*' OR node GLOB 'cpu-workers-[0-9]*');
      CREATE INDEX events_by_node ON events (cluster, node, id);
    )sql",
};
static_assert(std::size(kMigrations) == SqliteStore::kSchemaVersion,
              "every schema version needs its migration");

constexpr const char* kSelectCluster =
    "SELECT id, version, status_version, record, status, updated_at FROM clusters WHERE name = ?";
constexpr const char* kSelectClusterId = "SELECT id FROM clusters WHERE name = ?";
constexpr const char* kListClusters =
    "SELECT id, version, status_version, record, status, updated_at, name FROM clusters "
    "ORDER BY id";
constexpr const char* kInsertCluster =
    "INSERT INTO clusters (name, version, status_version, record, status, created_at, updated_at) "
    "VALUES (?, 1, 1, '', '', ?, ?)";
constexpr const char* kSetClusterParts =
    "UPDATE clusters SET version = ?, status_version = ?, record = ?, status = ?, "
    "created_at = ?, updated_at = ? WHERE id = ?";
constexpr const char* kDeleteCluster = "DELETE FROM clusters WHERE id = ?";
constexpr const char* kInsertRevision =
    "INSERT INTO revisions (cluster_id, revision, spec, author, message, rollback, state, "
    "created_at) VALUES (?, ?, ?, ?, ?, ?, 'Pending', ?)";
// A new revision supersedes every older one that was never applied.
constexpr const char* kSupersedeRevisions =
    "UPDATE revisions SET state = 'Superseded' WHERE cluster_id = ? AND revision < ? "
    "AND state = 'Pending'";
constexpr const char* kListRevisions =
    "SELECT revision, spec, author, message, created_at, state, error, rollback FROM revisions "
    "WHERE cluster_id = ? ORDER BY revision";
constexpr const char* kSetRevisionState =
    "UPDATE revisions SET state = ?, error = ? WHERE cluster_id = ? AND revision = ?";
constexpr const char* kDeleteRevisions = "DELETE FROM revisions WHERE cluster_id = ?";
// One statement, so the existence check and the insert are atomic without a
// transaction.
constexpr const char* kInsertEvent =
    "INSERT INTO events (cluster, time, type, reason, message, node, revision) "
    "SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM clusters WHERE name = ?)";
// An empty node and a revision of 0 match every event.
constexpr const char* kFindEvents =
    "SELECT id, cluster, time, type, reason, message, node, revision FROM "
    "(SELECT * FROM events WHERE cluster = ? AND (? = '' OR node = ?) AND (? = 0 OR revision = ?) "
    "ORDER BY id DESC LIMIT ?) ORDER BY id";
constexpr const char* kDeleteEvents = "DELETE FROM events WHERE cluster = ?";
constexpr const char* kInsertVolume = "INSERT INTO volumes (name, record) VALUES (?, ?)";
constexpr const char* kSelectVolume = "SELECT record FROM volumes WHERE name = ?";
constexpr const char* kListVolumes = "SELECT record FROM volumes ORDER BY name";
constexpr const char* kDeleteVolume = "DELETE FROM volumes WHERE name = ?";
constexpr const char* kInsertAccount = "INSERT INTO accounts (name, record) VALUES (?, ?)";
constexpr const char* kSelectAccount = "SELECT record FROM accounts WHERE name = ?";
constexpr const char* kListAccounts = "SELECT record FROM accounts ORDER BY name";
constexpr const char* kDeleteAccount = "DELETE FROM accounts WHERE name = ?";
constexpr const char* kDeleteAccountTokens = "DELETE FROM tokens WHERE user = ?";
constexpr const char* kInsertToken =
    "INSERT INTO tokens (hash, user, description, created_at) VALUES (?, ?, ?, ?)";
constexpr const char* kSelectTokenByHash =
    "SELECT id, hash, user, description, created_at FROM tokens WHERE hash = ?";
constexpr const char* kListTokens =
    "SELECT id, hash, user, description, created_at FROM tokens ORDER BY id";
constexpr const char* kDeleteToken = "DELETE FROM tokens WHERE id = ?";
constexpr const char* kNextSequence =
    "INSERT INTO sequences (name, value) VALUES (?, 1) "
    "ON CONFLICT (name) DO UPDATE SET value = value + 1 RETURNING value";

std::string quote(const std::string& s) { return "\"" + s + "\""; }

// nlohmann throws on strings that are not UTF-8; such a string can only come
// from a caller's bug, so it is the caller's error and nothing is written.
StatusOr<std::string> dump(const json& j, const std::string& cluster) {
  try {
    return j.dump();
  } catch (const json::exception& e) {
    return invalidArgument("cluster " + quote(cluster) +
                           " has text that is not valid UTF-8: " + e.what());
  }
}

Status checkName(const std::string& name) {
  if (name.empty()) return invalidArgument("cluster name must not be empty");
  return Status::ok();
}

}  // namespace

// A cached prepared statement in use. Binds parameters in order and resets the
// statement when it goes out of scope, so that the next user finds it clean
// and no read lock outlives the call.
class SqliteStore::Statement {
 public:
  Statement(SqliteStore* store, const char* sql) : store_(store), sql_(sql) {
    StatusOr<sqlite3_stmt*> stmt = store->prepare(sql);
    if (stmt.isOk()) {
      stmt_ = *stmt;
    } else {
      status_ = stmt.status();
    }
  }
  ~Statement() {
    if (stmt_ != nullptr) {
      sqlite3_reset(stmt_);
      sqlite3_clear_bindings(stmt_);
    }
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int64_t value) {
    if (status_.isOk()) check(sqlite3_bind_int64(stmt_, ++index_, value));
    return *this;
  }
  Statement& bind(const std::string& value) {
    if (status_.isOk()) {
      check(sqlite3_bind_text(stmt_, ++index_, value.data(), static_cast<int>(value.size()),
                              SQLITE_TRANSIENT));
    }
    return *this;
  }

  // True for a row, false when done.
  StatusOr<bool> step() {
    if (!status_.isOk()) return status_;
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return store_->error(rc, sql_);
  }

  // Runs a statement that returns no rows.
  Status run() {
    ASSIGN_OR_RETURN(bool row, step());
    if (row) return internalError(std::string("store: unexpected row from ") + sql_);
    return Status::ok();
  }

  int64_t int64(int column) { return sqlite3_column_int64(stmt_, column); }
  std::string text(int column) {
    const unsigned char* p = sqlite3_column_text(stmt_, column);
    int n = sqlite3_column_bytes(stmt_, column);
    return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p), n);
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) status_ = store_->error(rc, sql_);
  }

  SqliteStore* store_;
  const char* sql_;
  sqlite3_stmt* stmt_ = nullptr;
  Status status_;
  int index_ = 0;
};

// Rolls back unless committed, so that every early return leaves the database
// as it was.
class SqliteStore::Transaction {
 public:
  explicit Transaction(SqliteStore* store) : store_(store) {}
  ~Transaction() {
    if (active_) {
      Statement rollback(store_, "ROLLBACK");
      (void)rollback.run();
    }
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  // A write transaction takes the write lock at once (BEGIN IMMEDIATE): one
  // that started as a reader could fail to upgrade later, after work was done.
  Status begin(bool write) {
    Statement begin(store_, write ? "BEGIN IMMEDIATE" : "BEGIN");
    RETURN_IF_ERROR(begin.run());
    active_ = true;
    return Status::ok();
  }

  Status commit() {
    Statement commit(store_, "COMMIT");
    RETURN_IF_ERROR(commit.run());
    active_ = false;
    return Status::ok();
  }

 private:
  SqliteStore* store_;
  bool active_ = false;
};

SqliteStore::SqliteStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

SqliteStore::~SqliteStore() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::open(const std::string& path,
                                                         std::chrono::milliseconds busyTimeout) {
  const std::string context = "cannot open store database " + quote(path);
  sqlite3* db = nullptr;
  // NOMUTEX: `mu_` already serialises every use of the connection.
  int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return internalError(context + ": " + message +
                         "; check that its directory exists and is writable");
  }
  std::unique_ptr<SqliteStore> store(new SqliteStore(db, path));
  Status status = store->configure(busyTimeout);
  if (status.isOk()) status = store->migrate();
  if (!status.isOk()) return status.withContext(context);
  return store;
}

Status SqliteStore::configure(std::chrono::milliseconds busyTimeout) {
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, static_cast<int>(busyTimeout.count()));
  {
    // WAL lets readers in other processes proceed while corrald writes.
    Statement wal(this, "PRAGMA journal_mode = WAL");
    ASSIGN_OR_RETURN(bool row, wal.step());
    std::string mode = row ? wal.text(0) : "";
    if (mode != "wal" && mode != "memory") {
      return internalError("cannot switch the database to WAL mode (journal mode is " +
                           quote(mode) + "); keep it on a local filesystem");
    }
  }
  // FULL: a committed write (a sequence value handed out, say) survives a
  // power loss, not only a crash of corrald.
  return exec("PRAGMA synchronous = FULL");
}

Status SqliteStore::migrate() {
  // The write lock makes two processes opening a new database at once take
  // turns, and the second then finds the schema in place.
  Transaction tx(this);
  RETURN_IF_ERROR(tx.begin(/*write=*/true));
  int64_t version = 0;
  {
    Statement userVersion(this, "PRAGMA user_version");
    ASSIGN_OR_RETURN(bool row, userVersion.step());
    if (row) version = userVersion.int64(0);
  }
  if (version > kSchemaVersion) {
    return failedPrecondition("the database has schema version " + std::to_string(version) +
                              " but this corral understands at most " +
                              std::to_string(kSchemaVersion) + "; upgrade corral");
  }
  if (version < 0) {
    return internalError("the database has schema version " + std::to_string(version) +
                         ", which no corral writes; is it another program's database?");
  }
  if (version == kSchemaVersion) return Status::ok();
  for (int64_t v = version; v < kSchemaVersion; ++v) {
    RETURN_IF_ERROR(
        exec(kMigrations[v]).withContext("migration to schema version " + std::to_string(v + 1)));
  }
  RETURN_IF_ERROR(exec(("PRAGMA user_version = " + std::to_string(kSchemaVersion)).c_str()));
  return tx.commit();
}

Status SqliteStore::exec(const char* sql) {
  char* message = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return Status::ok();
  std::string text = message != nullptr ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) {
    return unavailable("store database " + quote(path_) + " is locked by another process (" + text +
                       "); retry");
  }
  return internalError("store database " + quote(path_) + ": " + text);
}

StatusOr<sqlite3_stmt*> SqliteStore::prepare(const char* sql) {
  auto it = statements_.find(sql);
  if (it != statements_.end()) return it->second;
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return error(rc, sql);
  statements_.emplace(sql, stmt);
  return stmt;
}

Status SqliteStore::error(int rc, const std::string& what) const {
  std::string message = sqlite3_errmsg(db_);
  if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) {
    return unavailable("store database " + quote(path_) + " is locked by another process (" +
                       message + "); retry");
  }
  return internalError("store database " + quote(path_) + ": " + message + " (in \"" + what +
                       "\")");
}

StatusOr<ClusterRecord> SqliteStore::readRecord(Statement& row, const std::string& name) const {
  const std::string corrupt = "the stored record of cluster " + quote(name) +
                              " is corrupt (restore the store from a backup or delete the "
                              "cluster): ";
  json spec = json::parse(row.text(3), nullptr, /*allow_exceptions=*/false);
  json status = json::parse(row.text(4), nullptr, /*allow_exceptions=*/false);
  if (spec.is_discarded() || status.is_discarded())
    return internalError(corrupt + "it is not valid JSON");
  StatusOr<ClusterRecord> record = recordFromParts(spec, status);
  if (!record.isOk()) return internalError(corrupt + record.status().message());
  if (record->spec.name != name) {
    return internalError(corrupt + "it names cluster " + quote(record->spec.name));
  }
  // The columns are authoritative; the copies inside the JSON are for readers
  // of a dump.
  record->id = row.int64(0);
  record->version = row.int64(1);
  record->statusVersion = row.int64(2);
  record->updatedAt = row.int64(5);
  return record;
}

Status SqliteStore::writeParts(const ClusterRecord& record) {
  const std::string& name = record.spec.name;
  ASSIGN_OR_RETURN(std::string spec, dump(recordPartToJson(record, RecordPart::kSpec), name));
  ASSIGN_OR_RETURN(std::string status, dump(recordPartToJson(record, RecordPart::kStatus), name));
  Statement set(this, kSetClusterParts);
  set.bind(record.version).bind(record.statusVersion).bind(spec).bind(status);
  return set.bind(record.createdAt).bind(record.updatedAt).bind(record.id).run();
}

StatusOr<ClusterRecord> SqliteStore::createCluster(ClusterRecord record) {
  const std::string name = record.spec.name;
  RETURN_IF_ERROR(checkName(name));
  std::lock_guard<std::mutex> lock(mu_);
  Transaction tx(this);
  RETURN_IF_ERROR(tx.begin(/*write=*/true));
  {
    Statement exists(this, kSelectClusterId);
    ASSIGN_OR_RETURN(bool found, exists.bind(name).step());
    if (found) return conflict("a cluster named " + quote(name) + " already exists");
  }
  {
    Statement insert(this, kInsertCluster);
    RETURN_IF_ERROR(insert.bind(name).bind(record.createdAt).bind(record.updatedAt).run());
  }
  // The id is only known once the row exists, and the record JSON carries it.
  record.id = sqlite3_last_insert_rowid(db_);
  record.version = 1;
  record.statusVersion = 1;
  RETURN_IF_ERROR(writeParts(record));
  if (record.revision > 0) RETURN_IF_ERROR(insertRevision(record.id, record));
  RETURN_IF_ERROR(tx.commit());
  return record;
}

StatusOr<ClusterRecord> SqliteStore::getCluster(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  return selectCluster(name);
}

StatusOr<ClusterRecord> SqliteStore::selectCluster(const std::string& name) {
  Statement select(this, kSelectCluster);
  ASSIGN_OR_RETURN(bool found, select.bind(name).step());
  if (!found) return notFound("no cluster named " + quote(name));
  return readRecord(select, name);
}

StatusOr<std::vector<ClusterRecord>> SqliteStore::listClusters() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ClusterRecord> records;
  Statement select(this, kListClusters);
  while (true) {
    ASSIGN_OR_RETURN(bool row, select.step());
    if (!row) break;
    ASSIGN_OR_RETURN(ClusterRecord record, readRecord(select, select.text(6)));
    records.push_back(std::move(record));
  }
  return records;
}

StatusOr<ClusterRecord> SqliteStore::writeCluster(const ClusterRecord& record, RecordPart part) {
  const std::string& name = record.spec.name;
  RETURN_IF_ERROR(checkName(name));
  std::lock_guard<std::mutex> lock(mu_);
  Transaction tx(this);
  RETURN_IF_ERROR(tx.begin(/*write=*/true));
  ASSIGN_OR_RETURN(ClusterRecord stored, selectCluster(name));
  ASSIGN_OR_RETURN(ClusterRecord next, applyWrite(stored, record, part));
  RETURN_IF_ERROR(writeParts(next));
  if (next.revision > stored.revision) RETURN_IF_ERROR(insertRevision(next.id, next));
  RETURN_IF_ERROR(tx.commit());
  return next;
}

Status SqliteStore::deleteCluster(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  Transaction tx(this);
  RETURN_IF_ERROR(tx.begin(/*write=*/true));
  int64_t id = 0;
  {
    Statement select(this, kSelectClusterId);
    ASSIGN_OR_RETURN(bool found, select.bind(name).step());
    if (!found) return notFound("no cluster named " + quote(name));
    id = select.int64(0);
  }
  {
    Statement events(this, kDeleteEvents);
    RETURN_IF_ERROR(events.bind(name).run());
  }
  {
    Statement revisions(this, kDeleteRevisions);
    RETURN_IF_ERROR(revisions.bind(id).run());
  }
  {
    Statement cluster(this, kDeleteCluster);
    RETURN_IF_ERROR(cluster.bind(id).run());
  }
  return tx.commit();
}

Status SqliteStore::appendEvent(const Event& event) {
  std::lock_guard<std::mutex> lock(mu_);
  Statement insert(this, kInsertEvent);
  insert.bind(event.cluster).bind(event.time).bind(event.type).bind(event.reason);
  insert.bind(event.message).bind(event.node).bind(event.revision);
  RETURN_IF_ERROR(insert.bind(event.cluster).run());
  if (sqlite3_changes(db_) == 0) {
    return notFound("cannot record an event for cluster " + quote(event.cluster) +
                    ": no cluster has that name");
  }
  return Status::ok();
}

StatusOr<std::vector<Event>> SqliteStore::findEvents(const std::string& cluster, int limit,
                                                     const EventFilter& filter) {
  if (limit <= 0) {
    return invalidArgument("the event limit must be positive, not " + std::to_string(limit));
  }
  std::lock_guard<std::mutex> lock(mu_);
  // One read transaction, so that the existence check and the events come
  // from the same snapshot.
  Transaction tx(this);
  RETURN_IF_ERROR(tx.begin(/*write=*/false));
  {
    Statement exists(this, kSelectClusterId);
    ASSIGN_OR_RETURN(bool found, exists.bind(cluster).step());
    if (!found) return notFound("no cluster named " + quote(cluster));
  }
  std::vector<Event> events;
  {
    Statement select(this, kFindEvents);
    select.bind(cluster).bind(filter.node).bind(filter.node);
    select.bind(filter.revision).bind(filter.revision).bind(static_cast<int64_t>(limit));
    while (true) {
      ASSIGN_OR_RETURN(bool row, select.step());
      if (!row) break;
      Event event;
      event.id = select.int64(0);
      event.cluster = select.text(1);
      event.time = select.int64(2);
      event.type = select.text(3);
      event.reason = select.text(4);
      event.message = select.text(5);
      event.node = select.text(6);
      event.revision = select.int64(7);
      events.push_back(std::move(event));
    }
  }
  RETURN_IF_ERROR(tx.commit());
  return events;
}

StatusOr<Volume> SqliteStore::parseVolume(const std::string& text) const {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return internalError("store: a volume record is not valid JSON");
  return volumeFromJson(j);
}

StatusOr<Volume> SqliteStore::createVolume(const Volume& volume) {
  if (volume.name.empty()) return invalidArgument("volume name must not be empty");
  std::lock_guard<std::mutex> lock(mu_);
  Transaction tx(this);
  RETURN_IF_ERROR(tx.begin(/*write=*/true));
  {
    Statement select(this, kSelectVolume);
    ASSIGN_OR_RETURN(bool found, select.bind(volume.name).step());
    if (found) return conflict("a volume named " + quote(volume.name) + " already exists");
  }
  ASSIGN_OR_RETURN(std::string text, dump(volumeToJson(volume), volume.name));
  Statement insert(this, kInsertVolume);
  RETURN_IF_ERROR(insert.bind(volume.name).bind(text).run());
  RETURN_IF_ERROR(tx.commit());
  return volume;
}

StatusOr<Volume> SqliteStore::getVolume(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  Statement select(this, kSelectVolume);
  ASSIGN_OR_RETURN(bool found, select.bind(name).step());
  if (!found) return notFound("no volume named " + quote(name));
  return parseVolume(select.text(0));
}

StatusOr<std::vector<Volume>> SqliteStore::listVolumes() {
  std::lock_guard<std::mutex> lock(mu_);
  Statement select(this, kListVolumes);
  std::vector<Volume> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, select.step());
    if (!row) break;
    ASSIGN_OR_RETURN(Volume v, parseVolume(select.text(0)));
    out.push_back(std::move(v));
  }
  return out;
}

Status SqliteStore::deleteVolume(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  Statement del(this, kDeleteVolume);
  RETURN_IF_ERROR(del.bind(name).run());
  if (sqlite3_changes(db_) == 0) return notFound("no volume named " + quote(name));
  return Status::ok();
}

StatusOr<Account> SqliteStore::createAccount(const Account& account) {
  if (account.name.empty()) return invalidArgument("account name must not be empty");
  std::lock_guard<std::mutex> lock(mu_);
  Transaction tx(this);
  RETURN_IF_ERROR(tx.begin(/*write=*/true));
  {
    Statement select(this, kSelectAccount);
    ASSIGN_OR_RETURN(bool found, select.bind(account.name).step());
    if (found) return conflict("an account named " + quote(account.name) + " already exists");
  }
  ASSIGN_OR_RETURN(std::string text, dump(accountToJson(account), account.name));
  Statement insert(this, kInsertAccount);
  RETURN_IF_ERROR(insert.bind(account.name).bind(text).run());
  RETURN_IF_ERROR(tx.commit());
  return account;
}

namespace {
StatusOr<Account> parseAccount(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return internalError("store: an account record is not valid JSON");
  return accountFromJson(j);
}
}  // namespace

StatusOr<Account> SqliteStore::getAccount(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  Statement select(this, kSelectAccount);
  ASSIGN_OR_RETURN(bool found, select.bind(name).step());
  if (!found) return notFound("no account named " + quote(name));
  return parseAccount(select.text(0));
}

StatusOr<std::vector<Account>> SqliteStore::listAccounts() {
  std::lock_guard<std::mutex> lock(mu_);
  Statement select(this, kListAccounts);
  std::vector<Account> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, select.step());
    if (!row) break;
    ASSIGN_OR_RETURN(Account a, parseAccount(select.text(0)));
    out.push_back(std::move(a));
  }
  return out;
}

Status SqliteStore::deleteAccount(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  Transaction tx(this);
  RETURN_IF_ERROR(tx.begin(/*write=*/true));
  {
    Statement del(this, kDeleteAccount);
    RETURN_IF_ERROR(del.bind(name).run());
    if (sqlite3_changes(db_) == 0) return notFound("no account named " + quote(name));
  }
  Statement tokens(this, kDeleteAccountTokens);
  RETURN_IF_ERROR(tokens.bind(name).run());
  return tx.commit();
}

StatusOr<ApiToken> SqliteStore::createToken(const ApiToken& token) {
  if (token.hash.empty()) return invalidArgument("token hash must not be empty");
  std::lock_guard<std::mutex> lock(mu_);
  Transaction tx(this);
  RETURN_IF_ERROR(tx.begin(/*write=*/true));
  {
    Statement select(this, kSelectAccount);
    ASSIGN_OR_RETURN(bool found, select.bind(token.user).step());
    if (!found) return notFound("no account named " + quote(token.user));
  }
  {
    Statement select(this, kSelectTokenByHash);
    ASSIGN_OR_RETURN(bool found, select.bind(token.hash).step());
    if (found) return conflict("a token with this hash already exists");
  }
  Statement insert(this, kInsertToken);
  RETURN_IF_ERROR(
      insert.bind(token.hash).bind(token.user).bind(token.description).bind(token.createdAt).run());
  ApiToken stored = token;
  stored.id = sqlite3_last_insert_rowid(db_);
  RETURN_IF_ERROR(tx.commit());
  return stored;
}

namespace {
template <typename Row>
ApiToken tokenFromRow(Row& row) {
  ApiToken t;
  t.id = row.int64(0);
  t.hash = row.text(1);
  t.user = row.text(2);
  t.description = row.text(3);
  t.createdAt = row.int64(4);
  return t;
}
}  // namespace

StatusOr<ApiToken> SqliteStore::findToken(const std::string& hash) {
  std::lock_guard<std::mutex> lock(mu_);
  Statement select(this, kSelectTokenByHash);
  ASSIGN_OR_RETURN(bool found, select.bind(hash).step());
  if (!found) return notFound("no such token");
  return tokenFromRow(select);
}

StatusOr<std::vector<ApiToken>> SqliteStore::listTokens() {
  std::lock_guard<std::mutex> lock(mu_);
  Statement select(this, kListTokens);
  std::vector<ApiToken> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, select.step());
    if (!row) break;
    out.push_back(tokenFromRow(select));
  }
  return out;
}

Status SqliteStore::deleteToken(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  Statement del(this, kDeleteToken);
  RETURN_IF_ERROR(del.bind(id).run());
  if (sqlite3_changes(db_) == 0) return notFound("no token with id " + std::to_string(id));
  return Status::ok();
}

StatusOr<int64_t> SqliteStore::nextSequence(const std::string& name) {
  if (name.empty()) return invalidArgument("sequence name must not be empty");
  std::lock_guard<std::mutex> lock(mu_);
  Statement upsert(this, kNextSequence);
  ASSIGN_OR_RETURN(bool row, upsert.bind(name).step());
  if (!row) return internalError("store: the sequence upsert returned no value");
  int64_t value = upsert.int64(0);
  // Stepping to the end completes the statement, which commits it.
  ASSIGN_OR_RETURN(bool more, upsert.step());
  if (more) return internalError("store: the sequence upsert returned two values");
  return value;
}

Status SqliteStore::insertRevision(int64_t clusterId, const ClusterRecord& record) {
  ASSIGN_OR_RETURN(std::string spec, dump(specToJson(record.spec), record.spec.name));
  {
    Statement insert(this, kInsertRevision);
    insert.bind(clusterId).bind(record.revision).bind(spec).bind(record.changeAuthor);
    insert.bind(record.changeMessage).bind(int64_t{record.changeRollback ? 1 : 0});
    RETURN_IF_ERROR(insert.bind(record.updatedAt).run());
  }
  Statement supersede(this, kSupersedeRevisions);
  return supersede.bind(clusterId).bind(record.revision).run();
}

StatusOr<std::vector<Revision>> SqliteStore::listRevisions(const std::string& cluster) {
  std::lock_guard<std::mutex> lock(mu_);
  Transaction tx(this);
  RETURN_IF_ERROR(tx.begin(/*write=*/false));
  int64_t id = 0;
  {
    Statement select(this, kSelectClusterId);
    ASSIGN_OR_RETURN(bool found, select.bind(cluster).step());
    if (!found) return notFound("no cluster named " + quote(cluster));
    id = select.int64(0);
  }
  std::vector<Revision> revisions;
  {
    Statement select(this, kListRevisions);
    select.bind(id);
    while (true) {
      ASSIGN_OR_RETURN(bool row, select.step());
      if (!row) break;
      Revision r;
      r.number = select.int64(0);
      json j = json::parse(select.text(1), nullptr, /*allow_exceptions=*/false);
      StatusOr<ClusterSpec> spec = j.is_discarded()
                                       ? StatusOr<ClusterSpec>(invalidArgument("not valid JSON"))
                                       : specFromJson(j, /*strict=*/false);
      std::optional<RevisionState> state = parseRevisionState(select.text(5));
      if (!spec.isOk() || !state) {
        return internalError("revision " + std::to_string(r.number) + " of cluster " +
                             quote(cluster) + " is corrupt: " +
                             (spec.isOk() ? "unknown state " + quote(select.text(5))
                                          : spec.status().message()));
      }
      r.spec = std::move(spec).value();
      r.author = select.text(2);
      r.message = select.text(3);
      r.createdAt = select.int64(4);
      r.state = *state;
      r.error = select.text(6);
      r.rollback = select.int64(7) != 0;
      revisions.push_back(std::move(r));
    }
  }
  RETURN_IF_ERROR(tx.commit());
  return revisions;
}

Status SqliteStore::setRevisionState(const std::string& cluster, int64_t revision,
                                     RevisionState state, const std::string& error) {
  std::lock_guard<std::mutex> lock(mu_);
  Transaction tx(this);
  RETURN_IF_ERROR(tx.begin(/*write=*/true));
  int64_t id = 0;
  {
    Statement select(this, kSelectClusterId);
    ASSIGN_OR_RETURN(bool found, select.bind(cluster).step());
    if (!found) return notFound("no cluster named " + quote(cluster));
    id = select.int64(0);
  }
  {
    Statement update(this, kSetRevisionState);
    RETURN_IF_ERROR(update.bind(std::string(revisionStateName(state))).bind(error).bind(id)
                        .bind(revision).run());
    if (sqlite3_changes(db_) == 0)
      return notFound("cluster " + quote(cluster) + " has no revision " + std::to_string(revision));
  }
  return tx.commit();
}

StatusOr<std::unique_ptr<Store>> openSqliteStore(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteStore> store, SqliteStore::open(path));
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace corral
