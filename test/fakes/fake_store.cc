#include "fakes/fake_store.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "model/record.h"
#include "model/spec_json.h"

namespace corral {

namespace {

std::string quote(const std::string& s) { return "\"" + s + "\""; }

Status checkName(const std::string& name) {
  if (name.empty()) return invalidArgument("cluster name must not be empty");
  return Status::ok();
}

// Passes the record through the same JSON form `SqliteStore` writes, so that a
// member the JSON forgets, or text it cannot hold, fails here as it would
// there instead of surviving only in the fake.
StatusOr<ClusterRecord> roundTrip(const ClusterRecord& record) {
  std::string text;
  try {
    text = recordToJson(record).dump();
  } catch (const nlohmann::json::exception& e) {
    return invalidArgument("cluster " + quote(record.spec.name) +
                           " has text that is not valid UTF-8: " + e.what());
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return internalError("fake store: the record JSON does not parse");
  return recordFromJson(j);
}

}  // namespace

std::optional<Status> FakeStore::takeFault() {
  ++calls_;
  std::optional<Status> fault = std::move(fault_);
  fault_.reset();
  return fault;
}

void FakeStore::failNext(Code code, std::string message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (code == Code::kOk) {
    fault_.reset();
  } else {
    fault_ = Status(code, std::move(message));
  }
}

int64_t FakeStore::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

StatusOr<ClusterRecord> FakeStore::createCluster(ClusterRecord record) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  const std::string name = record.spec.name;
  RETURN_IF_ERROR(checkName(name));
  for (const auto& [id, stored] : clusters_) {
    if (stored.spec.name == name) {
      return conflict("a cluster named " + quote(name) + " already exists");
    }
  }
  record.id = nextClusterId_;
  record.version = 1;
  record.statusVersion = 1;
  ASSIGN_OR_RETURN(ClusterRecord stored, roundTrip(record));
  ++nextClusterId_;
  if (stored.revision > 0) addRevision(stored);
  clusters_[stored.id] = stored;
  return stored;
}

StatusOr<ClusterRecord> FakeStore::getCluster(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  for (const auto& [id, stored] : clusters_) {
    if (stored.spec.name == name) return stored;
  }
  return notFound("no cluster named " + quote(name));
}

StatusOr<std::vector<ClusterRecord>> FakeStore::listClusters() {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  std::vector<ClusterRecord> records;
  for (const auto& [id, stored] : clusters_) records.push_back(stored);
  return records;
}

void FakeStore::beforeWrite(std::function<void(const ClusterRecord&, RecordPart)> hook) {
  std::lock_guard<std::mutex> lock(mu_);
  beforeWrite_ = std::move(hook);
}

StatusOr<ClusterRecord> FakeStore::writeCluster(const ClusterRecord& record, RecordPart part) {
  std::function<void(const ClusterRecord&, RecordPart)> hook;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!inHook_) hook = beforeWrite_;
    inHook_ = static_cast<bool>(hook);
  }
  if (hook) {
    hook(record, part);
    std::lock_guard<std::mutex> lock(mu_);
    inHook_ = false;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  ++writes_[static_cast<int>(part)];
  const std::string& name = record.spec.name;
  RETURN_IF_ERROR(checkName(name));
  auto it = std::find_if(clusters_.begin(), clusters_.end(),
                         [&](const auto& entry) { return entry.second.spec.name == name; });
  if (it == clusters_.end()) return notFound("no cluster named " + quote(name));
  const ClusterRecord& current = it->second;
  StatusOr<ClusterRecord> next = applyWrite(current, record, part);
  if (!next.isOk()) {
    if (next.status().code() == Code::kConflict) ++conflicts_;
    return next.status();
  }
  ASSIGN_OR_RETURN(ClusterRecord stored, roundTrip(*next));
  if (stored.revision > current.revision) addRevision(stored);
  it->second = stored;
  return stored;
}

int64_t FakeStore::writes(RecordPart part) const {
  std::lock_guard<std::mutex> lock(mu_);
  return writes_[static_cast<int>(part)];
}

int64_t FakeStore::conflicts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return conflicts_;
}

Status FakeStore::deleteCluster(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  auto it = std::find_if(clusters_.begin(), clusters_.end(),
                         [&](const auto& entry) { return entry.second.spec.name == name; });
  if (it == clusters_.end()) return notFound("no cluster named " + quote(name));
  std::erase_if(events_, [&](const Event& e) { return e.cluster == name; });
  revisions_.erase(it->first);
  clusters_.erase(it);
  return Status::ok();
}

Status FakeStore::appendEvent(const Event& event) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  bool exists = std::any_of(clusters_.begin(), clusters_.end(), [&](const auto& entry) {
    return entry.second.spec.name == event.cluster;
  });
  if (!exists) {
    return notFound("cannot record an event for cluster " + quote(event.cluster) +
                    ": no cluster has that name");
  }
  Event stored = event;
  stored.id = nextEventId_++;
  events_.push_back(std::move(stored));
  return Status::ok();
}

StatusOr<std::vector<Event>> FakeStore::findEvents(const std::string& cluster, int limit,
                                                   const EventFilter& filter) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  if (limit <= 0) {
    return invalidArgument("the event limit must be positive, not " + std::to_string(limit));
  }
  bool exists = std::any_of(clusters_.begin(), clusters_.end(),
                            [&](const auto& entry) { return entry.second.spec.name == cluster; });
  if (!exists) return notFound("no cluster named " + quote(cluster));
  std::vector<Event> newest;
  for (auto it = events_.rbegin();
       it != events_.rend() && newest.size() < static_cast<size_t>(limit); ++it) {
    if (it->cluster != cluster) continue;
    if (!filter.node.empty() && it->node != filter.node) continue;
    if (filter.revision != 0 && it->revision != filter.revision) continue;
    newest.push_back(*it);
  }
  std::reverse(newest.begin(), newest.end());
  return newest;
}

StatusOr<int64_t> FakeStore::nextSequence(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  if (name.empty()) return invalidArgument("sequence name must not be empty");
  return ++sequences_[name];
}

void FakeStore::addRevision(const ClusterRecord& stored) {
  auto& history = revisions_[stored.id];
  for (auto& [number, revision] : history)
    if (revision.state == RevisionState::kPending) revision.state = RevisionState::kSuperseded;
  history[stored.revision] = Revision{stored.revision,      stored.spec,
                                      stored.changeAuthor,  stored.changeMessage,
                                      stored.updatedAt,     RevisionState::kPending,
                                      "",                   stored.changeRollback};
}

StatusOr<std::vector<Revision>> FakeStore::listRevisions(const std::string& cluster) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  auto it = std::find_if(clusters_.begin(), clusters_.end(),
                         [&](const auto& entry) { return entry.second.spec.name == cluster; });
  if (it == clusters_.end()) return notFound("no cluster named " + quote(cluster));
  std::vector<Revision> out;
  auto revisions = revisions_.find(it->first);
  if (revisions != revisions_.end()) {
    for (const auto& [number, revision] : revisions->second) out.push_back(revision);
  }
  return out;
}

Status FakeStore::setRevisionState(const std::string& cluster, int64_t revision,
                                   RevisionState state, const std::string& error) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  auto it = std::find_if(clusters_.begin(), clusters_.end(),
                         [&](const auto& entry) { return entry.second.spec.name == cluster; });
  if (it == clusters_.end()) return notFound("no cluster named " + quote(cluster));
  auto& history = revisions_[it->first];
  auto r = history.find(revision);
  if (r == history.end())
    return notFound("cluster " + quote(cluster) + " has no revision " + std::to_string(revision));
  r->second.state = state;
  r->second.error = error;
  return Status::ok();
}

StatusOr<Volume> FakeStore::createVolume(const Volume& volume) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  if (volume.name.empty()) return invalidArgument("volume name must not be empty");
  if (!volumes_.emplace(volume.name, volume).second)
    return conflict("a volume named " + quote(volume.name) + " already exists");
  return volume;
}

StatusOr<Volume> FakeStore::getVolume(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  auto it = volumes_.find(name);
  if (it == volumes_.end()) return notFound("no volume named " + quote(name));
  return it->second;
}

StatusOr<std::vector<Volume>> FakeStore::listVolumes() {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  std::vector<Volume> out;
  for (const auto& [name, v] : volumes_) out.push_back(v);
  return out;
}

Status FakeStore::deleteVolume(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  if (!volumes_.erase(name)) return notFound("no volume named " + quote(name));
  return Status::ok();
}

StatusOr<Account> FakeStore::createAccount(const Account& account) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  if (account.name.empty()) return invalidArgument("account name must not be empty");
  if (accounts_.count(account.name))
    return conflict("an account named " + quote(account.name) + " already exists");
  accounts_[account.name] = account;
  return account;
}

StatusOr<Account> FakeStore::getAccount(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  auto it = accounts_.find(name);
  if (it == accounts_.end()) return notFound("no account named " + quote(name));
  return it->second;
}

StatusOr<std::vector<Account>> FakeStore::listAccounts() {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  std::vector<Account> out;
  for (const auto& [name, a] : accounts_) out.push_back(a);
  return out;
}

Status FakeStore::deleteAccount(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  if (!accounts_.erase(name)) return notFound("no account named " + quote(name));
  for (auto it = tokens_.begin(); it != tokens_.end();)
    it = it->second.user == name ? tokens_.erase(it) : std::next(it);
  return Status::ok();
}

StatusOr<ApiToken> FakeStore::createToken(const ApiToken& token) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  if (token.hash.empty()) return invalidArgument("token hash must not be empty");
  if (!accounts_.count(token.user)) return notFound("no account named " + quote(token.user));
  for (const auto& [id, t] : tokens_)
    if (t.hash == token.hash) return conflict("a token with this hash already exists");
  ApiToken stored = token;
  stored.id = nextTokenId_++;
  tokens_[stored.id] = stored;
  return stored;
}

StatusOr<ApiToken> FakeStore::findToken(const std::string& hash) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  for (const auto& [id, t] : tokens_)
    if (t.hash == hash) return t;
  return notFound("no such token");
}

StatusOr<std::vector<ApiToken>> FakeStore::listTokens() {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  std::vector<ApiToken> out;
  for (const auto& [id, t] : tokens_) out.push_back(t);
  return out;
}

Status FakeStore::deleteToken(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto fault = takeFault()) return *fault;
  if (!tokens_.erase(id)) return notFound("no token with id " + std::to_string(id));
  return Status::ok();
}

}  // namespace corral
