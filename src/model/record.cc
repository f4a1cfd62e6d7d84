#include "model/record.h"

#include <algorithm>

#include "model/spec_json.h"

namespace corral {

namespace {

std::string quote(const std::string& s) { return "\"" + s + "\""; }

}  // namespace

const char* recordPartName(RecordPart part) {
  switch (part) {
    case RecordPart::kSpec: return "spec";
    case RecordPart::kStatus: return "status";
    case RecordPart::kAll: return "record";
  }
  return "record";
}

// Through the record's JSON, so that which member belongs to which part is
// written down once (recordPartToJson's lists).
void copyRecordPart(const ClusterRecord& from, RecordPart part, ClusterRecord* to) {
  const int64_t version = to->version, statusVersion = to->statusVersion,
                updatedAt = to->updatedAt;
  if (part == RecordPart::kAll) {
    *to = from;
  } else {
    nlohmann::json merged = recordToJson(*to);
    nlohmann::json written = recordPartToJson(from, part);
    for (auto it = written.begin(); it != written.end(); ++it) merged[it.key()] = *it;
    // recordToJson's own output always reads back.
    if (auto back = recordFromJson(merged); back.isOk()) *to = std::move(back).value();
  }
  to->version = version;
  to->statusVersion = statusVersion;
  to->updatedAt = updatedAt;
}

bool samePart(const ClusterRecord& a, const ClusterRecord& b, RecordPart part) {
  if (part == RecordPart::kAll)
    return samePart(a, b, RecordPart::kSpec) && samePart(a, b, RecordPart::kStatus);
  return recordPartToJson(a, part) == recordPartToJson(b, part);
}

StatusOr<ClusterRecord> applyWrite(const ClusterRecord& stored, const ClusterRecord& write,
                                   RecordPart part) {
  const std::string& name = stored.spec.name;
  // A version alone could match by accident once the cluster has been
  // deleted and created again (both start at version 1), so the id must too.
  if (stored.id != write.id) {
    return conflict("cluster " + quote(name) + " was deleted and created again (id " +
                    std::to_string(stored.id) + ", expected " + std::to_string(write.id) +
                    "); reload it and retry");
  }
  auto check = [&](const char* what, int64_t have, int64_t want) -> Status {
    if (have == want) return Status::ok();
    return conflict("the " + std::string(what) + " of cluster " + quote(name) +
                    " was changed concurrently (version " + std::to_string(have) +
                    ", expected " + std::to_string(want) + "); retry");
  };
  bool spec = part != RecordPart::kStatus;
  bool status = part != RecordPart::kSpec;
  if (spec) RETURN_IF_ERROR(check("spec", stored.version, write.version));
  if (status) RETURN_IF_ERROR(check("status", stored.statusVersion, write.statusVersion));
  if (spec && write.revision < stored.revision) {
    return invalidArgument("the revision of cluster " + quote(name) + " cannot go back from " +
                           std::to_string(stored.revision) + " to " +
                           std::to_string(write.revision));
  }
  ClusterRecord next = stored;
  copyRecordPart(write, part, &next);
  if (spec) next.version = stored.version + 1;
  if (status) next.statusVersion = stored.statusVersion + 1;
  next.updatedAt = std::max(stored.updatedAt, write.updatedAt);
  return next;
}

}  // namespace corral
