#include "store/update.h"

#include "model/record.h"

namespace corral {

namespace {

// The part a write of `part` leaves alone (none for kAll).
bool changedOutside(const ClusterRecord& before, const ClusterRecord& after, RecordPart part) {
  switch (part) {
    case RecordPart::kSpec: return !samePart(before, after, RecordPart::kStatus);
    case RecordPart::kStatus: return !samePart(before, after, RecordPart::kSpec);
    case RecordPart::kAll: return false;
  }
  return false;
}

}  // namespace

StatusOr<ClusterRecord> updateWithRetry(Store& store, const std::string& name, RecordPart part,
                                        const std::function<StatusOr<Edit>(ClusterRecord&)>& edit) {
  for (int attempt = 1;; ++attempt) {
    ASSIGN_OR_RETURN(ClusterRecord r, store.getCluster(name));
    const ClusterRecord read = r;
    ASSIGN_OR_RETURN(Edit what, edit(r));
    if (what == Edit::kUnchanged) return r;
    if (changedOutside(read, r, part)) {
      return internalError("an edit of cluster \"" + name + "\"'s " + recordPartName(part) +
                           " changed fields outside it; nothing was written");
    }
    auto stored = store.writeCluster(r, part);
    if (stored.isOk() || stored.status().code() != Code::kConflict ||
        attempt >= kMaxUpdateAttempts) {
      return stored;
    }
  }
}

}  // namespace corral
