// A cluster's partitions (docs/api.md, "Partitions"): corral's own and the
// users', and the users' create, update and delete, each a change. What the
// list holds and what an edit may do are src/slurm/partitions.h's.

#include "api/http_util.h"
#include "api/server.h"
#include "model/spec_json.h"
#include "slurm/partitions.h"

namespace corral {

using nlohmann::json;

namespace {

// A user partition from a request body. Its fields are a `PartitionSpec`'s;
// an unknown one's message suggests the field it resembles, as it always
// has. The path names the partition of an update (`named` false).
StatusOr<PartitionSpec> readPartition(const httplib::Request& req, bool named) {
  ASSIGN_OR_RETURN(json body, jsonBody(req, {"name", "nodes", "options"}, {.suggest = true}));
  ASSIGN_OR_RETURN(PartitionSpec p, partitionFromJson(body, /*strict=*/true));
  if (!named) p.name = req.matches[2];
  if (p.nodes.empty())
    return invalidArgument("a partition needs nodes, as a Slurm hostlist such as slinky-[0-1,5]");
  return p;
}

json partitionJson(const PartitionView& p) {
  return {{"name", p.name},
          {"nodes", p.nodes},
          {"managedBy", p.managedByCorral ? "corral" : "user"},
          {"default", p.isDefault},
          {"options", p.options}};
}

}  // namespace

void ApiServer::listPartitions(const httplib::Request& req, httplib::Response& res) {
  auto r = findCluster(req.matches[1]);
  if (!r.isOk()) return sendError(res, r.status());
  json list = json::array();
  for (const auto& p : partitionView(*r)) list.push_back(partitionJson(p));
  sendJson(res, 200,
           {{"partitions", list},
            {"userPartitions", r->spec.partitions.size()},
            {"limit", kMaxUserPartitions}});
}

void ApiServer::writePartition(const httplib::Request& req, httplib::Response& res, bool named,
                               const std::string& verb, PartitionEdit edit) {
  std::string name = req.matches[1];
  auto p = readPartition(req, named);
  if (!p.isOk()) return sendError(res, p.status());
  auto after = change(name, Action::kPartitions, verb + " " + p->name, false, false,
                      [&](ClusterSpec& spec) { return edit(spec, *p); });
  answerChange(res, name, after);
}

void ApiServer::createPartition(const httplib::Request& req, httplib::Response& res) {
  writePartition(req, res, /*named=*/true, "create partition", addPartition);
}

// A partition keeps its name: the one in the path (a name in the body is
// not used).
void ApiServer::updatePartition(const httplib::Request& req, httplib::Response& res) {
  writePartition(req, res, /*named=*/false, "update partition", replacePartition);
}

// Refused while jobs are pending or running in the partition, unless
// ?force=true; the answer lists those jobs.
void ApiServer::deletePartition(const httplib::Request& req, httplib::Response& res) {
  std::string name = req.matches[1], partition = req.matches[2];
  bool force = req.get_param_value("force") == "true";
  auto current = findCluster(name);
  if (!current.isOk()) return sendError(res, current.status());
  json jobs = json::array();
  bool exists = false;
  for (const auto& q : current->spec.partitions) exists = exists || q.name == partition;
  if (exists && current->status == ClusterStatus::kRunning) {
    if (auto queued = reconciler_.jobsOn(name, {"-p", partition}); queued.isOk()) jobs = *queued;
    if (!jobs.empty() && !force)
      return sendError(res, failedPrecondition(
                                "partition \"" + partition + "\" has " + std::to_string(jobs.size()) +
                                " pending or running jobs; wait for them, or delete with --force "
                                "(running jobs keep running; pending ones are left without a "
                                "partition and fail)"));
  }
  auto after = change(name, Action::kPartitions, "delete partition " + partition, false, false,
                      [&](ClusterSpec& spec) {
                        return removePartition(spec, partition, current->platformPartitions);
                      });
  answerChange(res, name, after, {{"jobsInPartition", jobs}});
}

}  // namespace corral
