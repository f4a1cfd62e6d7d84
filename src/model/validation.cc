#include "model/validation.h"

#include <regex>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <regex>
#include <string_view>
#include <vector>

#include "common/base64.h"
#include "common/text.h"

namespace corral {
namespace {

std::string quote(std::string_view s) { return quoteForMessage(s, 64); }

Status outOfRange(const char* flag, int value, int lo, int hi) {
  return invalidArgument(std::string(flag) + " must be between " + std::to_string(lo) + " and " +
                         std::to_string(hi) + ", got " + std::to_string(value));
}

// ---- SSH public keys ----

// What the key blob of each accepted type holds, after its type string
// (OpenSSH PROTOCOL, PROTOCOL.u2f, RFC 4253 6.6, RFC 5656 3.1).
enum class KeyKind { kEd25519, kRsa, kEcdsa, kSkEd25519, kSkEcdsa };

struct KeyType {
  std::string_view name;
  KeyKind kind;
  std::string_view curve;  // ECDSA only: the curve name the blob repeats.
  size_t pointLength;      // ECDSA only: an uncompressed point, 0x04 || X || Y.
};

constexpr std::array<KeyType, 7> kKeyTypes = {{
    {"ssh-ed25519", KeyKind::kEd25519, "", 0},
    {"ssh-rsa", KeyKind::kRsa, "", 0},
    {"ecdsa-sha2-nistp256", KeyKind::kEcdsa, "nistp256", 65},
    {"ecdsa-sha2-nistp384", KeyKind::kEcdsa, "nistp384", 97},
    {"ecdsa-sha2-nistp521", KeyKind::kEcdsa, "nistp521", 133},
    {"sk-ssh-ed25519@openssh.com", KeyKind::kSkEd25519, "", 0},
    {"sk-ecdsa-sha2-nistp256@openssh.com", KeyKind::kSkEcdsa, "nistp256", 65},
}};

constexpr size_t kEd25519KeyLength = 32;

// sshd refuses shorter RSA keys (OpenSSH's SSH_RSA_MINIMUM_MODULUS_SIZE), so
// accepting one would only defer the failure to the user's first login.
constexpr size_t kMinRsaBits = 1024;

std::string supportedTypes() {
  std::string out;
  for (const KeyType& t : kKeyTypes) {
    if (!out.empty()) out += ", ";
    out += t.name;
  }
  return out;
}

const KeyType* findKeyType(std::string_view name) {
  for (const KeyType& t : kKeyTypes) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// Reads the length-prefixed fields of an SSH wire-format blob (RFC 4251
// section 5, `string` and `mpint`); nullopt when a length runs past the end.
std::optional<std::vector<std::string_view>> splitFields(std::string_view blob) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < blob.size()) {
    if (blob.size() - i < 4) return std::nullopt;
    uint32_t n = 0;
    for (int k = 0; k < 4; ++k) n = (n << 8) | static_cast<unsigned char>(blob[i + k]);
    i += 4;
    if (n > blob.size() - i) return std::nullopt;
    fields.push_back(blob.substr(i, n));
    i += n;
  }
  return fields;
}

// The number of significant bits of a positive `mpint`.
size_t mpintBits(std::string_view m) {
  size_t i = 0;
  while (i < m.size() && m[i] == 0) ++i;
  if (i == m.size()) return 0;
  size_t bits = (m.size() - i) * 8;
  for (unsigned char top = static_cast<unsigned char>(m[i]); (top & 0x80) == 0; top <<= 1) --bits;
  return bits;
}

Status corrupt(const KeyType& type, const std::string& what) {
  return invalidArgument("the " + std::string(type.name) + " key data " + what +
                         "; paste the whole line from your .pub file");
}

// Checks the fields that follow the type string of a decoded key blob.
Status checkKeyFields(const KeyType& type, const std::vector<std::string_view>& f) {
  size_t expected = 0;
  switch (type.kind) {
    case KeyKind::kEd25519:
      expected = 2;
      break;  // type, key
    case KeyKind::kRsa:
      expected = 3;
      break;  // type, e, n
    case KeyKind::kEcdsa:
      expected = 3;
      break;  // type, curve, point
    case KeyKind::kSkEd25519:
      expected = 3;
      break;  // type, key, application
    case KeyKind::kSkEcdsa:
      expected = 4;
      break;  // type, curve, point, application
  }
  if (f.size() != expected) {
    return corrupt(type, "has " + std::to_string(f.size()) + " fields where " +
                             std::to_string(expected) + " belong; it is truncated or corrupt");
  }
  switch (type.kind) {
    case KeyKind::kEd25519:
    case KeyKind::kSkEd25519:
      if (f[1].size() != kEd25519KeyLength) {
        return corrupt(type, "holds a " + std::to_string(f[1].size()) +
                                 "-byte public key instead of 32 bytes");
      }
      break;
    case KeyKind::kRsa: {
      if (mpintBits(f[1]) == 0) return corrupt(type, "has an empty public exponent");
      size_t bits = mpintBits(f[2]);
      if (bits < kMinRsaBits) {
        return invalidArgument("the ssh-rsa key has " + std::to_string(bits) +
                               " bits; OpenSSH refuses RSA keys under " +
                               std::to_string(kMinRsaBits) +
                               " bits, so generate a new one (ssh-keygen -t ed25519)");
      }
      break;
    }
    case KeyKind::kEcdsa:
    case KeyKind::kSkEcdsa:
      if (f[1] != type.curve) {
        return corrupt(type,
                       "names curve " + quote(f[1]) + " instead of " + std::string(type.curve));
      }
      if (f[2].size() != type.pointLength || f[2][0] != 0x04) {
        return corrupt(type, "holds a malformed curve point");
      }
      break;
  }
  return Status::ok();
}

bool isBlank(char c) { return c == ' ' || c == '\t'; }

}  // namespace

Status validateClusterName(const std::string& name) {
  auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  };
  bool ok = !name.empty() && name.size() <= kMaxClusterNameLength && name.front() >= 'a' &&
            name.front() <= 'z' && name.back() != '-' &&
            std::all_of(name.begin(), name.end(), allowed);
  if (ok) return Status::ok();
  return invalidArgument("invalid cluster name " + quote(name) + ": use 1-" +
                         std::to_string(kMaxClusterNameLength) +
                         " lowercase letters, digits and '-', starting with a letter and not "
                         "ending with '-'");
}

Status validateSshPublicKey(const std::string& key) {
  if (key.size() > kMaxSshKeyLength) {
    return invalidArgument("SSH public key is " + std::to_string(key.size()) + " bytes; at most " +
                           std::to_string(kMaxSshKeyLength) + " are allowed");
  }
  for (size_t i = 0; i < key.size(); ++i) {
    char c = key[i];
    if (c == '\n' || c == '\r') {
      return invalidArgument(
          "SSH public key must be a single line, but it contains a line break; give one key "
          "per --ssh-key");
    }
    if (c == '\0') return invalidArgument("SSH public key contains a NUL byte");
    unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) {
      return invalidArgument("SSH public key contains the control character " +
                             quote(std::string_view(&key[i], 1)));
    }
  }

  std::string_view line(key);
  while (!line.empty() && isBlank(line.front())) line.remove_prefix(1);
  while (!line.empty() && isBlank(line.back())) line.remove_suffix(1);
  if (line.empty()) return invalidArgument("SSH public key is empty");

  size_t typeEnd = std::min(line.find_first_of(" \t"), line.size());
  std::string_view typeName = line.substr(0, typeEnd);
  const KeyType* type = findKeyType(typeName);
  if (type == nullptr) {
    if (line.substr(0, 5) == "-----") {
      return invalidArgument(
          "this looks like a private key; give the public key instead (the contents of the "
          ".pub file)");
    }
    return invalidArgument("unsupported SSH key type " + quote(typeName) + "; use one of " +
                           supportedTypes());
  }

  std::string_view rest = line.substr(typeEnd);
  while (!rest.empty() && isBlank(rest.front())) rest.remove_prefix(1);
  std::string_view data = rest.substr(0, rest.find_first_of(" \t"));
  if (data.empty()) {
    return invalidArgument("SSH public key has no key data after " + quote(typeName) +
                           "; paste the whole line from your .pub file");
  }
  // Anything after the data is a free-form comment, as in OpenSSH.

  StatusOr<std::string> blob = decodeBase64(data);
  if (!blob.isOk()) return corrupt(*type, "is not valid base64");
  std::optional<std::vector<std::string_view>> fields = splitFields(*blob);
  if (!fields || fields->empty()) return corrupt(*type, "is truncated or corrupt");
  if ((*fields)[0] != type->name) {
    return invalidArgument("SSH public key says " + quote(typeName) +
                           " but its key data is of type " + quote((*fields)[0]) +
                           "; paste the whole line from your .pub file");
  }
  return checkKeyFields(*type, *fields);
}

Status validateMountPath(const std::string& path) {
  auto allowed = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-' ||
           c == '.';
  };
  if (path.size() < 2 || path.size() > 128 || path[0] != '/' || path.back() == '/' ||
      !std::all_of(path.begin(), path.end(), allowed) || path.find("//") != std::string::npos ||
      path.find("/.") != std::string::npos)
    return invalidArgument("invalid mount path " + quote(path) +
                           ": use an absolute path such as /pfs of letters, digits and /_-.");
  // Paths the pods' own system lives at, and /shared (the cluster's SFS).
  static const char* reserved[] = {"/bin", "/boot", "/dev",  "/etc",  "/home", "/lib",
                                   "/lib32", "/lib64", "/libx32", "/opt", "/proc", "/root",
                                   "/run",  "/sbin", "/shared", "/srv", "/sys", "/tmp",
                                   "/usr",  "/var"};
  for (const char* r : reserved) {
    std::string prefix = std::string(r);
    if (path == prefix || path.rfind(prefix + "/", 0) == 0)
      return invalidArgument("mount path " + quote(path) + " is inside " + prefix +
                             ", which the nodes' own system uses; choose e.g. /pfs or /data");
  }
  return Status::ok();
}

Status validateLoginUserName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 32 && (std::islower(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
            std::all_of(name.begin(), name.end(), [](char c) {
              return std::islower(static_cast<unsigned char>(c)) ||
                     std::isdigit(static_cast<unsigned char>(c)) || c == '_' || c == '-';
            });
  if (!ok)
    return invalidArgument("invalid user name " + quote(name) +
                           ": use 1-32 lowercase letters, digits, '_' and '-', starting with a "
                           "letter or '_'");
  static const char* system[] = {"root", "daemon", "bin",   "sys",    "sync",   "games",
                                 "man",  "lp",     "mail",  "news",   "uucp",   "proxy",
                                 "www-data", "backup", "list", "irc", "gnats", "nobody",
                                 "sshd", "munge", "mysql", "slurm", "messagebus", "systemd-network"};
  for (const char* s : system)
    if (name == s) return invalidArgument("user name " + quote(name) + " is a system account");
  return Status::ok();
}

Status validateClusterSpec(const ClusterSpec& spec) {
  RETURN_IF_ERROR(validateClusterName(spec.name));
  if (spec.gpuNodes < 0 || spec.gpuNodes > kMaxGpuNodes) {
    return outOfRange("--gpu-nodes", spec.gpuNodes, 0, kMaxGpuNodes);
  }
  if (spec.cpuNodes < 0 || spec.cpuNodes > kMaxCpuNodes) {
    return outOfRange("--cpu-nodes", spec.cpuNodes, 0, kMaxCpuNodes);
  }
  if (spec.gpuNodes + spec.cpuNodes == 0) {
    return invalidArgument("a cluster needs at least one node: set --gpu-nodes or --cpu-nodes");
  }
  // Without GPU nodes the value is never used; 0 is the natural way to say so.
  int minGpus = spec.gpuNodes > 0 ? 1 : 0;
  if (spec.gpusPerNode < minGpus || spec.gpusPerNode > kMaxGpusPerNode) {
    return outOfRange("--gpus-per-node", spec.gpusPerNode, 1, kMaxGpusPerNode);
  }
  if (spec.sshKeys.size() > static_cast<size_t>(kMaxSshKeys)) {
    return invalidArgument("too many --ssh-key values: " + std::to_string(spec.sshKeys.size()) +
                           " given, at most " + std::to_string(kMaxSshKeys) + " are allowed");
  }
  for (size_t i = 0; i < spec.sshKeys.size(); ++i) {
    Status st = validateSshPublicKey(spec.sshKeys[i]);
    if (!st.isOk()) {
      return st.withContext("invalid --ssh-key #" + std::to_string(i + 1) + " of " +
                            std::to_string(spec.sshKeys.size()));
    }
  }
  if (spec.volumes.size() > static_cast<size_t>(kMaxVolumesPerCluster))
    return invalidArgument("a cluster can have at most " + std::to_string(kMaxVolumesPerCluster) +
                           " volumes attached");
  for (size_t i = 0; i < spec.volumes.size(); ++i) {
    const auto& v = spec.volumes[i];
    RETURN_IF_ERROR(validateMountPath(v.path));
    for (size_t j = 0; j < i; ++j) {
      const auto& o = spec.volumes[j];
      if (o.volume == v.volume)
        return invalidArgument("volume " + quote(v.volume) + " is already attached at " + o.path);
      bool nested = o.path == v.path || v.path.rfind(o.path + "/", 0) == 0 ||
                    o.path.rfind(v.path + "/", 0) == 0;
      if (nested)
        return invalidArgument("mount path " + v.path + " overlaps " + o.path + " (volume " +
                               quote(o.volume) + ")");
    }
  }
  if (spec.users.size() > static_cast<size_t>(kMaxLoginUsers))
    return invalidArgument("a cluster can have at most " + std::to_string(kMaxLoginUsers) +
                           " login users");
  for (size_t i = 0; i < spec.users.size(); ++i) {
    const auto& u = spec.users[i];
    RETURN_IF_ERROR(validateLoginUserName(u.name));
    if (u.uid < kFirstLoginUid || u.uid >= kFirstLoginUid + 10000)
      return invalidArgument("user " + quote(u.name) + " has uid " + std::to_string(u.uid) +
                             " outside corral's range");
    if (u.sshKeys.empty())
      return invalidArgument("user " + quote(u.name) + " needs at least one --ssh-key");
    for (size_t k = 0; k < u.sshKeys.size(); ++k)
      RETURN_IF_ERROR(validateSshPublicKey(u.sshKeys[k])
                          .withContext("user " + quote(u.name) + ", --ssh-key #" +
                                       std::to_string(k + 1)));
    for (size_t j = 0; j < i; ++j) {
      if (spec.users[j].name == u.name) return invalidArgument("user " + quote(u.name) + " exists");
      if (spec.users[j].uid == u.uid)
        return invalidArgument("users " + quote(u.name) + " and " + quote(spec.users[j].name) +
                               " share uid " + std::to_string(u.uid));
    }
  }
  RETURN_IF_ERROR(validateContainerSettings(spec));
  return Status::ok();
}

Status validateContainerSettings(const ClusterSpec& spec) {
  const ContainerSettings& c = spec.containers;
  if (!c.cachePath.empty()) {
    static const std::regex path("(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)+");
    if (c.cachePath.size() > 128 || !std::regex_match(c.cachePath, path))
      return invalidArgument("containers.cachePath " + quote(c.cachePath) +
                             " is not a path such as /shared/enroot-cache of letters, digits "
                             "and /_-.");
    if (c.cachePath.rfind(std::string(kSharedPath) + "/", 0) != 0)
      return invalidArgument("containers.cachePath " + c.cachePath + " must be under " +
                             kSharedPath + "/, the cluster's shared filesystem, so that every "
                             "node shares it");
  }
  if (c.insecureRegistries.size() > static_cast<size_t>(kMaxInsecureRegistries))
    return invalidArgument("containers.insecureRegistries: at most " +
                           std::to_string(kMaxInsecureRegistries) + " registries");
  static const std::regex hostPort("[A-Za-z0-9]([A-Za-z0-9.-]{0,252})(:[0-9]{1,5})?");
  for (const auto& h : c.insecureRegistries)
    if (!std::regex_match(h, hostPort))
      return invalidArgument("containers.insecureRegistries: " + quote(h) +
                             " is not a registry host[:port]");
  return Status::ok();
}

}  // namespace corral
