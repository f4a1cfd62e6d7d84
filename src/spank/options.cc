#include "spank/options.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
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

// --container-name=NAME[:FLAG]
Status setName(Options& o, const std::string& arg) {
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

// --container-env=NAME[,NAME…]: every name valid, or nothing is added.
Status addEnvNames(Options& o, const std::string& arg) {
  static const std::regex re("[A-Za-z_][A-Za-z0-9_]*");
  if (arg.empty()) return invalidArgument("--container-env: no variable named");
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
      {OptionId::kUnshare, "container-unshare", "NAMESPACE[,NAMESPACE...]",
       "[pyxis] namespaces the container gets of its own: net, ipc, uts"},
      {OptionId::kEntrypointLog, "container-entrypoint-log", nullptr,
       "[pyxis] show what the image's entrypoint writes"},
  };
  return table;
}

bool Options::any() const {
  return !image.empty() || !mounts.empty() || !workdir.empty() || !name.empty() ||
         !save.empty() || mountHome || remapRoot || writable || entrypoint || entrypointLog ||
         !env.empty() || unshare;
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
      if (arg.empty()) return invalidArgument("--container-workdir: the directory is empty");
      o.workdir = arg;
      return Status::ok();
    case OptionId::kName:
      return setName(o, arg);
    case OptionId::kSave:
      if (arg.empty() || arg.back() == '/' || arg == "." || arg == ".." ||
          (arg.size() >= 3 && arg.compare(arg.size() - 3, 3, "/..") == 0) ||
          (arg.size() >= 2 && arg.compare(arg.size() - 2, 2, "/.") == 0))
        return invalidArgument("--container-save: '" + arg + "' is a directory, not a file path");
      o.save = arg;
      return Status::ok();
    case OptionId::kMountHome: o.mountHome = true; return Status::ok();
    case OptionId::kNoMountHome: o.mountHome = false; return Status::ok();
    case OptionId::kRemapRoot: o.remapRoot = true; return Status::ok();
    case OptionId::kNoRemapRoot: o.remapRoot = false; return Status::ok();
    case OptionId::kWritable:
    case OptionId::kReadonly: {
      bool w = id == OptionId::kWritable;
      if (o.writable.has_value() && *o.writable != w)
        return invalidArgument("--container-writable and --container-readonly are mutually exclusive");
      o.writable = w;
      return Status::ok();
    }
    case OptionId::kEntrypointLog: o.entrypointLog = true; return Status::ok();
    case OptionId::kUnshare: {
      auto u = container::parseUnshare(arg);
      if (!u.isOk()) return u.status().withContext("--container-unshare");
      o.unshare = *u;
      return Status::ok();
    }
    case OptionId::kEntrypoint: o.entrypoint = true; return Status::ok();
    case OptionId::kNoEntrypoint: o.entrypoint = false; return Status::ok();
    case OptionId::kEnv:
      return addEnvNames(o, arg);
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
                        Text{"PYXIS_CONTAINER_ENV", OptionId::kEnv, o.env.empty()},
                        Text{"PYXIS_CONTAINER_UNSHARE", OptionId::kUnshare, !o.unshare}}) {
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
                        Flag{"PYXIS_CONTAINER_ENTRYPOINT", &o.entrypoint, false},
                        Flag{"PYXIS_CONTAINER_ENTRYPOINT_LOG", &o.entrypointLog, false}}) {
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
  r.entrypointLog = o.entrypointLog.value_or(false);
  r.unshare = o.unshare.value_or(container::Unshare{});
  return r;
}

bool namesUnnamedContainer(const Options& o, unsigned job) {
  std::string prefix = std::to_string(job) + ".";
  if (o.name.size() <= prefix.size() || o.name.compare(0, prefix.size(), prefix) != 0) return false;
  return std::all_of(o.name.begin() + static_cast<long>(prefix.size()), o.name.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::string containerName(const Options& o, unsigned job, unsigned step) {
  if (namesUnnamedContainer(o, job)) return "pyxis_" + o.name;
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
  cmd.push_back(r.writable ? "--rw" : "--ro");
  cmd.insert(cmd.end(), {"--gpus", gpus});
  if (!r.options.workdir.empty()) cmd.insert(cmd.end(), {"--workdir", r.options.workdir});
  if (r.unshare.any()) {
    std::string list;
    for (auto [on, ns] : {std::pair{r.unshare.net, "net"}, std::pair{r.unshare.ipc, "ipc"},
                          std::pair{r.unshare.uts, "uts"}}) {
      if (on) list += (list.empty() ? "" : ",") + std::string(ns);
    }
    cmd.insert(cmd.end(), {"--unshare", list});
  }
  if (r.entrypoint) cmd.push_back("--entrypoint");
  for (const auto& k : r.options.env) cmd.insert(cmd.end(), {"--env", k});
  if (r.mountHome && !home.empty())
    cmd.insert(cmd.end(), {"--mount", home + ":" + (r.remapRoot ? "/root" : home)});
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
  return {a.runtimePath, "export", "--force", "--output", path, name};
}

namespace {

const std::string* lookup(const std::map<std::string, std::string>& env, const std::string& k) {
  auto it = env.find(k);
  return it == env.end() ? nullptr : &it->second;
}

// Enroot's PMIx hook: the client inside uses the components Slurm's server
// chose.
void addPmixSelections(const std::map<std::string, std::string>& jobEnv, TaskEnvironment& out) {
  const std::string* mpi = lookup(jobEnv, "SLURM_MPI_TYPE");
  if (mpi && mpi->rfind("pmix", 0) != 0) return;
  for (auto [from, to] : {std::pair{"PMIX_PTL_MODULE", "PMIX_MCA_ptl"},
                          std::pair{"PMIX_SECURITY_MODE", "PMIX_MCA_psec"},
                          std::pair{"PMIX_GDS_MODULE", "PMIX_MCA_gds"}}) {
    const std::string* v = lookup(jobEnv, from);
    if (v && !v->empty() && !lookup(jobEnv, to) && !out.set.count(to)) out.set[to] = *v;
  }
}

// Enroot's PyTorch hook: torch.distributed's variables from Slurm's.
void addPytorchVariables(const std::map<std::string, std::string>& jobEnv,
                         const std::string& firstNode, TaskEnvironment& out) {
  if (!out.set.count("PYTORCH_VERSION")) return;
  auto unset = [&](const char* k) { return !out.set.count(k) && !lookup(jobEnv, k); };
  auto number = [&](const char* k, long fallback) {
    const std::string* v = lookup(jobEnv, k);
    if (!v || v->empty()) return fallback;
    char* end = nullptr;
    long n = std::strtol(v->c_str(), &end, 10);
    return *end ? fallback : n;
  };
  if (!firstNode.empty() && unset("MASTER_ADDR")) out.set["MASTER_ADDR"] = firstNode;
  if (lookup(jobEnv, "SLURM_JOB_ID") && unset("MASTER_PORT"))
    out.set["MASTER_PORT"] = std::to_string(number("SLURM_JOB_ID", 0) % 4536 + 61000);
  for (auto [k, from] : {std::pair{"WORLD_SIZE", "SLURM_NTASKS"}, std::pair{"RANK", "SLURM_PROCID"},
                         std::pair{"LOCAL_RANK", "SLURM_LOCALID"}}) {
    if (const std::string* v = lookup(jobEnv, from); v && unset(k)) out.set[k] = *v;
  }
  if (number("SLURM_STEP_NUM_TASKS", 1) > number("SLURM_STEP_NUM_NODES", 1) &&
      unset("OMP_NUM_THREADS"))
    out.set["OMP_NUM_THREADS"] = "1";
}

}  // namespace

TaskEnvironment taskEnvironment(const std::vector<std::string>& imageEnv,
                                const std::vector<std::string>& keepNames,
                                const std::map<std::string, std::string>& gpuEnv,
                                const std::map<std::string, std::string>& jobEnv,
                                const std::string& firstNode) {
  auto kept = [&](const std::string& k) {
    return std::find(keepNames.begin(), keepNames.end(), k) != keepNames.end();
  };
  TaskEnvironment out;
  for (const char* k : {"LANG", "LANGUAGE", "LC_ALL"}) {
    if (!kept(k) && jobEnv.count(k)) out.unset.push_back(k);
  }
  for (const auto& kv : imageEnv) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    std::string k = kv.substr(0, eq);
    // --container-env NAME keeps the job's NAME; an unset NAME keeps the image's.
    if (kept(k) && jobEnv.count(k)) continue;
    out.set[k] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : gpuEnv) out.set[k] = v;
  addPmixSelections(jobEnv, out);
  addPytorchVariables(jobEnv, firstNode, out);
  // Nothing set is also unset.
  out.unset.erase(std::remove_if(out.unset.begin(), out.unset.end(),
                                 [&](const std::string& k) { return out.set.count(k) > 0; }),
                  out.unset.end());
  return out;
}

std::vector<std::string> pmixMounts(const std::map<std::string, std::string>& jobEnv,
                                    unsigned job, unsigned step,
                                    const std::string& slurmdSpoolDir) {
  const std::string* mpi = lookup(jobEnv, "SLURM_MPI_TYPE");
  const std::string* dir = lookup(jobEnv, "PMIX_SERVER_TMPDIR");
  bool pmix = mpi ? mpi->rfind("pmix", 0) == 0 : dir != nullptr;
  if (!pmix) return {};
  std::string server = dir && !dir->empty()
                           ? *dir
                           : slurmdSpoolDir + "/pmix." + std::to_string(job) + "." +
                                 std::to_string(step) + "/";
  std::vector<std::string> out;
  auto add = [&](const std::string& path) {
    if (!path.empty() && path[0] == '/' && path.find_first_of(":,") == std::string::npos)
      out.push_back(path + ":" + path + ":rw+nosuid+nodev+noexec");
  };
  add(server);
  add("/run/munge");
  return out;
}

}  // namespace corral::spank
