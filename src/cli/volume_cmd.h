#pragma once

// `corral volume create|list|get|delete|attach|detach`: host directories that
// outlive clusters, mounted into a cluster's nodes and login node. Attaching
// and detaching are changes of the cluster (new revisions); the rest acts on
// corrald's list of volumes at once.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "cli/client.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/output.h"
#include "corral/status.h"

namespace corral {

struct VolumeOptions {
  std::string cluster;  // attach, detach.
  std::string name;
  std::string type = "pfs";  // create: pfs, sfs, weka or dataset.
  std::string source;        // create: an existing host directory; "": corrald makes one.
  std::string path;          // attach: where the cluster's nodes see it.
  std::string project;       // create: "" is the caller's first project.
  ChangeWait wait;
  OutputFormat format = OutputFormat::kTable;
};

// Adds `volume` and its subcommands to `app`; the one the user picks sets
// `chosen`, which must outlive `app`'s parse.
void addVolumeCommands(CLI::App& app, Command& chosen);

// The POST body for `volume create`: {"name", "type", "source"?}. A source
// has "~/" expanded against `home` and, when relative, is made absolute
// against `cwd`: corrald runs elsewhere and only takes absolute paths.
Json buildVolumeCreate(const VolumeOptions& options, const std::string& home,
                       const std::string& cwd);

// `corral volume list`: NAME TYPE PATH-ON-HOST ATTACHED-TO, or a line saying
// how to create the first one.
std::string volumeListTable(const Json& body);

// `corral volume get`: the volume's fields, one a line.
std::string volumeDetail(const Json& volume, int64_t nowUnixSeconds);

Status volumeCreate(ApiClient& api, CliContext& ctx, const VolumeOptions& options);
Status volumeList(ApiClient& api, CliContext& ctx, OutputFormat format);
Status volumeGet(ApiClient& api, CliContext& ctx, const VolumeOptions& options);
Status volumeDelete(ApiClient& api, CliContext& ctx, const VolumeOptions& options);
Status volumeAttach(ApiClient& api, CliContext& ctx, const VolumeOptions& options);
Status volumeDetach(ApiClient& api, CliContext& ctx, const VolumeOptions& options);

}  // namespace corral
