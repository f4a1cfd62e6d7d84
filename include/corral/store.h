#pragma once

// `Store`: the durable record of every cluster's desired state, its observed
// status and its event log. `SqliteStore` is the embedded default;
// `FakeStore` (test/fakes) enforces the same contract in memory, including
// version conflicts.

#include <memory>
#include <string>
#include <vector>

#include "corral/spec.h"
#include "corral/status.h"

namespace corral {

class Store {
 public:
  virtual ~Store() = default;

  // Inserts a new cluster. Assigns `id`, sets `version` to 1 and returns the
  // stored record. Conflict if a cluster with that name exists.
  virtual StatusOr<ClusterRecord> createCluster(ClusterRecord record) = 0;

  // NotFound if there is no cluster with that name.
  virtual StatusOr<ClusterRecord> getCluster(const std::string& name) = 0;

  // Every cluster, ordered by id.
  virtual StatusOr<std::vector<ClusterRecord>> listClusters() = 0;

  // Replaces `part` of the stored record whose name is `record.spec.name`,
  // provided that part's stored version (`version` for kSpec,
  // `statusVersion` for kStatus, both for kAll) equals the one in `record`
  // and the ids match; otherwise Conflict and nothing changes. The other part
  // is left exactly as stored, whatever `record` holds for it, so a status
  // write never conflicts with a spec change nor undoes one. Returns the
  // record as stored: the written part with its new version, the other as
  // it is in the store.
  virtual StatusOr<ClusterRecord> writeCluster(const ClusterRecord& record, RecordPart part) = 0;
  // Both parts (writeCluster with kAll).
  StatusOr<ClusterRecord> updateCluster(const ClusterRecord& record) {
    return writeCluster(record, RecordPart::kAll);
  }

  // Removes the cluster and its events. NotFound if absent.
  virtual Status deleteCluster(const std::string& name) = 0;

  // Appends to the cluster's event log (the store sets `id`).
  virtual Status appendEvent(const Event& event) = 0;

  // The newest `limit` events of a cluster that match `filter`, oldest first.
  virtual StatusOr<std::vector<Event>> findEvents(const std::string& cluster, int limit,
                                                  const EventFilter& filter) = 0;
  // The newest `limit` events of a cluster, oldest first.
  StatusOr<std::vector<Event>> listEvents(const std::string& cluster, int limit) {
    return findEvents(cluster, limit, EventFilter{});
  }

  // A process-wide, durable, strictly increasing counter named `name`,
  // starting at 1.
  virtual StatusOr<int64_t> nextSequence(const std::string& name) = 0;

  // Revisions: every write that raises `ClusterRecord.revision` also stores a
  // history entry with the spec, `changeAuthor`, `changeMessage` and
  // `changeRollback`, in state Pending; older Pending entries become
  // Superseded in the same write.

  // The cluster's history, oldest first. NotFound if there is no such cluster.
  virtual StatusOr<std::vector<Revision>> listRevisions(const std::string& cluster) = 0;

  // Records how a revision ended (Applied, or Failed with `error`).
  // NotFound if the cluster or the revision does not exist.
  virtual Status setRevisionState(const std::string& cluster, int64_t revision,
                                  RevisionState state, const std::string& error) = 0;

  // Volumes, by unique name. createVolume is Conflict if the name is taken;
  // get and delete are NotFound if it is not. Which clusters use a volume is
  // in their specs, not here.
  virtual StatusOr<Volume> createVolume(const Volume& volume) = 0;
  virtual StatusOr<Volume> getVolume(const std::string& name) = 0;
  virtual StatusOr<std::vector<Volume>> listVolumes() = 0;  // By name.
  virtual Status deleteVolume(const std::string& name) = 0;

  // Accounts, by unique name (createAccount: Conflict if taken). Deleting an
  // account deletes its tokens. NotFound for names that do not exist.
  virtual StatusOr<Account> createAccount(const Account& account) = 0;
  virtual StatusOr<Account> getAccount(const std::string& name) = 0;
  virtual StatusOr<std::vector<Account>> listAccounts() = 0;  // By name.
  virtual Status deleteAccount(const std::string& name) = 0;

  // Tokens. createToken assigns `id` (never reused) and is NotFound if the
  // account does not exist, Conflict if the hash is taken. findToken looks a
  // token up by its hash: NotFound if none.
  virtual StatusOr<ApiToken> createToken(const ApiToken& token) = 0;
  virtual StatusOr<ApiToken> findToken(const std::string& hash) = 0;
  virtual StatusOr<std::vector<ApiToken>> listTokens() = 0;  // By id.
  virtual Status deleteToken(int64_t id) = 0;
};

// Opens (creating if needed) the SQLite database at `path`. Thread-safe: the
// returned store serialises its own access.
StatusOr<std::unique_ptr<Store>> openSqliteStore(const std::string& path);

}  // namespace corral
