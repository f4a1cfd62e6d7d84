// `loadSettings`: Enroot's configuration file and environment variables.

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "common/files.h"
#include "container/container.h"
#include "common/fs.h"

namespace corral::container {
namespace {

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string unquote(const std::string& s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) {
    return s.substr(1, s.size() - 2);
  }
  return s;
}

bool isNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Expands $NAME, ${NAME}, ${NAME:-WORD} (WORD expanded too), $(id -u) and
// $(id -g) as Enroot's shell would. Unknown names expand to "".
class Expander {
 public:
  Expander(const Identity& who, const std::map<std::string, std::string>& env)
      : who_(who), env_(env) {}

  StatusOr<std::string> expand(const std::string& key, const std::string& in, int depth = 0) const {
    if (depth > 8) return invalidArgument(key + ": variables nest too deeply");
    std::string out;
    for (size_t i = 0; i < in.size(); ++i) {
      char c = in[i];
      if (c != '$' || i + 1 == in.size()) {
        out += c;
        continue;
      }
      char n = in[i + 1];
      if (n == '(') {
        size_t close = in.find(')', i);
        if (close == std::string::npos) return invalidArgument(key + ": unterminated $(");
        std::string cmd = trim(in.substr(i + 2, close - i - 2));
        if (cmd == "id -u") {
          out += std::to_string(who_.uid);
        } else if (cmd == "id -g") {
          out += std::to_string(who_.gid);
        } else if (cmd == "id -un" || cmd == "whoami") {
          out += who_.user;
        } else {
          return invalidArgument(key + ": only $(id -u), $(id -g) and $(id -un) may be used, not $(" +
                                 cmd + ")");
        }
        i = close;
      } else if (n == '{') {
        // Find the matching brace, allowing nested ${…}.
        size_t j = i + 2;
        int level = 1;
        for (; j < in.size() && level > 0; ++j) {
          if (in[j] == '{') ++level;
          if (in[j] == '}') --level;
        }
        if (level != 0) return invalidArgument(key + ": unterminated ${");
        std::string inner = in.substr(i + 2, j - i - 3);
        size_t op = inner.find(":-");
        std::string name = op == std::string::npos ? inner : inner.substr(0, op);
        std::string value = lookup(name);
        if (value.empty() && op != std::string::npos) {
          ASSIGN_OR_RETURN(value, expand(key, inner.substr(op + 2), depth + 1));
        }
        out += value;
        i = j - 1;
      } else if (isNameChar(n)) {
        size_t j = i + 1;
        while (j < in.size() && isNameChar(in[j])) ++j;
        out += lookup(in.substr(i + 1, j - i - 1));
        i = j - 1;
      } else {
        out += c;
      }
    }
    return out;
  }

 private:
  std::string lookup(const std::string& name) const {
    if (name == "UID") return std::to_string(who_.uid);
    if (name == "GID") return std::to_string(who_.gid);
    auto it = env_.find(name);
    if (it != env_.end()) return it->second;
    if (name == "HOME") return who_.home;
    if (name == "USER" || name == "LOGNAME") return who_.user;
    return "";
  }

  const Identity& who_;
  const std::map<std::string, std::string>& env_;
};

StatusOr<std::map<std::string, std::string>> readConfigFile(const std::string& path) {
  std::map<std::string, std::string> out;
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return out;
    return invalidArgument("cannot read the enroot configuration " + path + ": " +
                           std::strerror(errno));
  }
  auto text = readFile(path);
  if (!text.isOk()) return invalidArgument("cannot read the enroot configuration " + path);
  size_t lineNo = 0, pos = 0;
  const std::string& t = *text;
  while (pos <= t.size()) {
    size_t nl = t.find('\n', pos);
    if (nl == std::string::npos) nl = t.size();
    std::string line = trim(t.substr(pos, nl - pos));
    pos = nl + 1;
    ++lineNo;
    if (line.empty() || line[0] == '#') continue;
    size_t sep = 0;
    while (sep < line.size() && (isNameChar(line[sep]))) ++sep;
    std::string key = line.substr(0, sep);
    std::string rest = line.substr(sep);
    if (key.empty() || (!rest.empty() && rest[0] != '=' && !std::isspace(static_cast<unsigned char>(rest[0])))) {
      return invalidArgument(path + ":" + std::to_string(lineNo) +
                             ": expected \"KEY VALUE\" or \"KEY=VALUE\"");
    }
    rest = trim(rest);
    if (!rest.empty() && rest[0] == '=') rest = trim(rest.substr(1));
    // A '#' after whitespace starts a comment, as in the shell.
    for (size_t i = 1; i < rest.size(); ++i) {
      if (rest[i] == '#' && std::isspace(static_cast<unsigned char>(rest[i - 1]))) {
        rest = trim(rest.substr(0, i));
        break;
      }
    }
    out[key] = unquote(rest);
  }
  return out;
}

// GCC 12 at -O2 wrongly reports the string's inline buffer as maybe
// uninitialized here (a known false positive with short strings).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
StatusOr<std::string> pathSetting(const Expander& x, const std::string& key,
                                  const std::string& raw) {
  auto expanded = x.expand(key, raw);
  if (!expanded.isOk()) return expanded.status();
  std::string v = std::move(*expanded);
  if (!v.starts_with('/')) {
    return invalidArgument(key + " must be an absolute path, got " +
                           (v.empty() ? std::string("nothing") : "\"" + v + "\"") +
                           " (is HOME set?)");
  }
  while (v.size() > 1 && v.back() == '/') v.pop_back();
  return v;
}
#pragma GCC diagnostic pop

StatusOr<int> intSetting(const std::string& key, const std::string& v) {
  char* end = nullptr;
  errno = 0;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || n < 0 || n > 1000000) {
    return invalidArgument(key + ": expected a number, got \"" + v + "\"");
  }
  return static_cast<int>(n);
}

}  // namespace

StatusOr<bool> parseBool(const std::string& key, const std::string& value) {
  std::string v;
  for (char c : value) v += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "y" || v == "yes" || v == "1" || v == "true" || v == "on") return true;
  if (v == "n" || v == "no" || v == "0" || v == "false" || v == "off" || v.empty()) return false;
  return invalidArgument(key + ": expected yes or no, got \"" + value + "\"");
}

StatusOr<Settings> loadSettings(const Identity& who, const std::map<std::string, std::string>& env,
                                const std::string& configFile) {
  std::string file = configFile;
  if (auto it = env.find("ENROOT_CONFIG_FILE"); it != env.end() && !it->second.empty()) {
    file = it->second;
  }
  std::map<std::string, std::string> values = {
      {"ENROOT_DATA_PATH", "${XDG_DATA_HOME:-$HOME/.local/share}/enroot"},
      {"ENROOT_CACHE_PATH", "${XDG_CACHE_HOME:-$HOME/.cache}/enroot"},
      {"ENROOT_RUNTIME_PATH", "${XDG_RUNTIME_DIR:-/run}/enroot"},
      {"ENROOT_CONFIG_PATH", "${XDG_CONFIG_HOME:-$HOME/.config}/enroot"},
      {"ENROOT_MOUNT_HOME", "no"},
      {"ENROOT_ROOTFS_WRITABLE", "yes"},
      {"ENROOT_REMAP_ROOT", "no"},
      {"ENROOT_ALLOW_HTTP", "no"},
      {"CORRAL_HTTP_REGISTRIES", ""},
      {"ENROOT_MAX_CONNECTIONS", "4"},
      {"ENROOT_CONNECT_TIMEOUT", "10"},
      {"ENROOT_TRANSFER_TIMEOUT", "600"},
  };
  ASSIGN_OR_RETURN(auto fromFile, readConfigFile(file));
  for (const auto& [k, v] : fromFile) values[k] = v;
  // The environment wins over the file, as with Enroot.
  for (auto& [k, v] : values) {
    if (auto it = env.find(k); it != env.end()) v = it->second;
  }

  Expander x(who, env);
  Settings s;
  ASSIGN_OR_RETURN(s.dataPath, pathSetting(x, "ENROOT_DATA_PATH", values["ENROOT_DATA_PATH"]));
  ASSIGN_OR_RETURN(s.cachePath, pathSetting(x, "ENROOT_CACHE_PATH", values["ENROOT_CACHE_PATH"]));
  ASSIGN_OR_RETURN(s.runtimePath,
                   pathSetting(x, "ENROOT_RUNTIME_PATH", values["ENROOT_RUNTIME_PATH"]));
  ASSIGN_OR_RETURN(s.configPath, pathSetting(x, "ENROOT_CONFIG_PATH", values["ENROOT_CONFIG_PATH"]));
  ASSIGN_OR_RETURN(s.mountHome, parseBool("ENROOT_MOUNT_HOME", values["ENROOT_MOUNT_HOME"]));
  ASSIGN_OR_RETURN(s.writable, parseBool("ENROOT_ROOTFS_WRITABLE", values["ENROOT_ROOTFS_WRITABLE"]));
  ASSIGN_OR_RETURN(s.remapRoot, parseBool("ENROOT_REMAP_ROOT", values["ENROOT_REMAP_ROOT"]));
  ASSIGN_OR_RETURN(bool allowHttp, parseBool("ENROOT_ALLOW_HTTP", values["ENROOT_ALLOW_HTTP"]));
  if (allowHttp) s.registry.httpRegistries.push_back("*");
  ASSIGN_OR_RETURN(std::string hosts,
                   x.expand("CORRAL_HTTP_REGISTRIES", values["CORRAL_HTTP_REGISTRIES"]));
  size_t pos = 0;
  while (pos <= hosts.size()) {
    size_t comma = hosts.find(',', pos);
    if (comma == std::string::npos) comma = hosts.size();
    std::string h = trim(hosts.substr(pos, comma - pos));
    if (!h.empty()) s.registry.httpRegistries.push_back(h);
    pos = comma + 1;
  }
  ASSIGN_OR_RETURN(int conns, intSetting("ENROOT_MAX_CONNECTIONS", values["ENROOT_MAX_CONNECTIONS"]));
  s.registry.parallelDownloads = conns > 0 ? conns : 1;
  ASSIGN_OR_RETURN(int ct, intSetting("ENROOT_CONNECT_TIMEOUT", values["ENROOT_CONNECT_TIMEOUT"]));
  s.registry.connectTimeout = std::chrono::seconds(ct);
  ASSIGN_OR_RETURN(int tt, intSetting("ENROOT_TRANSFER_TIMEOUT", values["ENROOT_TRANSFER_TIMEOUT"]));
  s.registry.transferTimeout = std::chrono::seconds(tt);
  std::string creds = s.configPath + "/.credentials";
  struct stat st;
  if (stat(creds.c_str(), &st) == 0) s.registry.credentialsFile = creds;

  RETURN_IF_ERROR(makeDirs(s.dataPath, 0700).withContext("ENROOT_DATA_PATH"));
  RETURN_IF_ERROR(makeDirs(s.cachePath, 0700).withContext("ENROOT_CACHE_PATH"));
  return s;
}

}  // namespace corral::container
