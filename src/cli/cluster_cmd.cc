#include "cli/cluster_cmd.h"

#include <unistd.h>

#include <functional>
#include <memory>
#include <ostream>

#include "cli/ssh_keys.h"

namespace corral {
namespace {

constexpr const char* kScaleNeedsASize = "give the new size: --gpu-nodes N, --cpu-nodes M or both";

int64_t nowSeconds(CliContext& ctx) { return ctx.clock->unixMillis() / 1000; }

std::string quoted(const std::string& name) { return "\"" + name + "\""; }

void printCluster(CliContext& ctx, const Json& cluster, OutputFormat format) {
  if (format == OutputFormat::kJson) {
    *ctx.out << renderJson(cluster);
  } else {
    *ctx.out << clusterDetail(cluster, nowSeconds(ctx));
  }
}

// `--wait`, `--no-wait` (the default) and `--timeout` for a command that
// can wait until `until` ("the cluster is gone").
void addWaitOptions(CLI::App* cmd, bool* wait, int* timeoutSeconds, const std::string& until) {
  cmd->add_flag("--wait,!--no-wait", *wait,
                "Wait until " + until + "; --no-wait returns at once (the default)");
  addTimeoutOption(cmd, timeoutSeconds, "Seconds --wait waits");
}

void addCreate(CLI::App* cluster, Command& chosen) {
  auto o = std::make_shared<CreateOptions>();
  CLI::App* cmd = cluster->add_subcommand("create", "Create a cluster");
  addNameArgument(cmd, &o->name);
  cmd->add_option("--image", o->image,
                  "The cluster image: the Slurm stack every node runs (`corral image list`; "
                  "default: corrald's)");
  cmd->add_option("--gpu-nodes", o->gpuNodes, "Number of GPU nodes")->capture_default_str();
  cmd->add_option("--gpus-per-node", o->gpusPerNode, "GPUs on each GPU node")
      ->capture_default_str();
  cmd->add_option("--cpu-nodes", o->cpuNodes, "Number of CPU-only nodes")->capture_default_str();
  addSshKeyOption(cmd, &o->sshKeyFiles,
                  "OpenSSH public key file for root on the login node; may repeat "
                  "(default: ~/.ssh/corral_ed25519.pub, created if missing)");
  cmd->add_flag("--registry", o->registry,
                "Run a container registry in the cluster, registry:5000 to jobs");
  cmd->add_option("--image-cache", o->imageCache,
                  "Keep pulled container images under this /shared path, one import for "
                  "every node (default: each node's own disk)");
  cmd->add_option("--insecure-registry", o->insecureRegistries,
                  "A registry HOST[:PORT] that jobs reach over plain http; may repeat");
  cmd->add_option("--project", o->project,
                  "The project the cluster belongs to (default: your first)");
  addWaitOptions(cmd, &o->wait, &o->timeoutSeconds, "the cluster is Running or Failed");
  addOutputOption(cmd, &o->format);
  cmd->callback([o, &chosen] {
    chosen = [o](ApiClient& api, CliContext& ctx) { return clusterCreate(api, ctx, *o); };
  });
}

void addList(CLI::App* cluster, Command& chosen) {
  auto format = std::make_shared<OutputFormat>(OutputFormat::kTable);
  CLI::App* cmd = cluster->add_subcommand("list", "List clusters");
  addOutputOption(cmd, format.get());
  cmd->callback([format, &chosen] {
    chosen = [format](ApiClient& api, CliContext& ctx) { return clusterList(api, ctx, *format); };
  });
}

// A command that takes only a cluster's name and `-o`: get, history.
void addNamed(CLI::App* cluster, Command& chosen, const std::string& verb, const std::string& help,
              Status (*run)(ApiClient&, CliContext&, const std::string&, OutputFormat)) {
  struct Options {
    std::string name;
    OutputFormat format = OutputFormat::kTable;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = cluster->add_subcommand(verb, help);
  addNameArgument(cmd, &o->name);
  addOutputOption(cmd, &o->format);
  cmd->callback([o, run, &chosen] {
    chosen = [o, run](ApiClient& api, CliContext& ctx) {
      return run(api, ctx, o->name, o->format);
    };
  });
}

void addDelete(CLI::App* cluster, Command& chosen) {
  auto o = std::make_shared<DeleteOptions>();
  CLI::App* cmd = cluster->add_subcommand("delete", "Delete a cluster");
  addNameArgument(cmd, &o->name);
  addWaitOptions(cmd, &o->wait, &o->timeoutSeconds, "the cluster is gone");
  cmd->callback([o, &chosen] {
    chosen = [o](ApiClient& api, CliContext& ctx) { return clusterDelete(api, ctx, *o); };
  });
}

void addScale(CLI::App* cluster, Command& chosen) {
  auto o = std::make_shared<ScaleOptions>();
  CLI::App* cmd = cluster->add_subcommand("scale", "Change how many nodes a cluster has");
  addNameArgument(cmd, &o->name);
  cmd->add_option_function<int>(
         "--gpu-nodes", [o](const int& n) { o->gpuNodes = n; }, "Number of GPU nodes")
      ->type_name("N");
  cmd->add_option_function<int>(
         "--cpu-nodes", [o](const int& n) { o->cpuNodes = n; }, "Number of CPU-only nodes")
      ->type_name("M");
  cmd->add_flag("--force", o->force,
                "Cancel the jobs on the nodes that go away instead of waiting for them");
  addChangeWaitOptions(cmd, &o->wait);
  addOutputOption(cmd, &o->format);
  cmd->footer("Scaling down removes the highest-numbered nodes first.");
  cmd->callback([o, &chosen] {
    // A usage error (exit 2), like any other CLI11 finds while parsing.
    if (!o->gpuNodes && !o->cpuNodes) throw CLI::ValidationError(kScaleNeedsASize);
    chosen = [o](ApiClient& api, CliContext& ctx) { return clusterScale(api, ctx, *o); };
  });
}

Status clusterSetImage(ApiClient& api, CliContext& ctx, const ClusterChangeOptions& o) {
  ASSIGN_OR_RETURN(Json answer, api.setImage(o.name, o.image));
  return followChange(api, ctx, o.name, answer, followOptions(o.wait, o.format));
}

Status clusterRestartWorkers(ApiClient& api, CliContext& ctx, const ClusterChangeOptions& o) {
  ASSIGN_OR_RETURN(Json answer, api.restartWorkers(o.name));
  return followChange(api, ctx, o.name, answer, followOptions(o.wait, o.format));
}

// A command that changes one cluster and follows the change: NAME, then
// what `addArguments` adds, then --no-wait, --timeout and -o.
void addChangeCommand(
    CLI::App* cluster, Command& chosen, const std::string& verb, const std::string& help,
    Status (*run)(ApiClient&, CliContext&, const ClusterChangeOptions&),
    const std::function<void(CLI::App*, ClusterChangeOptions&)>& addArguments = nullptr) {
  auto o = std::make_shared<ClusterChangeOptions>();
  CLI::App* cmd = cluster->add_subcommand(verb, help);
  addNameArgument(cmd, &o->name);
  if (addArguments) addArguments(cmd, *o);
  addChangeWaitOptions(cmd, &o->wait);
  addOutputOption(cmd, &o->format);
  cmd->callback([o, run, &chosen] {
    chosen = [o, run](ApiClient& api, CliContext& ctx) { return run(api, ctx, *o); };
  });
}

void addChangeCommands(CLI::App* cluster, Command& chosen) {
  addChangeCommand(cluster, chosen, "reconfigure",
                   "Apply the cluster's configuration again, e.g. after a stalled change",
                   clusterReconfigure);
  addChangeCommand(cluster, chosen, "set-keys",
                   "Replace the SSH public keys that may log in as root on the login node",
                   clusterSetKeys, [](CLI::App* cmd, ClusterChangeOptions& o) {
                     addSshKeyOption(cmd, &o.sshKeyFiles,
                                     "OpenSSH public key file; repeat for more")
                         ->required();
                   });
  addChangeCommand(cluster, chosen, "set-image",
                   "Move the cluster to another image: controller and login are recreated, "
                   "workers each once their jobs end; rolled back if it does not come up",
                   clusterSetImage, [](CLI::App* cmd, ClusterChangeOptions& o) {
                     cmd->add_option("image", o.image, "The image (`corral image list`)")
                         ->required();
                   });
  addChangeCommand(cluster, chosen, "restart-workers",
                   "Recreate every worker, each once its jobs have ended (drained first, then "
                   "back in service): their local files go, /shared and volumes stay",
                   clusterRestartWorkers);
}

void addTerminate(CLI::App* cluster, Command& chosen) {
  auto o = std::make_shared<TerminateOptions>();
  CLI::App* cmd = cluster->add_subcommand(
      "terminate", "Shut a cluster down and keep its record (clone or delete it later)");
  addNameArgument(cmd, &o->name);
  addWaitOptions(cmd, &o->wait, &o->timeoutSeconds, "the cluster is Terminated");
  addOutputOption(cmd, &o->format);
  cmd->callback([o, &chosen] {
    chosen = [o](ApiClient& api, CliContext& ctx) { return clusterTerminate(api, ctx, *o); };
  });
}

void addClone(CLI::App* cluster, Command& chosen) {
  auto o = std::make_shared<CloneOptions>();
  CLI::App* cmd =
      cluster->add_subcommand("clone", "Create a new cluster with another cluster's current spec");
  addNameArgument(cmd, &o->name, "NAME", "The cluster to copy");
  addNameArgument(cmd, &o->newName, "NEW", "The new cluster's name");
  cmd->add_option("--image", o->image,
                  "Start the new cluster on this image instead (how to reach a Slurm release "
                  "an update cannot)");
  addWaitOptions(cmd, &o->wait, &o->timeoutSeconds, "the new cluster is Running or Failed");
  addOutputOption(cmd, &o->format);
  cmd->callback([o, &chosen] {
    chosen = [o](ApiClient& api, CliContext& ctx) { return clusterClone(api, ctx, *o); };
  });
}

}  // namespace

void addClusterCommands(CLI::App& app, Command& chosen) {
  CLI::App* cluster = app.add_subcommand("cluster", "Create, change, inspect and delete clusters");
  cluster->require_subcommand(1);
  addCreate(cluster, chosen);
  addList(cluster, chosen);
  addNamed(cluster, chosen, "get", "Show a cluster and its nodes", clusterGet);
  addDelete(cluster, chosen);
  addNamed(cluster, chosen, "history", "Show a cluster's revisions and what became of each",
           clusterHistory);
  addScale(cluster, chosen);
  addChangeCommands(cluster, chosen);
  addTerminate(cluster, chosen);
  addClone(cluster, chosen);
}

Json buildCreateRequest(const CreateOptions& options, const std::vector<std::string>& keys) {
  Json body;
  body["name"] = options.name;
  if (!options.image.empty()) body["image"] = options.image;
  body["gpuNodes"] = options.gpuNodes;
  body["gpusPerNode"] = options.gpusPerNode;
  body["cpuNodes"] = options.cpuNodes;
  body["sshKeys"] = keys;
  if (!options.project.empty()) body["project"] = options.project;
  if (options.registry || !options.imageCache.empty() || !options.insecureRegistries.empty())
    body["containers"] = {{"registry", options.registry},
                          {"cachePath", options.imageCache},
                          {"insecureRegistries", options.insecureRegistries}};
  return body;
}

Json buildScaleRequest(const ScaleOptions& options) {
  Json body = Json::object();
  if (options.gpuNodes) body["gpuNodes"] = *options.gpuNodes;
  if (options.cpuNodes) body["cpuNodes"] = *options.cpuNodes;
  if (options.force) body["force"] = true;
  return body;
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
  return waitUntilRunning(api, ctx, name, options.timeoutSeconds, options.format, created);
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
    ::unlink((ctx.home + "/.cache/corral/known_hosts-" + percentEncode(name)).c_str());
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

Status clusterHistory(ApiClient& api, CliContext& ctx, const std::string& name,
                      OutputFormat format) {
  ASSIGN_OR_RETURN(Json body, api.listRevisions(name));
  *ctx.out << (format == OutputFormat::kJson ? renderJson(body)
                                             : historyTable(body, nowSeconds(ctx)));
  return Status::ok();
}

Status clusterScale(ApiClient& api, CliContext& ctx, const ScaleOptions& options) {
  if (!options.gpuNodes && !options.cpuNodes) {
    return invalidArgument(kScaleNeedsASize);
  }
  ASSIGN_OR_RETURN(Json answer, api.scaleCluster(options.name, buildScaleRequest(options)));
  FollowOptions follow = followOptions(options.wait, options.format);
  follow.notes = scaleSummary(jsonChild(answer, "change"));
  return followChange(api, ctx, options.name, answer, follow);
}

Status clusterReconfigure(ApiClient& api, CliContext& ctx, const ClusterChangeOptions& options) {
  ASSIGN_OR_RETURN(Json answer, api.reconfigureCluster(options.name));
  const Json& made = jsonChild(jsonChild(answer, "change"), "made");
  bool changed = made.is_boolean() && made.get<bool>();
  if (!changed && jsonString(jsonChild(answer, "cluster"), "status") == "Creating") {
    // A cluster still being created has no revision to apply again; corrald
    // makes another creation pass instead.
    if (options.format == OutputFormat::kJson) {
      *ctx.out << renderJson(answer);
    } else {
      *ctx.out << "cluster " << quoted(options.name)
               << " is still being created; corrald makes another creation pass; follow it "
                  "with: corral cluster get "
               << options.name << "\n";
    }
    return Status::ok();
  }
  return followChange(api, ctx, options.name, answer, followOptions(options.wait, options.format));
}

Status clusterSetKeys(ApiClient& api, CliContext& ctx, const ClusterChangeOptions& options) {
  if (options.sshKeyFiles.empty()) {
    return invalidArgument("give at least one --ssh-key FILE; without a key nobody could log in");
  }
  ASSIGN_OR_RETURN(std::vector<std::string> keys,
                   collectSshKeys(options.sshKeyFiles, ctx.home, *ctx.err));
  ASSIGN_OR_RETURN(Json answer, api.setSshKeys(options.name, keys));
  return followChange(api, ctx, options.name, answer, followOptions(options.wait, options.format));
}

Status clusterTerminate(ApiClient& api, CliContext& ctx, const TerminateOptions& options) {
  const std::string& name = options.name;
  ASSIGN_OR_RETURN(Json terminating, api.terminateCluster(name));
  if (!options.wait) {
    if (options.format == OutputFormat::kJson) {
      *ctx.out << renderJson(terminating);
    } else {
      *ctx.out << "cluster " << quoted(name)
               << " is being terminated; follow it with: corral cluster get " << name << "\n";
    }
    return Status::ok();
  }
  std::string last;
  reportProgress(ctx, terminating, last);
  return pollCluster(
      api, ctx, name, options.timeoutSeconds, "be Terminated",
      [&](const StatusOr<Json>& got) -> StatusOr<Verdict> {
        if (!got.isOk()) {
          if (got.status().code() == Code::kNotFound) {
            return notFound("cluster " + quoted(name) + " was deleted while being terminated");
          }
          return got.status();
        }
        const Json& c = *got;
        reportProgress(ctx, c, last);
        std::string status = jsonString(c, "status");
        if (status == "Terminated") {
          if (options.format == OutputFormat::kJson) {
            *ctx.out << renderJson(c);
          } else {
            *ctx.out << "cluster " << quoted(name) << " terminated\n";
          }
          return Verdict::kDone;
        }
        if (status == "Failed" || status == "Deleting" || status == "Deleted") {
          std::string reason = jsonString(c, "reason");
          return failedPrecondition("cluster " + quoted(name) + " is " + status +
                                    (reason.empty() ? "" : ": " + reason) +
                                    "; it will not become Terminated");
        }
        return Verdict::kKeepWaiting;
      });
}

Status clusterClone(ApiClient& api, CliContext& ctx, const CloneOptions& options) {
  ASSIGN_OR_RETURN(Json created, api.cloneCluster(options.name, options.newName, options.image));
  const std::string& name = options.newName;
  if (!options.wait) {
    if (options.format == OutputFormat::kJson) {
      *ctx.out << renderJson(created);
    } else {
      *ctx.out << "cluster " << quoted(name) << " is being created as a clone of "
               << quoted(options.name) << "; follow it with: corral cluster get " << name << "\n";
    }
    return Status::ok();
  }
  return waitUntilRunning(api, ctx, name, options.timeoutSeconds, options.format, created);
}

}  // namespace corral
