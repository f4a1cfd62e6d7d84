#pragma once

// Volumes (docs/api.md, "Volumes"): storage that outlives clusters, either
// made by the runtime (managed) or an existing host directory an operator
// allowed. What the API's volume routes decide, apart from HTTP so that unit
// tests call it over a fake store and runtime. A class of its own rather
// than private methods of `ApiServer`, because it needs only the store, the
// runtime, the clock and corrald's volume options; which caller acts is
// passed in, not read from the request's thread.

#include <string>
#include <vector>

#include "api/auth.h"
#include "corral/clock.h"
#include "corral/runtime.h"
#include "corral/spec.h"
#include "corral/status.h"
#include "corral/store.h"

namespace corral {

// Whether the canonical `path` is one of `roots` or lies under one.
bool underVolumeSourceRoot(const std::string& path, const std::vector<std::string>& roots);

// A directory an operator names as a --volume-source-root: existing, not
// part of the host's system, apart from corrald's data directory.
Status checkVolumeSourceRoot(const std::string& root, const std::string& dataDir);

class Volumes {
 public:
  struct Options {
    std::string dataDir;                     // corrald's --data-dir.
    std::vector<std::string> sourceRoots;    // --volume-source-root, canonical.
  };

  // `store`, `runtime` and `clock` are not owned and must outlive this.
  Volumes(Store& store, Runtime& runtime, Clock& clock, Options options);

  // Creates the volume `name` of `type` in `project` (the caller's to use,
  // checked by the caller of this). With an empty `source` the runtime makes
  // its storage; otherwise it is the host directory `source`, which only an
  // admin may name and only under a source root. InvalidArgument for a bad
  // name, type or source; PermissionDenied for a source the caller may not
  // use; Conflict for a name that is taken (saying whose only to someone who
  // may see it). Leaves nothing behind when it fails.
  StatusOr<Volume> create(const Caller& caller, const std::string& name, const std::string& type,
                          const std::string& source, const std::string& project);

  // Where `volume` is attached, as "cluster:path", on the clusters `caller`
  // may see.
  StatusOr<std::vector<std::string>> attachments(const Caller& caller, const std::string& volume);

  // Deletes `volume`, and its storage when managed (a failure to remove the
  // storage is logged, not returned). FailedPrecondition, naming where, while
  // it is attached.
  Status remove(const Caller& caller, const Volume& volume);

  // Whether `volume` may be attached to `cluster`: FailedPrecondition across
  // projects, PermissionDenied for a host directory no longer under a source
  // root.
  Status checkAttachable(const Volume& volume, const ClusterRecord& cluster) const;

 private:
  Store& store_;
  Runtime& runtime_;
  Clock& clock_;
  Options options_;
};

}  // namespace corral
