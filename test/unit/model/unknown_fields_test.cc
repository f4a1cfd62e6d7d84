// `rejectUnknownFields` (src/model/spec_json.h): the one way an unknown
// member of a request body or a strictly read spec is refused.

#include <gtest/gtest.h>

#include "model/spec_json.h"

namespace corral {
namespace {

using nlohmann::json;

TEST(RejectUnknownFields, KnownFieldsPass) {
  EXPECT_TRUE(rejectUnknownFields(json{{"a", 1}, {"b", 2}}, {"a", "b", "c"}, false).isOk());
  EXPECT_TRUE(rejectUnknownFields(json::object(), {}, true).isOk());
}

TEST(RejectUnknownFields, NamesTheFirstUnknownInKeyOrder) {
  Status s = rejectUnknownFields(json{{"zz", 1}, {"force", true}, {"mm", 2}}, {"force"}, false);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "unknown field \"mm\"");
}

TEST(RejectUnknownFields, SuggestsOnlyWhenAskedAndOnlyCloseFields) {
  json body = {{"nodez", "slinky-0"}};
  EXPECT_EQ(rejectUnknownFields(body, {"name", "nodes", "options"}, false).message(),
            "unknown field \"nodez\"");
  EXPECT_EQ(rejectUnknownFields(body, {"name", "nodes", "options"}, true).message(),
            "unknown field \"nodez\"; did you mean \"nodes\"?");
  EXPECT_EQ(rejectUnknownFields(json{{"flavour", 1}}, {"name", "nodes"}, true).message(),
            "unknown field \"flavour\"");
}

TEST(RejectUnknownFields, PrefixNamesTheObjectsPath) {
  EXPECT_EQ(rejectUnknownFields(json{{"nodez", 1}}, {"nodes"}, true, "partitions[0].").message(),
            "unknown field \"partitions[0].nodez\"; did you mean \"partitions[0].nodes\"?");
}

}  // namespace
}  // namespace corral
