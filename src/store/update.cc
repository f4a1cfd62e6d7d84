#include "store/update.h"

namespace corral {

StatusOr<ClusterRecord> updateWithRetry(Store& store, const std::string& name,
                                        const std::function<StatusOr<Edit>(ClusterRecord&)>& edit) {
  for (int attempt = 1;; ++attempt) {
    ASSIGN_OR_RETURN(ClusterRecord r, store.getCluster(name));
    ASSIGN_OR_RETURN(Edit what, edit(r));
    if (what == Edit::kUnchanged) return r;
    auto stored = store.updateCluster(r);
    if (stored.isOk() || stored.status().code() != Code::kConflict ||
        attempt >= kMaxUpdateAttempts) {
      return stored;
    }
  }
}

}  // namespace corral
