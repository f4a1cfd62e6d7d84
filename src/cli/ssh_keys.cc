#include "cli/ssh_keys.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>

extern char** environ;

namespace corral {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// Runs `argv` with stdin from /dev/null, so that ssh-keygen can never stop to
// ask a question, and returns its exit status.
StatusOr<int> runQuietly(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return internalError("cannot run " + argv[0] + ": " + std::strerror(rc));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return internalError("waiting for " + argv[0] + ": " + std::strerror(errno));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

StatusOr<std::vector<std::string>> parsePublicKeys(const std::string& text,
                                                   const std::string& fileName) {
  std::vector<std::string> keys;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::string key = trim(line);
    if (key.empty() || key[0] == '#') continue;
    if (key.find("PRIVATE KEY") != std::string::npos) {
      return invalidArgument(fileName + " holds a private key; pass the public key instead (" +
                             fileName + ".pub)");
    }
    keys.push_back(key);
  }
  if (keys.empty()) {
    return invalidArgument(fileName + " holds no SSH public key; expected lines like " +
                           "\"ssh-ed25519 AAAA… you@host\"");
  }
  return keys;
}

StatusOr<std::vector<std::string>> readPublicKeyFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return invalidArgument("cannot read SSH key file " + path + ": it is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return invalidArgument("cannot read SSH key file " + path + ": " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return invalidArgument("cannot read SSH key file " + path + ": " + std::strerror(errno));
  }
  return parsePublicKeys(text.str(), path);
}

std::string expandHome(const std::string& path, const std::string& home) {
  if (home.empty()) return path;
  if (path == "~") return home;
  if (path.rfind("~/", 0) == 0) return home + path.substr(1);
  return path;
}

std::string corralKeyPath(const std::string& home) { return home + "/.ssh/corral_ed25519"; }

StatusOr<std::vector<std::string>> corralPublicKeys(const std::string& home, std::ostream& err) {
  if (home.empty()) {
    return failedPrecondition(
        "cannot find your home directory for corral's SSH key; set HOME or pass --ssh-key FILE");
  }
  std::string priv = corralKeyPath(home);
  std::string pub = priv + ".pub";
  if (!exists(pub)) {
    if (exists(priv)) {
      // Regenerating would overwrite a key that clusters may already trust.
      return failedPrecondition(priv + " exists but " + pub + " does not; recreate it with: " +
                                "ssh-keygen -y -f " + priv + " > " + pub);
    }
    std::string dir = home + "/.ssh";
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return internalError("cannot create " + dir + ": " + std::strerror(errno));
    }
    ASSIGN_OR_RETURN(int rc, runQuietly({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                                         "corral", "-f", priv}));
    if (rc != 0 || !exists(pub)) {
      return internalError("ssh-keygen could not create " + priv + " (exit " + std::to_string(rc) +
                           "); create a key yourself or pass --ssh-key FILE");
    }
    err << "created SSH key " << priv << " for corral clusters\n";
  }
  return readPublicKeyFile(pub);
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

}  // namespace corral
