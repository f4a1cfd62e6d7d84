#include "cli/volume_cmd.h"

#include <filesystem>
#include <memory>
#include <ostream>
#include <system_error>
#include <vector>

#include "cli/ssh_keys.h"
#include "cli/waiting.h"
#include "corral/spec.h"

namespace corral {
namespace {

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// "demo:/pfs, other:/data": where a volume is attached, or "".
std::string attachedText(const Json& volume) {
  std::string out;
  const Json& list = jsonChild(volume, "attachedTo");
  if (!list.is_array()) return out;
  for (const Json& a : list) {
    if (a.is_string()) out += (out.empty() ? "" : ", ") + a.get<std::string>();
  }
  return out;
}

bool isManaged(const Json& volume) {
  const Json& managed = jsonChild(volume, "managed");
  return managed.is_boolean() && managed.get<bool>();
}

// Where `volume attach` would mount a volume of `type` by convention: the
// path the hint after `volume create` suggests.
std::string suggestedPath(const std::string& type, const std::string& name) {
  return type == "dataset" ? "/datasets/" + name : "/" + type;
}

CLI::App* addVolumeCommand(CLI::App* noun, Command& chosen, const std::string& verb,
                           const std::string& help, std::shared_ptr<VolumeOptions> o,
                           Status (*run)(ApiClient&, CliContext&, const VolumeOptions&)) {
  CLI::App* cmd = noun->add_subcommand(verb, help);
  cmd->callback([o, run, &chosen] {
    chosen = [o, run](ApiClient& api, CliContext& ctx) { return run(api, ctx, *o); };
  });
  return cmd;
}

}  // namespace

void addVolumeCommands(CLI::App& app, Command& chosen) {
  CLI::App* noun = app.add_subcommand(
      "volume", "Create host directories that outlive clusters and attach them to clusters");
  noun->require_subcommand(1);

  {
    auto o = std::make_shared<VolumeOptions>();
    CLI::App* cmd = addVolumeCommand(noun, chosen, "create", "Create a volume", o, volumeCreate);
    addNameArgument(cmd, &o->name, "NAME", "Volume name");
    std::vector<std::string> types(std::begin(kVolumeTypes), std::end(kVolumeTypes));
    cmd->add_option("--type", o->type,
                    "What the volume is for; a dataset is mounted read-only on clusters")
        ->check(CLI::IsMember(types))
        ->capture_default_str();
    cmd->add_option("--source", o->source,
                    "An existing host directory to use (default: a new one that corrald makes "
                    "and removes with the volume)")
        ->type_name("HOSTPATH");
    cmd->add_option("--project", o->project,
                    "The project the volume belongs to (default: your first)");
    addOutputOption(cmd, &o->format);
  }
  {
    auto format = std::make_shared<OutputFormat>(OutputFormat::kTable);
    CLI::App* cmd = noun->add_subcommand("list", "List volumes and where they are attached");
    addOutputOption(cmd, format.get());
    cmd->callback([format, &chosen] {
      chosen = [format](ApiClient& api, CliContext& ctx) { return volumeList(api, ctx, *format); };
    });
  }
  {
    auto o = std::make_shared<VolumeOptions>();
    CLI::App* cmd = addVolumeCommand(noun, chosen, "get", "Show a volume", o, volumeGet);
    addNameArgument(cmd, &o->name, "NAME", "Volume name");
    addOutputOption(cmd, &o->format);
  }
  {
    auto o = std::make_shared<VolumeOptions>();
    CLI::App* cmd = addVolumeCommand(
        noun, chosen, "delete",
        "Delete a volume that no cluster uses; corrald removes a directory it made", o,
        volumeDelete);
    addNameArgument(cmd, &o->name, "NAME", "Volume name");
    addOutputOption(cmd, &o->format);
  }
  {
    auto o = std::make_shared<VolumeOptions>();
    CLI::App* cmd =
        addVolumeCommand(noun, chosen, "attach",
                         "Mount a volume on a cluster's nodes and login node", o, volumeAttach);
    addNameArgument(cmd, &o->cluster, "CLUSTER", "Cluster name");
    addNameArgument(cmd, &o->name, "NAME", "Volume name");
    cmd->add_option("--path", o->path, "Where the cluster's nodes see it, e.g. /pfs")
        ->type_name("PATH")
        ->required();
    addChangeWaitOptions(cmd, &o->wait);
    addOutputOption(cmd, &o->format);
  }
  {
    auto o = std::make_shared<VolumeOptions>();
    CLI::App* cmd = addVolumeCommand(
        noun, chosen, "detach", "Unmount a volume from a cluster; its files stay", o, volumeDetach);
    addNameArgument(cmd, &o->cluster, "CLUSTER", "Cluster name");
    addNameArgument(cmd, &o->name, "NAME", "Volume name");
    addChangeWaitOptions(cmd, &o->wait);
    addOutputOption(cmd, &o->format);
  }
}

Json buildVolumeCreate(const VolumeOptions& options, const std::string& home,
                       const std::string& cwd) {
  Json body = {{"name", options.name}, {"type", options.type}};
  if (!options.project.empty()) body["project"] = options.project;
  if (!options.source.empty()) {
    std::filesystem::path source = expandHome(options.source, home);
    if (source.is_relative() && !cwd.empty()) source = std::filesystem::path(cwd) / source;
    body["source"] = source.lexically_normal().string();
  }
  return body;
}

std::string volumeListTable(const Json& body) {
  const Json& volumes = jsonChild(body, "volumes");
  if (!volumes.is_array() || volumes.empty()) {
    return "No volumes yet; create one with: corral volume create NAME\n";
  }
  std::vector<std::vector<std::string>> rows = {{"NAME", "TYPE", "PATH-ON-HOST", "ATTACHED-TO"}};
  for (const Json& v : volumes) {
    rows.push_back({orNone(jsonString(v, "name")), orNone(jsonString(v, "type")),
                    orNone(jsonString(v, "hostPath")), orNone(attachedText(v))});
  }
  return renderTable(rows);
}

std::string volumeDetail(const Json& volume, int64_t nowUnixSeconds) {
  std::string type = jsonString(volume, "type");
  std::vector<std::pair<std::string, std::string>> fields = {
      {"Name", orNone(jsonString(volume, "name"))},
      {"Type", type == "dataset" ? "dataset (read-only on clusters)" : orNone(type)},
      {"Host path", orNone(jsonString(volume, "hostPath"))},
      {"Managed", isManaged(volume) ? "yes: corrald made the directory and removes it with the "
                                      "volume"
                                    : "no: your directory; deleting the volume leaves it"},
  };
  std::string attached = attachedText(volume);
  fields.emplace_back("Attached", attached.empty() ? "nowhere" : attached);
  if (int64_t created = jsonInt(volume, "createdAt"); created > 0) {
    fields.emplace_back("Age", formatAge(nowUnixSeconds - created));
  }
  return renderFields(fields);
}

Status volumeCreate(ApiClient& api, CliContext& ctx, const VolumeOptions& options) {
  std::error_code ec;
  std::string cwd = std::filesystem::current_path(ec).string();
  ASSIGN_OR_RETURN(Json created, api.createVolume(buildVolumeCreate(options, ctx.home, cwd)));
  if (options.format == OutputFormat::kJson) {
    *ctx.out << renderJson(created);
    return Status::ok();
  }
  std::string name = jsonString(created, "name", options.name);
  std::string type = jsonString(created, "type", options.type);
  *ctx.out << "volume " << quoted(name) << " created at " << jsonString(created, "hostPath", "?")
           << " (" << type << ")\n"
           << "attach it with: corral volume attach CLUSTER " << name << " --path "
           << suggestedPath(type, name) << "\n";
  return Status::ok();
}

Status volumeList(ApiClient& api, CliContext& ctx, OutputFormat format) {
  ASSIGN_OR_RETURN(Json body, api.listVolumes());
  *ctx.out << (format == OutputFormat::kJson ? renderJson(body) : volumeListTable(body));
  return Status::ok();
}

Status volumeGet(ApiClient& api, CliContext& ctx, const VolumeOptions& options) {
  ASSIGN_OR_RETURN(Json volume, api.getVolume(options.name));
  *ctx.out << (options.format == OutputFormat::kJson
                   ? renderJson(volume)
                   : volumeDetail(volume, ctx.clock->unixMillis() / 1000));
  return Status::ok();
}

Status volumeDelete(ApiClient& api, CliContext& ctx, const VolumeOptions& options) {
  ASSIGN_OR_RETURN(Json deleted, api.deleteVolume(options.name));
  if (options.format == OutputFormat::kJson) {
    *ctx.out << renderJson(deleted);
    return Status::ok();
  }
  std::string hostPath = jsonString(deleted, "hostPath", "?");
  *ctx.out << "volume " << quoted(options.name) << " deleted"
           << (isManaged(deleted) ? " with its directory " + hostPath
                                  : "; " + hostPath + " was left as it was")
           << "\n";
  return Status::ok();
}

Status volumeAttach(ApiClient& api, CliContext& ctx, const VolumeOptions& options) {
  ASSIGN_OR_RETURN(Json answer, api.attachVolume(options.cluster, options.name, options.path));
  return followChange(api, ctx, options.cluster, answer,
                      followOptions(options.wait, options.format));
}

Status volumeDetach(ApiClient& api, CliContext& ctx, const VolumeOptions& options) {
  ASSIGN_OR_RETURN(Json answer, api.detachVolume(options.cluster, options.name));
  return followChange(api, ctx, options.cluster, answer,
                      followOptions(options.wait, options.format));
}

}  // namespace corral
