#pragma once

// A checker for the part of JSON Schema that OpenAPI 3.0 documents use, so
// that tests can hold corrald's real answers against `src/api/openapi.json`.
// It knows `type` (with `integer` apart from `number`), `nullable`,
// `properties`, `required`, `additionalProperties` (a boolean or a schema),
// `items`, `enum`, `$ref` (JSON pointers into the document, such as
// `#/components/schemas/Cluster`), `oneOf`/`anyOf`/`allOf`,
// `minimum`/`maximum` (and OpenAPI 3.0's boolean `exclusiveMinimum`/
// `exclusiveMaximum`), `minLength`/`maxLength`, `minItems`/`maxItems`,
// `pattern` and `minProperties`/`maxProperties`. `format`, `description`,
// `example` and the other annotations are ignored. As in OpenAPI 3.0, the
// siblings of a `$ref` are ignored.
//
// Everything here is pure, thread-safe and throws nothing; a malformed
// schema is reported as a violation rather than an exception.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace corral::testing_support {

// The ways `value` breaks `schema`, one line each, every line starting with
// the JSON path of the offending member ("$.clusters[0].status: …"). An empty
// result means the value conforms. `doc` is the whole OpenAPI document, for
// resolving `$ref`s; `path` names `value` in the messages.
std::vector<std::string> checkAgainstSchema(const nlohmann::json& doc, const nlohmann::json& schema,
                                            const nlohmann::json& value,
                                            const std::string& path = "$");

// The templated path of `doc` ("/api/v1/clusters/{name}/nodes/{node}") that a
// concrete one ("/api/v1/clusters/a/nodes/slinky-0", query string allowed)
// matches, or nullopt. A `{param}` matches one non-empty segment; where
// several templates match, the one with the most literal segments wins, so
// `/jobs/history` is not taken for `/jobs/{id}`.
std::optional<std::string> matchPath(const nlohmann::json& doc, const std::string& concretePath);

// The schema of the `application/json` answer that `doc` documents for
// `method` ("GET", any case) on `concretePath` with HTTP `status`: the
// response for that exact status, else its class ("4XX"), else `default`.
// nullptr when the path, the operation or such a response is not documented.
// The pointer refers into `doc` (and may be a `$ref`).
const nlohmann::json* responseSchema(const nlohmann::json& doc, const std::string& method,
                                     const std::string& concretePath, int status);

// The schema of the `application/json` request body of the operation, or
// nullptr when it takes none.
const nlohmann::json* requestSchema(const nlohmann::json& doc, const std::string& method,
                                    const std::string& templatedPath);

// The problems of the document itself: `$ref`s that resolve to nothing,
// schema keywords this checker does not know (a typo such as `requird` would
// otherwise check nothing), `required` names that are not among an object's
// `properties` when `additionalProperties` is false, and operations without
// responses. Empty when the document is sound.
std::vector<std::string> lintDocument(const nlohmann::json& doc);

// Every (METHOD, templated path) pair of `doc`, methods upper-case.
std::vector<std::pair<std::string, std::string>> operations(const nlohmann::json& doc);

}  // namespace corral::testing_support
