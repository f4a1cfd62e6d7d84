// corrald's answers against its own OpenAPI document (src/api/openapi.json):
// every route of src/api is in the document and every operation of the
// document is called, successfully and with its documented errors, on a
// realistic population (see test/support/api_harness.h); each answer's body
// is checked against the schema the document gives for its method, path and
// status. An answer whose status the document does not list fails too.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "support/api_harness.h"
#include "support/openapi_check.h"

namespace corral::testing_support {
namespace {

using nlohmann::json;
using ::testing::IsEmpty;

constexpr size_t kMaxBody = 1 << 20;

constexpr const char* kOtherKey =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMxZgP62Li7d1LTEBDNuh75IrP8c8RRx0Noyqk6unAPc me";

// "/api/v1/clusters/{name}" -> "/api/v1/clusters/{}", to compare paths
// whatever their parameters are called.
std::string shape(const std::string& path) {
  static const std::regex param(R"(\{[^}]*\})");
  return std::regex_replace(path, param, "{}");
}

// Every JSON route src/api registers, as (METHOD, shape), read from the
// sources: `get(kCluster + "/scale", …` (ApiServer's authenticated
// helpers), `http_->Get(R"(…)", …` and the like.
std::set<std::pair<std::string, std::string>> routesInSources() {
  std::set<std::pair<std::string, std::string>> out;
  static const std::regex route(
      R"re((?:^|[\s;{(])(?:http_->)?(Get|Post|Put|Patch|Delete|get|post|put|patch|del)\(\s*(kCluster\s*\+\s*)?(R"\(([\s\S]*?)\)"|"([^"]*)"))re");
  static const std::regex group(R"(\([^)]*\))");
  for (const auto& entry : std::filesystem::directory_iterator(sourceDir() / "src" / "api")) {
    if (entry.path().extension() != ".cc") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    for (auto it = std::sregex_iterator(s.begin(), s.end(), route); it != std::sregex_iterator();
         ++it) {
      std::string method = (*it)[1];
      for (char& c : method) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (method == "DEL") method = "DELETE";
      std::string path = (*it)[4].matched ? (*it)[4].str() : (*it)[5].str();
      if ((*it)[2].matched) path = "/api/v1/clusters/([^/]+)" + path;
      path = std::regex_replace(path, group, "{}");
      // The console's files are HTML and scripts, not part of the API.
      if (path.rfind("/api/", 0) != 0 && path != "/healthz") continue;
      out.emplace(method, path);
    }
  }
  return out;
}

class OpenapiContractTest : public ::testing::Test {
 protected:
  const json& doc() { return openapiDocument(); }

  // Sends the request, expects `status`, and checks the answer against the
  // document. Returns the answer for further checks.
  Answer expect(const std::string& method, const std::string& path, const std::string& body,
                int status, const std::string& token = ApiHarness::kAdmin) {
    Answer a = api_.send(method, path, body, token);
    std::string what = method + " " + path + (body.empty() ? "" : " " + body.substr(0, 200));
    EXPECT_EQ(a.status, status) << what << " -> " << a.raw.substr(0, 2000);
    conforms(method, path, a, what);
    return a;
  }

  void conforms(const std::string& method, const std::string& path, const Answer& a,
                const std::string& what) {
    ASSERT_NE(a.status, 0) << what << ": no answer";
    EXPECT_NE(a.status, 500) << what << " -> " << a.raw.substr(0, 2000);
    EXPECT_FALSE(a.body.is_discarded()) << what << ": not JSON: " << a.raw.substr(0, 200);
    EXPECT_EQ(a.contentType, "application/json") << what;
    auto templ = matchPath(doc(), path);
    ASSERT_TRUE(templ.has_value()) << what << ": the document has no such path";
    seen_[{method, *templ}].insert(a.status);
    const json* schema = responseSchema(doc(), method, path, a.status);
    ASSERT_NE(schema, nullptr) << what << ": the document lists no " << a.status << " answer for "
                               << method << " " << *templ << "; got " << a.raw.substr(0, 500);
    EXPECT_THAT(checkAgainstSchema(doc(), *schema, a.body), IsEmpty())
        << what << " -> " << a.status << " " << a.raw.substr(0, 4000);
    if (a.status >= 400 && a.body.is_object() && a.body.contains("error") &&
        a.body["error"].is_object() && a.body["error"].contains("code") &&
        a.body["error"]["code"].is_string()) {
      EXPECT_TRUE(codeFits(a.status, a.body["error"]["code"]))
          << what << ": status " << a.status << " with code " << a.body["error"].dump();
    }
  }

  // A concrete path for a templated one, naming things that exist.
  static std::string concrete(const std::string& templ) {
    std::string p = templ;
    auto put = [&](const std::string& param, const std::string& value) {
      for (size_t at; (at = p.find(param)) != std::string::npos;)
        p.replace(at, param.size(), value);
    };
    if (p.rfind("/api/v1/volumes/", 0) == 0) put("{name}", "data");
    put("{image}", "debian13-slurm24.11");
    put("{name}", "a");
    put("{p}", "p1");
    put("{volume}", "data");
    put("{node}", "slinky-0");
    put("{user}", "carol");
    put("{id}", "40");
    return p;
  }

  ApiHarness api_;
  std::map<std::pair<std::string, std::string>, std::set<int>> seen_;
};

TEST_F(OpenapiContractTest, TheDocumentIsSound) {
  EXPECT_EQ(doc()["openapi"], "3.0.3");
  EXPECT_THAT(lintDocument(doc()), IsEmpty());
  EXPECT_EQ(doc()["security"], json::parse(R"([{"bearerAuth": []}])"));
  EXPECT_EQ(doc()["components"]["securitySchemes"]["bearerAuth"]["scheme"], "bearer");
  EXPECT_EQ(doc()["paths"]["/healthz"]["get"]["security"], json::array());
  // Every operation has an id, unique, and every path parameter is declared.
  std::set<std::string> ids;
  for (const auto& [method, path] : operations(doc())) {
    std::string m = method;
    for (char& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const json& op = doc()["paths"][path][m];
    ASSERT_TRUE(op.contains("operationId")) << method << " " << path;
    EXPECT_TRUE(ids.insert(op["operationId"].get<std::string>()).second) << op["operationId"];
    std::set<std::string> declared;
    for (const auto& p : op.value("parameters", json::array())) {
      const json* param = &p;
      if (p.contains("$ref"))
        param = &doc().at(json::json_pointer(p["$ref"].get<std::string>().substr(1)));
      if (param->value("in", "") == "path") declared.insert(param->value("name", ""));
    }
    std::set<std::string> inPath;
    static const std::regex name(R"(\{([^}]*)\})");
    for (auto it = std::sregex_iterator(path.begin(), path.end(), name);
         it != std::sregex_iterator(); ++it)
      inPath.insert((*it)[1]);
    EXPECT_EQ(declared, inPath) << method << " " << path;
    // Every operation under /api/ may answer 401.
    if (path.rfind("/api/", 0) == 0) {
      EXPECT_TRUE(op["responses"].contains("401")) << method << " " << path;
    }
  }
}

TEST_F(OpenapiContractTest, TheDocumentHasEveryRouteAndNothingElse) {
  auto routes = routesInSources();
  ASSERT_GT(routes.size(), 30u) << "reading the routes from src/api/*.cc found too few";
  std::set<std::pair<std::string, std::string>> documented;
  for (const auto& [method, path] : operations(doc())) documented.emplace(method, shape(path));
  for (const auto& r : routes)
    EXPECT_TRUE(documented.count(r))
        << r.first << " " << r.second << " is served but not documented";
  for (const auto& d : documented)
    EXPECT_TRUE(routes.count(d)) << d.first << " " << d.second << " is documented but not served";
}

TEST_F(OpenapiContractTest, ServesTheDocument) {
  Answer a = expect("GET", "/api/v1/openapi.json", "", 200);
  EXPECT_EQ(a.body, doc()) << "GET /api/v1/openapi.json is not src/api/openapi.json";
  expect("GET", "/api/v1/openapi.json", "", 401, "");
}

TEST_F(OpenapiContractTest, EveryOperationAnswersAsDocumented) {
  // A cluster in a status that allows almost nothing, for the 409s.
  {
    ClusterRecord gone;
    gone.spec.name = "gone";
    gone.spec.gpuNodes = 1;
    gone.status = ClusterStatus::kDeleted;
    gone.project = kDefaultProject;
    gone.revision = gone.appliedRevision = 1;
    ASSERT_TRUE(api_.store.createCluster(gone).isOk());
  }
  const std::string alice = api_.token("alice"), bob = api_.token("bob");
  const std::string key = json(kTestSshKey).dump(), other = json(kOtherKey).dump();

  // ---- Unauthenticated: every operation under /api/ ------------------------
  for (const auto& [method, path] : operations(doc())) {
    if (path.rfind("/api/", 0) != 0) continue;
    expect(method, concrete(path), method == "GET" || method == "DELETE" ? "" : "{}", 401, "");
    expect(method, concrete(path), "", 401, "corral_notAToken");
  }

  // ---- Meta ----------------------------------------------------------------
  expect("GET", "/healthz", "", 200, "");
  Answer me = expect("GET", "/api/v1/whoami", "", 200);
  EXPECT_EQ(me.body["admin"], true);
  Answer alicesView = expect("GET", "/api/v1/whoami", "", 200, alice);
  EXPECT_EQ(alicesView.body["projects"], json::array({"team-a"}));
  expect("GET", "/api/v1/openapi.json", "", 200);
  expect("GET", "/api/v1/slurm-params", "", 200);

  // ---- Jobs and metrics (before changes make "a" busy) ----------------------
  Answer jobs = expect("GET", "/api/v1/clusters/a/jobs", "", 200);
  EXPECT_EQ(jobs.body["total"], 2) << jobs.raw;  // The COMPLETED one is history.
  expect("GET",
         "/api/v1/clusters/a/"
         "jobs?state=running,PENDING&user=carol&partition=p1&q=tra&offset=0&limit=1",
         "", 200);
  expect("GET", "/api/v1/clusters/a/jobs?limit=0", "", 200);
  expect("GET", "/api/v1/clusters/a/jobs?offset=-1", "", 400);
  expect("GET", "/api/v1/clusters/a/jobs?limit=10001", "", 400);
  expect("GET", "/api/v1/clusters/a/jobs?limit=ten", "", 400);
  expect("GET", "/api/v1/clusters/old/jobs", "", 409);
  expect("GET", "/api/v1/clusters/idle/jobs", "", 503);
  expect("GET", "/api/v1/clusters/nosuch/jobs", "", 404);
  expect("GET", "/api/v1/clusters/bee/jobs", "", 404, alice);
  Answer history = expect("GET", "/api/v1/clusters/a/jobs/history", "", 200);
  EXPECT_EQ(history.body["total"], 2) << history.raw;
  expect("GET", "/api/v1/clusters/a/jobs/history?state=FAILED", "", 200);
  expect("GET", "/api/v1/clusters/a/jobs/history?offset=x", "", 400);
  expect("GET", "/api/v1/clusters/old/jobs/history", "", 409);
  expect("GET", "/api/v1/clusters/idle/jobs/history", "", 503);
  expect("GET", "/api/v1/clusters/nosuch/jobs/history", "", 404);
  Answer job = expect("GET", "/api/v1/clusters/a/jobs/40", "", 200);
  EXPECT_EQ(job.body["source"], "queue");
  EXPECT_EQ(expect("GET", "/api/v1/clusters/a/jobs/30", "", 200).body["source"], "history");
  expect("GET", "/api/v1/clusters/a/jobs/43", "", 200);  // An array task.
  expect("GET", "/api/v1/clusters/a/jobs/99", "", 404);
  expect("GET", "/api/v1/clusters/a/jobs/x", "", 404);
  expect("GET", "/api/v1/clusters/old/jobs/40", "", 409);
  expect("GET", "/api/v1/clusters/idle/jobs/40", "", 503);
  // The recorder samples every Running cluster as it starts; wait for it.
  Answer metrics;
  for (int i = 0; i < 400; ++i) {
    metrics = api_.send("GET", "/api/v1/clusters/a/metrics");
    if (metrics.status != 200 || !metrics.body["samples"].empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  conforms("GET", "/api/v1/clusters/a/metrics", metrics, "GET metrics");
  ASSERT_FALSE(metrics.body["samples"].empty()) << metrics.raw;
  EXPECT_EQ(metrics.body["samples"][0]["jobs"], json::parse(R"({"pending": 1, "running": 1})"));
  expect("GET", "/api/v1/clusters/old/metrics", "", 200);
  expect("GET", "/api/v1/clusters/nosuch/metrics", "", 404);

  // ---- Reading -------------------------------------------------------------
  Answer all = expect("GET", "/api/v1/clusters", "", 200);
  EXPECT_EQ(all.body["clusters"].size(), 6u);
  EXPECT_EQ(expect("GET", "/api/v1/clusters", "", 200, alice).body["clusters"].size(), 0u);
  EXPECT_EQ(expect("GET", "/api/v1/clusters", "", 200, bob).body["clusters"].size(), 1u);
  for (const char* c : {"a", "idle", "old", "creating", "bee", "gone"}) {
    std::string base = std::string("/api/v1/clusters/") + c;
    expect("GET", base, "", 200);
    expect("GET", base + "/events", "", 200);
    expect("GET", base + "/revisions", "", 200);
    expect("GET", base + "/partitions", "", 200);
    expect("GET", base + "/config", "", 200);
    expect("GET", base + "/nodes", "", 200);
    expect("GET", base + "/users", "", 200);
  }
  Answer revisions = expect("GET", "/api/v1/clusters/a/revisions", "", 200);
  EXPECT_EQ(revisions.body["revisions"][1]["state"], "Failed");
  EXPECT_EQ(revisions.body["revisions"][2]["author"], "corral");
  EXPECT_EQ(revisions.body["revisions"][2]["rollback"], true);
  EXPECT_EQ(revisions.body["revisions"][1]["rollback"], false);
  // Events filtered on what they are about.
  Answer ofRevision = expect("GET", "/api/v1/clusters/a/events?revision=2", "", 200);
  ASSERT_EQ(ofRevision.body["events"].size(), 2u);
  EXPECT_EQ(ofRevision.body["events"][0]["reason"], "ChangeRequested");
  EXPECT_EQ(ofRevision.body["events"][1]["reason"], "ChangeFailed");
  EXPECT_EQ(ofRevision.body["events"][1]["revision"], 2);
  Answer ofNode = expect("GET", "/api/v1/clusters/a/events?node=slinky-1", "", 200);
  ASSERT_EQ(ofNode.body["events"].size(), 1u);
  EXPECT_EQ(ofNode.body["events"][0]["reason"], "PodRestarted");
  EXPECT_EQ(ofNode.body["events"][0]["node"], "slinky-1");
  EXPECT_EQ(expect("GET", "/api/v1/clusters/a/events?node=slinky-1&revision=2", "", 200)
                .body["events"].size(), 0u);
  for (const char* bad : {"x", "0", "-1", "2x", ""})
    expect("GET", std::string("/api/v1/clusters/a/events?revision=") + bad, "", 400);
  Answer nodes = expect("GET", "/api/v1/clusters/a/nodes", "", 200);
  EXPECT_EQ(nodes.body["nodes"][0]["health"], "GPU XID");
  EXPECT_EQ(nodes.body["nodes"][1]["health"], "slurmd not running");
  EXPECT_EQ(nodes.body["nodes"][2]["health"], "unknown");
  Answer slinky0 = expect("GET", "/api/v1/clusters/a/nodes/slinky-0", "", 200);
  ASSERT_EQ(slinky0.body["history"].size(), 1u) << "the node's events, by their node field";
  EXPECT_EQ(slinky0.body["history"][0]["reason"], "GpuXid");
  expect("GET", "/api/v1/clusters/a/nodes/cpu-workers-0", "", 200);
  expect("GET", "/api/v1/clusters/a/nodes/nope", "", 404);
  for (const char* sub : {"", "/events", "/revisions", "/partitions", "/config", "/nodes", "/users",
                          "/nodes/slinky-0"}) {
    expect("GET", std::string("/api/v1/clusters/nosuch") + sub, "", 404);
    expect("GET", std::string("/api/v1/clusters/a") + sub, "", 404, alice);  // Another project's.
  }
  expect("GET", "/api/v1/clusters/bee", "", 200, bob);
  expect("GET", "/api/v1/volumes", "", 200);
  EXPECT_EQ(expect("GET", "/api/v1/volumes", "", 200, bob).body["volumes"].size(), 1u);
  Answer data = expect("GET", "/api/v1/volumes/data", "", 200);
  EXPECT_EQ(data.body["attachedTo"], json::array({"a:/data"}));
  expect("GET", "/api/v1/volumes/nosuch", "", 404);
  expect("GET", "/api/v1/volumes/bvol", "", 404, alice);

  // ---- Clusters ------------------------------------------------------------
  const std::string clusters = "/api/v1/clusters";
  Answer created = expect(
      "POST", clusters,
      R"({"name": "new1", "gpuNodes": 2, "gpusPerNode": 4, "cpuNodes": 1, "sshKeys": [)" + key +
          R"(], "containers": {"registry": true, "insecureRegistries": ["reg.local:5000"]}})",
      201);
  EXPECT_EQ(created.body["status"], "Creating");
  expect("POST", clusters, R"({"name": "new1"})", 409);
  expect("POST", clusters, R"({"name": "new1"})", 409, bob);  // Taken, by someone else.
  expect("POST", clusters, R"({"name": "Bad_Name"})", 400);
  expect("POST", clusters, R"({"name": "n2", "gpuNode": 2})", 400);
  expect("POST", clusters, R"({"name": "n2", "gpuNodes": 201})", 400);
  expect("POST", clusters, "not json", 400);
  expect("POST", clusters, R"({"name": "n2", "project": "team-a"})", 404, bob);
  Answer alices =
      expect("POST", clusters, R"({"name": "alicec", "gpuNodes": 0, "cpuNodes": 1})", 201, alice);
  EXPECT_EQ(alices.body.value("project", ""), "team-a");
  expect("DELETE", "/api/v1/clusters/nosuch", "", 404);
  expect("DELETE", "/api/v1/clusters/gone", "", 409);
  expect("DELETE", "/api/v1/clusters/a", "", 404, alice);

  // ---- Changes to "a" --------------------------------------------------------
  const std::string a = "/api/v1/clusters/a";
  expect("POST", a + "/scale", R"({"gpuNodes": 3})", 202);
  expect("POST", a + "/scale", R"({"gpuNodes": 3})", 200);
  expect("POST", a + "/scale", R"({"gpuNodes": "3"})", 400);
  expect("POST", a + "/scale", R"({"gpuNodes": 0, "cpuNodes": 0})", 400);
  expect("POST", "/api/v1/clusters/old/scale", R"({"cpuNodes": 2})", 409);
  expect("POST", "/api/v1/clusters/nosuch/scale", R"({"cpuNodes": 2})", 404);

  expect("POST", a + "/partitions", R"({"name": "p2", "nodes": "slinky-0"})", 202);
  expect("POST", a + "/partitions", R"({"name": "p2", "nodes": "slinky-0"})", 409);
  expect("POST", a + "/partitions", R"({"name": "p3", "nodes": "slinky-[0-99]"})", 400);
  expect("POST", "/api/v1/clusters/nosuch/partitions", R"({"name": "p3", "nodes": "slinky-0"})",
         404);
  expect("PUT", a + "/partitions/p2", R"({"nodes": "slinky-[0-1]", "options": {"MaxTime": "60"}})",
         202);
  expect("PUT", a + "/partitions/p2", R"({"nodes": "slinky-[0-1]", "options": {"MaxTime": "60"}})",
         200);
  expect("PUT", a + "/partitions/p2", R"({"nodes": "slinky-[0-1]", "options": {"Nodes": "x"}})",
         400);
  expect("PUT", a + "/partitions/nosuch", R"({"nodes": "slinky-0"})", 404);
  expect("PUT", "/api/v1/clusters/old/partitions/p1", R"({"nodes": "cpu-workers-0"})", 409);
  expect("DELETE", a + "/partitions/p1", "", 409);  // Job 40 runs in it.
  Answer deleted = expect("DELETE", a + "/partitions/p1?force=true", "", 202);
  EXPECT_EQ(deleted.body["change"]["jobsInPartition"], json::array({"40 carol train"}));
  expect("DELETE", a + "/partitions/nosuch", "", 404);
  expect("DELETE", a + "/partitions/slinky", "", 400);
  expect("DELETE", "/api/v1/clusters/old/partitions/p1", "", 409);

  expect("PATCH", a + "/config", R"({"set": {"MinJobAge": "200"}, "unset": []})", 202);
  expect("PATCH", a + "/config", R"({"set": {"minjobage": "200"}})", 200);
  expect("PATCH", a + "/config", R"({"set": {"SlurmUser": "root"}})", 400);
  expect("PATCH", "/api/v1/clusters/old/config", R"({"set": {"MinJobAge": "200"}})", 409);
  expect("PATCH", "/api/v1/clusters/nosuch/config", R"({"set": {"MinJobAge": "200"}})", 404);
  expect("POST", a + "/config/diff", R"({"set": {"MinJobAge": "60"}})", 200);
  expect("POST", a + "/config/diff", "", 200);
  expect("POST", a + "/config/diff", R"({"set": {"Nope": "1"}})", 400);
  expect("POST", "/api/v1/clusters/nosuch/config/diff", "", 404);

  expect("PUT", a + "/ssh-keys", R"({"sshKeys": [)" + key + "," + other + "]}", 202);
  expect("PUT", a + "/ssh-keys", R"({"sshKeys": [)" + key + "," + other + "]}", 200);
  expect("PUT", a + "/ssh-keys", R"({"sshKeys": []})", 400);
  expect("PUT", "/api/v1/clusters/old/ssh-keys", R"({"sshKeys": [)" + key + "]}", 409);
  expect("PUT", "/api/v1/clusters/nosuch/ssh-keys", R"({"sshKeys": [)" + key + "]}", 404);

  for (const char* action : {"/login/restart", "/controller/restart", "/reconfigure"}) {
    expect("POST", a + action, "", 202);
    expect("POST", std::string("/api/v1/clusters/old") + action, "", 409);
    expect("POST", std::string("/api/v1/clusters/nosuch") + action, "", 404);
  }
  Answer again = expect("POST", "/api/v1/clusters/creating/reconfigure", "", 202);
  EXPECT_EQ(again.body["change"]["made"], false);

  // ---- Volumes ---------------------------------------------------------------
  expect("POST", "/api/v1/volumes", R"({"name": "vnew", "type": "weka"})", 201);
  expect("POST", "/api/v1/volumes", R"({"name": "vnew"})", 409);
  expect("POST", "/api/v1/volumes", R"({"name": "v2", "type": "nfs"})", 400);
  expect("POST", "/api/v1/volumes", R"({"name": "v2", "project": "team-b"})", 404, alice);
  expect("POST", "/api/v1/volumes", R"({"name": "v3", "project": "team-a"})", 201, alice);
  // Host directories are the operator's: never a user's, and an admin's
  // only under a root this corrald allows (none here).
  expect("POST", "/api/v1/volumes", R"({"name": "hostdir", "source": "/srv"})", 403, alice);
  expect("POST", "/api/v1/volumes", R"({"name": "hostdir", "source": "/srv"})", 403);
  ASSERT_TRUE(api_.store.createVolume({"legacy", "pfs", "/srv/legacy", false, 0, kDefaultProject}).isOk());
  expect("POST", a + "/volumes", R"({"volume": "legacy", "path": "/legacy"})", 403);
  expect("DELETE", "/api/v1/volumes/vnew", "", 200);
  expect("DELETE", "/api/v1/volumes/data", "", 409);
  expect("DELETE", "/api/v1/volumes/nosuch", "", 404);
  expect("POST", a + "/volumes", R"({"volume": "scratch", "path": "/scratch"})", 202);
  expect("POST", a + "/volumes", R"({"volume": "scratch", "path": "/scratch2"})", 400);
  expect("POST", a + "/volumes", R"({"volume": "bvol", "path": "/b"})", 409);  // Another project.
  expect("POST", a + "/volumes", R"({"volume": "nosuch", "path": "/x"})", 404);
  expect("POST", a + "/volumes", R"({})", 400);
  expect("DELETE", a + "/volumes/scratch", "", 202);
  expect("DELETE", a + "/volumes/scratch", "", 404);
  expect("DELETE", "/api/v1/clusters/old/volumes/data", "", 409);

  // ---- Nodes -----------------------------------------------------------------
  expect("POST", a + "/nodes/slinky-0/reboot", "", 202);
  expect("POST", a + "/nodes/nope/reboot", "", 404);
  expect("POST", "/api/v1/clusters/old/nodes/cpu-workers-0/reboot", "", 409);
  Answer xid = expect("POST", a + "/nodes/slinky-1/inject-xid", R"({"code": 79})", 202);
  EXPECT_THAT(xid.body.value("line", ""), ::testing::HasSubstr("Xid"));
  expect("POST", a + "/nodes/slinky-1/inject-xid", R"({"code": 0})", 400);
  expect("POST", a + "/nodes/cpu-workers-0/inject-xid", R"({"code": 79})", 400);
  expect("POST", a + "/nodes/nope/inject-xid", R"({"code": 79})", 404);
  expect("POST", "/api/v1/clusters/old/nodes/cpu-workers-0/inject-xid", R"({"code": 79})", 409);
  api_.runtime.failNext("appendKernelLog", unavailable("the node's disk is gone"));
  expect("POST", a + "/nodes/slinky-1/inject-xid", R"({"code": 79})", 503);
  expect("GET", a + "/nodes/slinky-1", "", 200);  // Now with history.

  // ---- Images ----------------------------------------------------------------
  Answer images = expect("GET", "/api/v1/images", "", 200);
  EXPECT_EQ(images.body["default"], "debian13-slurm24.11");
  EXPECT_EQ(images.body["images"].size(), 3u);
  expect("GET", "/api/v1/images/debian13-extra", "", 200);
  expect("GET", "/api/v1/images/nope", "", 404);
  expect("POST", a + "/image", R"({"image": "debian12-slurm22.05"})", 409);  // Slurm cannot go back.
  expect("POST", a + "/image", R"({"image": "nope"})", 400);
  expect("POST", a + "/image", R"({})", 400);
  expect("POST", a + "/image", R"({"image": "debian13-extra"})", 202);
  expect("POST", a + "/image", R"({"image": "debian13-extra"})", 200);  // Already its build.
  expect("POST", "/api/v1/clusters/old/image", R"({"image": "debian13-extra"})", 409);
  expect("POST", "/api/v1/clusters/nosuch/image", R"({"image": "debian13-extra"})", 404);
  EXPECT_EQ(expect("GET", "/api/v1/images/debian13-extra", "", 200).body["clusters"], json({"a"}));
  expect("POST", a + "/workers/restart", "", 202);
  expect("POST", "/api/v1/clusters/old/workers/restart", "", 409);
  expect("POST", "/api/v1/clusters/nosuch/workers/restart", "", 404);

  // ---- Login users -----------------------------------------------------------
  expect("POST", a + "/users", R"({"name": "dave", "sshKeys": [)" + key + "]}", 202);
  expect("POST", a + "/users", R"({"name": "dave", "sshKeys": [)" + key + "]}", 409);
  expect("POST", a + "/users", R"({"name": "root", "sshKeys": [)" + key + "]}", 400);
  expect("POST", "/api/v1/clusters/old/users", R"({"name": "erin", "sshKeys": [)" + key + "]}",
         409);
  expect("POST", "/api/v1/clusters/nosuch/users", R"({"name": "erin"})", 404);
  expect("GET", a + "/users", "", 200);
  expect("DELETE", a + "/users/dave", "", 202);
  expect("DELETE", a + "/users/nobody", "", 404);
  expect("DELETE", "/api/v1/clusters/old/users/carol", "", 409);

  // ---- Ends of life ----------------------------------------------------------
  expect("POST", "/api/v1/clusters/old/clone", R"({"name": "old2"})", 201);
  expect("POST", "/api/v1/clusters/old/clone", R"({"name": "old4", "image": "debian12-slurm22.05"})", 201);
  expect("POST", "/api/v1/clusters/old/clone", R"({"name": "old5", "image": "nope"})", 400);
  expect("POST", "/api/v1/clusters/old/clone", R"({"name": "old2"})", 409);
  expect("POST", "/api/v1/clusters/old/clone", R"({"name": "Old_2"})", 400);
  expect("POST", "/api/v1/clusters/old/clone", R"({})", 400);
  expect("POST", "/api/v1/clusters/nosuch/clone", R"({"name": "old3"})", 404);
  expect("POST", "/api/v1/clusters/idle/terminate", "", 202);
  expect("POST", "/api/v1/clusters/idle/terminate", "", 409);
  expect("POST", "/api/v1/clusters/nosuch/terminate", "", 404);
  expect("DELETE", "/api/v1/clusters/old", "", 202);
  expect("DELETE", "/api/v1/clusters/old", "", 202);  // Deleting already: the same answer.
  // Everything again after the changes, as a client would see it.
  for (const char* sub :
       {"", "/events", "/revisions", "/partitions", "/config", "/nodes", "/users"})
    expect("GET", std::string(a) + sub, "", 200);
  expect("GET", "/api/v1/clusters", "", 200);
  expect("GET", "/api/v1/volumes", "", 200);

  // ---- Coverage: every operation succeeded, every documented answer came ----
  for (const auto& [method, path] : operations(doc())) {
    std::string m = method;
    for (char& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const auto& got = seen_[{method, path}];
    bool success = std::any_of(got.begin(), got.end(), [](int s) { return s >= 200 && s < 300; });
    EXPECT_TRUE(success) << method << " " << path << " was never answered with success";
    for (auto it = doc()["paths"][path][m]["responses"].begin();
         it != doc()["paths"][path][m]["responses"].end(); ++it)
      EXPECT_TRUE(got.count(std::stoi(it.key())))
          << method << " " << path << " documents " << it.key() << " but the test never saw it";
  }
}

// What ClusterCreate does not list is refused, even where ClusterSpec has
// it: volumes and login users are attached through their own endpoints,
// which check the volume's project and source and give uids out; a create
// must not get around that (a volume's hostPath is mounted as it is).
TEST_F(OpenapiContractTest, CreateRefusesWhatTheDocumentDoesNotList) {
  const json& create = doc()["components"]["schemas"]["ClusterCreate"]["properties"];
  const json& spec = doc()["components"]["schemas"]["ClusterSpec"]["properties"];
  const std::map<std::string, json> values = {
      {"volumes",
       json::parse(R"([{"volume": "x", "path": "/data", "hostPath": "/etc", "readOnly": false}])")},
      {"users", json{{{"name", "mallory"}, {"uid", 20000}, {"sshKeys", {kTestSshKey}}}}},
      {"nodeGenerations", json{{"slinky-0", 1}}},
      {"loginGeneration", 1},
      {"controllerGeneration", 1},
      {"workerGeneration", 1}};
  int n = 0;
  for (auto it = spec.begin(); it != spec.end(); ++it) {
    if (create.contains(it.key())) continue;
    ASSERT_TRUE(values.count(it.key())) << "no test value for ClusterSpec's " << it.key();
    json body = {{"name", "evil" + std::to_string(n++)},
                 {"gpuNodes", 1},
                 {"sshKeys", {kTestSshKey}},
                 {it.key(), values.at(it.key())}};
    json before = api_.snapshot();
    Answer a = expect("POST", "/api/v1/clusters", body.dump(), 400, api_.token("alice"));
    EXPECT_EQ(api_.snapshot(), before) << it.key() << ": " << a.raw;
  }
}

// Refusals that come before any route (a body over 1 MiB, no route, a
// token of another scheme) are answered in the API's error shape too. (A
// POST without Content-Length is one as well, but httplib answers it only
// after its 5 s read timeout, too slow for a unit test.)
TEST_F(OpenapiContractTest, TransportErrorsAreApiErrors) {
  const json& error = doc()["components"]["schemas"]["Error"];
  std::string big(kMaxBody + 1, ' ');
  Answer tooBig = api_.send("POST", "/api/v1/clusters", big);
  EXPECT_TRUE(tooBig.status == 400 || tooBig.status == 413) << tooBig.status;
  EXPECT_THAT(checkAgainstSchema(doc(), error, tooBig.body), IsEmpty())
      << tooBig.raw.substr(0, 300);
  Answer unknown = api_.send("GET", "/api/v1/nothing-here");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_THAT(checkAgainstSchema(doc(), error, unknown.body), IsEmpty()) << unknown.raw;
  Answer basic = api_.sendRaw(
      "GET /api/v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Basic YTpi\r\n"
      "Connection: close\r\n\r\n");
  EXPECT_EQ(basic.status, 401);
  EXPECT_THAT(checkAgainstSchema(doc(), error, basic.body), IsEmpty()) << basic.raw;
}

}  // namespace
}  // namespace corral::testing_support
