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
  StatusOr<ClusterRecord> updateCluster(const ClusterRecord& record) override;
  Status deleteCluster(const std::string& name) override;
  Status appendEvent(const Event& event) override;
  StatusOr<std::vector<Event>> listEvents(const std::string& cluster, int limit) override;
  StatusOr<int64_t> nextSequence(const std::string& name) override;

  // As `SqliteStore::listRevisions`.
  StatusOr<std::vector<std::pair<int64_t, ClusterSpec>>> listRevisions(const std::string& cluster);

  // The next call of any method above fails with `Status(code, message)` and
  // changes nothing; the calls after it behave normally again. A later
  // `failNext` replaces an earlier one not yet used; `Code::kOk` cancels it.
  void failNext(Code code, std::string message);

  // How many calls the store has answered, failed ones included; lets a test
  // check that its code did (or did not) touch the store.
  int64_t calls() const;

 private:
  // Takes the pending fault, if any, and counts the call. Requires `mu_`.
  std::optional<Status> takeFault();

  mutable std::mutex mu_;
  std::optional<Status> fault_;
  int64_t calls_ = 0;
  int64_t nextClusterId_ = 1;
  int64_t nextEventId_ = 1;
  std::map<int64_t, ClusterRecord> clusters_;  // By id, so lists come in id order.
  std::map<int64_t, std::map<int64_t, ClusterSpec>> revisions_;  // By cluster id, revision.
  std::vector<Event> events_;                                    // In id order.
  std::map<std::string, int64_t> sequences_;
};

}  // namespace corral
