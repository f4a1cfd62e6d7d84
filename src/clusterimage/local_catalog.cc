#include "clusterimage/local_catalog.h"

#include <sys/mount.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/file_lock.h"
#include "common/files.h"
#include "common/log.h"
#include "common/text.h"

namespace fs = std::filesystem;

namespace corral {

// cmake/embed.cmake's table of images/*.yaml.
const std::map<std::string, std::string_view>& builtInRecipeFiles();

namespace {

constexpr const char* kImageFile = "image.json";
constexpr int kMaxExtendsDepth = 1;  // A derived recipe extends a base one; no deeper.

Status writeText(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) return internalError("cannot write " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return internalError("cannot rename " + tmp + ": " + ec.message());
  return Status::ok();
}

int64_t diskUsage(const std::string& dir) {
  int64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    struct stat st;
    if (lstat(it->path().c_str(), &st) == 0) total += static_cast<int64_t>(st.st_blocks) * 512;
  }
  return total;
}


// Removes a build's directory, after detaching anything still mounted in
// it (a build killed before mmdebstrap ran in a namespace of its own), and
// never crossing into another file system: a removal that followed a bind
// of the host's /dev would delete the host's devices.
Status removeBuildTree(const std::string& dir) {
  if (!fs::exists(dir)) return Status::ok();
  auto mounts = readFile("/proc/self/mountinfo");
  if (mounts.isOk()) {
    std::vector<std::string> under;
    std::istringstream lines(*mounts);
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream f(line);
      std::string id, parent, dev, root, point;
      if (f >> id >> parent >> dev >> root >> point && (point == dir || point.rfind(dir + "/", 0) == 0))
        under.push_back(point);
    }
    for (auto it = under.rbegin(); it != under.rend(); ++it) umount2(it->c_str(), MNT_DETACH);
  }
  struct stat top;
  if (lstat(dir.c_str(), &top) != 0) return Status::ok();
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    struct stat st;
    if (lstat(it->path().c_str(), &st) != 0) continue;
    if (st.st_dev != top.st_dev) return internalError("refusing to remove " + dir + ": " +
                                                      it->path().string() + " is another file system");
  }
  fs::remove_all(dir, ec);
  if (ec) return internalError("cannot remove " + dir + ": " + ec.message());
  return Status::ok();
}

// The shell script that runs a recipe's setup steps inside the image.
std::string setupScript(const Recipe& r) {
  std::string script = "#!/bin/sh\n# Written by corral: the setup steps of image " + r.name + ".\nset -e\n";
  for (size_t i = 0; i < r.setup.size(); ++i)
    script += "echo 'corral: setup step " + std::to_string(i + 1) + " of " +
              std::to_string(r.setup.size()) + "'\n(\nset -e\n" + r.setup[i] + "\n)\n";
  return script;
}

}  // namespace

std::map<std::string, std::string> builtInRecipes() {
  std::map<std::string, std::string> out;
  for (const auto& [path, text] : builtInRecipeFiles()) {
    std::string name = fs::path(path).stem().string();
    out[name] = std::string(text);
  }
  return out;
}

Status checkImageContents(const std::function<bool(const std::string& path)>& exists) {
  // What corral's rendered pods start, and the accounting database's template.
  static const std::vector<std::pair<std::string, std::string>> required = {
      {"/usr/sbin/slurmctld", "slurmctld (package slurmctld or slurm-wlm)"},
      {"/usr/sbin/slurmd", "slurmd (package slurmd or slurm-wlm)"},
      {"/usr/sbin/slurmdbd", "slurmdbd (package slurmdbd)"},
      {"/usr/bin/sinfo", "the Slurm clients (package slurm-client)"},
      {"/usr/sbin/munged", "munged (package munge)"},
      {"/usr/sbin/mariadbd", "mariadbd (package mariadb-server)"},
      {"/usr/sbin/sshd", "sshd (package openssh-server)"},
      {"/usr/bin/unsquashfs", "unsquashfs (package squashfs-tools), for container jobs"},
      {"/usr/share/corral/mysql-template/.complete",
       "the accounting database template (the setup step that runs mariadb-install-db)"},
  };
  for (const auto& [path, what] : required)
    if (!exists(path)) return failedPrecondition("the image has no " + what + " at " + path);
  return Status::ok();
}

std::string dpkgVersionOf(const std::string& statusText, const std::string& package) {
  std::istringstream in(statusText);
  std::string line;
  bool inPackage = false, installed = false;
  std::string version;
  auto finish = [&]() -> bool { return inPackage && installed && !version.empty(); };
  while (std::getline(in, line)) {
    if (line.empty()) {
      if (finish()) return version;
      inPackage = installed = false;
      version.clear();
      continue;
    }
    if (line.rfind("Package: ", 0) == 0) inPackage = line.substr(9) == package;
    if (inPackage && line.rfind("Status: ", 0) == 0) installed = line.find(" installed") != std::string::npos;
    if (inPackage && line.rfind("Version: ", 0) == 0) version = line.substr(9);
  }
  return finish() ? version : "";
}

LocalImageCatalog::LocalImageCatalog(LocalImageCatalogOptions options)
    : options_(std::move(options)),
      runner_(options_.runner ? *options_.runner : realProcessRunner()),
      clock_(options_.clock ? *options_.clock : realClock()) {}

std::string LocalImageCatalog::rootfsOf(const std::string& id) const {
  return options_.cacheDir + "/" + id + "/rootfs";
}

StatusOr<Recipe> LocalImageCatalog::rawRecipe(const std::string& name) {
  if (auto it = options_.builtInRecipes.find(name); it != options_.builtInRecipes.end()) {
    auto r = parseRecipe(it->second);
    if (!r.isOk()) return internalError("corral's own recipe " + name + " is broken: " + r.status().message());
    return r;
  }
  if (!validateImageName(name).isOk()) return notFound("no image called " + quoteForMessage(name));
  auto text = readFile(options_.cacheDir + "/recipes/" + name + ".yaml");
  if (!text.isOk()) {
    std::string known;
    for (const auto& n : names()) known += (known.empty() ? "" : ", ") + n;
    return notFound("no image called " + quoteForMessage(name) + " (there are: " + known +
                    "; `corrald image build -f RECIPE` adds one)");
  }
  return parseRecipe(*text);
}

StatusOr<Recipe> LocalImageCatalog::resolve(const std::string& name) {
  ASSIGN_OR_RETURN(Recipe r, rawRecipe(name));
  if (r.extends.empty()) return r;
  auto base = rawRecipe(r.extends);
  if (!base.isOk())
    return failedPrecondition("image " + name + " extends " + r.extends + ": " + base.status().message());
  static_assert(kMaxExtendsDepth == 1);
  return resolveRecipe(*base, r);
}

ImageInfo LocalImageCatalog::describe(const Recipe& r, bool builtIn) {
  ImageInfo info;
  info.ref = {r.name, recipeId(r), r.slurm};
  info.description = r.description;
  info.os = r.os;
  info.suite = r.suite;
  info.base = r.extends;
  info.packages = r.packages;
  info.builtIn = builtIn;
  auto text = readFile(options_.cacheDir + "/" + info.ref.id + "/" + kImageFile);
  if (text.isOk()) {
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_object()) {
      info.built = true;
      info.sizeBytes = j.value("sizeBytes", int64_t{0});
      info.builtAt = j.value("builtAt", int64_t{0});
      info.slurmPackage = j.value("slurmPackage", "");
    }
  }
  return info;
}

StatusOr<ImageInfo> LocalImageCatalog::find(const std::string& name) {
  ASSIGN_OR_RETURN(Recipe r, resolve(name));
  return describe(r, options_.builtInRecipes.count(name) > 0);
}

std::set<std::string> LocalImageCatalog::names() const {
  std::set<std::string> out;
  for (const auto& [name, _] : options_.builtInRecipes) out.insert(name);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(options_.cacheDir + "/recipes", ec)) {
    std::string file = e.path().filename();
    if (file.size() > 5 && file.substr(file.size() - 5) == ".yaml") out.insert(file.substr(0, file.size() - 5));
  }
  return out;
}

StatusOr<std::vector<ImageInfo>> LocalImageCatalog::list() {
  std::vector<ImageInfo> out;
  for (const auto& name : names()) {
    auto r = resolve(name);
    if (!r.isOk()) {
      LOG_WARN("image " << name << ": " << r.status().message());
      continue;
    }
    out.push_back(describe(*r, options_.builtInRecipes.count(name) > 0));
  }
  return out;
}

StatusOr<ImageInfo> LocalImageCatalog::addRecipe(const std::string& yaml) {
  ASSIGN_OR_RETURN(Recipe r, parseRecipe(yaml));
  if (options_.builtInRecipes.count(r.name))
    return conflict("image " + r.name + " is one of corral's own; give yours another name (it may "
                    "`extends: " + r.name + "`)");
  std::lock_guard<std::mutex> l(recipesMu_);
  std::error_code ec;
  fs::create_directories(options_.cacheDir + "/recipes", ec);
  if (ec) return internalError("cannot create " + options_.cacheDir + "/recipes: " + ec.message());
  std::string path = options_.cacheDir + "/recipes/" + r.name + ".yaml";
  auto previous = readFile(path);
  RETURN_IF_ERROR(writeText(path, yaml));
  auto resolved = resolve(r.name);
  if (!resolved.isOk()) {
    // Keep what was there: a recipe whose base is missing is not added.
    if (previous.isOk()) (void)writeText(path, *previous);
    else fs::remove(path, ec);
    return resolved.status();
  }
  return describe(*resolved, false);
}

Status LocalImageCatalog::removeRecipe(const std::string& name, bool withBuild) {
  if (options_.builtInRecipes.count(name))
    return failedPrecondition("image " + name + " is one of corral's own and cannot be removed");
  std::lock_guard<std::mutex> l(recipesMu_);
  auto resolved = resolve(name);
  std::error_code ec;
  if (!fs::remove(options_.cacheDir + "/recipes/" + name + ".yaml", ec))
    return notFound("no image called " + quoteForMessage(name) + " was added by an operator");
  if (!withBuild || !resolved.isOk()) return Status::ok();
  std::string id = recipeId(*resolved);
  ASSIGN_OR_RETURN(FileLock lock, FileLock::acquire(options_.cacheDir + "/" + id + ".lock"));
  RETURN_IF_ERROR(removeBuildTree(options_.cacheDir + "/" + id));
  fs::remove(options_.cacheDir + "/" + id + ".lock", ec);
  return Status::ok();
}

Status LocalImageCatalog::ensureBuilt(const ImageRef& ref, const BuildProgress& progress) {
  if (fs::exists(options_.cacheDir + "/" + ref.id + "/" + kImageFile)) return Status::ok();
  ASSIGN_OR_RETURN(Recipe r, resolve(ref.name));
  std::string id = recipeId(r);
  if (id != ref.id)
    return failedPrecondition("the recipe of image " + ref.name + " changed since this cluster chose it, "
                              "and the build it names (" + ref.id.substr(0, 12) +
                              ") is not on this host; set the cluster's image again");
  return build(r, id, progress);
}

namespace {

// mmdebstrap's command line for recipe `r`, building into `staging`/rootfs
// with `staging`/setup.sh as its setup steps.
std::vector<std::string> mmdebstrapArgv(const Recipe& r, const std::string& staging,
                                        const std::string& mirror) {
  std::string include;
  for (const auto& p : r.packages) include += (include.empty() ? "" : ",") + p;
  // In PID and mount namespaces of its own, and killed with its builder: a
  // build is never left running after the corrald that started it, and the
  // /proc, /sys and /dev mmdebstrap mounts in the image vanish with it.
  // Debian's development suites (unstable) sign a Release that expires
  // within a week, and a mirror or snapshot a little behind would refuse to
  // build; the signature is still checked. Stable suites' Release files
  // carry no expiry, so their builds are what they were.
  std::vector<std::string> argv = {"setpriv", "--pdeathsig", "KILL", "--", "unshare", "--mount",
                                   "--propagation", "private", "--pid", "--fork", "--kill-child",
                                   "--mount-proc", "--", "mmdebstrap", "--mode=root", "--variant=apt",
                                   "--aptopt=Acquire::Retries \"3\"",
                                   "--aptopt=Acquire::Check-Valid-Until \"false\"",
                                   "--customize-hook=copy-in " + staging + "/setup.sh /",
                                   "--customize-hook=chroot \"$1\" /bin/sh -e /setup.sh",
                                   "--customize-hook=rm -f \"$1/setup.sh\""};
  if (!include.empty()) argv.push_back("--include=" + include);
  argv.insert(argv.end(), {r.suite, staging + "/rootfs", mirror});
  return argv;
}

}  // namespace

Status LocalImageCatalog::build(const Recipe& r, const std::string& id, const BuildProgress& progress) {
  std::error_code ec;
  fs::create_directories(options_.cacheDir, ec);
  if (ec) return internalError("cannot create " + options_.cacheDir + ": " + ec.message());
  // Builds of one image wait for each other; builds of others go on.
  ASSIGN_OR_RETURN(FileLock lock, FileLock::acquire(options_.cacheDir + "/" + id + ".lock"));
  const std::string final = options_.cacheDir + "/" + id;
  if (fs::exists(final + "/" + kImageFile)) return Status::ok();
  const std::string staging = options_.cacheDir + "/.build-" + id;
  RETURN_IF_ERROR(removeBuildTree(staging));
  RETURN_IF_ERROR(removeBuildTree(final));  // An incomplete copy (no image.json) is never used.
  fs::create_directories(staging, ec);
  if (ec) return internalError("cannot create " + staging + ": " + ec.message());
  auto fail = [&](const Status& why) {
    (void)removeBuildTree(staging);
    return why;
  };
  RETURN_IF_ERROR(writeText(staging + "/setup.sh", setupScript(r)));
  RETURN_IF_ERROR(writeText(staging + "/recipe.yaml", recipeToYaml(r)));
  std::vector<std::string> argv = mmdebstrapArgv(r, staging, options_.mirror);
  LOG_INFO("building cluster image " << r.name << " (" << id.substr(0, 12) << ") from " << r.suite);
  if (progress) progress("building image " + r.name + " from Debian " + r.suite + " (" +
                         std::to_string(r.packages.size()) + " packages, " +
                         std::to_string(r.setup.size()) + " setup steps)");
  auto started = clock_.now();
  ProcessOptions po;
  po.timeout = options_.buildTimeout;
  po.onLine = progress;
  auto res = runner_.run(argv, po);
  if (!res.isOk()) return fail(res.status().withContext("running mmdebstrap (is it installed?)"));
  (void)writeText(staging + "/build.log", res->out + res->err);
  if (res->exitCode != 0) {
    std::string why = res->timedOut ? "timed out" : "failed";
    return fail(invalidArgument("building image " + r.name + " " + why + ":\n" +
                                lastLines(res->err.empty() ? res->out : res->err, 12)));
  }
  const std::string rootfs = staging + "/rootfs";
  if (Status s = checkImageContents([&](const std::string& p) { return fs::exists(rootfs + p); });
      !s.isOk())
    return fail(s.withContext("image " + r.name));
  auto status = readFile(rootfs + "/var/lib/dpkg/status");
  std::string slurmPackage = status.isOk() ? dpkgVersionOf(*status, "slurmctld") : "";
  if (slurmReleaseOf(slurmPackage) != r.slurm)
    return fail(failedPrecondition("image " + r.name + " says it holds Slurm " + r.slurm + ", but " +
                                   r.suite + " installed slurmctld " +
                                   (slurmPackage.empty() ? "(none)" : slurmPackage)));
  nlohmann::json info = {{"name", r.name},
                         {"id", id},
                         {"os", r.os},
                         {"suite", r.suite},
                         {"slurm", r.slurm},
                         {"slurmPackage", slurmPackage},
                         {"packages", r.packages},
                         {"sizeBytes", diskUsage(rootfs)},
                         {"builtAt", clock_.unixMillis() / 1000},
                         {"buildSeconds", std::chrono::duration<double>(clock_.now() - started).count()}};
  RETURN_IF_ERROR(writeText(staging + "/" + kImageFile, info.dump(2)));
  fs::rename(staging, final, ec);
  if (ec) return fail(internalError("cannot move the build of " + r.name + " into place: " + ec.message()));
  LOG_INFO("built cluster image " << r.name << " (" << id.substr(0, 12) << ")");
  if (progress) progress("built image " + r.name + " (" + id.substr(0, 12) + ")");
  return Status::ok();
}

}  // namespace corral
