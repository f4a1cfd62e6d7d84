// Jobs and metrics (docs/api.md "Jobs and metrics"): the queue and history
// read from Slurm through `JobCache`, one job's details, and the samples the
// console charts.

#include <charconv>

#include "api/http_util.h"
#include "api/server.h"
#include "common/text.h"

namespace corral {

using nlohmann::json;

namespace {

constexpr int64_t kDefaultLimit = 500;
constexpr int64_t kMaxLimit = 10000;

StatusOr<int64_t> queryInt(const httplib::Request& req, const char* key, int64_t dflt, int64_t max) {
  if (!req.has_param(key)) return dflt;
  std::string v = req.get_param_value(key);
  int64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || n < 0 || n > max)
    return invalidArgument(std::string("query parameter \"") + key + "\" must be an integer from 0 to " +
                           std::to_string(max) + ", not " + quoteForMessage(v));
  return n;
}

StatusOr<JobFilter> filterOf(const httplib::Request& req) {
  JobFilter f;
  for (const char* key : {"state", "user", "partition", "q"})
    if (req.has_param(key) && req.get_param_value(key).size() > 256)
      return invalidArgument(std::string("query parameter \"") + key + "\" is too long");
  if (req.has_param("state")) {
    std::string states = req.get_param_value("state");
    size_t start = 0;
    while (start <= states.size()) {
      size_t comma = states.find(',', start);
      std::string s = states.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (!s.empty()) f.states.push_back(s);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  f.user = req.get_param_value("user");
  f.partition = req.get_param_value("partition");
  f.text = req.get_param_value("q");
  return f;
}

}  // namespace

StatusOr<ClusterRecord> ApiServer::runningCluster(const std::string& name) {
  ASSIGN_OR_RETURN(ClusterRecord r, findCluster(name));
  if (r.status != ClusterStatus::kRunning)
    return failedPrecondition("cluster \"" + name + "\" is " + statusName(r.status) +
                              "; its jobs can be read while it is Running");
  return r;
}

void ApiServer::listQueue(const httplib::Request& req, httplib::Response& res) {
  listJobs(req, res, JobCache::Kind::kQueue);
}

void ApiServer::listHistory(const httplib::Request& req, httplib::Response& res) {
  listJobs(req, res, JobCache::Kind::kHistory);
}

// A page of the queue or history, filtered (`filterOf`).
void ApiServer::listJobs(const httplib::Request& req, httplib::Response& res, JobCache::Kind kind) {
  auto r = runningCluster(req.matches[1]);
  if (!r.isOk()) return sendError(res, r.status());
  auto filter = filterOf(req);
  if (!filter.isOk()) return sendError(res, filter.status());
  auto offset = queryInt(req, "offset", 0, INT32_MAX);
  if (!offset.isOk()) return sendError(res, offset.status());
  auto limit = queryInt(req, "limit", kDefaultLimit, kMaxLimit);
  if (!limit.isOk()) return sendError(res, limit.status());
  auto snap = jobs_->get(r->spec.name, kind);
  if (!snap.isOk()) return sendError(res, snap.status());
  // Compact and concatenated from each job's JSON made when Slurm was
  // read: a page of 10,000 jobs is megabytes.
  const JobSnapshot& s = **snap;
  std::string out = "{\"jobs\":[";
  int64_t total = 0;
  for (size_t i = 0; i < s.jobs.size(); ++i) {
    if (!filter->matches(s.jobs[i])) continue;
    if (total >= *offset && total < *offset + *limit) {
      if (out.back() != '[') out += ',';
      out += s.json[i];
    }
    ++total;
  }
  out += "],\"total\":" + std::to_string(total) + ",\"offset\":" + std::to_string(*offset) +
         ",\"limit\":" + std::to_string(*limit) + ",\"readAt\":" + std::to_string(s.readAt) + "}\n";
  res.status = 200;
  res.set_content(std::move(out), "application/json");
}

// One job, from the queue or else the history.
void ApiServer::getJob(const httplib::Request& req, httplib::Response& res) {
  auto r = runningCluster(req.matches[1]);
  if (!r.isOk()) return sendError(res, r.status());
  int64_t id = std::stoll(req.matches[2]);
  for (JobCache::Kind kind : {JobCache::Kind::kQueue, JobCache::Kind::kHistory}) {
    auto snap = jobs_->get(r->spec.name, kind);
    if (!snap.isOk()) return sendError(res, snap.status());
    for (const Job& j : (*snap)->jobs) {
      if (j.id != id) continue;
      json v = jobJson(j);
      v["source"] = kind == JobCache::Kind::kQueue ? "queue" : "history";
      return sendJson(res, 200, v);
    }
  }
  sendError(res, notFound("cluster \"" + r->spec.name + "\" has no job " + std::to_string(id) +
                          " in its queue or in the last 7 days of its history"));
}

void ApiServer::getMetrics(const httplib::Request& req, httplib::Response& res) {
  auto r = findCluster(req.matches[1]);
  if (!r.isOk()) return sendError(res, r.status());
  json samples = json::array();
  for (const auto& s : metrics_->samples(r->spec.name))
    samples.push_back({{"time", s.time},
                       {"nodes", s.nodes},
                       {"jobs", {{"pending", s.pending}, {"running", s.running}}}});
  sendJson(res, 200,
           {{"periodSeconds", metrics_->period().count() / 1000}, {"samples", std::move(samples)}});
}

}  // namespace corral
