#include "spank/options.h"

#include <algorithm>
#include <regex>

#include "container/container.h"
#include "image/image.h"

namespace corral::spank {

namespace {

StatusOr<bool> parseBool(const std::string& name, const std::string& v) {
  std::string s = v;
  std::transform(s.begin(), s.end(), s.begin(), ::tolower);
  if (s == "1" || s == "y" || s == "yes" || s == "true") return true;
  if (s == "0" || s == "n" || s == "no" || s == "false") return false;
  return invalidArgument(name + ": expected 1/0, yes/no or true/false, not '" + v + "'");
}

bool validName(const std::string& n) {
  static const std::regex re("[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}");
  return std::regex_match(n, re);
}

}  // namespace

const std::vector<OptionInfo>& optionTable() {
  static const std::vector<OptionInfo> table = {
      {OptionId::kImage, "container-image", "[USER@][REGISTRY#]IMAGE[:TAG]|PATH",
       "[pyxis] the image to use for the container filesystem: a registry image or a squashfs "
       "file on the node"},
      {OptionId::kMounts, "container-mounts", "SRC:DST[:FLAGS][,SRC:DST...]",
       "[pyxis] bind mount[s] inside the container; flags joined by '+', e.g. ro+rprivate"},
      {OptionId::kWorkdir, "container-workdir", "PATH",
       "[pyxis] working directory inside the container (default: the image's)"},
      {OptionId::kName, "container-name", "NAME[:auto|create|exec|no_exec]",
       "[pyxis] name to keep the container under for later steps of the job; unnamed "
       "containers are removed when the step ends"},
      {OptionId::kSave, "container-save", "PATH",
       "[pyxis] save the container's filesystem to a squashfs file on the node"},
      {OptionId::kMountHome, "container-mount-home", nullptr,
       "[pyxis] bind mount the user's home directory"},
      {OptionId::kNoMountHome, "no-container-mount-home", nullptr,
       "[pyxis] do not bind mount the user's home directory"},
      {OptionId::kRemapRoot, "container-remap-root", nullptr,
       "[pyxis] be root inside the container (no privileges on the node)"},
      {OptionId::kNoRemapRoot, "no-container-remap-root", nullptr,
       "[pyxis] keep your own uid inside the container"},
      {OptionId::kWritable, "container-writable", nullptr,
       "[pyxis] make the container filesystem writable"},
      {OptionId::kReadonly, "container-readonly", nullptr,
       "[pyxis] make the container filesystem read-only"},
      {OptionId::kEntrypoint, "container-entrypoint", nullptr,
       "[pyxis] run the image's entrypoint before the command"},
      {OptionId::kNoEntrypoint, "no-container-entrypoint", nullptr,
       "[pyxis] do not run the image's entrypoint (default)"},
      {OptionId::kEnv, "container-env", "NAME[,NAME...]",
       "[pyxis] names of variables whose value on the node overrides the image's"},
  };
  return table;
}

bool Options::any() const {
  return !image.empty() || !mounts.empty() || !workdir.empty() || !name.empty() ||
         !save.empty() || mountHome || remapRoot || writable || entrypoint || !env.empty();
}

Status setOption(Options& o, OptionId id, const std::string& arg) {
  switch (id) {
    case OptionId::kImage: {
      if (arg.empty()) return invalidArgument("--container-image: the image is empty");
      if (!image::isSquashfsPath(arg)) {
        auto ref = image::parseReference(arg);
        if (!ref.isOk()) return ref.status().withContext("--container-image");
      }
      o.image = arg;
      return Status::ok();
    }
    case OptionId::kMounts: {
      auto m = container::parseMountList(arg);
      if (!m.isOk()) return m.status().withContext("--container-mounts");
      o.mounts = arg;
      return Status::ok();
    }
    case OptionId::kWorkdir:
      if (arg.empty() || arg[0] != '/')
        return invalidArgument("--container-workdir: '" + arg + "' is not an absolute path");
      o.workdir = arg;
      return Status::ok();
    case OptionId::kName: {
      std::string n = arg, flag = "auto";
      if (auto c = arg.rfind(':'); c != std::string::npos) {
        n = arg.substr(0, c);
        flag = arg.substr(c + 1);
      }
      if (!validName(n))
        return invalidArgument("--container-name: '" + n +
                               "' is not a valid name (letters, digits, '_', '.', '+', '-')");
      if (flag == "auto") o.nameMode = NameMode::kAuto;
      else if (flag == "create") o.nameMode = NameMode::kCreate;
      else if (flag == "exec") o.nameMode = NameMode::kExec;
      else if (flag == "no_exec") o.nameMode = NameMode::kNoExec;
      else
        return invalidArgument("--container-name: unknown flag '" + flag +
                               "' (auto, create, exec or no_exec)");
      o.name = n;
      return Status::ok();
    }
    case OptionId::kSave:
      if (arg.empty() || arg.back() == '/')
        return invalidArgument("--container-save: '" + arg + "' is not a file path");
      o.save = arg;
      return Status::ok();
    case OptionId::kMountHome: o.mountHome = true; return Status::ok();
    case OptionId::kNoMountHome: o.mountHome = false; return Status::ok();
    case OptionId::kRemapRoot: o.remapRoot = true; return Status::ok();
    case OptionId::kNoRemapRoot: o.remapRoot = false; return Status::ok();
    case OptionId::kWritable: o.writable = true; return Status::ok();
    case OptionId::kReadonly: o.writable = false; return Status::ok();
    case OptionId::kEntrypoint: o.entrypoint = true; return Status::ok();
    case OptionId::kNoEntrypoint: o.entrypoint = false; return Status::ok();
    case OptionId::kEnv: {
      static const std::regex re("[A-Za-z_][A-Za-z0-9_]*");
      std::vector<std::string> names;
      size_t start = 0;
      while (start <= arg.size()) {
        size_t c = arg.find(',', start);
        std::string n = arg.substr(start, c == std::string::npos ? std::string::npos : c - start);
        if (!std::regex_match(n, re))
          return invalidArgument("--container-env: '" + n + "' is not a variable name");
        names.push_back(n);
        if (c == std::string::npos) break;
        start = c + 1;
      }
      o.env.insert(o.env.end(), names.begin(), names.end());
      return Status::ok();
    }
  }
  return internalError("unknown option");
}

Status applyEnvironmentDefaults(Options& o, const std::map<std::string, std::string>& env) {
  auto get = [&](const char* k) -> const std::string* {
    auto it = env.find(k);
    return it == env.end() || it->second.empty() ? nullptr : &it->second;
  };
  struct Text {
    const char* var;
    OptionId id;
    bool unset;
  };
  for (const Text& t : {Text{"PYXIS_CONTAINER_IMAGE", OptionId::kImage, o.image.empty()},
                        Text{"PYXIS_CONTAINER_MOUNTS", OptionId::kMounts, o.mounts.empty()},
                        Text{"PYXIS_CONTAINER_WORKDIR", OptionId::kWorkdir, o.workdir.empty()},
                        Text{"PYXIS_CONTAINER_NAME", OptionId::kName, o.name.empty()},
                        Text{"PYXIS_CONTAINER_SAVE", OptionId::kSave, o.save.empty()},
                        Text{"PYXIS_CONTAINER_ENV", OptionId::kEnv, o.env.empty()}}) {
    if (!t.unset) continue;
    if (const std::string* v = get(t.var)) RETURN_IF_ERROR(setOption(o, t.id, *v).withContext(t.var));
  }
  struct Flag {
    const char* var;
    std::optional<bool>* field;
    bool invert;
  };
  for (const Flag& f : {Flag{"PYXIS_CONTAINER_MOUNT_HOME", &o.mountHome, false},
                        Flag{"PYXIS_CONTAINER_REMAP_ROOT", &o.remapRoot, false},
                        Flag{"PYXIS_CONTAINER_WRITABLE", &o.writable, false},
                        Flag{"PYXIS_CONTAINER_READONLY", &o.writable, true},
                        Flag{"PYXIS_CONTAINER_ENTRYPOINT", &o.entrypoint, false}}) {
    if (f.field->has_value()) continue;
    if (const std::string* v = get(f.var)) {
      ASSIGN_OR_RETURN(bool b, parseBool(f.var, *v));
      *f.field = f.invert ? !b : b;
    }
  }
  return Status::ok();
}

StatusOr<PluginArgs> parsePluginArgs(const std::vector<std::string>& args) {
  PluginArgs a;
  for (const auto& arg : args) {
    auto eq = arg.find('=');
    if (eq == std::string::npos)
      return invalidArgument("plugstack.conf: argument '" + arg + "' is not key=value");
    std::string k = arg.substr(0, eq), v = arg.substr(eq + 1);
    if (k == "runtime_path") {
      if (v.empty()) return invalidArgument("plugstack.conf: runtime_path is empty");
      a.runtimePath = v;
      continue;
    }
    bool* field = k == "remap_root"             ? &a.remapRoot
                  : k == "container_mount_home" ? &a.mountHome
                  : k == "container_writable"   ? &a.writable
                  : k == "execute_entrypoint"   ? &a.executeEntrypoint
                  : k == "sbatch_support"       ? &a.sbatchSupport
                                                : nullptr;
    if (!field) return invalidArgument("plugstack.conf: unknown argument '" + k + "'");
    ASSIGN_OR_RETURN(*field, parseBool("plugstack.conf: " + k, v));
  }
  return a;
}

Resolved resolve(const Options& o, const PluginArgs& a) {
  Resolved r;
  r.options = o;
  r.mountHome = o.mountHome.value_or(a.mountHome);
  r.remapRoot = o.remapRoot.value_or(a.remapRoot);
  r.writable = o.writable.value_or(a.writable);
  r.entrypoint = o.entrypoint.value_or(a.executeEntrypoint);
  return r;
}

std::string containerName(const Options& o, unsigned job, unsigned step) {
  if (!o.name.empty()) return "pyxis_" + std::to_string(job) + "_" + o.name;
  return "pyxis_" + std::to_string(job) + "." + std::to_string(step);
}

bool isJobContainer(const std::string& n, unsigned job) {
  std::string p = "pyxis_" + std::to_string(job);
  return n.rfind(p, 0) == 0 && n.size() > p.size() && (n[p.size()] == '_' || n[p.size()] == '.');
}

std::vector<std::string> createCommand(const PluginArgs& a, const Resolved& r,
                                       const std::string& name) {
  std::string img = r.options.image;
  // A registry reference goes to the runtime as an Enroot URI, so that a
  // "REGISTRY/IMAGE" is never mistaken for a file.
  if (!image::isSquashfsPath(img) && img.rfind("docker://", 0) != 0) img = "docker://" + img;
  return {a.runtimePath, "create", "--name", name, img};
}

std::vector<std::string> startCommand(const PluginArgs& a, const Resolved& r,
                                      const std::string& name, int holdFd,
                                      const std::string& gpus, const std::string& home,
                                      const std::vector<std::string>& extraMounts) {
  std::vector<std::string> cmd = {a.runtimePath, "start", "--hold-fd", std::to_string(holdFd)};
  if (r.remapRoot) cmd.push_back("--root");
  if (r.writable) cmd.push_back("--rw");
  cmd.insert(cmd.end(), {"--gpus", gpus});
  if (!r.options.workdir.empty()) cmd.insert(cmd.end(), {"--workdir", r.options.workdir});
  if (r.mountHome && !home.empty()) cmd.insert(cmd.end(), {"--mount", home + ":" + home});
  for (const auto& m : extraMounts) cmd.insert(cmd.end(), {"--mount", m});
  if (!r.options.mounts.empty()) {
    // One --mount per entry of Pyxis' comma-separated list.
    size_t start = 0;
    const std::string& l = r.options.mounts;
    while (start < l.size()) {
      size_t c = l.find(',', start);
      std::string m = l.substr(start, c == std::string::npos ? std::string::npos : c - start);
      if (!m.empty()) cmd.insert(cmd.end(), {"--mount", m});
      if (c == std::string::npos) break;
      start = c + 1;
    }
  }
  cmd.push_back(name);
  return cmd;
}

std::vector<std::string> exportCommand(const PluginArgs& a, const std::string& name,
                                       const std::string& path) {
  return {a.runtimePath, "export", "--output", path, name};
}

std::map<std::string, std::string> taskEnvironment(const std::vector<std::string>& imageEnv,
                                                   const std::vector<std::string>& keepNames,
                                                   const std::map<std::string, std::string>& gpuEnv) {
  std::map<std::string, std::string> out;
  for (const auto& kv : imageEnv) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    std::string k = kv.substr(0, eq);
    if (std::find(keepNames.begin(), keepNames.end(), k) != keepNames.end()) continue;
    out[k] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : gpuEnv) out[k] = v;
  return out;
}

}  // namespace corral::spank
