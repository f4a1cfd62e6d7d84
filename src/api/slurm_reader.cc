#include "api/slurm_reader.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "common/log.h"

namespace corral {

namespace {

std::vector<std::string> argvFor(JobCache::Kind kind) {
  if (kind == JobCache::Kind::kQueue) return {"squeue", "--json"};
  return {"sacct", "--json", "--allusers", "--starttime", "now-7days"};
}

std::vector<std::string> exitCodeArgv() {
  std::vector<std::string> argv = {"sacct", "--allusers", "--starttime", "now-7days"};
  argv.insert(argv.end(), kSacctExitCodeArgs.begin(), kSacctExitCodeArgs.end());
  return argv;
}

}  // namespace

nlohmann::json jobJson(const Job& j) {
  using nlohmann::json;
  return {{"id", j.id},
          {"arrayJobId", j.arrayJobId},
          {"arrayTaskId", j.arrayTaskId ? json(*j.arrayTaskId) : json(nullptr)},
          {"name", j.name},
          {"user", j.user},
          {"partition", j.partition},
          {"state", j.state},
          {"reason", j.reason},
          {"nodes", j.nodes},
          {"nodeCount", j.nodeCount},
          {"cpus", j.cpus},
          {"tres", j.tres},
          {"submitTime", j.submitTime},
          {"startTime", j.startTime},
          {"endTime", j.endTime},
          {"timeLimit", j.timeLimit},
          {"workDir", j.workDir},
          {"command", j.command},
          {"exitCode", j.exitCode},
          {"stdout", j.stdoutPath}};
}

JobCache::JobCache(SlurmFetch fetch, Clock& clock, Options options)
    : fetch_(std::move(fetch)), clock_(clock), options_(options) {
  thread_ = std::thread([this] { refresher(); });
}

JobCache::~JobCache() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

StatusOr<std::shared_ptr<const JobSnapshot>> JobCache::read(const Key& key) {
  // Whatever Slurm printed, a read ends in a snapshot or an error, never an
  // exception: a reader that threw would leave its entry "refreshing" and
  // every later reader waiting.
  try {
    return readOrThrow(key);
  } catch (const std::exception& e) {
    return unavailable(std::string("reading Slurm's answer failed: ") + e.what());
  }
}

StatusOr<std::shared_ptr<const JobSnapshot>> JobCache::readOrThrow(const Key& key) {
  auto out = fetch_(key.first, argvFor(key.second));
  if (!out.isOk()) return out.status();
  auto jobs = key.second == Kind::kQueue ? parseSqueueJson(*out) : parseSacctJson(*out);
  // Output Slurm should not have printed is Slurm's trouble, not the caller's.
  if (!jobs.isOk()) return unavailable(jobs.status().message());
  auto snap = std::make_shared<JobSnapshot>();
  snap->readAt = clock_.unixMillis();
  if (key.second == Kind::kQueue) {
    for (auto& j : *jobs)
      if (!jobFinished(j.state)) snap->jobs.push_back(std::move(j));
  } else {
    auto codes = fetch_(key.first, exitCodeArgv());
    if (codes.isOk()) applySacctExitCodes(*jobs, *codes);
    snap->jobs = std::move(*jobs);
  }
  snap->json.reserve(snap->jobs.size());
  for (const Job& j : snap->jobs)
    snap->json.push_back(jobJson(j).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return std::shared_ptr<const JobSnapshot>(std::move(snap));
}

StatusOr<std::shared_ptr<const JobSnapshot>> JobCache::get(const std::string& cluster, Kind kind) {
  Key key{cluster, kind};
  std::unique_lock<std::mutex> l(mu_);
  Entry& e = entries_[key];
  auto age = clock_.now() - e.readAt;
  if (e.snapshot && age < freshFor(e)) return e.snapshot;
  if (e.snapshot && age < options_.stale) {
    if (!e.refreshing) {
      e.refreshing = true;
      pending_.push_back(key);
      cv_.notify_all();
    }
    return e.snapshot;
  }
  if (e.refreshing) {
    // Another caller (or the refresher) is reading it: share its answer.
    cv_.wait(l, [&] { return !entries_[key].refreshing || stopping_; });
    Entry& now = entries_[key];
    if (now.snapshot) return now.snapshot;
    return now.lastError.isOk() ? unavailable("Slurm did not answer") : now.lastError;
  }
  e.refreshing = true;
  return refresh(key, l);
}

StatusOr<std::shared_ptr<const JobSnapshot>> JobCache::refresh(const Key& key,
                                                               std::unique_lock<std::mutex>& l) {
  l.unlock();
  auto started = std::chrono::steady_clock::now();
  auto snap = read(key);
  auto cost = std::chrono::steady_clock::now() - started;
  l.lock();
  Entry& e = entries_[key];
  e.refreshing = false;
  e.cost = cost;
  if (snap.isOk()) {
    e.snapshot = *snap;
    e.readAt = clock_.now();
    e.lastError = Status::ok();
  } else {
    e.lastError = snap.status();
    LOG_DEBUG("cluster " << key.first << ": reading jobs: " << snap.status().message());
  }
  cv_.notify_all();
  return snap;
}

std::chrono::steady_clock::duration JobCache::freshFor(const Entry& e) const {
  return std::max<std::chrono::steady_clock::duration>(options_.fresh, 5 * e.cost);
}

void JobCache::forget(const std::string& cluster) {
  std::lock_guard<std::mutex> l(mu_);
  for (auto it = entries_.begin(); it != entries_.end();)
    it = it->first.first == cluster && !it->second.refreshing ? entries_.erase(it) : std::next(it);
}

void JobCache::refresher() {
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    cv_.wait(l, [&] { return stopping_ || !pending_.empty(); });
    if (stopping_) return;
    Key key = pending_.front();
    pending_.pop_front();
    (void)refresh(key, l);
  }
}

std::string nodeStateBucket(const std::string& state) {
  std::string s = state;
  while (!s.empty() && (s.back() == '*' || s.back() == '~' || s.back() == '#' ||
                        s.back() == '!' || s.back() == '%' || s.back() == '$' || s.back() == '@' ||
                        s.back() == '^' || s.back() == '-'))
    s.pop_back();
  if (state.size() > s.size() && state.back() == '*') return "down";  // Not responding.
  if (s == "idle" || s == "allocated" || s == "mixed") return s;
  if (s.rfind("down", 0) == 0) return "down";
  if (s.rfind("drain", 0) == 0) return "drained";
  return "other";
}

MetricsRecorder::MetricsRecorder(Source source, Clock& clock, std::chrono::milliseconds period,
                                 size_t keep)
    : source_(std::move(source)), clock_(clock), period_(period), keep_(keep) {}

MetricsRecorder::~MetricsRecorder() { stop(); }

void MetricsRecorder::start() {
  std::lock_guard<std::mutex> l(mu_);
  if (thread_.joinable() || period_.count() <= 0) return;
  stopping_ = false;
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> l(mu_);
    while (!stopping_) {
      l.unlock();
      try {
        sampleAll();
      } catch (const std::exception& e) {
        LOG_WARN("sampling metrics failed: " << e.what());
      }
      l.lock();
      cv_.wait_for(l, period_, [&] { return stopping_; });
    }
  });
}

void MetricsRecorder::stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void MetricsRecorder::sampleAll() {
  std::vector<std::string> clusters = source_.clusters();
  std::set<std::string> live(clusters.begin(), clusters.end());
  for (const auto& c : clusters) {
    MetricsSample s;
    s.time = clock_.unixMillis();
    for (const char* b : {"idle", "allocated", "mixed", "down", "drained", "other"}) s.nodes[b] = 0;
    for (const auto& [node, state] : source_.nodeStates(c)) ++s.nodes[nodeStateBucket(state)];
    // %t: the compact state (PD, R, CG, …); one short line per job.
    auto out = source_.fetch(c, {"squeue", "-h", "-o", "%t"});
    if (out.isOk()) {
      std::istringstream lines(*out);
      std::string line;
      while (std::getline(lines, line)) {
        if (line == "PD") ++s.pending;
        else if (line == "R" || line == "CG") ++s.running;
      }
    }
    std::lock_guard<std::mutex> l(mu_);
    auto& q = samples_[c];
    q.push_back(std::move(s));
    while (q.size() > keep_) q.pop_front();
  }
  std::lock_guard<std::mutex> l(mu_);
  for (auto it = samples_.begin(); it != samples_.end();)
    it = live.count(it->first) ? std::next(it) : samples_.erase(it);
}

std::vector<MetricsSample> MetricsRecorder::samples(const std::string& cluster) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = samples_.find(cluster);
  if (it == samples_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

}  // namespace corral
