#pragma once

// `FakeStore`: the `Store` contract in memory, for unit tests of the API and
// the reconciler. It enforces what `SqliteStore` enforces (see its header):
// version and id conflicts on update, ids never reused, NotFound for events
// of a missing cluster, revisions recorded as `revision` rises. So a test
// that passes against it does not depend on a leniency the real store lacks.
//
// Fault injection, in the manner of LevelDB's `FaultInjectionTestEnv`:
// `failNext` makes the next call fail without touching the data, which is how
// tests reach the store-error paths of their code. Thread-safe.

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "corral/spec.h"
#include "corral/status.h"
#include "corral/store.h"

namespace corral {

class FakeStore : public Store {
 public:
  FakeStore() = default;

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
  Status setRevisionState(const std::string& cluster, int64_t revision, RevisionState state,
                          const std::string& error) override;
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

  // The next call of any method above fails with `Status(code, message)` and
  // changes nothing; the calls after it behave normally again. A later
  // `failNext` replaces an earlier one not yet used; `Code::kOk` cancels it.
  void failNext(Code code, std::string message);

  // How many calls the store has answered, failed ones included; lets a test
  // check that its code did (or did not) touch the store.
  int64_t calls() const;

  // How many writes of `part` were asked for, and how many of all writes
  // were refused with Conflict: a test's counter of retries.
  int64_t writes(RecordPart part) const;
  int64_t conflicts() const;

  // Runs `hook` at the start of every `writeCluster` (outside the store's
  // lock, so the hook may use the store; not for the hook's own writes):
  // how a test puts another writer between a caller's read and its write.
  void beforeWrite(std::function<void(const ClusterRecord&, RecordPart)> hook);

 private:
  // Takes the pending fault, if any, and counts the call. Requires `mu_`.
  std::optional<Status> takeFault();

  mutable std::mutex mu_;
  std::optional<Status> fault_;
  int64_t calls_ = 0;
  int64_t writes_[3] = {0, 0, 0};
  int64_t conflicts_ = 0;
  std::function<void(const ClusterRecord&, RecordPart)> beforeWrite_;
  bool inHook_ = false;
  int64_t nextClusterId_ = 1;
  int64_t nextEventId_ = 1;
  std::map<int64_t, ClusterRecord> clusters_;  // By id, so lists come in id order.
  // Records `stored`'s revision and supersedes older pending ones. Requires `mu_`.
  void addRevision(const ClusterRecord& stored);

  std::map<int64_t, std::map<int64_t, Revision>> revisions_;  // By cluster id, revision.
  std::vector<Event> events_;                                    // In id order.
  std::map<std::string, int64_t> sequences_;
  std::map<std::string, Volume> volumes_;
  std::map<std::string, Account> accounts_;
  std::map<int64_t, ApiToken> tokens_;
  int64_t nextTokenId_ = 1;
};

}  // namespace corral
