// The schema checker the API's contract tests rely on (test/support): if it
// let a wrong answer through, those tests would prove nothing.

#include "support/openapi_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace corral::testing_support {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAre;

// A small document in the shape of src/api/openapi.json.
const json& doc() {
  static const json d = json::parse(R"({
    "openapi": "3.0.3",
    "info": {"title": "t", "version": "1"},
    "paths": {
      "/api/v1/clusters/{name}": {
        "get": {"responses": {
          "200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Cluster"}}}},
          "4XX": {"$ref": "#/components/responses/Error"}}}},
      "/api/v1/clusters/{name}/jobs/{id}": {
        "get": {"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}}},
      "/api/v1/clusters/{name}/jobs/history": {
        "get": {"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "array", "items": {"type": "string"}}}}}}}},
      "/api/v1/clusters/{name}/nodes/{node}": {
        "post": {"requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}},
                 "responses": {"default": {"description": "any", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}}}}
    },
    "components": {
      "responses": {"Error": {"description": "error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}},
      "schemas": {
        "Error": {"type": "object", "additionalProperties": false, "required": ["error"],
                  "properties": {"error": {"type": "object", "required": ["code", "message"],
                    "additionalProperties": false,
                    "properties": {"code": {"type": "string", "enum": ["InvalidArgument", "NotFound"]},
                                   "message": {"type": "string"}}}}},
        "Node": {"type": "object", "additionalProperties": false, "required": ["name", "gpus"],
                 "properties": {"name": {"type": "string", "minLength": 1, "pattern": "^[a-z]"},
                                "gpus": {"type": "integer", "minimum": 0, "maximum": 16},
                                "load": {"type": "number", "nullable": true}}},
        "Cluster": {"type": "object", "additionalProperties": false,
                    "required": ["name", "status", "nodes", "slurmConf"],
                    "properties": {
                      "name": {"type": "string"},
                      "status": {"type": "string", "enum": ["Creating", "Running"]},
                      "nodes": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
                      "slurmConf": {"type": "object", "additionalProperties": {"type": "string"}},
                      "extra": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
                      "either": {"anyOf": [{"type": "integer"}, {"type": "number"}]},
                      "both": {"allOf": [{"type": "integer"}, {"minimum": 5}]}}}
      }
    }
  })");
  return d;
}

const json& cluster() { return doc()["components"]["schemas"]["Cluster"]; }

json goodCluster() {
  return json::parse(R"({"name": "a", "status": "Running",
                         "nodes": [{"name": "slinky-0", "gpus": 8}, {"name": "cpu-0", "gpus": 0, "load": null}],
                         "slurmConf": {"MinJobAge": "300"}})");
}

TEST(OpenapiCheckTest, AcceptsAConformingValue) {
  EXPECT_THAT(checkAgainstSchema(doc(), cluster(), goodCluster()), IsEmpty());
  EXPECT_THAT(
      checkAgainstSchema(doc(), json{{"$ref", "#/components/schemas/Cluster"}}, goodCluster()),
      IsEmpty());
}

TEST(OpenapiCheckTest, CatchesWrongTypes) {
  json v = goodCluster();
  v["name"] = 5;
  EXPECT_THAT(checkAgainstSchema(doc(), cluster(), v),
              ElementsAre("$.name: expected string, got integer 5"));
  v = goodCluster();
  v["nodes"][0]["gpus"] = "8";
  EXPECT_THAT(checkAgainstSchema(doc(), cluster(), v),
              ElementsAre(HasSubstr("$.nodes[0].gpus: expected integer, got string")));
  v["nodes"][0]["gpus"] = 2.5;  // A number, not an integer.
  EXPECT_THAT(checkAgainstSchema(doc(), cluster(), v),
              ElementsAre(HasSubstr("$.nodes[0].gpus: expected integer, got number 2.5")));
  v["nodes"][0]["gpus"] = true;
  EXPECT_THAT(checkAgainstSchema(doc(), cluster(), v), SizeIs(1));
  v = goodCluster();
  v["nodes"] = json::object();
  EXPECT_THAT(checkAgainstSchema(doc(), cluster(), v),
              ElementsAre(HasSubstr("$.nodes: expected array, got object")));
  EXPECT_THAT(checkAgainstSchema(doc(), cluster(), json::array()),
              ElementsAre(HasSubstr("$: expected object, got array")));
}

TEST(OpenapiCheckTest, IntegersAndNumbers) {
  const json integer = {{"type", "integer"}};
  const json number = {{"type", "number"}};
  EXPECT_THAT(checkAgainstSchema(doc(), integer, json(4)), IsEmpty());
  EXPECT_THAT(checkAgainstSchema(doc(), integer, json(4u)), IsEmpty());
  EXPECT_THAT(checkAgainstSchema(doc(), integer, json(-4)), IsEmpty());
  EXPECT_THAT(checkAgainstSchema(doc(), integer, json(4.0)),
              IsEmpty());  // JSON has one number type.
  EXPECT_THAT(checkAgainstSchema(doc(), integer, json(4.5)), SizeIs(1));
  EXPECT_THAT(checkAgainstSchema(doc(), number, json(4.5)), IsEmpty());
  EXPECT_THAT(checkAgainstSchema(doc(), number, json(4)), IsEmpty());
  EXPECT_THAT(checkAgainstSchema(doc(), number, json("4")), SizeIs(1));
}

TEST(OpenapiCheckTest, CatchesMissingRequiredMembers) {
  json v = goodCluster();
  v.erase("status");
  v["nodes"][1].erase("gpus");
  EXPECT_THAT(checkAgainstSchema(doc(), cluster(), v),
              ElementsAre("$: lacks the required member \"status\"",
                          "$.nodes[1]: lacks the required member \"gpus\""));
}

TEST(OpenapiCheckTest, CatchesExtraMembersWhenAdditionalPropertiesIsFalse) {
  json v = goodCluster();
  v["surprise"] = 1;
  v["nodes"][0]["odd key"] = true;
  EXPECT_THAT(checkAgainstSchema(doc(), cluster(), v),
              UnorderedElementsAre("$.surprise: is not a documented member",
                                   "$.nodes[0][\"odd key\"]: is not a documented member"));
  // Without `additionalProperties: false` extra members are fine.
  EXPECT_THAT(checkAgainstSchema(doc(), json{{"type", "object"}}, json{{"x", 1}}), IsEmpty());
}

TEST(OpenapiCheckTest, ChecksAdditionalPropertiesAgainstASchema) {
  json v = goodCluster();
  v["slurmConf"]["KillWait"] = 30;
  EXPECT_THAT(checkAgainstSchema(doc(), cluster(), v),
              ElementsAre("$.slurmConf.KillWait: expected string, got integer 30"));
}

TEST(OpenapiCheckTest, CatchesBadEnumValues) {
  json v = goodCluster();
  v["status"] = "Sleeping";
  EXPECT_THAT(checkAgainstSchema(doc(), cluster(), v),
              ElementsAre("$.status: \"Sleeping\" is not one of [\"Creating\",\"Running\"]"));
}

TEST(OpenapiCheckTest, CatchesBadNestedItems) {
  json v = goodCluster();
  v["nodes"].push_back(json{{"name", ""}, {"gpus", 17}});
  v["nodes"].push_back("slinky-9");
  auto errors = checkAgainstSchema(doc(), cluster(), v);
  EXPECT_THAT(errors,
              UnorderedElementsAre(HasSubstr("$.nodes[2].name: is shorter than 1"),
                                   HasSubstr("$.nodes[2].name: \"\" does not match the pattern"),
                                   "$.nodes[2].gpus: 17 is above the maximum 16",
                                   HasSubstr("$.nodes[3]: expected object, got string")));
  v = goodCluster();
  v["nodes"][0]["gpus"] = -1;
  EXPECT_THAT(checkAgainstSchema(doc(), cluster(), v),
              ElementsAre("$.nodes[0].gpus: -1 is below the minimum 0"));
}

TEST(OpenapiCheckTest, NullNeedsNullable) {
  json v = goodCluster();
  v["nodes"][0]["load"] = 0.5;
  EXPECT_THAT(checkAgainstSchema(doc(), cluster(), v), IsEmpty());
  v["name"] = nullptr;
  EXPECT_THAT(checkAgainstSchema(doc(), cluster(), v),
              ElementsAre("$.name: is null, expected string"));
}

TEST(OpenapiCheckTest, Combinators) {
  json v = goodCluster();
  v["extra"] = 3;
  v["either"] = 3.5;
  v["both"] = 7;
  EXPECT_THAT(checkAgainstSchema(doc(), cluster(), v), IsEmpty());
  v["extra"] = true;
  EXPECT_THAT(checkAgainstSchema(doc(), cluster(), v),
              ElementsAre(HasSubstr("$.extra: matches none of oneOf")));
  v["extra"] = 3;
  v["either"] = "x";
  EXPECT_THAT(checkAgainstSchema(doc(), cluster(), v),
              ElementsAre(HasSubstr("$.either: matches none of anyOf")));
  v["either"] = 1;
  v["both"] = 4;
  EXPECT_THAT(checkAgainstSchema(doc(), cluster(), v),
              ElementsAre("$.both: 4 is below the minimum 5"));
  // oneOf means exactly one.
  json overlapping = {{"oneOf", json::array({{{"type", "integer"}}, {{"type", "number"}}})}};
  EXPECT_THAT(checkAgainstSchema(doc(), overlapping, json(2)),
              ElementsAre(HasSubstr("matches 2 branches of oneOf")));
  EXPECT_THAT(checkAgainstSchema(doc(), overlapping, json(2.5)), IsEmpty());
}

TEST(OpenapiCheckTest, UnresolvedRefsAndCyclesAreViolationsNotCrashes) {
  EXPECT_THAT(checkAgainstSchema(doc(), json{{"$ref", "#/components/schemas/Nope"}}, json(1)),
              ElementsAre("$: unresolved $ref #/components/schemas/Nope"));
  json cyclic =
      json::parse(R"({"components": {"schemas": {"A": {"$ref": "#/components/schemas/A"}}}})");
  EXPECT_THAT(checkAgainstSchema(cyclic, json{{"$ref", "#/components/schemas/A"}}, json(1)),
              ElementsAre(HasSubstr("nests too deeply")));
}

TEST(OpenapiCheckTest, MatchesConcretePathsToTemplates) {
  EXPECT_EQ(matchPath(doc(), "/api/v1/clusters/a"), "/api/v1/clusters/{name}");
  EXPECT_EQ(matchPath(doc(), "/api/v1/clusters/a?x=1"), "/api/v1/clusters/{name}");
  EXPECT_EQ(matchPath(doc(), "/api/v1/clusters/a/nodes/slinky-0"),
            "/api/v1/clusters/{name}/nodes/{node}");
  // A literal segment beats a parameter.
  EXPECT_EQ(matchPath(doc(), "/api/v1/clusters/a/jobs/history"),
            "/api/v1/clusters/{name}/jobs/history");
  EXPECT_EQ(matchPath(doc(), "/api/v1/clusters/a/jobs/42"), "/api/v1/clusters/{name}/jobs/{id}");
  EXPECT_EQ(matchPath(doc(), "/api/v1/clusters/"), std::nullopt);  // Empty segment.
  EXPECT_EQ(matchPath(doc(), "/api/v1/clusters/a/b"), std::nullopt);
  EXPECT_EQ(matchPath(doc(), "/api/v1/volumes"), std::nullopt);
}

TEST(OpenapiCheckTest, FindsResponseAndRequestSchemas) {
  const json* ok = responseSchema(doc(), "GET", "/api/v1/clusters/a", 200);
  ASSERT_NE(ok, nullptr);
  EXPECT_EQ((*ok)["$ref"], "#/components/schemas/Cluster");
  // 404 falls to the 4XX range, which is a $ref to a shared response.
  const json* missing = responseSchema(doc(), "get", "/api/v1/clusters/a", 404);
  ASSERT_NE(missing, nullptr);
  EXPECT_EQ((*missing)["$ref"], "#/components/schemas/Error");
  EXPECT_EQ(responseSchema(doc(), "GET", "/api/v1/clusters/a", 500), nullptr);
  EXPECT_EQ(responseSchema(doc(), "DELETE", "/api/v1/clusters/a", 200), nullptr);
  // `default` catches every status.
  EXPECT_NE(responseSchema(doc(), "POST", "/api/v1/clusters/a/nodes/x", 503), nullptr);
  const json* body = requestSchema(doc(), "POST", "/api/v1/clusters/{name}/nodes/{node}");
  ASSERT_NE(body, nullptr);
  EXPECT_EQ((*body)["$ref"], "#/components/schemas/Node");
  EXPECT_EQ(requestSchema(doc(), "GET", "/api/v1/clusters/{name}"), nullptr);
}

TEST(OpenapiCheckTest, ListsOperations) {
  auto ops = operations(doc());
  EXPECT_THAT(
      ops,
      ElementsAre(
          std::pair<std::string, std::string>("GET", "/api/v1/clusters/{name}"),
          std::pair<std::string, std::string>("GET", "/api/v1/clusters/{name}/jobs/history"),
          std::pair<std::string, std::string>("GET", "/api/v1/clusters/{name}/jobs/{id}"),
          std::pair<std::string, std::string>("POST", "/api/v1/clusters/{name}/nodes/{node}")));
}

TEST(OpenapiCheckTest, LintFindsProblemsOfTheDocumentItself) {
  EXPECT_THAT(lintDocument(doc()), IsEmpty());
  json bad = doc();
  bad["components"]["schemas"]["Node"]["requird"] = json::array();
  bad["components"]["schemas"]["Node"]["required"].push_back("nmae");
  bad["components"]["schemas"]["Cluster"]["properties"]["nodes"]["items"]["$ref"] =
      "#/components/schemas/Nod";
  bad["components"]["schemas"]["Cluster"]["properties"]["name"]["type"] = "str";
  bad["paths"]["/api/v1/clusters/{name}"]["get"]["responses"] = json::object();
  EXPECT_THAT(lintDocument(bad),
              ElementsAre(HasSubstr("Cluster/properties/name: bad type \"str\""),
                          HasSubstr("Cluster/properties/nodes/items: unresolved $ref"),
                          HasSubstr("Node: unknown schema keyword \"requird\""),
                          HasSubstr("Node: required \"nmae\" is not among its properties"),
                          "get /api/v1/clusters/{name}: no responses"));
}

}  // namespace
}  // namespace corral::testing_support
