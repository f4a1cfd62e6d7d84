#include "api/volumes.h"

#include <filesystem>

#include "common/log.h"
#include "common/text.h"
#include "model/validation.h"

namespace corral {

namespace fs = std::filesystem;

namespace {

bool validVolumeType(const std::string& t) {
  for (const char* v : kVolumeTypes)
    if (t == v) return true;
  return false;
}

// A --source must be an existing directory that is not part of the host's
// own system or of corral's data.
Status checkVolumeSource(const std::string& source, const std::string& dataDir) {
  std::error_code ec;
  if (source.empty() || source[0] != '/')
    return invalidArgument("--source must be an absolute path, not " + quoteForMessage(source));
  fs::path canonical = fs::canonical(source, ec);
  if (ec || !fs::is_directory(canonical))
    return invalidArgument("--source " + quoteForMessage(source) + " is not an existing directory");
  std::string c = canonical.string();
  for (const char* bad : {"/", "/bin", "/boot", "/dev", "/etc", "/lib", "/lib64", "/proc", "/root",
                          "/run", "/sbin", "/sys", "/usr", "/var", "/tmp"}) {
    std::string b = bad;
    bool inside = c == b || (b != "/" && c.rfind(b + "/", 0) == 0 && b != "/var");
    if (inside) return invalidArgument("--source " + c + " is part of the host's system");
  }
  if (!dataDir.empty() && (c == dataDir || c.rfind(dataDir + "/", 0) == 0 ||
                           dataDir.rfind(c + "/", 0) == 0))
    return invalidArgument("--source " + c + " overlaps corrald's data directory " + dataDir);
  return Status::ok();
}

std::string rootList(const std::vector<std::string>& roots) {
  std::string out;
  for (const auto& r : roots) out += (out.empty() ? "" : ", ") + r;
  return out.empty() ? "none" : out;
}

// Host directories are the operator's: only an admin may name one, and only
// under a root the operator allowed.
Status checkSourceAllowed(const Caller& who, const std::string& source,
                          const std::vector<std::string>& roots) {
  if (!who.admin)
    return permissionDenied("only an administrator may back a volume with an existing host "
                            "directory (--source); leave --source out and corral makes a "
                            "managed volume");
  std::error_code ec;
  std::string c = fs::weakly_canonical(source, ec).string();
  if (!underVolumeSourceRoot(c, roots))
    return permissionDenied("--source " + quoteForMessage(c) +
                            " is not under a directory this corrald lets volumes use (" +
                            rootList(roots) + "; corrald --volume-source-root DIR adds one)");
  return Status::ok();
}

}  // namespace

bool underVolumeSourceRoot(const std::string& path, const std::vector<std::string>& roots) {
  for (const auto& r : roots)
    if (path == r || path.rfind(r + "/", 0) == 0) return true;
  return false;
}

Status checkVolumeSourceRoot(const std::string& root, const std::string& dataDir) {
  RETURN_IF_ERROR(checkVolumeSource(root, dataDir));
  std::error_code ec;
  if (fs::canonical(root, ec).string() == "/var")
    return invalidArgument("--volume-source-root /var is part of the host's system");
  return Status::ok();
}

Volumes::Volumes(Store& store, Runtime& runtime, Clock& clock, Options options)
    : store_(store), runtime_(runtime), clock_(clock), options_(std::move(options)) {}

StatusOr<Volume> Volumes::create(const Caller& caller, const std::string& name, const std::string& type,
                                 const std::string& source, const std::string& project) {
  Volume v;
  v.name = name;
  v.type = type;
  v.project = project;
  if (!validateClusterName(v.name).isOk())
    return invalidArgument("invalid volume name " + quoteForMessage(v.name) +
                           ": use lowercase letters, digits and '-'");
  if (!validVolumeType(v.type))
    return invalidArgument("--type must be pfs, sfs, weka or dataset, not " + quoteForMessage(v.type));
  if (auto taken = store_.getVolume(v.name); taken.isOk())
    return caller.sees(taken->project)
               ? conflict("a volume named \"" + v.name + "\" already exists")
               : conflict("the volume name \"" + v.name + "\" is not available; choose another");
  v.createdAt = clock_.unixMillis() / 1000;
  if (source.empty()) {
    // Storage of the runtime's (a directory here, a PVC on Kubernetes).
    ASSIGN_OR_RETURN(v.hostPath, runtime_.createVolume(v.name));
    v.managed = true;
  } else {
    RETURN_IF_ERROR(checkSourceAllowed(caller, source, options_.sourceRoots));
    RETURN_IF_ERROR(checkVolumeSource(source, options_.dataDir));
    v.hostPath = fs::canonical(source).string();
    v.managed = false;
  }
  auto created = store_.createVolume(v);
  if (!created.isOk() && created.status().code() == Code::kConflict)
    created = conflict("the volume name \"" + v.name + "\" is not available; choose another");
  if (!created.isOk() && v.managed) (void)runtime_.deleteVolume(v.name);
  return created;
}

StatusOr<std::vector<std::string>> Volumes::attachments(const Caller& caller,
                                                        const std::string& volume) {
  ASSIGN_OR_RETURN(std::vector<ClusterRecord> all, store_.listClusters());
  std::vector<std::string> out;
  for (const auto& c : all)
    for (const auto& a : c.spec.volumes)
      // A volume is attached only within its project, so its users are the
      // caller's to see; the check keeps that true for old data.
      if (caller.sees(c.project) && a.volume == volume) out.push_back(c.spec.name + ":" + a.path);
  return out;
}

Status Volumes::remove(const Caller& caller, const Volume& volume) {
  ASSIGN_OR_RETURN(std::vector<std::string> users, attachments(caller, volume.name));
  if (!users.empty()) {
    std::string list;
    for (const auto& u : users) list += (list.empty() ? "" : ", ") + u;
    return failedPrecondition("volume \"" + volume.name + "\" is attached to " + list +
                              "; detach it first");
  }
  RETURN_IF_ERROR(store_.deleteVolume(volume.name));
  if (volume.managed) {
    if (Status s = runtime_.deleteVolume(volume.name); !s.isOk())
      LOG_WARN("volume " << volume.name << ": " << s.message());
  }
  return Status::ok();
}

Status Volumes::checkAttachable(const Volume& volume, const ClusterRecord& cluster) const {
  if (cluster.project != volume.project)
    return failedPrecondition("volume \"" + volume.name + "\" belongs to project \"" +
                              volume.project + "\" and cluster \"" + cluster.spec.name +
                              "\" to \"" + cluster.project +
                              "\"; a volume is attached within its project");
  if (!volume.managed && !underVolumeSourceRoot(volume.hostPath, options_.sourceRoots))
    return permissionDenied("volume \"" + volume.name + "\" is backed by the host directory " +
                            volume.hostPath +
                            ", which is not under a directory this corrald lets volumes use (" +
                            rootList(options_.sourceRoots) +
                            "); an administrator must allow it (corrald --volume-source-root)");
  return Status::ok();
}

}  // namespace corral
