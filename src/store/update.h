#pragma once

// The one read-modify-write loop for a cluster's record: every writer (the
// API's changes, terminate and delete; the reconciler's status updates)
// reads the record, edits it and writes it back only if nobody wrote in
// between (the store's version check), and on a conflict starts again from
// a fresh read.

#include <functional>
#include <string>

#include "corral/store.h"

namespace corral {

// What an edit asks for.
enum class Edit {
  kWrite,      // Store the edited record.
  kUnchanged,  // Nothing to store: return the record as read.
};

// Reads cluster `name`, calls `edit` on it (an error from `edit` stops it,
// and is returned), and stores the result. On a version conflict it reads
// again and calls `edit` anew, up to `kMaxAttempts` times; then the conflict
// is returned. Returns the record as stored (or as read, for kUnchanged).
inline constexpr int kMaxUpdateAttempts = 10;
StatusOr<ClusterRecord> updateWithRetry(Store& store, const std::string& name,
                                        const std::function<StatusOr<Edit>(ClusterRecord&)>& edit);

}  // namespace corral
