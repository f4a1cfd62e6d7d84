#pragma once

// A cluster record's two parts (see `ClusterRecord` in corral/spec.h): which
// field belongs to which, and the rule every store applies to a write of one
// part. `SqliteStore` and `FakeStore` both call `applyWrite`, so they cannot
// disagree about what conflicts.

#include "corral/spec.h"
#include "corral/status.h"

namespace corral {

const char* recordPartName(RecordPart part);  // "spec", "status", "record"

// Copies the fields of `part` from `from` into `to` (kAll: every field).
// Neither the versions nor `updatedAt` are copied.
void copyRecordPart(const ClusterRecord& from, RecordPart part, ClusterRecord* to);

// Whether `a` and `b` hold the same values in every field of `part`.
bool samePart(const ClusterRecord& a, const ClusterRecord& b, RecordPart part);

// What a store keeps after writing `part` of `write` over `stored`: the
// written part from `write`, the other from `stored`, the written part's
// version bumped and `updatedAt` the later of the two. Conflict when the ids
// differ (the cluster was deleted and made again) or the written part's
// version is not the stored one; InvalidArgument when a spec write would take
// the revision back.
StatusOr<ClusterRecord> applyWrite(const ClusterRecord& stored, const ClusterRecord& write,
                                   RecordPart part);

}  // namespace corral
