// Who may do what (docs/api.md): tokens, accounts and projects against the
// real ApiServer over FakeStore. Another project's things must be
// indistinguishable from things that do not exist.

#include <httplib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "api/auth.h"
#include "api/server.h"
#include "fakes/fake_clock.h"
#include "fakes/fake_runtime.h"
#include "fakes/fake_store.h"

namespace corral {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;

class ApiAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reconciler_ = std::make_unique<Reconciler>(store_, runtime_, clock_, ReconcilerOptions{});
    ApiOptions options;
    options.metricsPeriod = std::chrono::milliseconds(0);
    api_ = std::make_unique<ApiServer>(store_, *reconciler_, clock_, options);
    ASSERT_TRUE(api_->bind("127.0.0.1", 0).isOk());
    thread_ = std::thread([this] { api_->serve(); });
    ASSERT_TRUE(store_.createAccount({"root", true, {}, 0}).isOk());
    ASSERT_TRUE(store_.createAccount({"alice", false, {"ml"}, 0}).isOk());
    ASSERT_TRUE(store_.createAccount({"bob", false, {"cv", "shared"}, 0}).isOk());
    admin_ = *issueToken(store_, clock_, "root", "t");
    alice_ = *issueToken(store_, clock_, "alice", "t");
    bob_ = *issueToken(store_, clock_, "bob", "t");
    httplib::Client c("127.0.0.1", api_->port());
    for (int i = 0; i < 200 && !c.Get("/healthz"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  void TearDown() override {
    api_->stop();
    thread_.join();
  }

  struct Answer {
    int status = 0;
    json body;
    std::string raw;
    httplib::Headers headers;
  };
  Answer send(const std::string& token, const std::string& method, const std::string& path,
              const std::string& body = "") {
    httplib::Client c("127.0.0.1", api_->port());
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", token.rfind("Basic", 0) == 0 ? token : "Bearer " + token);
    httplib::Result res = method == "POST"     ? c.Post(path, h, body, "application/json")
                          : method == "PUT"    ? c.Put(path, h, body, "application/json")
                          : method == "PATCH"  ? c.Patch(path, h, body, "application/json")
                          : method == "DELETE" ? c.Delete(path, h)
                                               : c.Get(path, h);
    if (!res) return {};
    return {res->status, json::parse(res->body, nullptr, false), res->body, res->headers};
  }

  std::vector<std::string> clusterNames(const std::string& token) {
    std::vector<std::string> out;
    Answer a = send(token, "GET", "/api/v1/clusters");
    EXPECT_EQ(a.status, 200) << a.raw;
    for (const auto& c : a.body["clusters"]) out.push_back(c["name"]);
    return out;
  }

  FakeStore store_;
  FakeRuntime runtime_;
  FakeClock clock_;
  std::unique_ptr<Reconciler> reconciler_;
  std::unique_ptr<ApiServer> api_;
  std::thread thread_;
  std::string admin_, alice_, bob_;
};

TEST_F(ApiAuthTest, EveryApiRequestNeedsAValidToken) {
  for (const std::string& bad : {std::string(""), std::string("corral_nope"), std::string("Basic YTpi"),
                                 std::string(5000, 'x')}) {
    Answer a = send(bad, "GET", "/api/v1/clusters");
    EXPECT_EQ(a.status, 401) << bad.substr(0, 20);
    EXPECT_EQ(a.body["error"]["code"], "Unauthenticated");
    EXPECT_NE(a.raw.find("message"), std::string::npos);
  }
  EXPECT_EQ(send("", "POST", "/api/v1/clusters", R"({"name":"x"})").status, 401);
  EXPECT_EQ(send("", "GET", "/api/v1/openapi.json").status, 401);
  EXPECT_EQ(send("", "GET", "/api/v1/nosuch").status, 401) << "no route is probed unauthenticated";
  EXPECT_EQ(store_.listClusters()->size(), 0u);
  // Only the health check and the console's files are open.
  EXPECT_EQ(send("", "GET", "/healthz").status, 200);
  Answer page = send("", "GET", "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.raw.find("<"), std::string::npos);
  EXPECT_EQ(send("", "GET", "/console/../../etc/passwd").status, 404);
}

TEST_F(ApiAuthTest, ARevokedTokenOrARemovedAccountStopsWorking) {
  EXPECT_EQ(send(alice_, "GET", "/api/v1/clusters").status, 200);
  std::vector<ApiToken> tokens = *store_.listTokens();
  for (const auto& t : tokens) {
    if (t.user == "alice") {
      ASSERT_TRUE(store_.deleteToken(t.id).isOk());
    }
  }
  EXPECT_EQ(send(alice_, "GET", "/api/v1/clusters").status, 401);
  ASSERT_TRUE(store_.deleteAccount("bob").isOk());
  Answer a = send(bob_, "GET", "/api/v1/clusters");
  EXPECT_EQ(a.status, 401);
  EXPECT_EQ(store_.listTokens()->size(), 1u) << "removing an account removes its tokens";
}

TEST_F(ApiAuthTest, TokensAreStoredOnlyAsTheirHash) {
  std::vector<ApiToken> tokens = *store_.listTokens();
  for (const auto& t : tokens) {
    EXPECT_EQ(t.hash.size(), 64u);
    EXPECT_NE(t.hash, alice_);
    EXPECT_THAT(alice_, Not(HasSubstr(t.hash)));
  }
  EXPECT_EQ(store_.findToken(hashToken(alice_))->user, "alice");
  EXPECT_EQ(alice_.rfind("corral_", 0), 0u);
  EXPECT_EQ(alice_.size(), 7u + 43u);
  EXPECT_NE(alice_, bob_);
}

TEST_F(ApiAuthTest, WhoamiSaysWhoAndWhichProjects) {
  Answer a = send(bob_, "GET", "/api/v1/whoami");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, json({{"user", "bob"}, {"admin", false}, {"projects", {"cv", "shared"}}}));
  EXPECT_EQ(send(admin_, "GET", "/api/v1/whoami").body["admin"], true);
}

TEST_F(ApiAuthTest, OneUserCannotSeeChangeOrLearnTheNamesOfAnothersClusters) {
  Answer created = send(alice_, "POST", "/api/v1/clusters", R"({"name":"secret-one","gpuNodes":1})");
  ASSERT_EQ(created.status, 201) << created.raw;
  EXPECT_EQ(created.body["project"], "ml");
  ClusterRecord rec = *store_.getCluster("secret-one");
  EXPECT_EQ(rec.project, "ml");
  rec.status = ClusterStatus::kRunning;
  ASSERT_TRUE(store_.updateCluster(rec).isOk());
  ClusterRecord before = *store_.getCluster("secret-one");

  EXPECT_EQ(clusterNames(alice_), std::vector<std::string>{"secret-one"});
  EXPECT_TRUE(clusterNames(bob_).empty());
  EXPECT_EQ(clusterNames(admin_), std::vector<std::string>{"secret-one"});

  // Every way in answers exactly as for a cluster that does not exist.
  struct Req {
    std::string method, suffix, body;
  };
  std::vector<Req> reqs = {
      {"GET", "", ""},
      {"DELETE", "", ""},
      {"GET", "/events", ""},
      {"GET", "/revisions", ""},
      {"GET", "/nodes", ""},
      {"GET", "/nodes/slinky-0", ""},
      {"POST", "/nodes/slinky-0/reboot", ""},
      {"GET", "/partitions", ""},
      {"POST", "/partitions", R"({"name":"p","nodes":"slinky-0"})"},
      {"GET", "/config", ""},
      {"PATCH", "/config", R"({"set":{"MinJobAge":"200"}})"},
      {"POST", "/config/diff", "{}"},
      {"POST", "/scale", R"({"gpuNodes":2})"},
      {"POST", "/login/restart", ""},
      {"POST", "/reconfigure", ""},
      {"POST", "/terminate", ""},
      {"POST", "/clone", R"({"name":"stolen"})"},
      {"GET", "/jobs", ""},
      {"GET", "/jobs/history", ""},
      {"GET", "/jobs/1", ""},
      {"GET", "/metrics", ""},
      {"GET", "/users", ""},
      {"PUT", "/ssh-keys",
       R"({"sshKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMxZgP62Li7d1LTEBDNuh75IrP8c8RRx0Noyqk6unAPc x"]})"},
  };
  for (const auto& r : reqs) {
    Answer theirs = send(bob_, r.method, "/api/v1/clusters/secret-one" + r.suffix, r.body);
    Answer none = send(bob_, r.method, "/api/v1/clusters/no-such-one" + r.suffix, r.body);
    EXPECT_EQ(theirs.status, 404) << r.method << " " << r.suffix << ": " << theirs.raw;
    EXPECT_EQ(none.status, 404) << r.method << " " << r.suffix;
    std::string message = theirs.body["error"]["message"];
    EXPECT_THAT(message, HasSubstr("no cluster named"));
    // Same words, other name: nothing tells the two apart.
    std::string m2 = none.body["error"]["message"];
    EXPECT_EQ(message.substr(0, message.find('"')), m2.substr(0, m2.find('"'))) << r.suffix;
  }
  ClusterRecord after = *store_.getCluster("secret-one");
  EXPECT_EQ(after.version, before.version) << "bob changed alice's cluster";
  EXPECT_FALSE(store_.getCluster("stolen").isOk());

  // A taken name is refused without saying whose or that it exists.
  Answer clash = send(bob_, "POST", "/api/v1/clusters", R"({"name":"secret-one","gpuNodes":1})");
  EXPECT_EQ(clash.status, 409);
  std::string msg = clash.body["error"]["message"];
  EXPECT_THAT(msg, HasSubstr("not available"));
  EXPECT_THAT(msg, Not(HasSubstr("exists")));
  EXPECT_THAT(msg, Not(HasSubstr("ml")));
  // Its owner is told plainly.
  Answer own = send(alice_, "POST", "/api/v1/clusters", R"({"name":"secret-one","gpuNodes":1})");
  EXPECT_THAT(own.body["error"]["message"].get<std::string>(), HasSubstr("already exists"));
}

TEST_F(ApiAuthTest, ProjectsOfNewClustersAndVolumes) {
  // bob's first project is the default; he may pick another of his.
  Answer a = send(bob_, "POST", "/api/v1/clusters", R"({"name":"b1","gpuNodes":1,"project":"shared"})");
  ASSERT_EQ(a.status, 201) << a.raw;
  EXPECT_EQ(a.body["project"], "shared");
  Answer b = send(bob_, "POST", "/api/v1/clusters", R"({"name":"b2","gpuNodes":1})");
  EXPECT_EQ(b.body["project"], "cv");
  // Not one of his: as if it did not exist.
  Answer c = send(bob_, "POST", "/api/v1/clusters", R"({"name":"b3","gpuNodes":1,"project":"ml"})");
  EXPECT_EQ(c.status, 404) << c.raw;
  EXPECT_EQ(send(bob_, "POST", "/api/v1/clusters", R"({"name":"b3","project":5})").status, 400);
  EXPECT_EQ(send(bob_, "POST", "/api/v1/clusters", R"({"name":"b3","project":"../x"})").status, 400);
  EXPECT_FALSE(store_.getCluster("b3").isOk());
  // An admin may put a cluster anywhere.
  Answer d = send(admin_, "POST", "/api/v1/clusters", R"({"name":"a1","gpuNodes":1,"project":"ml"})");
  EXPECT_EQ(d.status, 201);
  EXPECT_EQ(clusterNames(alice_), std::vector<std::string>{"a1"});
}

TEST_F(ApiAuthTest, VolumesAreKeptApartByProjectToo) {
  Volume v;
  v.name = "ml-data";
  v.type = "dataset";
  v.hostPath = "/srv/ml-data";
  v.managed = false;
  v.project = "ml";
  ASSERT_TRUE(store_.createVolume(v).isOk());
  EXPECT_EQ(send(alice_, "GET", "/api/v1/volumes").body["volumes"].size(), 1u);
  EXPECT_EQ(send(bob_, "GET", "/api/v1/volumes").body["volumes"].size(), 0u);
  EXPECT_EQ(send(bob_, "GET", "/api/v1/volumes/ml-data").status, 404);
  EXPECT_EQ(send(bob_, "DELETE", "/api/v1/volumes/ml-data").status, 404);
  Answer clash = send(bob_, "POST", "/api/v1/volumes", R"({"name":"ml-data","source":"/srv"})");
  EXPECT_EQ(clash.status, 409);
  EXPECT_THAT(clash.raw, Not(HasSubstr("/srv/ml-data")));
  EXPECT_TRUE(store_.getVolume("ml-data").isOk());

  // bob's cluster cannot attach it (he cannot see it), nor can an admin
  // attach it across projects.
  ASSERT_EQ(send(bob_, "POST", "/api/v1/clusters", R"({"name":"b1","gpuNodes":1})").status, 201);
  ClusterRecord rec = *store_.getCluster("b1");
  rec.status = ClusterStatus::kRunning;
  rec.revision = rec.appliedRevision = 1;
  ASSERT_TRUE(store_.updateCluster(rec).isOk());
  Answer attach = send(bob_, "POST", "/api/v1/clusters/b1/volumes", R"({"volume":"ml-data","path":"/data"})");
  EXPECT_EQ(attach.status, 404) << attach.raw;
  Answer cross = send(admin_, "POST", "/api/v1/clusters/b1/volumes", R"({"volume":"ml-data","path":"/data"})");
  EXPECT_EQ(cross.status, 409) << cross.raw;
  EXPECT_THAT(cross.raw, HasSubstr("within its project"));
  EXPECT_TRUE(store_.getCluster("b1")->spec.volumes.empty());
}

}  // namespace
}  // namespace corral
