// A deterministic fuzzing pass over every operation of src/api/openapi.json:
// malformed and deeply nested JSON, wrong types for every field, huge
// strings and bodies, odd bytes and path tricks in names, hostlists that
// expand to millions of nodes, absurd counts, bad query strings and bad
// tokens. Every answer must be a documented success or a JSON error with a
// 4xx status and a code that fits it, never a 5xx or no answer; a refused
// request must leave the store (and the volume directories) exactly as they
// were; and the server must still answer /healthz after each batch. Seeds
// are fixed, so a failure reproduces.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <regex>
#include <thread>

#include "support/api_harness.h"
#include "support/openapi_check.h"

namespace corral::testing_support {
namespace {

using nlohmann::json;
using ::testing::IsEmpty;

constexpr size_t kMaxBody = 1 << 20;

struct Request {
  std::string method;
  std::string path;
  std::string body;
  std::string token = ApiHarness::kAdmin;
};

std::string brief(const std::string& s, size_t n = 160) {
  std::string out;
  for (char c : s.substr(0, n)) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  if (s.size() > n) out += "...(" + std::to_string(s.size()) + " bytes)";
  return out;
}

// Sends requests to one harness and records every broken promise.
class Fuzzer {
 public:
  Fuzzer(ApiHarness& api, std::vector<std::string>& problems) : api_(api), problems_(problems) {}

  void send(const Request& r) {
    // The state before this request: what the last one left, unless it
    // succeeded (and so may have changed it).
    if (before_.is_null()) before_ = api_.snapshot();
    json before = std::move(before_);
    before_ = nullptr;
    auto start = std::chrono::steady_clock::now();
    Answer a = api_.send(r.method, r.path, r.body, r.token);
    auto took = std::chrono::steady_clock::now() - start;
    ++sent;
    std::string what =
        r.method + " " + brief(r.path) + (r.body.empty() ? "" : " body " + brief(r.body));
    // Not a benchmark: a hang detector, with room for a busy machine and a
    // debug build.
    if (took > std::chrono::seconds(5))
      problem(what + ": took " +
              std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()) +
              " ms");
    if (a.status == 0) return problem(what + ": no answer (did the server die?)");
    // Slurm printing nonsense is Slurm's trouble: 503 Unavailable is the
    // right answer then, any other 5xx never is.
    if (a.status >= 500 && !(notTheCallersFault && a.status == 503))
      return problem(what + ": " + std::to_string(a.status) + " " + brief(a.raw, 300));
    if (!a.body.is_object())
      return problem(what + ": " + std::to_string(a.status) +
                     " not a JSON object: " + brief(a.raw));
    const json& doc = openapiDocument();
    if (a.status >= 200 && a.status < 300) {
      const json* schema = responseSchema(doc, r.method, r.path, a.status);
      if (schema == nullptr)
        return problem(what + ": undocumented success " + std::to_string(a.status) + " " +
                       brief(a.raw));
      for (const auto& v : checkAgainstSchema(doc, *schema, a.body))
        problem(what + ": " + std::to_string(a.status) + " answer breaks the schema: " + v);
      acceptedAsDocumented(r, what);
      ++succeeded;
      return;
    }
    for (const auto& v : checkAgainstSchema(doc, doc["components"]["schemas"]["Error"], a.body))
      problem(what + ": error breaks the schema: " + v);
    std::string code;
    if (a.body.contains("error") && a.body["error"].is_object() &&
        a.body["error"].contains("code") && a.body["error"]["code"].is_string())
      code = a.body["error"]["code"];
    if (!codeFits(a.status, code))
      problem(what + ": status " + std::to_string(a.status) + " with code \"" + code + "\"");
    if (notTheCallersFault && a.status == 400)
      problem(what + ": 400 for a well-formed request: " + brief(a.raw, 300));
    json after = api_.snapshot();
    if (after != before)
      problem(what + ": refused with " + std::to_string(a.status) +
              " but changed the store: " + brief(json::diff(before, after).dump(), 600));
    before_ = std::move(after);
  }

  // The server still answers.
  void healthy(const std::string& after) {
    Answer h = api_.send("GET", "/healthz", "", "");
    if (h.status != 200)
      problem("after " + after + ": /healthz answered " + std::to_string(h.status));
  }

  int sent = 0;
  int succeeded = 0;
  // Requests that are well-formed, so that a 400 would blame the caller for
  // something else's fault.
  bool notTheCallersFault = false;

 private:
  void problem(const std::string& p) { problems_.push_back(p); }

  // A request the server accepted must be one the document allows: its
  // body (if the operation documents one) conforms to the request schema.
  void acceptedAsDocumented(const Request& r, const std::string& what) {
    const json& doc = openapiDocument();
    auto templ = matchPath(doc, r.path);
    if (!templ) return;
    const json* schema = requestSchema(doc, r.method, *templ);
    if (schema == nullptr) return;
    std::string m = r.method;
    for (char& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool required = doc["paths"][*templ][m]["requestBody"].value("required", false);
    if (r.body.empty()) {
      if (required) problem(what + ": accepted without the body the document requires");
      return;
    }
    json body = json::parse(r.body, nullptr, false);
    if (body.is_discarded()) return problem(what + ": accepted a body that is not JSON");
    for (const auto& v : checkAgainstSchema(doc, *schema, body, "request"))
      problem(what + ": accepted a body the document forbids: " + v);
  }
  ApiHarness& api_;
  json before_;  // Null: take a new snapshot.
  std::vector<std::string>& problems_;
};

// A random JSON value of depth at most `depth`.
json randomValue(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> kind(0, depth > 0 ? 9 : 7);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  static const std::vector<std::string> strings = {"",
                                                   "a",
                                                   "slinky-0",
                                                   "ALL",
                                                   "../../etc/passwd",
                                                   "a b",
                                                   "x\ny",
                                                   "\xC3\xA9",
                                                   "%00",
                                                   "a=b",
                                                   "MinJobAge",
                                                   "-1",
                                                   "1e3",
                                                   "{}",
                                                   std::string(300, 'z'),
                                                   "ssh-ed25519 AAAA"};
  switch (kind(rng)) {
    case 0:
      return nullptr;
    case 1:
      return pick(2) == 0;
    case 2:
      return static_cast<int64_t>(rng()) - static_cast<int64_t>(rng());
    case 3: {
      static const int64_t edges[] = {
          0, -1, 1, 2147483647, 2147483648LL, -2147483648LL, INT64_MAX, INT64_MIN, 999, 1000000};
      return edges[pick(10)];
    }
    case 4:
      return std::uniform_real_distribution<double>(-1e6, 1e6)(rng);
    case 5:
      return pick(2) == 0 ? json(1e300) : json(18446744073709551615ULL);
    case 6:
    case 7:
      return strings[static_cast<size_t>(pick(static_cast<int>(strings.size())))];
    case 8: {
      json a = json::array();
      for (int i = pick(4); i > 0; --i) a.push_back(randomValue(rng, depth - 1));
      return a;
    }
    default: {
      json o = json::object();
      for (int i = pick(4); i > 0; --i)
        o[strings[static_cast<size_t>(pick(static_cast<int>(strings.size())))]] =
            randomValue(rng, depth - 1);
      return o;
    }
  }
}

// Values of every JSON type, the edges of numbers and strings included.
std::vector<json> oddValues() {
  return {nullptr,
          true,
          false,
          0,
          -1,
          1.5,
          2147483648LL,
          INT64_MAX,
          INT64_MIN,
          18446744073709551615ULL,
          1e300,
          -1e300,
          "",
          "x",
          std::string(100 * 1024, 'a'),
          std::string("a\0b", 3),
          "\xC3\xA9\xE2\x9C\x93\xF0\x9D\x84\x9E",
          "a\nb",
          json::array(),
          json::array({1}),
          json::array({nullptr}),
          json::array({json::array()}),
          json::object(),
          json{{"a", 1}},
          json{{"", "x"}},
          json{{"MaxTime", "30\nNodes=ALL"}}};
}

const json& resolved(const json& schema) {
  if (schema.contains("$ref"))
    return openapiDocument().at(json::json_pointer(schema["$ref"].get<std::string>().substr(1)));
  return schema;
}

// A request body the operation accepts (given the population), that the
// fuzzer then breaks one field at a time.
json validBody(const std::string& operationId) {
  const std::string key = kTestSshKey;
  static const std::map<std::string, json> bodies = {
      {"createCluster",
       {{"name", "fz"},
        {"gpuNodes", 1},
        {"gpusPerNode", 1},
        {"cpuNodes", 0},
        {"sshKeys", {key}},
        {"project", "default"},
        {"containers",
         {{"registry", false}, {"cachePath", ""}, {"insecureRegistries", json::array()}}}}},
      {"scale", {{"gpuNodes", 4}, {"cpuNodes", 1}, {"force", false}}},
      {"createPartition",
       {{"name", "pz"}, {"nodes", "slinky-0"}, {"options", {{"MaxTime", "30"}}}}},
      {"updatePartition",
       {{"name", "p1"}, {"nodes", "slinky-[0-1]"}, {"options", {{"MaxTime", "30"}}}}},
      {"patchConfig", {{"set", {{"MinJobAge", "300"}}}, {"unset", json::array()}}},
      {"configDiff", {{"set", {{"MinJobAge", "60"}}}, {"unset", json::array()}}},
      {"setSshKeys", {{"sshKeys", {key}}}},
      {"clone", {{"name", "clonez"}}},
      {"createVolume", {{"name", "vz"}, {"type", "pfs"}, {"project", "default"}}},
      {"attachVolume", {{"volume", "scratch"}, {"path", "/scratch"}}},
      {"injectXid", {{"code", 79}}},
      {"addUser", {{"name", "zed"}, {"sshKeys", {key}}}},
  };
  auto it = bodies.find(operationId);
  return it == bodies.end() ? json::object() : it->second;
}

std::string concrete(const std::string& templ,
                     const std::map<std::string, std::string>& override = {}) {
  std::string p = templ;
  std::map<std::string, std::string> values = {
      {"{name}", p.rfind("/api/v1/volumes/", 0) == 0 ? "scratch" : "a"},
      {"{p}", "p1"},
      {"{volume}", "data"},
      {"{node}", "slinky-0"},
      {"{user}", "carol"},
      {"{id}", "40"}};
  for (const auto& [k, v] : override) values[k] = v;
  for (const auto& [k, v] : values)
    for (size_t at; (at = p.find(k)) != std::string::npos;) p.replace(at, k.size(), v);
  return p;
}

// Names to put where a path names something, percent-encoded as sent. All
// valid UTF-8 once decoded (see InvalidUtf8InPathsIsNotAServerError).
std::vector<std::string> oddNames() {
  return {"..",
          "%2e%2e",
          "%2E%2E%2Fetc%2Fpasswd",
          ".",
          "a%2fb",
          "%00",
          "a%00b",
          "%C3%A9t%C3%A9",
          "%F0%9F%98%80",
          std::string(10 * 1024, 'a'),
          "A",
          "-a",
          "a-",
          "a%20b",
          "a+b",
          "%25",
          "%",
          "%zz",
          "*",
          "a;b",
          "a%22b",
          "a%5Cb",
          "%0d%0aX-Injected:%201",
          "a%3Fx%3D1",
          "%23",
          "a.b",
          "slinky-[0-3]",
          "0"};
}

std::string nestedObjects(int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += "{\"a\":";
  return s + "1" + std::string(static_cast<size_t>(depth), '}');
}

// Bodies no operation accepts; cheap enough to send to every one.
std::vector<std::string> malformedBodies() {
  return {"",
          "{",
          "}",
          "[]",
          "null",
          "0",
          "\"x\"",
          "{\"a\":}",
          "{'a': 1}",
          "{\"name\": \"a\",}",
          "\xff\xfe",
          "{\"name\": \"\xc3\x28\"}",
          "{\"name\": \"a\"} trailing",
          "{\"gpuNodes\": NaN}",
          "{\"x\": 1e999}",
          "{\"name\": \"a\", \"name\": \"b\"}",
          "{\"\\u0000\": 1}",
          std::string(5000, '[') + std::string(5000, ']'),
          nestedObjects(5000),
          std::string(kMaxBody + 1, ' ')};
}

// Bodies that cost the server the most to refuse: nesting up to the body
// limit and strings as long as it allows.
std::vector<std::string> heavyBodies() {
  return {std::string(200000, '[') + std::string(200000, ']'),
          std::string(kMaxBody - 10, '['),
          nestedObjects(50000),
          "{\"name\": \"" + std::string(kMaxBody - 20, 'n') + "\"}",
          "[" +
              [] {
                std::string s;
                for (int i = 0; i < 200000; ++i) s += (i ? ",1" : "1");
                return s;
              }() +
              "]",
          std::string(kMaxBody, ' ') + "{}"};
}

std::vector<std::string> badQueries(const std::string& operationId) {
  std::vector<std::string> q = {"?x=%00", "?%00=1", "?a=1&a=2", "?force=maybe",
                                "?" + std::string(8000, 'q')};
  if (operationId == "listJobs" || operationId == "jobHistory") {
    for (const char* s :
         {"?offset=-1", "?offset=abc", "?offset=99999999999999999999", "?offset=2147483648",
          "?limit=0", "?limit=10001", "?limit=1e3", "?limit=", "?offset=%00", "?offset=+5",
          "?offset=%205", "?offset=0x10", "?limit=-0", "?limit=5&limit=6", "?user=%FF",
          "?state=PENDING,,RUNNING,", "?q=%25", "?offset=2147483647&limit=10000"})
      q.push_back(s);
    std::string states = "?state=";
    for (int i = 0; i < 2000; ++i) states += "R,";
    q.push_back(states);
    q.push_back("?q=" + std::string(300, 'x'));
  }
  if (operationId == "deletePartition")
    for (const char* s : {"?force=TRUE", "?force=1", "?force="}) q.push_back(s);
  return q;
}

// The operations, destructive ones last, with their ids.
std::vector<std::tuple<std::string, std::string, std::string>> orderedOperations() {
  std::vector<std::tuple<std::string, std::string, std::string>> out;
  for (const auto& [method, path] : operations(openapiDocument())) {
    std::string m = method;
    for (char& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.emplace_back(method, path, openapiDocument()["paths"][path][m].value("operationId", ""));
  }
  return out;
}

std::string report(const std::vector<std::string>& problems) {
  std::string out;
  for (size_t i = 0; i < problems.size() && i < 40; ++i) out += "\n  " + problems[i];
  if (problems.size() > 40) out += "\n  … and " + std::to_string(problems.size() - 40) + " more";
  return out;
}

TEST(ApiFuzzTest, EveryOperationSurvivesMalformedInput) {
  std::vector<std::string> problems;
  int total = 0;
  uint32_t seed = 20251130;
  for (const auto& [method, templ, id] : orderedOperations()) {
    ApiHarness api;  // Fresh for each operation, so each starts from the same state.
    Fuzzer f(api, problems);
    std::mt19937 rng(seed++);
    const std::string path = concrete(templ);
    bool hasBody = method != "GET";

    // Malformed, nested and oversized bodies.
    if (hasBody)
      for (const auto& body : malformedBodies()) f.send({method, path, body});

    // Every field of the body, wrong in every way; then random values.
    if (const json* schema = requestSchema(openapiDocument(), method, templ)) {
      const json& s = resolved(*schema);
      json base = validBody(id);
      for (auto prop = s["properties"].begin(); prop != s["properties"].end(); ++prop) {
        for (const json& v : oddValues()) {
          json body = base;
          body[prop.key()] = v;
          f.send({method, path, body.dump()});
        }
        for (int i = 0; i < 6; ++i) {
          json body = base;
          body[prop.key()] = randomValue(rng, 3);
          f.send({method, path, body.dump()});
        }
        json without = base;
        without.erase(prop.key());
        f.send({method, path, without.dump()});
      }
      json extra = base;
      extra["surprise"] = 1;
      f.send({method, path, extra.dump()});
      f.send({method, path, json::array({base}).dump()});
    }

    // Odd names wherever the path names something.
    static const std::regex param(R"(\{[^}]*\})");
    for (auto it = std::sregex_iterator(templ.begin(), templ.end(), param);
         it != std::sregex_iterator(); ++it)
      for (const auto& name : oddNames())
        f.send({method, concrete(templ, {{it->str(), name}}), hasBody ? validBody(id).dump() : ""});

    for (const auto& q : badQueries(id))
      f.send({method, path + q, hasBody ? validBody(id).dump() : ""});

    f.healthy(method + " " + templ);
    total += f.sent;
  }
  EXPECT_GT(total, 2000);
  EXPECT_THAT(problems, IsEmpty())
      << problems.size() << " problems in " << total << " requests:" << report(problems);
}

TEST(ApiFuzzTest, DeeplyNestedAndHugeBodiesAreRefused) {
  std::vector<std::string> problems;
  ApiHarness api;
  Fuzzer f(api, problems);
  // Every route reads its body the same way (`jsonBody`), so one will do.
  for (const auto& body : heavyBodies()) f.send({"POST", "/api/v1/clusters/a/partitions", body});
  f.healthy("heavy bodies");
  EXPECT_THAT(problems, IsEmpty()) << report(problems);
}

TEST(ApiFuzzTest, HostlistsThatExpandToMillionsAreRefused) {
  std::vector<std::string> problems;
  ApiHarness api;
  Fuzzer f(api, problems);
  std::vector<std::string> lists = {
      "slinky-[0-99999999]",
      "a[0-9999][0-9999]",
      "slinky-[0-65535]",
      "slinky-[0-65536]",
      "slinky-[0-9999999999999999999999]",
      "slinky-[18446744073709551615-18446744073709551616]",
      "[",
      "]",
      "slinky-[",
      "slinky-[5-1]",
      "slinky-[00-99999]",
      "slinky-[0-1",
      "slinky-[[0-1]]",
      "slinky-[-1-2]",
      "slinky-[0--1]",
      "slinky-[a-z]",
      "slinky-[0-1]x",
      "slinky-[0-1],,",
      ",",
      "slinky-[0-3]" + std::string(200, ' ') + "slinky-0",
      "slinky-0\nNodes=ALL",
      "ALL",
      "slinky-0 MaxTime=1",
      std::string(300, 'n'),
      "x[0-1]" + std::string(300, 'y'),
      "a[0-255][0-255][0-255]",
      "a[0-1][0-1][0-1][0-1][0-1][0-1][0-1][0-1][0-1][0-1][0-1][0-1][0-1][0-1][0-1][0-1][0-1][0-1]",
      [] {
        std::string s;
        for (int i = 0; i < 60000; ++i) s += (i ? "," : "") + std::string("slinky-0");
        return s;
      }(),
      [] {
        std::string s;
        for (int i = 0; i < 20000; ++i) s += (i ? "," : "") + std::string("x[0-9]");
        return s;
      }()};
  for (const auto& nodes : lists) {
    f.send(
        {"POST", "/api/v1/clusters/a/partitions", json{{"name", "pz"}, {"nodes", nodes}}.dump()});
    f.send({"PUT", "/api/v1/clusters/a/partitions/p1", json{{"nodes", nodes}}.dump()});
    f.send({"POST", "/api/v1/clusters",
            json{{"name", "hz"}, {"partitions", {{{"name", "q"}, {"nodes", nodes}}}}}.dump()});
  }
  f.healthy("hostlists");
  EXPECT_THAT(problems, IsEmpty()) << report(problems);
}

TEST(ApiFuzzTest, AbsurdCountsAreRefused) {
  std::vector<std::string> problems;
  ApiHarness api;
  Fuzzer f(api, problems);
  std::vector<std::string> counts = {"2147483648",
                                     "2147483647",
                                     "-1",
                                     "1e300",
                                     "-1e300",
                                     "9223372036854775807",
                                     "9223372036854775808",
                                     "18446744073709551616",
                                     "1.5",
                                     "100.0",
                                     "\"4\"",
                                     "null",
                                     "true",
                                     "1000001",
                                     "201",
                                     "9",
                                     "-2147483649"};
  for (const auto& n : counts) {
    for (const char* field : {"gpuNodes", "cpuNodes"}) {
      f.send({"POST", "/api/v1/clusters/a/scale", "{\"" + std::string(field) + "\": " + n + "}"});
      f.send({"POST", "/api/v1/clusters",
              "{\"name\": \"cz\", \"" + std::string(field) + "\": " + n + "}"});
    }
    f.send({"POST", "/api/v1/clusters", "{\"name\": \"cz\", \"gpusPerNode\": " + n + "}"});
    f.send({"POST", "/api/v1/clusters/a/nodes/slinky-0/inject-xid", "{\"code\": " + n + "}"});
  }
  // The largest count the scale route lets through to its own planning;
  // refusing it must not take the server seconds of work.
  f.send({"POST", "/api/v1/clusters/a/scale", R"({"gpuNodes": 1000000})"});
  f.healthy("counts");
  EXPECT_THAT(problems, IsEmpty()) << report(problems);
}

TEST(ApiFuzzTest, BadTokensAndRawRequestsAreRefused) {
  std::vector<std::string> problems;
  ApiHarness api;
  Fuzzer f(api, problems);
  std::mt19937 rng(7);
  std::string good = api.token("admin");
  std::vector<std::string> tokens = {"x",        std::string(10 * 1024, 't'),
                                     good + "x", good.substr(0, good.size() - 1),
                                     "corral_",  "corral_" + std::string(43, 'A')};
  std::string upper = good;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  tokens.push_back(upper);
  for (int i = 0; i < 20; ++i) {
    std::string t = "corral_";
    for (int j = 0; j < 43; ++j)
      t += "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[rng() % 64];
    tokens.push_back(t);
  }
  for (const auto& t : tokens)
    for (const char* p : {"/api/v1/whoami", "/api/v1/clusters", "/api/v1/clusters/a/jobs"})
      f.send({"GET", p, "", t});
  f.send({"POST", "/api/v1/clusters", R"({"name": "tz"})", "nope"});
  f.send({"DELETE", "/api/v1/clusters/a", "", "nope"});

  // What no well-behaved client sends. Each must get an error, the store
  // stay as it was, and the server keep serving.
  json before = api.snapshot();
  std::string auth = "Authorization: Bearer " + good + "\r\n";
  std::vector<std::string> raw = {
      "GET /api/v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: bearer " + good +
          "\r\nConnection: close\r\n\r\n",
      "GET /api/v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer  " + good +
          "\r\nConnection: close\r\n\r\n",
      "GET /api/v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer\r\nConnection: "
      "close\r\n\r\n",
      "GET /api/v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Basic YWRtaW46eA==\r\nConnection: "
      "close\r\n\r\n",
      // httplib reads such a body until the connection closes; a valid one
      // would be created, so this one is invalid either way.
      "POST /api/v1/clusters HTTP/1.1\r\nHost: x\r\n" + auth +
          "Connection: close\r\n\r\n{\"name\": \"R Z\"}",
      "POST /api/v1/clusters HTTP/1.1\r\nHost: x\r\n" + auth +
          "Content-Length: -1\r\nConnection: close\r\n\r\n{}",
      "POST /api/v1/clusters HTTP/1.1\r\nHost: x\r\n" + auth +
          "Content-Length: abc\r\nConnection: close\r\n\r\n{}",
      "POST /api/v1/clusters HTTP/1.1\r\nHost: x\r\n" + auth +
          "Content-Length: 99999999999999999999\r\nConnection: close\r\n\r\n{}",
      "POST /api/v1/clusters HTTP/1.1\r\nHost: x\r\n" + auth +
          "Content-Length: 2000000\r\nConnection: close\r\n\r\n{}",
      "POST /api/v1/clusters HTTP/1.1\r\nHost: x\r\n" + auth +
          "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
      "POST /api/v1/clusters HTTP/1.1\r\nHost: x\r\n" + auth +
          "Transfer-Encoding: chunked\r\nConnection: "
          "close\r\n\r\nFFFFFFFFFFFFFFFF\r\n{}\r\n0\r\n\r\n",
      "GET /api/v1/clusters/a" + std::string(1, '\0') + "b HTTP/1.1\r\nHost: x\r\n" + auth +
          "Connection: close\r\n\r\n",
      "GET /api/v1/clusters/../../etc/passwd HTTP/1.1\r\nHost: x\r\n" + auth +
          "Connection: close\r\n\r\n",
      "GET /api/v1/clusters/a HTTP/1.1\r\nHost: x\r\n" + auth +
          "X-Big: " + std::string(20000, 'h') + "\r\nConnection: close\r\n\r\n",
      "BREW /api/v1/clusters HTTP/1.1\r\nHost: x\r\n" + auth + "Connection: close\r\n\r\n",
      "GET /api/v1/clusters\r\n\r\n",
      "garbage\r\n\r\n",
  };
  for (const auto& r : raw) {
    Answer a = api.sendRaw(r, /*timeoutMs=*/300);
    std::string what = "raw " + brief(r, 120);
    // Closing the connection is a fair answer to garbage, and waiting for
    // the rest of a body a request announced is what HTTP asks for.
    if (a.status == 0) continue;
    if (a.status >= 500)
      problems.push_back(what + ": " + std::to_string(a.status) + " " + brief(a.raw));
    if (a.status >= 200 && a.status < 300 && r.rfind("GET /api/v1/whoami", 0) != 0)
      problems.push_back(what + ": accepted with " + std::to_string(a.status));
  }
  json after = api.snapshot();
  EXPECT_EQ(after, before) << "raw requests changed the store: "
                           << json::diff(before, after).dump();
  f.healthy("raw requests");
  EXPECT_THAT(problems, IsEmpty()) << report(problems);
}

// A node's health report is written inside its pod, where the cluster's
// users are root: whatever it holds, the node views must stay documented
// answers (malformed parts read as "unknown", not as a 500 or passed on).
TEST(ApiFuzzTest, MalformedHealthReportsAreNotServerErrors) {
  std::vector<std::string> problems;
  ApiHarness api;
  Fuzzer f(api, problems);
  const std::vector<std::string> reports = {
      "not json",
      "[]",
      "null",
      R"({"slurmd": 5})",
      R"({"slurmd": "ok", "gpu": null})",
      R"({"slurmd": "ok", "gpu": "ok", "xids": "nope"})",
      R"({"slurmd": "ok", "xids": [1, "x", null]})",
      R"({"slurmd": "ok", "xids": [{"code": "79"}]})",
      R"({"slurmd": "ok", "xids": [{"time": 1, "code": 79, "pci": "p", "class": "bogus", "description": "d", "action": "a", "line": "l", "extra": 1}]})",
      "{\"slurmd\": \"ok\", \"node\": \"\xff\"}",
      std::string(100000, '[')};
  for (const auto& report : reports) {
    api.runtime.putPodFile("a", "slinky-0", "/run/corral/health.json", report);
    f.send({"GET", "/api/v1/clusters/a/nodes", ""});
    f.send({"GET", "/api/v1/clusters/a/nodes/slinky-0", ""});
  }
  f.healthy("health reports");
  EXPECT_THAT(problems, IsEmpty()) << report(problems);
}

// What Slurm prints is not the caller's input: output corrald cannot use
// must not be blamed on the request (400) nor be a 500, whether it is read
// for the request itself or, once cached, by the background refresh (where
// an exception would end corrald, hence the child process).
std::vector<std::string> unexpectedSlurmOutputPass() {
  std::vector<std::string> problems;
  const std::vector<std::string> outputs = {
      "not json",
      "",
      "[]",
      R"({"jobs": "x"})",
      R"({"jobs": [1, null, "x"]})",
      R"({"jobs": [{"job_id": "abc", "name": 5, "job_state": [1]}]})",
      R"({"jobs": [{"job_id": 1e300, "node_count": -1e300, "submit_time": 1.5}]})",
      R"({"jobs": [{"job_id": 1, "time_limit": {"set": "x", "infinite": "yes", "number": 5}}]})",
      R"({"jobs": [{"job_id": 1, "exit_code": {"return_code": "x", "signal": {"signal_id": []}}}]})",
      R"({"jobs": [{"job_id": 1, "array": {"job_id": {"infinite": 1}}, "state": {"current": {}}, "time": []}]})",
      R"({"jobs": [{"job_id": 1, "tres": {"allocated": [{"type": "cpu", "count": {"number": "2"}}]}}]})"};
  for (const auto& out : outputs) {
    auto owned = std::make_unique<ApiHarness>();
    ApiHarness& api = *owned;
    api.setReadTimeout(std::chrono::seconds(3));
    size_t before = problems.size();
    Fuzzer f(api, problems);
    f.notTheCallersFault = true;
    // Cold: the request waits for this very read.
    api.runtime.setExecHandler(
        [out](const std::string&, const std::string&, const std::vector<std::string>& argv) {
          ProcessResult r;
          r.exitCode = 0;
          if (argv.size() > 1 && argv[1] == "--json") r.out = out;
          return StatusOr<ProcessResult>(r);
        });
    f.send({"GET", "/api/v1/clusters/a/jobs", ""});
    f.send({"GET", "/api/v1/clusters/a/jobs/history", ""});
    f.send({"GET", "/api/v1/clusters/a/jobs/1", ""});
    // Stale: served from the cache while the refresher reads it again.
    api.clock.advance(5000);
    f.send({"GET", "/api/v1/clusters/a/jobs", ""});
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // Let the refresher run.
    f.healthy("squeue printing " + brief(out, 60));
    // A request that never came back holds a server thread for good, and
    // stopping the server would wait for it: leave this one be (the pass
    // runs in a child process that ends without cleaning up).
    for (size_t i = before; i < problems.size(); ++i)
      if (problems[i].find("no answer") != std::string::npos) {
        (void)owned.release();
        break;
      }
  }
  for (auto& p : problems) p = "(bad Slurm output) " + p;
  return problems;
}

TEST(ApiFuzzTest, UnexpectedSlurmOutputIsNeitherACallerErrorNorAServerError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(60);  // A hang (a request that never returns) ends the child too.
        std::vector<std::string> problems = unexpectedSlurmOutputPass();
        std::fprintf(stderr, "%zu problems:%s\n", problems.size(), report(problems).c_str());
        std::_Exit(problems.empty() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "")
      << "the pass found problems, or corrald crashed (a signal) or hung (SIGALRM); its output "
         "is above";
}

// A request refused before its body was read (no token) must not leave the
// body in the connection, where the server would parse it as the next
// request: behind a proxy that shares connections, that would let one
// client's body become a request of its own (HTTP request smuggling).
TEST(ApiFuzzTest, ABodyLeftUnreadIsNotTakenForTheNextRequest) {
  ApiHarness api;
  RawConnection c(api.port(), /*timeoutMs=*/2000);
  // The body is itself a request, as a smuggler would send it.
  std::string smuggled = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  // As clients send it: the head, then the body in a write of its own. A
  // server may answer before the body comes (it must then skip the body or
  // close the connection) or wait for it.
  ASSERT_TRUE(
      c.write("POST /api/v1/clusters HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              "Content-Length: " +
              std::to_string(smuggled.size()) + "\r\n\r\n"));
  Answer early = c.read(/*timeoutMs=*/300);
  if (!c.write(smuggled)) return;  // Closed: fine.
  Answer refused = early.status != 0 ? early : c.read();
  EXPECT_EQ(refused.status, 401) << brief(refused.wire, 1000);
  // The client, having its answer, sends its next request on the same
  // connection. The server must answer that one (or have closed the
  // connection), not the body of the first.
  std::string auth = "Authorization: Bearer " + api.token("admin") + "\r\n";
  if (!c.write("GET /api/v1/whoami HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n")) return;
  Answer next = c.read();
  if (next.status == 0) return;  // Closed: fine.
  EXPECT_EQ(next.status, 200) << "the body of a refused request was answered as a request:\n"
                              << brief(next.wire, 1000);
  EXPECT_TRUE(next.body.is_object() && next.body.contains("user")) << brief(next.wire, 1000);
}

// Names that are not UTF-8 once percent-decoded (%FF) reach the routes as
// raw bytes. Quoting them back in an error must give a JSON error, not a 500
// and not an exception that escapes httplib's handlers (which ends the
// process: the error handler is not guarded). No token is needed for paths
// outside /api/, so there a crash would be anyone's to cause.
std::vector<std::string> invalidUtf8Pass() {
  std::vector<std::string> problems;
  ApiHarness api;
  Fuzzer f(api, problems);
  const std::vector<std::string> names = {"%FF", "a%C3%28", "%ED%A0%80", "%C0%AE%C0%AE", "a%80"};
  static const std::regex param(R"(\{[^}]*\})");
  for (const auto& name : names) {
    f.send({"GET", "/" + name, "", ""});
    f.send({"GET", "/console/" + name, "", ""});
    f.send({"GET", "/api/v1/" + name, ""});
  }
  for (const auto& [method, templ, id] : orderedOperations())
    for (auto it = std::sregex_iterator(templ.begin(), templ.end(), param);
         it != std::sregex_iterator(); ++it)
      for (const auto& name : names)
        f.send({method, concrete(templ, {{it->str(), name}}),
                method == "GET" ? "" : validBody(id).dump()});
  f.send({"GET", "/api/v1/clusters/a/jobs?user=%FF&q=%FF&state=%FF", ""});
  f.healthy("invalid UTF-8");
  return problems;
}

TEST(ApiFuzzTest, InvalidUtf8InPathsIsNotAServerError) {
  // In a child process (gtest's death-test machinery), so that a server
  // that aborts fails this test instead of ending the whole test binary.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(60);  // A hang (a request that never returns) ends the child too.
        std::vector<std::string> problems = invalidUtf8Pass();
        std::fprintf(stderr, "%zu problems:%s\n", problems.size(), report(problems).c_str());
        std::_Exit(problems.empty() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "")
      << "the pass found problems or the server crashed; its output is above";
}

}  // namespace
}  // namespace corral::testing_support
