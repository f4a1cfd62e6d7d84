#pragma once

// Edits the API's changes make to a cluster's spec (docs/api.md): login
// users and volume attachments. `ApiServer::change` applies one to a copy of
// the spec and validates the result, so these check only what validation
// cannot: names that must exist or must not. Each fails without changing
// `spec`. Pure and thread-safe, apart from what `nextUidSequence` does.

#include <cstdint>
#include <functional>
#include <string>

#include "corral/spec.h"
#include "corral/status.h"

namespace corral {

// Adds `user` with the next uid of the cluster: kFirstLoginUid plus the
// cluster's sequence number minus one, a sequence (`nextUidSequence`) that
// never gives a number twice, so files a removed user left on shared storage
// never become someone else's. The sequence is asked only once the name is
// known to be free. Conflict when the name is taken; FailedPrecondition once
// 10000 uids have been given.
Status addLoginUser(ClusterSpec& spec, LoginUser user,
                    const std::function<StatusOr<int64_t>()>& nextUidSequence);

// Removes the login user `user` of the cluster `cluster`; NotFound when it
// has none of that name.
Status removeLoginUser(ClusterSpec& spec, const std::string& cluster, const std::string& user);

// Attaches `volume` at `path`; a dataset is attached read-only.
void addAttachment(ClusterSpec& spec, const Volume& volume, const std::string& path);

// Detaches the volume `volume` from the cluster `cluster`; NotFound when it
// is not attached.
Status removeAttachment(ClusterSpec& spec, const std::string& cluster, const std::string& volume);

}  // namespace corral
