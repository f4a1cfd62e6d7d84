#include "model/spec_edits.h"

#include <algorithm>

#include "common/text.h"
#include "model/validation.h"

namespace corral {

namespace {

constexpr int64_t kLoginUids = 10000;

}  // namespace

Status addLoginUser(ClusterSpec& spec, LoginUser user,
                    const std::function<StatusOr<int64_t>()>& nextUidSequence) {
  for (const auto& u : spec.users)
    if (u.name == user.name) return conflict("user \"" + user.name + "\" already exists");
  ASSIGN_OR_RETURN(int64_t seq, nextUidSequence());
  if (seq > kLoginUids) return failedPrecondition("this cluster has used all its uids");
  user.uid = kFirstLoginUid + static_cast<int>(seq) - 1;
  spec.users.push_back(std::move(user));
  return Status::ok();
}

Status removeLoginUser(ClusterSpec& spec, const std::string& cluster, const std::string& user) {
  auto it = std::find_if(spec.users.begin(), spec.users.end(),
                         [&](const LoginUser& u) { return u.name == user; });
  if (it == spec.users.end())
    return notFound("cluster \"" + cluster + "\" has no login user " + quoteForMessage(user));
  spec.users.erase(it);
  return Status::ok();
}

void addAttachment(ClusterSpec& spec, const Volume& volume, const std::string& path) {
  spec.volumes.push_back({volume.name, path, volume.hostPath, volume.type == "dataset"});
}

Status removeAttachment(ClusterSpec& spec, const std::string& cluster, const std::string& volume) {
  auto it = std::find_if(spec.volumes.begin(), spec.volumes.end(),
                         [&](const VolumeAttachment& a) { return a.volume == volume; });
  if (it == spec.volumes.end())
    return notFound("volume \"" + volume + "\" is not attached to \"" + cluster + "\"");
  spec.volumes.erase(it);
  return Status::ok();
}

}  // namespace corral
