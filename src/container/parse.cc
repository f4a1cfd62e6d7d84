// The pure parts of the runtime: names, mount and GPU lists, environments.

#include <algorithm>
#include <cctype>
#include <set>

#include "common/text.h"
#include "container/container.h"

namespace corral::container {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    size_t next = s.find(sep, pos);
    out.push_back(s.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return out;
}

std::string sanitizeName(const std::string& s) {
  std::string out;
  for (char c : s) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '+' ||
              c == '-';
    out += ok ? c : '_';
  }
  while (!out.empty() && (out[0] == '.' || out[0] == '-')) out.erase(0, 1);
  if (out.size() > 128) out.resize(128);
  return out.empty() ? "container" : out;
}

// Enroot's name for an image URI, without the ".sqsh".
std::string importStem(const std::string& uri) {
  std::string t = uri;
  for (const char* prefix : {"docker://", "docker-daemon://", "podman://"}) {
    if (t.rfind(prefix, 0) == 0) t = t.substr(std::string(prefix).size());
  }
  std::string user, registry, tag, digest;
  size_t at = t.find('@');
  if (at != std::string::npos && t.compare(at, 8, "@sha256:") != 0) {
    user = t.substr(0, at);
    t = t.substr(at + 1);
  }
  if (size_t hash = t.find('#'); hash != std::string::npos) {
    registry = t.substr(0, hash);
    t = t.substr(hash + 1);
  }
  if (size_t d = t.find("@sha256:"); d != std::string::npos) {
    digest = t.substr(d + 1);
    t = t.substr(0, d);
  }
  size_t slash = t.rfind('/');
  size_t colon = t.find(':', slash == std::string::npos ? 0 : slash + 1);
  if (colon != std::string::npos) {
    tag = t.substr(colon + 1);
    t = t.substr(0, colon);
  }
  std::string name;
  if (!user.empty()) name += user + "+";
  if (!registry.empty()) name += registry + "+";
  std::string image = t;
  std::replace(image.begin(), image.end(), '/', '+');
  name += image;
  if (!tag.empty()) name += "+" + tag;
  if (!digest.empty()) {
    std::replace(digest.begin(), digest.end(), ':', '+');
    name += "+" + digest;
  }
  return sanitizeName(name);
}

bool hasSuffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Status validateName(const std::string& name) {
  if (name.empty()) return invalidArgument("a container name may not be empty");
  if (name.size() > 128) {
    return invalidArgument("container name " + quoteForMessage(name) +
                           " is too long: at most 128 characters");
  }
  for (char c : name) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '+' ||
              c == '-';
    if (!ok) {
      return invalidArgument("invalid container name " + quoteForMessage(name) +
                             ": use letters, digits and _ . + - only");
    }
  }
  if (name[0] == '.' || name[0] == '-') {
    return invalidArgument("invalid container name " + quoteForMessage(name) +
                           ": may not start with '.' or '-'");
  }
  return Status::ok();
}

std::string defaultImportFile(const std::string& uri) { return importStem(uri) + ".sqsh"; }

std::string defaultContainerName(const std::string& image) {
  if (image.rfind("docker://", 0) != 0 &&
      (image::isSquashfsPath(image) || hasSuffix(image, ".sqsh") ||
       hasSuffix(image, ".squashfs"))) {
    std::string base = image.substr(image.rfind('/') == std::string::npos ? 0 : image.rfind('/') + 1);
    for (const char* ext : {".sqsh", ".squashfs"}) {
      if (hasSuffix(base, ext)) base.resize(base.size() - std::string(ext).size());
    }
    return sanitizeName(base);
  }
  return importStem(image);
}

namespace {

bool isPathLike(const std::string& p) { return !p.empty() && (p[0] == '/' || p[0] == '.'); }

// Applies one '+'-joined flag of a mount entry.
Status applyMountFlag(Mount& m, const std::string& flag, const std::string& entry) {
  static const std::set<std::string> propagation = {"private", "rprivate", "slave", "rslave",
                                                    "x-create=auto", "x-create=dir",
                                                    "x-create=file"};
  if (flag == "ro") {
    m.readOnly = true;
  } else if (flag == "rw") {
    m.readOnly = false;
  } else if (flag == "bind" && m.kind == MountKind::kBind) {
    m.recursive = false;
  } else if (flag == "rbind" && m.kind == MountKind::kBind) {
    m.recursive = true;
  } else if (flag == "nosuid") {
    m.noSuid = true;
  } else if (flag == "nodev") {
    m.noDev = true;
  } else if (flag == "noexec") {
    m.noExec = true;
  } else if (flag == "unbindable" || flag == "runbindable") {
    m.unbindable = true;
  } else if (propagation.count(flag)) {
    // Containers' mounts are always private, and targets always created.
  } else if (m.kind == MountKind::kTmpfs && flag.find_first_of(",") == std::string::npos &&
             !flag.empty() && std::isalpha(static_cast<unsigned char>(flag[0]))) {
    // tmpfs' own options (size=, mode=, nr_inodes=, huge=…): the kernel
    // checks them when it mounts.
    m.data += (m.data.empty() ? "" : ",") + flag;
  } else {
    return invalidArgument("unknown mount flag " + quoteForMessage(flag) + " in " +
                           quoteForMessage(entry) +
                           ": use ro, rw, bind, rbind, nosuid, nodev, noexec or unbindable");
  }
  return Status::ok();
}

}  // namespace

StatusOr<std::vector<Mount>> parseMountList(const std::string& list) {
  std::vector<Mount> out;
  if (list.empty()) return invalidArgument("the mount list is empty: expected SRC[:DST[:FLAGS]][,…]");
  for (const std::string& entry : split(list, ',')) {
    if (entry.empty()) {
      return invalidArgument("empty entry in mount list " + quoteForMessage(list) +
                             ": expected SRC[:DST[:FLAGS]][,…]");
    }
    auto parts = split(entry, ':');
    if (parts.size() > 3) {
      return invalidArgument("invalid mount " + quoteForMessage(entry) +
                             ": expected SRC[:DST[:FLAGS]] (paths may not contain ':')");
    }
    Mount m;
    m.source = parts[0];
    m.target = parts.size() >= 2 ? parts[1] : parts[0];
    if (m.source == "tmpfs" || m.source == "umount") {
      m.kind = m.source == "tmpfs" ? MountKind::kTmpfs : MountKind::kUmount;
      if (parts.size() < 2) {
        return invalidArgument("mount " + quoteForMessage(entry) + " needs a destination (" +
                               m.source + ":/path)");
      }
    } else if (!isPathLike(m.source)) {
      return invalidArgument("mount source must be a relative path, an absolute path, \"tmpfs\" "
                             "or \"umount\": " + quoteForMessage(entry));
    }
    if (!isPathLike(m.target)) {
      return invalidArgument("mount destination must be a relative or an absolute path: " +
                             quoteForMessage(entry));
    }
    if (parts.size() == 3) {
      if (parts[2].empty()) {
        return invalidArgument("empty mount flags in " + quoteForMessage(entry));
      }
      for (const std::string& flag : split(parts[2], '+')) {
        RETURN_IF_ERROR(applyMountFlag(m, flag, entry));
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

StatusOr<Unshare> parseUnshare(const std::string& list) {
  Unshare u;
  if (list.empty()) return invalidArgument("no namespace given: expected net, ipc or uts");
  for (const std::string& ns : split(list, ',')) {
    if (ns == "net") {
      u.net = true;
    } else if (ns == "ipc") {
      u.ipc = true;
    } else if (ns == "uts") {
      u.uts = true;
    } else {
      return invalidArgument("unknown namespace " + quoteForMessage(ns) +
                             ": expected net, ipc or uts, joined by ','");
    }
  }
  return u;
}

std::map<std::string, std::string> gpuEnvironment(const std::vector<int>& gpus) {
  std::vector<int> sorted = gpus;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  if (sorted.empty()) {
    return {{"NVIDIA_VISIBLE_DEVICES", "void"}, {"CUDA_VISIBLE_DEVICES", ""}};
  }
  std::string nvidia, cuda;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i) {
      nvidia += ",";
      cuda += ",";
    }
    nvidia += std::to_string(sorted[i]);
    cuda += std::to_string(i);
  }
  return {{"NVIDIA_VISIBLE_DEVICES", nvidia}, {"CUDA_VISIBLE_DEVICES", cuda}};
}

StatusOr<std::vector<int>> parseGpuList(const std::string& list) {
  std::set<int> out;
  std::string trimmed;
  for (char c : list) {
    if (!std::isspace(static_cast<unsigned char>(c))) trimmed += c;
  }
  if (trimmed.empty()) return std::vector<int>{};
  auto bad = [&] {
    return invalidArgument("invalid GPU list " + quoteForMessage(list) +
                           ": expected device minors such as 0,1 or 0-3");
  };
  auto number = [](const std::string& s, int& v) {
    if (s.empty() || s.size() > 4) return false;
    for (char c : s) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    }
    v = std::stoi(s);
    return true;
  };
  for (const std::string& item : split(trimmed, ',')) {
    size_t dash = item.find('-');
    int a = 0, b = 0;
    if (dash == std::string::npos) {
      if (!number(item, a)) return bad();
      out.insert(a);
    } else {
      if (!number(item.substr(0, dash), a) || !number(item.substr(dash + 1), b) || b < a) {
        return bad();
      }
      for (int i = a; i <= b; ++i) out.insert(i);
    }
  }
  return std::vector<int>(out.begin(), out.end());
}

std::vector<std::string> selectGpuDevices(const std::vector<std::string>& devEntries,
                                          const std::vector<int>& gpus) {
  std::set<std::string> present(devEntries.begin(), devEntries.end());
  std::vector<std::string> out;
  std::vector<int> sorted = gpus;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (int g : sorted) {
    std::string n = "nvidia" + std::to_string(g);
    if (present.count(n)) out.push_back(n);
  }
  if (sorted.empty()) return out;
  for (const char* shared :
       {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset", "nvidia-caps"}) {
    if (present.count(shared)) out.push_back(shared);
  }
  return out;
}

std::vector<std::string> containerEnvironment(const std::map<std::string, std::string>& callerEnv,
                                              const std::vector<std::string>& imageEnv,
                                              const std::vector<std::string>& overrides,
                                              const std::vector<int>* gpus) {
  std::map<std::string, std::string> env = callerEnv;
  std::set<std::string> kept;
  for (const auto& o : overrides) kept.insert(o.substr(0, o.find('=')));
  for (const auto& kv : imageEnv) {
    size_t eq = kv.find('=');
    std::string name = kv.substr(0, eq);
    if (name.empty() || kept.count(name)) continue;
    env[name] = eq == std::string::npos ? "" : kv.substr(eq + 1);
  }
  if (gpus) {
    for (const auto& [k, v] : gpuEnvironment(*gpus)) env[k] = v;
  }
  for (const auto& o : overrides) {
    size_t eq = o.find('=');
    std::string name = o.substr(0, eq);
    if (name.empty()) continue;
    if (eq != std::string::npos) {
      env[name] = o.substr(eq + 1);
    } else if (auto it = callerEnv.find(name); it != callerEnv.end()) {
      env[name] = it->second;
    } else {
      env.erase(name);
    }
  }
  if (!env.count("PATH") || env["PATH"].empty()) {
    env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  }
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

}  // namespace corral::container
