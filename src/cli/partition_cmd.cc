#include "cli/partition_cmd.h"

#include <strings.h>

#include <memory>
#include <ostream>

#include "cli/waiting.h"

namespace corral {
namespace {

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

bool sameKey(const std::string& a, const std::string& b) {
  return a.size() == b.size() && ::strcasecmp(a.c_str(), b.c_str()) == 0;
}

// The key of `options` that is `key` but for case, or "".
std::string existingKey(const Json& options, const std::string& key) {
  for (auto it = options.begin(); it != options.end(); ++it) {
    if (sameKey(it.key(), key)) return it.key();
  }
  return "";
}

// Sets `key` in `options`, replacing a key that differs only in case.
void setOption(Json& options, const std::string& key, const std::string& value) {
  std::string existing = existingKey(options, key);
  options[existing.empty() ? key : existing] = value;
}

CLI::App* addPartitionCommand(CLI::App* noun, const std::string& verb, const std::string& help,
                              std::shared_ptr<PartitionOptions> o) {
  CLI::App* cmd = noun->add_subcommand(verb, help);
  addNameArgument(cmd, &o->cluster, "CLUSTER", "Cluster name");
  return cmd;
}

void addSettingsArgument(CLI::App* cmd, PartitionOptions* o) {
  cmd->add_option("SETTINGS", o->settings,
                  "Partition options as Key=Value, e.g. MaxTime=60 Default=YES; see: corral "
                  "config params")
      ->type_name("Key=Value")
      ->check(keyValueValidator());
}

}  // namespace

void addPartitionCommands(CLI::App& app, Command& chosen) {
  CLI::App* noun = app.add_subcommand("partition", "List, create, change and delete partitions");
  noun->require_subcommand(1);

  {
    auto o = std::make_shared<PartitionOptions>();
    CLI::App* cmd = addPartitionCommand(noun, "list", "List a cluster's partitions", o);
    addOutputOption(cmd, &o->format);
    cmd->callback([o, &chosen] {
      chosen = [o](ApiClient& api, CliContext& ctx) {
        return partitionList(api, ctx, o->cluster, o->format);
      };
    });
  }
  {
    auto o = std::make_shared<PartitionOptions>();
    CLI::App* cmd = addPartitionCommand(noun, "create", "Create a partition of your own", o);
    addNameArgument(cmd, &o->name, "NAME", "Partition name");
    addSettingsArgument(cmd, o.get());
    cmd->add_option("--nodes", o->nodes, "Its nodes, as a Slurm hostlist such as slinky-[0-1]")
        ->type_name("HOSTLIST")
        ->required();
    addChangeWaitOptions(cmd, &o->wait);
    addOutputOption(cmd, &o->format);
    cmd->callback([o, &chosen] {
      chosen = [o](ApiClient& api, CliContext& ctx) { return partitionCreate(api, ctx, *o); };
    });
  }
  {
    auto o = std::make_shared<PartitionOptions>();
    CLI::App* cmd = addPartitionCommand(
        noun, "update", "Change a partition's nodes or options; the rest stays as it is", o);
    addNameArgument(cmd, &o->name, "NAME", "Partition name");
    addSettingsArgument(cmd, o.get());
    cmd->add_option("--nodes", o->nodes, "Its new nodes, as a Slurm hostlist")
        ->type_name("HOSTLIST");
    cmd->add_option("--unset", o->unset, "An option to remove; repeat for more")
        ->type_name("KEY")
        // One key per --unset, so that Key=Value after it stays a setting.
        ->allow_extra_args(false);
    addChangeWaitOptions(cmd, &o->wait);
    addOutputOption(cmd, &o->format);
    cmd->callback([o, &chosen] {
      chosen = [o](ApiClient& api, CliContext& ctx) { return partitionUpdate(api, ctx, *o); };
    });
  }
  {
    auto o = std::make_shared<PartitionOptions>();
    CLI::App* cmd = addPartitionCommand(noun, "delete", "Delete a partition of your own", o);
    addNameArgument(cmd, &o->name, "NAME", "Partition name");
    cmd->add_flag("--force", o->force,
                  "Delete it even though jobs are queued in it (running ones keep running, "
                  "pending ones fail)");
    addChangeWaitOptions(cmd, &o->wait);
    addOutputOption(cmd, &o->format);
    cmd->callback([o, &chosen] {
      chosen = [o](ApiClient& api, CliContext& ctx) { return partitionDelete(api, ctx, *o); };
    });
  }
}

StatusOr<Json> buildPartitionCreate(const PartitionOptions& options) {
  Json settings = Json::object();
  for (const auto& arg : options.settings) {
    ASSIGN_OR_RETURN(auto kv, parseKeyValue(arg));
    setOption(settings, kv.first, kv.second);
  }
  return Json{{"name", options.name}, {"nodes", options.nodes}, {"options", settings}};
}

StatusOr<Json> mergePartitionUpdate(const Json& list, const PartitionOptions& options) {
  const Json* found = nullptr;
  const Json& partitions = jsonChild(list, "partitions");
  if (partitions.is_array()) {
    for (const Json& p : partitions) {
      if (jsonString(p, "name") == options.name) found = &p;
    }
  }
  if (found == nullptr) {
    return notFound("no partition named " + quoted(options.name) + " in cluster " +
                    quoted(options.cluster) + "; see: corral partition list " + options.cluster);
  }
  if (jsonString(*found, "managedBy") != "user") {
    return failedPrecondition("partition " + quoted(options.name) +
                              " is managed by corral and cannot be changed; create one of your "
                              "own with: corral partition create");
  }
  std::vector<std::pair<std::string, std::string>> sets;
  for (const auto& arg : options.settings) {
    ASSIGN_OR_RETURN(auto kv, parseKeyValue(arg));
    sets.push_back(kv);
  }
  for (const auto& key : options.unset) {
    for (const auto& [k, v] : sets) {
      if (sameKey(k, key)) {
        return invalidArgument(quoted(key) + " is both set and unset; give one or the other");
      }
    }
  }

  Json merged = Json::object();
  const Json& current = jsonChild(*found, "options");
  if (current.is_object()) merged = current;
  for (const auto& key : options.unset) {
    std::string existing = existingKey(merged, key);
    if (existing.empty()) {
      return invalidArgument(quoted(key) + " is not set on partition " + quoted(options.name) +
                             "; see: corral partition list " + options.cluster);
    }
    merged.erase(existing);
  }
  for (const auto& [k, v] : sets) setOption(merged, k, v);
  std::string nodes = options.nodes.empty() ? jsonString(*found, "nodes") : options.nodes;
  return Json{{"name", options.name}, {"nodes", nodes}, {"options", merged}};
}

Status partitionList(ApiClient& api, CliContext& ctx, const std::string& cluster,
                     OutputFormat format) {
  ASSIGN_OR_RETURN(Json body, api.listPartitions(cluster));
  *ctx.out << (format == OutputFormat::kJson ? renderJson(body) : partitionTable(body));
  return Status::ok();
}

Status partitionCreate(ApiClient& api, CliContext& ctx, const PartitionOptions& options) {
  ASSIGN_OR_RETURN(Json body, buildPartitionCreate(options));
  ASSIGN_OR_RETURN(Json answer, api.createPartition(options.cluster, body));
  return followChange(api, ctx, options.cluster, answer,
                      followOptions(options.wait, options.format));
}

Status partitionUpdate(ApiClient& api, CliContext& ctx, const PartitionOptions& options) {
  ASSIGN_OR_RETURN(Json list, api.listPartitions(options.cluster));
  ASSIGN_OR_RETURN(Json body, mergePartitionUpdate(list, options));
  ASSIGN_OR_RETURN(Json answer, api.updatePartition(options.cluster, options.name, body));
  return followChange(api, ctx, options.cluster, answer,
                      followOptions(options.wait, options.format));
}

Status partitionDelete(ApiClient& api, CliContext& ctx, const PartitionOptions& options) {
  ASSIGN_OR_RETURN(Json answer, api.deletePartition(options.cluster, options.name, options.force));
  FollowOptions follow = followOptions(options.wait, options.format);
  follow.notes = partitionDeleteSummary(jsonChild(answer, "change"), options.name);
  return followChange(api, ctx, options.cluster, answer, follow);
}

}  // namespace corral
