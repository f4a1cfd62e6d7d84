#pragma once

// `corral user add|remove|list`: login users of a cluster, each with their own
// uid, home directory under /shared/home and SSH keys. Adding and removing
// are changes of the cluster (new revisions).

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/output.h"
#include "corral/status.h"

namespace corral {

struct UserOptions {
  std::string cluster;
  std::string name;
  std::vector<std::string> sshKeyFiles;  // add: OpenSSH public key files.
  ChangeWait wait;
  OutputFormat format = OutputFormat::kTable;
};

// Adds `user` and its subcommands to `app`; the one the user picks sets
// `chosen`, which must outlive `app`'s parse.
void addUserCommands(CLI::App& app, Command& chosen);

// `corral user list`: NAME UID HOME KEYS, or a line saying how to add the
// first user to `cluster`.
std::string userListTable(const Json& body, const std::string& cluster);

// How `user` logs in to `cluster` (a Cluster answer): "ssh -i KEY [-p PORT]
// USER@ADDRESS", where KEY is `publicKeyFile` without ".pub", the private key
// ssh wants; without "-i" when the file's name does not end in ".pub". ""
// while the login node has no address.
std::string userLoginCommand(const Json& cluster, const std::string& user,
                             const std::string& publicKeyFile);

Status userAdd(ApiClient& api, CliContext& ctx, const UserOptions& options);
Status userRemove(ApiClient& api, CliContext& ctx, const UserOptions& options);
Status userList(ApiClient& api, CliContext& ctx, const UserOptions& options);

}  // namespace corral
