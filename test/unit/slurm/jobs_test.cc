// Jobs read from Slurm's JSON (src/slurm/jobs.h) and the cache in front of
// it (src/api/slurm_reader.h).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "api/slurm_reader.h"
#include "fakes/fake_clock.h"
#include "slurm/jobs.h"

namespace corral {
namespace {

// The shape of Slurm 22.05's `squeue --json` (trimmed to what we read, plus
// a few fields we ignore).
const char* kSqueue = R"({
  "meta": {"plugin": {"type": "openapi/dbv0.0.38"}, "Slurm": {"version": {"major": 22, "minor": 5}}},
  "errors": [],
  "jobs": [
    {"job_id": 12, "array_job_id": 0, "array_task_id": null, "name": "train", "user_name": "alice",
     "partition": "slinky", "job_state": "RUNNING", "state_reason": "None", "nodes": "slinky-[0-1]",
     "node_count": 2, "cpus": 2, "tres_alloc_str": "cpu=2,node=2,billing=2,gres/gpu=4",
     "tres_req_str": "cpu=2,node=2", "submit_time": 1764464400, "start_time": 1764464401,
     "end_time": 1764468001, "time_limit": 60, "current_working_directory": "/shared",
     "command": "/shared/train.sh", "exit_code": 0, "standard_output": "out-%x-%j.txt",
     "batch_flag": true,
     "account": "", "priority": 4294901759},
    {"job_id": 11, "array_job_id": 10, "array_task_id": 1, "name": "sweep", "user_name": "bob",
     "partition": "short", "job_state": "PENDING", "state_reason": "Resources", "nodes": "",
     "node_count": 1, "cpus": 1, "tres_req_str": "cpu=1,node=1", "submit_time": 1764464300,
     "start_time": 1764470000, "end_time": 1764473600, "time_limit": 4294967294,
     "exit_code": 256, "batch_flag": true, "standard_output": "", "current_working_directory": "/home/bob"},
    {"job_id": 9, "name": "old", "user_name": "bob", "partition": "slinky",
     "job_state": "COMPLETED", "state_reason": "None", "time_limit": 1500, "exit_code": 768}
  ]
})";

// The shape of 22.05's `sacct --json`.
const char* kSacct = R"({
  "meta": {},
  "errors": [],
  "jobs": [
    {"job_id": 7, "name": "bad", "user": "alice", "partition": "slinky", "nodes": "slinky-0",
     "array": {"job_id": 0, "task_id": null},
     "state": {"current": "FAILED", "reason": "None"},
     "exit_code": {"status": "FAILED", "return_code": 3},
     "time": {"submission": 100, "start": 101, "end": 105, "limit": 30, "elapsed": 4},
     "tres": {"allocated": [{"type": "cpu", "name": "", "id": 1, "count": 1},
                            {"type": "node", "name": "", "id": 4, "count": 1},
                            {"type": "gres", "name": "gpu", "id": 1001, "count": 2}],
              "requested": []},
     "working_directory": "/shared", "steps": [{"step": {"name": "batch"}}]},
    {"job_id": 5, "name": "never", "user": "bob", "partition": "slinky", "nodes": "None assigned",
     "state": {"current": "CANCELLED", "reason": "None"},
     "exit_code": {"status": "SUCCESS", "return_code": 0},
     "time": {"submission": 90, "start": 0, "end": 95,
              "limit": {"set": true, "infinite": false, "number": 2880}}}
  ]
})";

TEST(JobsTest, ParsesSqueueJsonAndSortsById) {
  auto jobs = parseSqueueJson(kSqueue);
  ASSERT_TRUE(jobs.isOk()) << jobs.status().toString();
  ASSERT_EQ(jobs->size(), 3u);
  const Job& old = (*jobs)[0];
  EXPECT_EQ(old.id, 9);
  EXPECT_EQ(old.timeLimit, "1-01:00:00");
  EXPECT_EQ(old.exitCode, "3:0");
  const Job& pending = (*jobs)[1];
  EXPECT_EQ(pending.id, 11);
  EXPECT_EQ(pending.arrayJobId, 10);
  EXPECT_EQ(pending.arrayTaskId, 1);
  EXPECT_EQ(pending.state, "PENDING");
  EXPECT_EQ(pending.reason, "Resources");
  EXPECT_EQ(pending.startTime, 0) << "a pending job's start is only an estimate";
  EXPECT_EQ(pending.stdoutPath, "/home/bob/slurm-10_1.out");
  EXPECT_EQ(pending.timeLimit, "UNLIMITED");
  EXPECT_EQ(pending.tres, "cpu=1,node=1") << "requested TRES when none is allocated";
  EXPECT_EQ(pending.exitCode, "1:0");
  const Job& running = (*jobs)[2];
  EXPECT_EQ(running.id, 12);
  EXPECT_FALSE(running.arrayTaskId.has_value());
  EXPECT_EQ(running.user, "alice");
  EXPECT_EQ(running.nodes, "slinky-[0-1]");
  EXPECT_EQ(running.nodeCount, 2);
  EXPECT_EQ(running.tres, "cpu=2,node=2,billing=2,gres/gpu=4");
  EXPECT_EQ(running.startTime, 1764464401);
  EXPECT_EQ(running.timeLimit, "01:00:00");
  EXPECT_EQ(running.workDir, "/shared");
  EXPECT_EQ(running.stdoutPath, "/shared/out-train-12.txt");
  EXPECT_EQ(running.endTime, 0) << "a running job's end is only an estimate";
}

TEST(JobsTest, ParsesSacctJsonWithOldAndNewNumberShapes) {
  auto jobs = parseSacctJson(kSacct);
  ASSERT_TRUE(jobs.isOk()) << jobs.status().toString();
  ASSERT_EQ(jobs->size(), 2u);
  const Job& cancelled = (*jobs)[0];
  EXPECT_EQ(cancelled.id, 5);
  EXPECT_EQ(cancelled.nodes, "");
  EXPECT_EQ(cancelled.timeLimit, "2-00:00:00");
  const Job& failed = (*jobs)[1];
  EXPECT_EQ(failed.state, "FAILED");
  EXPECT_EQ(failed.exitCode, "3:0");
  EXPECT_EQ(failed.cpus, 1);
  EXPECT_EQ(failed.nodeCount, 1);
  EXPECT_EQ(failed.tres, "cpu=1,node=1,gres/gpu=2");
  EXPECT_EQ(failed.endTime, 105);
}

TEST(JobsTest, ExitCodesComeFromSacctsTextOutput) {
  auto jobs = *parseSacctJson(kSacct);
  applySacctExitCodes(jobs, "5|0:0\n7|3:0\nnonsense\n|1:0\n99|2:0\n");
  EXPECT_EQ(jobs[0].exitCode, "0:0");
  EXPECT_EQ(jobs[1].exitCode, "3:0");
}

TEST(JobsTest, RejectsWhatIsNotSlurmsJson) {
  for (const char* bad : {"", "squeue: error: …", "[]", R"({"jobs": 5})", R"({"meta": {}})"}) {
    EXPECT_EQ(parseSqueueJson(bad).status().code(), Code::kInvalidArgument) << bad;
    EXPECT_EQ(parseSacctJson(bad).status().code(), Code::kInvalidArgument) << bad;
  }
  // Odd members are skipped, not fatal.
  auto odd = parseSqueueJson(R"({"jobs": [5, {"job_id": "x", "name": 7}, {"job_id": 3}]})");
  ASSERT_TRUE(odd.isOk());
  EXPECT_EQ(odd->size(), 2u);
}

TEST(JobsTest, FiltersMatchStateUserPartitionAndText) {
  auto jobs = *parseSqueueJson(kSqueue);
  auto ids = [&](const JobFilter& f) {
    std::vector<int64_t> out;
    for (const auto& j : jobs)
      if (f.matches(j)) out.push_back(j.id);
    return out;
  };
  EXPECT_EQ(ids({}), (std::vector<int64_t>{9, 11, 12}));
  EXPECT_EQ(ids({{"PENDING", "RUNNING"}, "", "", ""}), (std::vector<int64_t>{11, 12}));
  EXPECT_EQ(ids({{}, "bob", "", ""}), (std::vector<int64_t>{9, 11}));
  EXPECT_EQ(ids({{}, "", "short", ""}), (std::vector<int64_t>{11}));
  EXPECT_EQ(ids({{}, "", "", "trai"}), (std::vector<int64_t>{12}));
  EXPECT_EQ(ids({{}, "", "", "12"}), (std::vector<int64_t>{12}));
}

TEST(JobsTest, NodeStatesFallIntoTheChartsBuckets) {
  EXPECT_EQ(nodeStateBucket("idle"), "idle");
  EXPECT_EQ(nodeStateBucket("idle*"), "down");
  EXPECT_EQ(nodeStateBucket("mixed"), "mixed");
  EXPECT_EQ(nodeStateBucket("allocated"), "allocated");
  EXPECT_EQ(nodeStateBucket("down*"), "down");
  EXPECT_EQ(nodeStateBucket("drained"), "drained");
  EXPECT_EQ(nodeStateBucket("draining"), "drained");
  EXPECT_EQ(nodeStateBucket("completing"), "other");
}

TEST(JobCacheTest, ServesFreshReadsAndSharesOneSlurmCall) {
  FakeClock clock;
  std::atomic<int> calls{0};
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  JobCache cache(
      [&](const std::string&, const std::vector<std::string>& argv) -> StatusOr<std::string> {
        EXPECT_EQ(argv, (std::vector<std::string>{"squeue", "--json"}));
        ++calls;
        released.wait();
        return std::string(kSqueue);
      },
      clock, {});
  // Two readers arrive while nothing is cached: one Slurm call between them.
  auto a = std::async(std::launch::async, [&] { return cache.get("c", JobCache::Kind::kQueue); });
  auto b = std::async(std::launch::async, [&] { return cache.get("c", JobCache::Kind::kQueue); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  release.set_value();
  auto ra = a.get(), rb = b.get();
  ASSERT_TRUE(ra.isOk());
  ASSERT_TRUE(rb.isOk());
  EXPECT_EQ(calls, 1);
  // The queue leaves out finished jobs (they are history).
  EXPECT_EQ((*ra)->jobs.size(), 2u);
  // Fresh: served without asking Slurm.
  clock.advance(1000);
  EXPECT_TRUE(cache.get("c", JobCache::Kind::kQueue).isOk());
  EXPECT_EQ(calls, 1);
}

TEST(JobCacheTest, StaleReadsAreServedWhileOneRefreshRunsBehind) {
  FakeClock clock;
  std::atomic<int> calls{0};
  JobCache cache(
      [&](const std::string&, const std::vector<std::string>&) -> StatusOr<std::string> {
        ++calls;
        return std::string(kSqueue);
      },
      clock, {});
  auto first = cache.get("c", JobCache::Kind::kQueue);
  ASSERT_TRUE(first.isOk());
  clock.advance(5000);
  auto stale = cache.get("c", JobCache::Kind::kQueue);
  ASSERT_TRUE(stale.isOk());
  EXPECT_EQ(stale->get(), first->get()) << "the stale snapshot is answered at once";
  for (int i = 0; i < 200 && calls < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(calls, 2) << "one refresh behind the scenes";
  // Too old to serve: the caller waits for Slurm.
  clock.advance(120000);
  auto fresh = cache.get("c", JobCache::Kind::kQueue);
  ASSERT_TRUE(fresh.isOk());
  EXPECT_GE(calls, 3);
}

TEST(JobCacheTest, ASlurmErrorIsReportedAndNotCached) {
  FakeClock clock;
  bool fail = true;
  JobCache cache(
      [&](const std::string&, const std::vector<std::string>&) -> StatusOr<std::string> {
        if (fail) return unavailable("squeue failed: slurm_load_jobs error");
        return std::string(kSqueue);
      },
      clock, {});
  auto r = cache.get("c", JobCache::Kind::kHistory);
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  fail = false;
  auto again = cache.get("c", JobCache::Kind::kHistory);
  ASSERT_TRUE(again.isOk()) << again.status().toString();
}

TEST(MetricsRecorderTest, SamplesNodeStatesAndQueueLengthAndKeepsTheNewest) {
  FakeClock clock;
  MetricsRecorder::Source source;
  source.clusters = [] { return std::vector<std::string>{"c"}; };
  source.nodeStates = [](const std::string&) {
    return std::map<std::string, std::string>{
        {"slinky-0", "idle"}, {"slinky-1", "allocated"}, {"slinky-2", "down*"}};
  };
  source.fetch = [](const std::string&, const std::vector<std::string>&) -> StatusOr<std::string> {
    return std::string("PD\nPD\nR\nCG\n");
  };
  MetricsRecorder m(source, clock, std::chrono::milliseconds(0), /*keep=*/2);
  for (int i = 0; i < 3; ++i) {
    m.sampleAll();
    clock.advance(10000);
  }
  auto samples = m.samples("c");
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[1].time - samples[0].time, 10000);
  EXPECT_EQ(samples[1].nodes.at("idle"), 1);
  EXPECT_EQ(samples[1].nodes.at("allocated"), 1);
  EXPECT_EQ(samples[1].nodes.at("down"), 1);
  EXPECT_EQ(samples[1].nodes.at("drained"), 0);
  EXPECT_EQ(samples[1].pending, 2);
  EXPECT_EQ(samples[1].running, 2);
  EXPECT_TRUE(m.samples("other").empty());
}

}  // namespace
}  // namespace corral
