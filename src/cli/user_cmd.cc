#include "cli/user_cmd.h"

#include <memory>
#include <ostream>

#include "cli/ssh_keys.h"
#include "cli/waiting.h"

namespace corral {
namespace {

CLI::App* addUserCommand(CLI::App* noun, Command& chosen, const std::string& verb,
                         const std::string& help,
                         Status (*run)(ApiClient&, CliContext&, const UserOptions&),
                         std::shared_ptr<UserOptions> o) {
  CLI::App* cmd = noun->add_subcommand(verb, help);
  addNameArgument(cmd, &o->cluster, "CLUSTER", "Cluster name");
  cmd->callback([o, run, &chosen] {
    chosen = [o, run](ApiClient& api, CliContext& ctx) { return run(api, ctx, *o); };
  });
  return cmd;
}

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

void addUserCommands(CLI::App& app, Command& chosen) {
  CLI::App* noun = app.add_subcommand("user", "Add, remove and list a cluster's login users");
  noun->require_subcommand(1);

  {
    auto o = std::make_shared<UserOptions>();
    CLI::App* cmd = addUserCommand(
        noun, chosen, "add", "Add a login user with a home directory in /shared/home", userAdd, o);
    addNameArgument(cmd, &o->name, "NAME", "Login name");
    addSshKeyOption(cmd, &o->sshKeyFiles,
                    "OpenSSH public key file the user logs in with; repeat for more")
        ->required();
    addChangeWaitOptions(cmd, &o->wait);
    addOutputOption(cmd, &o->format);
  }
  {
    auto o = std::make_shared<UserOptions>();
    CLI::App* cmd = addUserCommand(
        noun, chosen, "remove",
        "Remove a login user; their files on shared storage stay, and their uid is never reused",
        userRemove, o);
    addNameArgument(cmd, &o->name, "NAME", "Login name");
    addChangeWaitOptions(cmd, &o->wait);
    addOutputOption(cmd, &o->format);
  }
  {
    auto o = std::make_shared<UserOptions>();
    CLI::App* cmd =
        addUserCommand(noun, chosen, "list", "List a cluster's login users", userList, o);
    addOutputOption(cmd, &o->format);
  }
}

std::string userListTable(const Json& body, const std::string& cluster) {
  const Json& users = jsonChild(body, "users");
  if (!users.is_array() || users.empty()) {
    return "No login users on " + cluster + "; add one with: corral user add " + cluster +
           " NAME --ssh-key FILE\n";
  }
  std::vector<std::vector<std::string>> rows = {{"NAME", "UID", "HOME", "KEYS"}};
  for (const Json& u : users) {
    rows.push_back({orNone(jsonString(u, "name")), jsonIntText(u, "uid"),
                    orNone(jsonString(u, "home")), jsonIntText(u, "sshKeys")});
  }
  return renderTable(rows);
}

std::string userLoginCommand(const Json& cluster, const std::string& user,
                             const std::string& publicKeyFile) {
  const Json& login = jsonChild(cluster, "login");
  std::string address = jsonString(login, "address");
  if (address.empty()) return "";
  std::string cmd = "ssh ";
  if (endsWith(publicKeyFile, ".pub")) {
    cmd += "-i " + publicKeyFile.substr(0, publicKeyFile.size() - 4) + " ";
  }
  int64_t port = jsonInt(login, "port", 22);
  if (port != 22 && port > 0) cmd += "-p " + std::to_string(port) + " ";
  return cmd + user + "@" + address;
}

Status userAdd(ApiClient& api, CliContext& ctx, const UserOptions& options) {
  if (options.sshKeyFiles.empty()) {
    return invalidArgument("give at least one --ssh-key FILE; without a key " + options.name +
                           " could not log in");
  }
  ASSIGN_OR_RETURN(std::vector<std::string> keys,
                   collectSshKeys(options.sshKeyFiles, ctx.home, *ctx.err));
  ASSIGN_OR_RETURN(Json answer, api.addUser(options.cluster, options.name, keys));
  FollowOptions follow = followOptions(options.wait, options.format);
  RETURN_IF_ERROR(followChange(api, ctx, options.cluster, answer, follow));
  if (!follow.wait || !changeMade(answer)) return Status::ok();

  std::ostream& human = humanStream(ctx, options.format);
  StatusOr<Json> cluster = api.getCluster(options.cluster);
  std::string command =
      cluster.isOk()
          ? userLoginCommand(*cluster, options.name, expandHome(options.sshKeyFiles[0], ctx.home))
          : "";
  if (command.empty()) {
    human << options.name << " can log in once the login node has an address; see: corral "
          << "cluster get " << options.cluster << "\n";
  } else {
    human << options.name << " can log in with: " << command << "\n";
  }
  return Status::ok();
}

Status userRemove(ApiClient& api, CliContext& ctx, const UserOptions& options) {
  ASSIGN_OR_RETURN(Json answer, api.removeUser(options.cluster, options.name));
  return followChange(api, ctx, options.cluster, answer,
                      followOptions(options.wait, options.format));
}

Status userList(ApiClient& api, CliContext& ctx, const UserOptions& options) {
  ASSIGN_OR_RETURN(Json body, api.listUsers(options.cluster));
  *ctx.out << (options.format == OutputFormat::kJson ? renderJson(body)
                                                     : userListTable(body, options.cluster));
  return Status::ok();
}

}  // namespace corral
