// `jsonBody` (src/api/http_util.h): how every route reads a request body.

#include <gtest/gtest.h>

#include "api/http_util.h"

namespace corral {
namespace {

httplib::Request withBody(const std::string& body) {
  httplib::Request req;
  req.body = body;
  return req;
}

TEST(JsonBody, AnObjectOfKnownFields) {
  auto body = jsonBody(withBody(R"({"gpuNodes": 4, "force": true})"), {"gpuNodes", "cpuNodes", "force"});
  ASSERT_TRUE(body.isOk()) << body.status().toString();
  EXPECT_EQ(*body, (nlohmann::json{{"gpuNodes", 4}, {"force", true}}));
}

TEST(JsonBody, AnythingButAnObjectIsRefused) {
  for (const char* text : {"", "[]", "4", "\"x\"", "{", "null"}) {
    Status s = jsonBody(withBody(text), {"a"}).status();
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << text;
    EXPECT_EQ(s.message(), "request body must be a JSON object") << text;
  }
}

TEST(JsonBody, AnEmptyBodyIsAnObjectOnlyWhenAllowed) {
  auto body = jsonBody(withBody(""), {"set", "unset"}, {.emptyIsObject = true});
  ASSERT_TRUE(body.isOk());
  EXPECT_EQ(*body, nlohmann::json::object());
}

TEST(JsonBody, TheFirstUnknownFieldInKeyOrderIsNamed) {
  Status s = jsonBody(withBody(R"({"zeta": 1, "forse": true, "beta": 2})"), {"force", "zeta"}).status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "unknown field \"beta\"");
}

TEST(JsonBody, SuggestsTheFieldItResemblesWhenAsked) {
  auto req = withBody(R"({"nodez": "slinky-0"})");
  EXPECT_EQ(jsonBody(req, {"name", "nodes", "options"}).status().message(), "unknown field \"nodez\"");
  EXPECT_EQ(jsonBody(req, {"name", "nodes", "options"}, {.suggest = true}).status().message(),
            "unknown field \"nodez\"; did you mean \"nodes\"?");
}

}  // namespace
}  // namespace corral
