#include "cli/cluster_cmd.h"

#include <unistd.h>

#include <chrono>
#include <ostream>
#include <set>

#include "cli/ssh_keys.h"

namespace corral {
namespace {

int64_t nowSeconds(CliContext& ctx) { return ctx.clock->unixMillis() / 1000; }

std::string quoted(const std::string& name) { return "\"" + name + "\""; }

void printCluster(CliContext& ctx, const Json& cluster, OutputFormat format) {
  if (format == OutputFormat::kJson) {
    *ctx.out << renderJson(cluster);
  } else {
    *ctx.out << clusterDetail(cluster, nowSeconds(ctx));
  }
}

// Prints `cluster`'s progress line when it differs from the last one printed.
void reportProgress(CliContext& ctx, const Json& cluster, std::string& last) {
  std::string line = progressLine(cluster);
  if (line != last) {
    *ctx.err << line << "\n";
    ctx.err->flush();
    last = line;
  }
}

// What a poll that found the cluster concluded.
enum class Verdict { kKeepWaiting, kDone };

// Polls GET /clusters/{name} every `kPollInterval` until `judge` says done or
// fails, or `timeoutSeconds` pass. `judge` sees each answer (a 404 arrives as
// NotFound). A corrald that cannot be reached or is unavailable for a moment
// does not end the wait: a restart of corrald should not abort a long create.
template <typename Judge>
Status pollCluster(ApiClient& api, CliContext& ctx, const std::string& name, int timeoutSeconds,
                   const std::string& goal, Judge judge) {
  auto deadline = ctx.clock->now() + std::chrono::seconds(timeoutSeconds);
  Status lastTransient;
  std::string lastStatus;
  while (true) {
    ctx.clock->sleepFor(kPollInterval);
    StatusOr<Json> got = api.getCluster(name);
    if (got.isOk()) lastStatus = progressLine(*got);
    if (!got.isOk() && got.status().code() == Code::kUnavailable) {
      lastTransient = got.status();
    } else {
      lastTransient = Status::ok();
      ASSIGN_OR_RETURN(Verdict v, judge(got));
      if (v == Verdict::kDone) return Status::ok();
    }
    if (ctx.clock->now() >= deadline) {
      std::string msg = "timed out after " + std::to_string(timeoutSeconds) +
                        "s waiting for cluster " + quoted(name) + " to " + goal;
      if (!lastStatus.empty()) msg += "; it is " + lastStatus;
      if (!lastTransient.isOk()) msg += "; last error: " + lastTransient.message();
      msg += "; follow it with: corral cluster get " + name;
      return unavailable(msg);
    }
  }
}

}  // namespace

Json buildCreateRequest(const CreateOptions& options, const std::vector<std::string>& keys) {
  Json body;
  body["name"] = options.name;
  body["gpuNodes"] = options.gpuNodes;
  body["gpusPerNode"] = options.gpusPerNode;
  body["cpuNodes"] = options.cpuNodes;
  body["sshKeys"] = keys;
  return body;
}

StatusOr<std::vector<std::string>> collectSshKeys(const std::vector<std::string>& files,
                                                  const std::string& home, std::ostream& err) {
  if (files.empty()) return corralPublicKeys(home, err);
  std::vector<std::string> keys;
  std::set<std::string> seen;
  for (const auto& file : files) {
    ASSIGN_OR_RETURN(std::vector<std::string> fileKeys, readPublicKeyFile(expandHome(file, home)));
    for (auto& k : fileKeys) {
      if (seen.insert(k).second) keys.push_back(std::move(k));
    }
  }
  return keys;
}

Status clusterCreate(ApiClient& api, CliContext& ctx, const CreateOptions& options) {
  ASSIGN_OR_RETURN(std::vector<std::string> keys,
                   collectSshKeys(options.sshKeyFiles, ctx.home, *ctx.err));
  ASSIGN_OR_RETURN(Json created, api.createCluster(buildCreateRequest(options, keys)));
  const std::string& name = options.name;
  if (!options.wait) {
    if (options.format == OutputFormat::kJson) {
      *ctx.out << renderJson(created);
    } else {
      *ctx.out << "cluster " << quoted(name)
               << " is being created; follow it with: corral cluster get " << name << "\n";
    }
    return Status::ok();
  }

  std::string last;
  reportProgress(ctx, created, last);
  return pollCluster(
      api, ctx, name, options.timeoutSeconds, "become Running",
      [&](const StatusOr<Json>& got) -> StatusOr<Verdict> {
        if (!got.isOk()) {
          if (got.status().code() == Code::kNotFound) {
            return notFound("cluster " + quoted(name) + " was deleted while being created");
          }
          return got.status();
        }
        const Json& c = *got;
        reportProgress(ctx, c, last);
        std::string status = jsonString(c, "status");
        if (status == "Running") {
          printCluster(ctx, c, options.format);
          return Verdict::kDone;
        }
        if (status == "Failed") {
          std::string reason = jsonString(c, "reason", "no reason given");
          return failedPrecondition("cluster " + quoted(name) + " failed: " + reason);
        }
        if (status == "Deleting" || status == "Deleted" || status == "Terminated") {
          return failedPrecondition("cluster " + quoted(name) + " is " + status +
                                    "; it will not become Running");
        }
        return Verdict::kKeepWaiting;
      });
}

Status clusterList(ApiClient& api, CliContext& ctx, OutputFormat format) {
  ASSIGN_OR_RETURN(Json body, api.listClusters());
  if (format == OutputFormat::kJson) {
    *ctx.out << renderJson(body);
  } else {
    *ctx.out << clusterListTable(body, nowSeconds(ctx));
  }
  return Status::ok();
}

Status clusterGet(ApiClient& api, CliContext& ctx, const std::string& name, OutputFormat format) {
  ASSIGN_OR_RETURN(Json cluster, api.getCluster(name));
  printCluster(ctx, cluster, format);
  return Status::ok();
}

Status clusterDelete(ApiClient& api, CliContext& ctx, const DeleteOptions& options) {
  const std::string& name = options.name;
  ASSIGN_OR_RETURN(Json deleting, api.deleteCluster(name));
  // The login node's pinned host key (written by `corral ssh`) goes with the
  // cluster: nothing of a deleted cluster stays behind in ~/.cache.
  if (!ctx.home.empty())
    ::unlink((ctx.home + "/.cache/corral/known_hosts-" + encodePathSegment(name)).c_str());
  if (!options.wait) {
    *ctx.out << "cluster " << quoted(name)
             << " is being deleted; follow it with: corral cluster get " << name << "\n";
    return Status::ok();
  }
  std::string last;
  reportProgress(ctx, deleting, last);
  RETURN_IF_ERROR(pollCluster(api, ctx, name, options.timeoutSeconds, "be deleted",
                              [&](const StatusOr<Json>& got) -> StatusOr<Verdict> {
                                if (!got.isOk()) {
                                  if (got.status().code() == Code::kNotFound) return Verdict::kDone;
                                  return got.status();
                                }
                                const Json& c = *got;
                                reportProgress(ctx, c, last);
                                std::string status = jsonString(c, "status");
                                if (status == "Deleted") return Verdict::kDone;
                                if (status == "Failed") {
                                  std::string reason = jsonString(c, "reason", "no reason given");
                                  return failedPrecondition("cluster " + quoted(name) +
                                                            " failed: " + reason);
                                }
                                return Verdict::kKeepWaiting;
                              }));
  *ctx.out << "cluster " << quoted(name) << " deleted\n";
  return Status::ok();
}

}  // namespace corral
