#include "slurm/jobs.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace corral {

using nlohmann::json;

namespace {

// A number as 22.05 writes it (plain) or as later releases do
// ({"set": true, "infinite": false, "number": 5}); nullopt when absent,
// unset or infinite.
std::optional<int64_t> number(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  const json* v = &*it;
  if (v->is_object()) {
    auto flag = [&](const char* name, bool dflt) {
      auto f = v->find(name);
      return f != v->end() && f->is_boolean() ? f->get<bool>() : dflt;
    };
    if (flag("infinite", false) || !flag("set", true)) return std::nullopt;
    auto n = v->find("number");
    if (n == v->end()) return std::nullopt;
    v = &*n;
  }
  if (v->is_number_integer()) return v->get<int64_t>();
  if (v->is_number_float()) {
    // Only what fits: a cast of 1e300 is undefined behaviour.
    double d = v->get<double>();
    if (d >= -9.2e18 && d <= 9.2e18) return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

std::string text(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  // Later releases make some strings lists (job_state: ["RUNNING"]).
  if (it->is_array() && !it->empty() && (*it)[0].is_string()) return (*it)[0].get<std::string>();
  return "";
}

StatusOr<json> parseJobs(const std::string& text, const char* tool) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("jobs") || !doc["jobs"].is_array())
    return invalidArgument(std::string(tool) + " --json did not print Slurm's JSON");
  return doc;
}

std::string exitCodeOf(const json& j) {
  auto it = j.find("exit_code");
  if (it == j.end()) return "";
  if (it->is_number_integer()) {
    // squeue: the wait status.
    int64_t status = it->get<int64_t>();
    return std::to_string((status >> 8) & 0xff) + ":" + std::to_string(status & 0x7f);
  }
  if (it->is_object()) {
    // sacct: {"status": "COMPLETED", "return_code": 0, "signal": {...}}.
    auto rc = number(*it, "return_code").value_or(0);
    int64_t sig = 0;
    if (auto s = it->find("signal"); s != it->end() && s->is_object())
      sig = number(*s, "signal_id").value_or(0);
    return std::to_string(rc) + ":" + std::to_string(sig);
  }
  return "";
}

}  // namespace

bool jobFinished(const std::string& state) {
  static const std::set<std::string> kFinished = {
      "COMPLETED", "FAILED",   "CANCELLED",     "TIMEOUT", "NODE_FAIL",   "PREEMPTED",
      "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "REVOKED", "SPECIAL_EXIT"};
  return kFinished.count(state) > 0;
}

std::string expandOutputPattern(const std::string& pattern, const Job& job) {
  std::string p = pattern;
  if (p.empty()) p = job.arrayJobId != 0 ? "slurm-%A_%a.out" : "slurm-%j.out";
  std::string out;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != '%' || i + 1 == p.size()) {
      out.push_back(p[i]);
      continue;
    }
    char c = p[++i];
    switch (c) {
      case '%': out.push_back('%'); break;
      case 'j': out += std::to_string(job.id); break;
      case 'x': out += job.name; break;
      case 'u': out += job.user; break;
      case 'A': out += std::to_string(job.arrayJobId != 0 ? job.arrayJobId : job.id); break;
      case 'a': out += job.arrayTaskId ? std::to_string(*job.arrayTaskId) : "4294967294"; break;
      default:
        out.push_back('%');
        out.push_back(c);
    }
  }
  if (!out.empty() && out[0] != '/' && !job.workDir.empty()) out = job.workDir + "/" + out;
  return out;
}

std::string formatTimeLimit(std::optional<int64_t> minutes) {
  if (!minutes || *minutes < 0 || *minutes >= 0xfffffffe) return "UNLIMITED";
  int64_t m = *minutes;
  int64_t days = m / (24 * 60), hours = (m / 60) % 24, mins = m % 60;
  char buf[48];
  if (days > 0)
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:00", static_cast<long long>(days),
                  static_cast<long long>(hours), static_cast<long long>(mins));
  else
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:00", static_cast<long long>(hours),
                  static_cast<long long>(mins));
  return buf;
}

namespace {

// Slurm's JSON `jobs` list of `tool`, each object made a Job by `read`,
// sorted by id; members that are not objects are skipped.
template <typename ReadJob>
StatusOr<std::vector<Job>> eachJob(const std::string& input, const char* tool, ReadJob read) {
  ASSIGN_OR_RETURN(json doc, parseJobs(input, tool));
  std::vector<Job> jobs;
  jobs.reserve(doc["jobs"].size());
  for (const json& j : doc["jobs"])
    if (j.is_object()) jobs.push_back(read(j));
  std::sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.id < b.id; });
  return jobs;
}

}  // namespace

StatusOr<std::vector<Job>> parseSqueueJson(const std::string& input) {
  return eachJob(input, "squeue", [](const json& j) {
    Job job;
    job.id = number(j, "job_id").value_or(0);
    job.arrayJobId = number(j, "array_job_id").value_or(0);
    if (job.arrayJobId != 0) job.arrayTaskId = number(j, "array_task_id");
    job.name = text(j, "name");
    job.user = text(j, "user_name");
    job.partition = text(j, "partition");
    job.state = text(j, "job_state");
    job.reason = text(j, "state_reason");
    job.nodes = text(j, "nodes");
    job.nodeCount = number(j, "node_count").value_or(0);
    job.cpus = number(j, "cpus").value_or(0);
    job.tres = text(j, "tres_alloc_str");
    if (job.tres.empty()) job.tres = text(j, "tres_req_str");
    job.submitTime = number(j, "submit_time").value_or(0);
    job.startTime = number(j, "start_time").value_or(0);
    job.endTime = number(j, "end_time").value_or(0);
    // A pending job's start and an active job's end are Slurm's estimates;
    // show none.
    if (job.state == "PENDING") job.startTime = 0;
    if (!jobFinished(job.state) && job.state != "COMPLETING") job.endTime = 0;
    job.timeLimit = formatTimeLimit(number(j, "time_limit"));
    job.workDir = text(j, "current_working_directory");
    job.command = text(j, "command");
    job.exitCode = exitCodeOf(j);
    if (auto batch = j.find("batch_flag"); batch != j.end() && batch->is_boolean() && batch->get<bool>())
      job.stdoutPath = expandOutputPattern(text(j, "standard_output"), job);
    else
      job.stdoutPath = text(j, "standard_output");
    return job;
  });
}

StatusOr<std::vector<Job>> parseSacctJson(const std::string& input) {
  return eachJob(input, "sacct", [](const json& j) {
    Job job;
    job.id = number(j, "job_id").value_or(0);
    if (auto a = j.find("array"); a != j.end() && a->is_object()) {
      job.arrayJobId = number(*a, "job_id").value_or(0);
      if (job.arrayJobId != 0) job.arrayTaskId = number(*a, "task_id");
    }
    job.name = text(j, "name");
    job.user = text(j, "user");
    job.partition = text(j, "partition");
    if (auto s = j.find("state"); s != j.end() && s->is_object()) {
      job.state = text(*s, "current");
      job.reason = text(*s, "reason");
    }
    job.nodes = text(j, "nodes");
    if (job.nodes == "None assigned") job.nodes.clear();
    if (auto t = j.find("time"); t != j.end() && t->is_object()) {
      job.submitTime = number(*t, "submission").value_or(0);
      job.startTime = number(*t, "start").value_or(0);
      job.endTime = number(*t, "end").value_or(0);
      job.timeLimit = formatTimeLimit(number(*t, "limit"));
    }
    if (auto t = j.find("tres"); t != j.end() && t->is_object()) {
      auto alloc = t->find("allocated");
      if (alloc != t->end() && alloc->is_array()) {
        std::string out;
        for (const json& r : *alloc) {
          if (!r.is_object()) continue;
          std::string type = text(r, "type"), name = text(r, "name");
          auto count = number(r, "count");
          if (type.empty() || !count) continue;
          if (type == "cpu") job.cpus = *count;
          if (type == "node") job.nodeCount = *count;
          out += (out.empty() ? "" : ",") + type + (name.empty() ? "" : "/" + name) + "=" +
                 std::to_string(*count);
        }
        job.tres = out;
      }
    }
    job.workDir = text(j, "working_directory");
    job.exitCode = exitCodeOf(j);
    return job;
  });
}

void applySacctExitCodes(std::vector<Job>& jobs, const std::string& parsable) {
  std::map<int64_t, std::string> codes;
  size_t start = 0;
  while (start < parsable.size()) {
    size_t end = parsable.find('\n', start);
    if (end == std::string::npos) end = parsable.size();
    std::string line = parsable.substr(start, end - start);
    start = end + 1;
    size_t bar = line.find('|');
    if (bar == std::string::npos) continue;
    int64_t id = 0;
    auto [p, ec] = std::from_chars(line.data(), line.data() + bar, id);
    if (ec != std::errc() || p != line.data() + bar) continue;
    codes[id] = line.substr(bar + 1);
  }
  for (Job& j : jobs)
    if (auto it = codes.find(j.id); it != codes.end()) j.exitCode = it->second;
}

bool JobFilter::matches(const Job& job) const {
  if (!states.empty() && std::find(states.begin(), states.end(), job.state) == states.end())
    return false;
  if (!user.empty() && job.user != user) return false;
  if (!partition.empty() && job.partition != partition) return false;
  if (!text.empty() && job.name.find(text) == std::string::npos &&
      std::to_string(job.id).find(text) == std::string::npos)
    return false;
  return true;
}

}  // namespace corral
