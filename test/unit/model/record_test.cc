// A cluster record's two parts: every field belongs to exactly one, the
// field copy (`copyRecordPart`) and the stored JSON (`recordPartToJson`)
// agree on which, and `applyWrite` is the stores' one write rule.

#include "model/record.h"

#include <gtest/gtest.h>

#include <set>

#include "model/spec_json.h"

namespace corral {
namespace {

// Two records that differ in every field.
ClusterRecord recordA() {
  ClusterRecord r;
  r.id = 7;
  r.spec.name = "a";
  r.spec.gpuNodes = 2;
  r.project = "ml";
  r.revision = 3;
  r.appliedRevision = 2;
  r.status = ClusterStatus::kRunning;
  r.phase = "applying";
  r.reason = "because";
  r.subnet = "172.29.1.0/24";
  r.loginAddress = "172.29.1.2";
  r.loginHostKey = "ssh-ed25519 AAAA a";
  r.nodes = {{"slinky-0", "slinky", "corral_node_1", "172.29.1.10"}};
  r.platformPartitions = {"llm"};
  r.changeAuthor = "alice";
  r.changeMessage = "scale";
  r.changeForce = true;
  r.changeRollback = false;
  r.controllerConfigKey = "k1";
  r.createdAt = 100;
  r.updatedAt = 200;
  r.version = 4;
  r.statusVersion = 9;
  return r;
}

ClusterRecord recordB() {
  ClusterRecord r;
  r.id = 7;
  r.spec.name = "a";
  r.spec.gpuNodes = 5;
  r.project = "hpc";
  r.revision = 4;
  r.appliedRevision = 4;
  r.status = ClusterStatus::kFailed;
  r.phase = "";
  r.reason = "other";
  r.subnet = "172.29.2.0/24";
  r.loginAddress = "172.29.2.2";
  r.loginHostKey = "ssh-ed25519 AAAA b";
  r.nodes = {};
  r.platformPartitions = {};
  r.changeAuthor = "corral";
  r.changeMessage = "roll back";
  r.changeForce = false;
  r.changeRollback = true;
  r.controllerConfigKey = "k2";
  r.createdAt = 101;
  r.updatedAt = 150;
  r.version = 4;
  r.statusVersion = 9;
  return r;
}

std::set<std::string> keys(const nlohmann::json& j) {
  std::set<std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) out.insert(it.key());
  return out;
}

TEST(RecordPartsTest, EveryMemberBelongsToExactlyOnePart) {
  ClusterRecord a = recordA();
  std::set<std::string> spec = keys(recordPartToJson(a, RecordPart::kSpec));
  std::set<std::string> status = keys(recordPartToJson(a, RecordPart::kStatus));
  std::set<std::string> all = keys(recordToJson(a));
  for (const auto& k : spec) EXPECT_EQ(status.count(k), 0u) << k << " is in both parts";
  std::set<std::string> both = spec;
  both.insert(status.begin(), status.end());
  both.insert("updatedAt");  // Kept beside the parts, the newest of either write.
  EXPECT_EQ(both, all);
}

TEST(RecordPartsTest, TheCopyAndTheJsonAgreeOnWhichFieldIsWhose) {
  for (RecordPart part : {RecordPart::kSpec, RecordPart::kStatus}) {
    RecordPart other = part == RecordPart::kSpec ? RecordPart::kStatus : RecordPart::kSpec;
    ClusterRecord merged = recordA();
    copyRecordPart(recordB(), part, &merged);
    EXPECT_EQ(recordPartToJson(merged, part), recordPartToJson(recordB(), part))
        << recordPartName(part) << ": a field the JSON keeps was not copied";
    EXPECT_EQ(recordPartToJson(merged, other), recordPartToJson(recordA(), other))
        << recordPartName(part) << ": a field of the other part was copied";
    EXPECT_TRUE(samePart(merged, recordB(), part));
    EXPECT_FALSE(samePart(merged, recordA(), part));
  }
}

TEST(RecordPartsTest, TheRecordComesBackFromItsParts) {
  ClusterRecord a = recordA();
  auto back = recordFromParts(recordPartToJson(a, RecordPart::kSpec),
                              recordPartToJson(a, RecordPart::kStatus));
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  a.updatedAt = 0;  // Not in either part.
  EXPECT_EQ(recordToJson(*back), recordToJson(a));
  // A record written whole (before the parts) reads with its status members.
  auto whole = recordFromParts(recordToJson(a), nlohmann::json::object());
  ASSERT_TRUE(whole.isOk());
  EXPECT_EQ(whole->phase, "applying");
  EXPECT_FALSE(recordFromParts(nlohmann::json::array(), nlohmann::json::object()).isOk());
}

TEST(ApplyWriteTest, WritesOnePartAndBumpsItsVersion) {
  auto spec = applyWrite(recordA(), recordB(), RecordPart::kSpec);
  ASSERT_TRUE(spec.isOk()) << spec.status().toString();
  EXPECT_EQ(spec->spec.gpuNodes, 5);
  EXPECT_EQ(spec->phase, "applying");
  EXPECT_EQ(spec->version, 5);
  EXPECT_EQ(spec->statusVersion, 9);
  EXPECT_EQ(spec->updatedAt, 200) << "the later of the two";

  auto status = applyWrite(recordA(), recordB(), RecordPart::kStatus);
  ASSERT_TRUE(status.isOk());
  EXPECT_EQ(status->spec.gpuNodes, 2);
  EXPECT_EQ(status->status, ClusterStatus::kFailed);
  EXPECT_EQ(status->version, 4);
  EXPECT_EQ(status->statusVersion, 10);

  auto all = applyWrite(recordA(), recordB(), RecordPart::kAll);
  ASSERT_TRUE(all.isOk());
  EXPECT_EQ(all->version, 5);
  EXPECT_EQ(all->statusVersion, 10);
}

TEST(ApplyWriteTest, RefusesStaleVersionsOtherIdsAndRevisionsGoingBack) {
  ClusterRecord stale = recordB();
  stale.version = 3;
  EXPECT_EQ(applyWrite(recordA(), stale, RecordPart::kSpec).status().code(), Code::kConflict);
  EXPECT_TRUE(applyWrite(recordA(), stale, RecordPart::kStatus).isOk())
      << "a status write does not care about the spec's version";
  EXPECT_EQ(applyWrite(recordA(), stale, RecordPart::kAll).status().code(), Code::kConflict);
  stale = recordB();
  stale.statusVersion = 8;
  EXPECT_EQ(applyWrite(recordA(), stale, RecordPart::kStatus).status().code(), Code::kConflict);
  EXPECT_TRUE(applyWrite(recordA(), stale, RecordPart::kSpec).isOk());
  ClusterRecord other = recordB();
  other.id = 8;
  for (RecordPart p : {RecordPart::kSpec, RecordPart::kStatus, RecordPart::kAll})
    EXPECT_EQ(applyWrite(recordA(), other, p).status().code(), Code::kConflict);
  ClusterRecord back = recordB();
  back.revision = 2;
  EXPECT_EQ(applyWrite(recordA(), back, RecordPart::kSpec).status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(applyWrite(recordA(), back, RecordPart::kStatus).isOk())
      << "a status write never touches the revision";
}

}  // namespace
}  // namespace corral
