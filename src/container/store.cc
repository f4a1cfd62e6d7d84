// The containers of one user: create, list, inspect, remove, import, export.

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/files.h"
#include "common/text.h"
#include "container/container.h"
#include "common/fs.h"
#include "container/namespaces.h"

namespace corral::container {
namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

bool isRegistryReference(const std::string& image) {
  if (image.rfind("docker://", 0) == 0) return true;
  struct stat st;
  if (stat(image.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return false;
  if (image::isSquashfsPath(image)) return false;
  auto ends = [&](const std::string& e) {
    return image.size() >= e.size() && image.compare(image.size() - e.size(), e.size(), e) == 0;
  };
  return !ends(".sqsh") && !ends(".squashfs");
}

// Moves the finished temporary `tmp` to `dir`, replacing it when `force`.
Status installContainer(const Settings& s, const std::string& tmp, const std::string& name,
                        bool force) {
  std::string dir = s.dataPath + "/" + name;
  if (renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dir.c_str(), RENAME_NOREPLACE) == 0) {
    return Status::ok();
  }
  int e = errno;
  if (e != EEXIST) return internalError(errnoText("cannot create container " + dir, e));
  if (!force) {
    return conflict("container " + quoteForMessage(name) +
                    " already exists: remove it first or use --force");
  }
  if (renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0) {
    return internalError(errnoText("cannot replace container " + dir, errno));
  }
  // `tmp` now holds the old container.
  Status st = removeTree(tmp);
  (void)st;  // The new container is in place; a leftover hidden dir is harmless.
  return Status::ok();
}

StatusOr<std::string> makeTempDir(const Settings& s, const std::string& purpose) {
  std::string tmp = s.dataPath + "/." + purpose + "-" + randomSuffix();
  if (mkdir(tmp.c_str(), 0700) != 0) {
    return internalError(errnoText("cannot create " + tmp, errno));
  }
  return tmp;
}

// Builds a squashfs at `output` (which must not exist) from `lowers` (top
// first) merged by a read-only overlay in a private namespace.
Status squashMerged(const Settings& s, const std::vector<std::string>& lowers,
                    const std::string& output, bool replace = false) {
  if (!replace && pathExists(output)) {
    return conflict("file already exists: " + output + " (remove it or choose --output)");
  }
  ASSIGN_OR_RETURN(std::string tmp, makeTempDir(s, "squash"));
  std::string merged = tmp + "/merged";
  std::string partial = output + ".tmp-" + randomSuffix();
  Status st;
  if (mkdir(merged.c_str(), 0700) != 0) {
    st = internalError(errnoText("cannot create " + merged, errno));
  } else {
    st = runInPrivateNamespace([&]() -> Status {
      if (lowers.size() == 1) {
        RETURN_IF_ERROR(bindMount(lowers[0], merged, true));
      } else {
        RETURN_IF_ERROR(mountOverlay(lowers, "", "", merged));
      }
      return image::makeSquashfs(merged, partial);
    });
  }
  if (st.isOk() &&
      renameat2(AT_FDCWD, partial.c_str(), AT_FDCWD, output.c_str(),
                replace ? 0 : RENAME_NOREPLACE) != 0) {
    st = internalError(errnoText("cannot write " + output, errno));
  }
  unlink(partial.c_str());
  Status cleanup = removeTree(tmp);
  (void)cleanup;
  return st;
}

// A directory holding /.corral/config.json (and, for imports, the image's
// environment in /etc/environment), to lay over a rootfs.
Status writeConfigLayer(const std::string& layer, const image::ImageConfig& config,
                        const std::string& baseRootfs, bool withEnvironment) {
  RETURN_IF_ERROR(makeDirs(layer + "/.corral", 0755));
  RETURN_IF_ERROR(writeFileAtomic(layer + "/.corral/config.json", image::toJson(config)));
  if (!withEnvironment) return Status::ok();
  std::string env;
  auto existing = readFile(baseRootfs + "/etc/environment");
  if (existing.isOk()) {
    env = *existing;
    if (!env.empty() && env.back() != '\n') env += '\n';
  }
  for (const auto& kv : config.env) env += kv + "\n";
  RETURN_IF_ERROR(makeDirs(layer + "/etc", 0755));
  return writeFileAtomic(layer + "/etc/environment", env);
}

}  // namespace

bool exists(const Settings& s, const std::string& name) {
  if (!validateName(name).isOk()) return false;
  std::string dir = s.dataPath + "/" + name;
  return isDirectory(dir + "/rootfs") || pathExists(dir + "/lower");
}

StatusOr<ContainerInfo> inspect(const Settings& s, const std::string& name) {
  RETURN_IF_ERROR(validateName(name));
  ContainerInfo info;
  info.name = name;
  info.path = s.dataPath + "/" + name;
  struct stat st;
  if (stat(info.path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return notFound("no such container: " + quoteForMessage(name) + " (see `enroot list`)");
  }
  info.createdUnix = st.st_mtime;
  if (pathExists(info.path + "/lower")) {
    info.kind = Kind::kOverlay;
    auto lower = readFile(info.path + "/lower");
    if (!lower.isOk()) return lower.status();
    info.lower = trimmed(*lower);
  } else if (isDirectory(info.path + "/rootfs")) {
    info.kind = Kind::kCopy;
  } else {
    return failedPrecondition("container " + quoteForMessage(name) +
                              " is incomplete (no rootfs/ or lower): remove it and create it again");
  }
  return info;
}

StatusOr<image::ImageConfig> config(const Settings& s, const std::string& name) {
  ASSIGN_OR_RETURN(ContainerInfo info, inspect(s, name));
  std::string path = info.path + "/config.json";
  if (!pathExists(path)) return image::ImageConfig{};
  ASSIGN_OR_RETURN(std::string text, readFile(path));
  auto c = image::imageConfigFromJson(text);
  if (!c.isOk()) return c.status().withContext("container " + name + ": config.json");
  return c;
}

StatusOr<std::string> create(const Settings& s, const std::string& imageArg,
                             const std::string& nameArg, bool force,
                             const image::ProgressFn& progress) {
  std::string name = nameArg.empty() ? defaultContainerName(imageArg) : nameArg;
  RETURN_IF_ERROR(validateName(name));
  if (!force && pathExists(s.dataPath + "/" + name)) {
    return conflict("container " + quoteForMessage(name) +
                    " already exists: remove it first or use --force");
  }
  bool registry = isRegistryReference(imageArg);
  image::PulledImage pulled;
  if (registry) {
    ASSIGN_OR_RETURN(image::Reference ref, image::parseReference(imageArg));
    ASSIGN_OR_RETURN(pulled, image::pull(ref, s.cachePath, s.registry, progress));
  } else {
    struct stat st;
    if (stat(imageArg.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return notFound("no such squashfs file: " + imageArg);
    }
  }
  ASSIGN_OR_RETURN(std::string tmp, makeTempDir(s, "create-" + name));
  auto build = [&]() -> Status {
    image::ImageConfig cfg;
    if (registry) {
      cfg = pulled.config;
      RETURN_IF_ERROR(writeFileAtomic(tmp + "/lower", pulled.rootfs + "\n"));
      for (const char* d : {"/upper", "/work", "/mnt"}) {
        if (mkdir((tmp + d).c_str(), 0755) != 0) {
          return internalError(errnoText("cannot create " + tmp + d, errno));
        }
      }
    } else {
      RETURN_IF_ERROR(image::unsquash(imageArg, tmp + "/rootfs"));
      std::string cfgPath = tmp + "/rootfs/.corral/config.json";
      if (pathExists(cfgPath)) {
        ASSIGN_OR_RETURN(std::string text, readFile(cfgPath));
        auto parsed = image::imageConfigFromJson(text);
        if (!parsed.isOk()) return parsed.status().withContext(imageArg + ": /.corral/config.json");
        cfg = *parsed;
      }
    }
    RETURN_IF_ERROR(writeFileAtomic(tmp + "/config.json", image::toJson(cfg)));
    return installContainer(s, tmp, name, force);
  };
  Status st = build();
  if (!st.isOk()) {
    Status cleanup = removeTree(tmp);
    (void)cleanup;
    return st;
  }
  return name;
}

StatusOr<std::vector<ContainerInfo>> list(const Settings& s) {
  auto names = listDirectory(s.dataPath);
  if (!names.isOk()) {
    if (names.status().code() == Code::kNotFound) return std::vector<ContainerInfo>{};
    return names.status();
  }
  std::vector<ContainerInfo> out;
  for (const auto& n : *names) {
    if (!validateName(n).isOk()) continue;
    auto info = inspect(s, n);
    if (info.isOk()) out.push_back(*info);
  }
  return out;
}

Status remove(const Settings& s, const std::string& name) {
  if (name.find('/') != std::string::npos || name == ".." || name == ".") {
    return invalidArgument("invalid container name " + quoteForMessage(name));
  }
  RETURN_IF_ERROR(validateName(name));
  std::string dir = s.dataPath + "/" + name;
  if (!isDirectory(dir)) {
    return notFound("no such container: " + quoteForMessage(name) + " (see `enroot list`)");
  }
  // Out of sight first, so that a half-removed container never shows.
  std::string trash = s.dataPath + "/.remove-" + name + "-" + randomSuffix();
  if (rename(dir.c_str(), trash.c_str()) != 0) {
    return internalError(errnoText("cannot remove " + dir, errno));
  }
  return removeTree(trash);
}

StatusOr<std::string> importImage(const Settings& s, const std::string& uri,
                                  const std::string& outputArg,
                                  const image::ProgressFn& progress) {
  std::string output = outputArg.empty() ? defaultImportFile(uri) : outputArg;
  if (pathExists(output)) {
    return conflict("file already exists: " + output + " (remove it or choose --output)");
  }
  ASSIGN_OR_RETURN(image::Reference ref, image::parseReference(uri));
  ASSIGN_OR_RETURN(image::PulledImage pulled, image::pull(ref, s.cachePath, s.registry, progress));
  ASSIGN_OR_RETURN(std::string tmp, makeTempDir(s, "import"));
  Status st = writeConfigLayer(tmp + "/layer", pulled.config, pulled.rootfs, true);
  if (st.isOk()) st = squashMerged(s, {tmp + "/layer", pulled.rootfs}, output);
  Status cleanup = removeTree(tmp);
  (void)cleanup;
  if (!st.isOk()) return st;
  return output;
}

Status exportContainer(const Settings& s, const std::string& name, const std::string& outputArg,
                       bool force) {
  ASSIGN_OR_RETURN(ContainerInfo info, inspect(s, name));
  ASSIGN_OR_RETURN(image::ImageConfig cfg, config(s, name));
  std::string output = outputArg.empty() ? name + ".sqsh" : outputArg;
  ASSIGN_OR_RETURN(std::string tmp, makeTempDir(s, "export"));
  std::vector<std::string> lowers = {tmp + "/layer"};
  if (info.kind == Kind::kOverlay) {
    lowers.push_back(info.path + "/upper");
    lowers.push_back(info.lower);
  } else {
    lowers.push_back(info.path + "/rootfs");
  }
  Status st = writeConfigLayer(tmp + "/layer", cfg, "", false);
  if (st.isOk()) st = squashMerged(s, lowers, output, force);
  Status cleanup = removeTree(tmp);
  (void)cleanup;
  return st;
}

}  // namespace corral::container
