#pragma once

// The one read-modify-write loop for a cluster's record: every writer (the
// API's changes, terminate and delete; the reconciler's status updates)
// reads the record, edits one part of it and writes that part back only if
// nobody wrote it in between (the store's version check for that part), and
// on a conflict starts again from a fresh read. The API's change requests
// write the spec and the reconciler's progress the status, so neither makes
// the other retry.

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
// and is returned), and stores `part` of the result. On a version conflict it
// reads again and calls `edit` anew, up to `kMaxUpdateAttempts` times; then
// the conflict is returned. An edit that changes a field outside `part` is a
// bug that would be lost silently: Internal, and nothing is written. Returns
// the record as stored (or as read, for kUnchanged).
inline constexpr int kMaxUpdateAttempts = 10;
StatusOr<ClusterRecord> updateWithRetry(Store& store, const std::string& name, RecordPart part,
                                        const std::function<StatusOr<Edit>(ClusterRecord&)>& edit);

}  // namespace corral
