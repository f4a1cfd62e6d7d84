#pragma once

// What the API reads from Slurm rather than from the store: the job queue,
// the job history and samples of node and queue state over time.
//
// `JobCache` keeps each cluster's last `squeue --json` / `sacct --json`,
// parsed. A read younger than `fresh` is served as is; an older one is
// served too, while one background refresh replaces it; only a cluster with
// nothing cached (or nothing younger than `stale`) makes its caller wait, and
// then concurrent callers share one Slurm call. So a queue of 10,000 jobs
// costs one squeue every couple of seconds however many people look.
//
// `MetricsRecorder` samples every Running cluster's node states (as the
// reconciler last saw them) and queue length every `period`, keeping the
// last hour in memory for the console's charts.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "corral/clock.h"
#include "corral/status.h"
#include "slurm/jobs.h"

namespace corral {

// Runs a Slurm command in a cluster's controller pod; stdout, or an error.
using SlurmFetch = std::function<StatusOr<std::string>(const std::string& cluster,
                                                        const std::vector<std::string>& argv)>;

struct JobSnapshot {
  std::vector<Job> jobs;  // By id.
  // Each job's API JSON, serialised once when read (see `jobJson`), so that
  // a page of 10,000 jobs is assembled by concatenation.
  std::vector<std::string> json;
  int64_t readAt = 0;  // Unix ms.
};

// The API's `Job` (docs/api.md).
nlohmann::json jobJson(const Job& job);

class JobCache {
 public:
  enum class Kind { kQueue, kHistory };
  struct Options {
    std::chrono::milliseconds fresh{2000};
    std::chrono::milliseconds stale{60000};
  };
  JobCache(SlurmFetch fetch, Clock& clock, Options options);
  ~JobCache();

  StatusOr<std::shared_ptr<const JobSnapshot>> get(const std::string& cluster, Kind kind);
  // Drops what is cached for a cluster (it was deleted or stopped).
  void forget(const std::string& cluster);

 private:
  using Key = std::pair<std::string, Kind>;
  struct Entry {
    std::shared_ptr<const JobSnapshot> snapshot;
    std::chrono::steady_clock::time_point readAt;
    bool refreshing = false;
    Status lastError;
    // How long the last read took; a slow Slurm is asked less often (see
    // `freshFor`).
    std::chrono::steady_clock::duration cost{};
  };
  // How long `e`'s snapshot is served without a refresh: `fresh`, or five
  // times what reading it cost, so refreshing takes at most a fifth of the
  // time even for a queue that takes seconds to print.
  std::chrono::steady_clock::duration freshFor(const Entry& e) const;
  StatusOr<std::shared_ptr<const JobSnapshot>> read(const Key& key);
  StatusOr<std::shared_ptr<const JobSnapshot>> readOrThrow(const Key& key);
  // Reads `key` with `l` released (its entry already marked refreshing),
  // stores the result and wakes whoever waits for it. `l` must hold `mu_`.
  StatusOr<std::shared_ptr<const JobSnapshot>> refresh(const Key& key,
                                                       std::unique_lock<std::mutex>& l);
  void refresher();

  SlurmFetch fetch_;
  Clock& clock_;
  Options options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, Entry> entries_;
  std::deque<Key> pending_;
  bool stopping_ = false;
  std::thread thread_;
};

struct MetricsSample {
  int64_t time = 0;  // Unix ms.
  std::map<std::string, int> nodes;  // idle, allocated, mixed, down, drained, other.
  int pending = 0;
  int running = 0;
};

// Buckets a Slurm node state (sinfo %T: "idle", "down*", "drained", …) into
// the sample's categories.
std::string nodeStateBucket(const std::string& state);

class MetricsRecorder {
 public:
  struct Source {
    // Names of the clusters to sample now (the Running ones).
    std::function<std::vector<std::string>()> clusters;
    // Slurm node state by node, as last observed.
    std::function<std::map<std::string, std::string>(const std::string& cluster)> nodeStates;
    SlurmFetch fetch;
  };
  MetricsRecorder(Source source, Clock& clock, std::chrono::milliseconds period,
                  size_t keep = 360);
  ~MetricsRecorder();

  void start();
  void stop();
  // Takes one sample of every cluster now.
  void sampleAll();
  std::vector<MetricsSample> samples(const std::string& cluster);
  std::chrono::milliseconds period() const { return period_; }

 private:
  Source source_;
  Clock& clock_;
  std::chrono::milliseconds period_;
  size_t keep_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::map<std::string, std::deque<MetricsSample>> samples_;
  std::thread thread_;
};

}  // namespace corral
