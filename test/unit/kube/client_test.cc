// `KubeClient` against a real HTTPS server on loopback (test_api_server.h):
// what goes over the wire (method, path, query, content type, body,
// credentials), TLS both ways, and how answers and streams come back.

#include "kube/client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <future>
#include <thread>

#include "common/fs.h"
#include "kube/paths.h"
#include "unit/kube/test_api_server.h"
#include "unit/kube/test_pki.h"

namespace corral::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TestApiServer;
using testing::testPki;
using Json = nlohmann::json;

const std::string kSecret = "/api/v1/namespaces/ns/secrets/munge";
const std::string kNodeSet = "/apis/slinky.slurm.net/v1beta1/namespaces/ns/nodesets/slinky";
const std::string kNodeSets = "/apis/slinky.slurm.net/v1beta1/namespaces/ns/nodesets";

void replyJson(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

Json apiStatus(int code, const std::string& reason, const std::string& message) {
  return {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
          {"message", message}, {"reason", reason}, {"code", code}};
}

Json nodeSet(const std::string& rv) {
  return {{"apiVersion", "slinky.slurm.net/v1beta1"},
          {"kind", "NodeSet"},
          {"metadata", {{"name", "slinky"}, {"namespace", "ns"}, {"resourceVersion", rv}}},
          {"spec", {{"replicas", 4}}}};
}

WatchOptions watchFrom(const std::string& resourceVersion, int timeoutSeconds = 300) {
  WatchOptions options;
  options.resourceVersion = resourceVersion;
  options.timeoutSeconds = timeoutSeconds;
  return options;
}

// Answers every request with `body` (200).
TestApiServer::Handler always(Json body) {
  return [body](const httplib::Request&, httplib::Response& res) { replyJson(res, 200, body); };
}

TEST(KubeClientTest, GetSendsTheClientCertificateAndTrustsTheConfiguredCa) {
  TestApiServer server(always({{"kind", "Secret"}, {"metadata", {{"name", "munge"}}}}));
  KubeClient client(server.config());
  auto got = client.get(kSecret);
  ASSERT_TRUE(got.isOk()) << got.status().toString();
  EXPECT_EQ((*got)["metadata"]["name"], "munge");
  auto seen = server.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].target, kSecret);
  EXPECT_EQ(seen[0].clientCn, "corral-test");
  EXPECT_EQ(seen[0].authorization, "");
  EXPECT_EQ(client.requestCount(), 1u);
}

TEST(KubeClientTest, SendsABearerToken) {
  TestApiServer server(always(Json::object()));
  KubeConfig config = server.config();
  config.clientCertPem.clear();
  config.clientKeyPem.clear();
  config.token = "abc.def";
  KubeClient client(config);
  ASSERT_TRUE(client.get(kSecret).isOk());
  auto seen = server.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].authorization, "Bearer abc.def");
  EXPECT_EQ(seen[0].clientCn, "");
}

TEST(KubeClientTest, ReadsTheTokenFileForEveryRequestSoARotatedTokenIsUsed) {
  char tmpl[] = "/tmp/corral-kube-token-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  ASSERT_TRUE(writeFileAtomic(dir + "/token", "first\n").isOk());
  TestApiServer server(always(Json::object()));
  KubeConfig config = server.config();
  config.token = "first";
  config.tokenFile = dir + "/token";
  KubeClient client(config);
  ASSERT_TRUE(client.get(kSecret).isOk());
  ASSERT_TRUE(writeFileAtomic(dir + "/token", "second\n").isOk());
  ASSERT_TRUE(client.get(kSecret).isOk());
  ASSERT_TRUE(removeTree(dir).isOk());
  ASSERT_TRUE(client.get(kSecret).isOk());  // Unreadable now: the last token read stays.
  auto seen = server.seen();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].authorization, "Bearer first");
  EXPECT_EQ(seen[1].authorization, "Bearer second");
  EXPECT_EQ(seen[2].authorization, "Bearer second");
}

TEST(KubeClientTest, RefusesAServerItsCaDidNotSign) {
  TestApiServer server(always(Json::object()));
  KubeConfig config = server.config();
  config.caPem = testPki().otherCa.certPem;
  KubeClient client(config);
  auto got = client.get(kSecret);
  ASSERT_FALSE(got.isOk());
  EXPECT_EQ(got.status().code(), Code::kUnavailable);
  EXPECT_THAT(got.status().message(),
              HasSubstr("Kubernetes API server " + server.url() + " (GET " + kSecret + "): "));
  EXPECT_THAT(got.status().message(),
              HasSubstr("; its certificate is not trusted by the certificate-authority of the "
                        "test's config"));
  EXPECT_TRUE(server.seen().empty());
  EXPECT_EQ(client.requestCount(), 1u);
}

TEST(KubeClientTest, RefusesAServerWhenNoCaIsGivenAndTheSystemsDoNotKnowIt) {
  TestApiServer server(always(Json::object()));
  KubeConfig config = server.config();
  config.caPem.clear();
  KubeClient client(config);
  EXPECT_EQ(client.get(kSecret).status().code(), Code::kUnavailable);
  EXPECT_TRUE(server.seen().empty());
}

TEST(KubeClientTest, InsecureSkipTlsVerifyAcceptsAnyServer) {
  TestApiServer server(always(Json::object()));
  KubeConfig config = server.config();
  config.caPem.clear();
  config.insecureSkipTlsVerify = true;
  KubeClient client(config);
  auto got = client.get(kSecret);
  ASSERT_TRUE(got.isOk()) << got.status().toString();
  EXPECT_EQ(server.seen().size(), 1u);
}

TEST(KubeClientTest, AClientCertificateTheServerDoesNotTrustIsRefused) {
  TestApiServer server(always(Json::object()));
  KubeConfig config = server.config();
  config.clientCertPem = testPki().strangerClient.certPem;
  config.clientKeyPem = testPki().strangerClient.keyPem;
  KubeClient client(config);
  auto got = client.get(kSecret);
  ASSERT_FALSE(got.isOk());
  EXPECT_EQ(got.status().code(), Code::kUnavailable);
  EXPECT_TRUE(server.seen().empty());
}

TEST(KubeClientTest, AnUnusableClientKeyIsTheConfigsFault) {
  TestApiServer server(always(Json::object()));
  KubeConfig config = server.config();
  config.clientKeyPem = testPki().otherCa.keyPem;  // Not the certificate's key.
  KubeClient client(config);
  auto got = client.get(kSecret);
  EXPECT_EQ(got.status().code(), Code::kFailedPrecondition) << got.status().toString();
  EXPECT_THAT(got.status().message(),
              HasSubstr("; check the certificates and key of the test's config"));
}

TEST(KubeClientTest, AnUnreachableServerIsUnavailable) {
  int port;
  {
    TestApiServer gone(always(Json::object()));
    port = std::stoi(gone.url().substr(gone.url().rfind(':') + 1));
  }
  KubeConfig config;
  config.server = "https://127.0.0.1:" + std::to_string(port);
  config.source = "the test's config";
  KubeClient client(config);
  auto got = client.get(kSecret);
  EXPECT_EQ(got.status().code(), Code::kUnavailable);
  EXPECT_THAT(got.status().message(),
              HasSubstr("unreachable: Kubernetes API server " + config.server + " (GET " +
                        kSecret + "): "));
}

TEST(KubeClientTest, ApplyIsAServerSideApplyPatch) {
  Json stored = nodeSet("7");
  TestApiServer server(always(stored));
  KubeClient client(server.config());
  Json object = nodeSet("");
  object["metadata"].erase("resourceVersion");
  auto applied = client.apply(kNodeSet, object);
  ASSERT_TRUE(applied.isOk()) << applied.status().toString();
  EXPECT_EQ(*applied, stored);
  auto seen = server.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "PATCH");
  EXPECT_EQ(seen[0].path, kNodeSet);
  EXPECT_EQ(seen[0].target, kNodeSet + "?fieldManager=corral&force=true");
  EXPECT_EQ(seen[0].contentType, "application/apply-patch+yaml");
  EXPECT_EQ(Json::parse(seen[0].body), object);
  EXPECT_EQ(seen[0].clientCn, "corral-test");
}

TEST(KubeClientTest, ApplyStatusTargetsTheStatusSubresource) {
  TestApiServer server(always(nodeSet("8")));
  KubeClientOptions options;
  options.fieldManager = "corral-test";
  KubeClient client(server.config(), options);
  Json status = {{"apiVersion", "slinky.slurm.net/v1beta1"},
                 {"kind", "NodeSet"},
                 {"metadata", {{"name", "slinky"}}},
                 {"status", {{"replicas", 4}}}};
  ASSERT_TRUE(client.applyStatus(kNodeSet, status).isOk());
  auto seen = server.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "PATCH");
  EXPECT_EQ(seen[0].target, kNodeSet + "/status?fieldManager=corral-test&force=true");
  EXPECT_EQ(seen[0].contentType, "application/apply-patch+yaml");
  EXPECT_EQ(Json::parse(seen[0].body), status);
}

TEST(KubeClientTest, RemoveDeletesInTheBackground) {
  TestApiServer server([](const httplib::Request&, httplib::Response& res) {
    replyJson(res, 202, {{"kind", "Status"}, {"status", "Success"}});
  });
  KubeClient client(server.config());
  ASSERT_TRUE(client.remove(kNodeSet).isOk());
  auto seen = server.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "DELETE");
  EXPECT_EQ(seen[0].target, kNodeSet + "?propagationPolicy=Background");
  EXPECT_EQ(seen[0].body, "");
}

TEST(KubeClientTest, RemoveOfAMissingObjectIsNotFound) {
  TestApiServer server([](const httplib::Request&, httplib::Response& res) {
    replyJson(res, 404,
              apiStatus(404, "NotFound", "nodesets.slinky.slurm.net \"slinky\" not found"));
  });
  KubeClient client(server.config());
  Status st = client.remove(kNodeSet);
  EXPECT_EQ(st.code(), Code::kNotFound);
  EXPECT_EQ(st.message(), "Kubernetes API: DELETE " + kNodeSet +
                              "?propagationPolicy=Background: nodesets.slinky.slurm.net "
                              "\"slinky\" not found (HTTP 404 NotFound)");
}

TEST(KubeClientTest, ListReadsEveryPageAtTheFirstPagesVersion) {
  TestApiServer server([](const httplib::Request& req, httplib::Response& res) {
    if (req.get_param_value("continue").empty()) {
      replyJson(res, 200, {{"kind", "NodeSetList"},
                           {"metadata", {{"resourceVersion", "100"}, {"continue", "page2"}}},
                           {"items", {nodeSet("90")}}});
    } else {
      replyJson(res, 200, {{"kind", "NodeSetList"},
                           {"metadata", {{"resourceVersion", "101"}}},
                           {"items", {nodeSet("95"), nodeSet("99")}}});
    }
  });
  KubeClient client(server.config());
  auto list = client.list(kNodeSets, "corral.dev/cluster=demo");
  ASSERT_TRUE(list.isOk()) << list.status().toString();
  EXPECT_EQ(list->resourceVersion, "100");
  ASSERT_EQ(list->items.size(), 3u);
  EXPECT_EQ(list->items[0]["metadata"]["resourceVersion"], "90");
  EXPECT_EQ(list->items[2]["metadata"]["resourceVersion"], "99");
  auto seen = server.seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].target, kNodeSets + "?labelSelector=corral.dev%2Fcluster%3Ddemo&limit=500");
  EXPECT_EQ(seen[1].target,
            kNodeSets + "?labelSelector=corral.dev%2Fcluster%3Ddemo&limit=500&continue=page2");
  EXPECT_EQ(client.requestCount(), 2u);
}

TEST(KubeClientTest, AnEmptyListHasNoItems) {
  TestApiServer server(always({{"kind", "SecretList"},
                               {"metadata", {{"resourceVersion", "5"}}},
                               {"items", nullptr}}));
  KubeClient client(server.config());
  auto list = client.list("/api/v1/namespaces/ns/secrets", "");
  ASSERT_TRUE(list.isOk()) << list.status().toString();
  EXPECT_EQ(list->items, Json::array());
  EXPECT_EQ(list->resourceVersion, "5");
  EXPECT_EQ(server.seen()[0].target, "/api/v1/namespaces/ns/secrets?limit=500");
}

TEST(KubeClientTest, ErrorBodiesBecomeMessagesWithTheNearestCode) {
  struct Case {
    int http;
    std::string reason, message;
    Code code;
  } cases[] = {
      {401, "Unauthorized", "Unauthorized", Code::kUnauthenticated},
      {403, "Forbidden",
       "nodesets.slinky.slurm.net \"slinky\" is forbidden: User \"bob\" cannot get",
       Code::kPermissionDenied},
      {404, "NotFound", "nodesets.slinky.slurm.net \"slinky\" not found", Code::kNotFound},
      {409, "Conflict", "Operation cannot be fulfilled: the object has been modified",
       Code::kConflict},
      {422, "Invalid",
       "NodeSet.slinky.slurm.net \"slinky\" is invalid: spec.replicas: Invalid value",
       Code::kInvalidArgument},
      {500, "InternalError", "Internal error occurred: etcdserver: request timed out",
       Code::kUnavailable},
  };
  for (const auto& c : cases) {
    TestApiServer server([&](const httplib::Request&, httplib::Response& res) {
      replyJson(res, c.http, apiStatus(c.http, c.reason, c.message));
    });
    KubeClient client(server.config());
    auto got = client.get(kNodeSet);
    ASSERT_FALSE(got.isOk()) << c.http;
    EXPECT_EQ(got.status().code(), c.code) << c.http;
    std::string expected = "Kubernetes API: GET " + kNodeSet + ": " + c.message + " (HTTP " +
                           std::to_string(c.http) + " " + c.reason + ")";
    if (c.http == 401)
      expected += "; the API server did not accept corral's client certificate or token";
    EXPECT_EQ(got.status().message(), expected);
  }
}

TEST(KubeClientTest, ASuccessThatIsNotJsonIsAnInternalError) {
  TestApiServer server([](const httplib::Request&, httplib::Response& res) {
    res.set_content("<html>proxy</html>", "text/html");
  });
  KubeClient client(server.config());
  auto got = client.get(kSecret);
  EXPECT_EQ(got.status().code(), Code::kInternal);
  EXPECT_EQ(got.status().message(),
            "Kubernetes API: GET " + kSecret + " answered with something not a JSON object");
}

TEST(KubeClientTest, AResponseLargerThanTheLimitIsRefused) {
  TestApiServer server([](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"x\":\"" + std::string(3u << 20, 'a') + "\"}", "application/json");
  });
  KubeClientOptions options;
  options.maxBody = 2u << 20;
  KubeClient client(server.config(), options);
  auto got = client.get(kSecret);
  EXPECT_EQ(got.status().code(), Code::kInternal);
  EXPECT_EQ(got.status().message(), "Kubernetes API: GET " + kSecret +
                                        " answered with more than 2 MiB");
}

// A watch stream of `lines`, written in chunks that split them mid-line,
// then ended (or held open when `holdOpen`).
TestApiServer::Handler stream(std::vector<std::string> lines, bool holdOpen,
                              TestApiServer** server) {
  return [lines, holdOpen, server](const httplib::Request&, httplib::Response& res) {
    std::string all;
    for (const auto& l : lines) all += l;
    res.set_chunked_content_provider(
        "application/json", [all, holdOpen, server](size_t offset, httplib::DataSink& sink) {
          if (offset < all.size()) {
            // Three bytes, then the rest: the first event is split.
            size_t take = offset == 0 ? std::min<size_t>(3, all.size()) : all.size() - offset;
            sink.write(all.data() + offset, take);
            return true;
          }
          if (holdOpen) (*server)->holdOpen();
          sink.done();
          return true;
        });
  };
}

TEST(KubeClientTest, WatchParsesAChunkedStreamOfEvents) {
  TestApiServer* self = nullptr;
  Json bookmark = {{"kind", "NodeSet"}, {"metadata", {{"resourceVersion", "13"}}}};
  TestApiServer server(stream({TestApiServer::eventLine("ADDED", nodeSet("10")),
                               TestApiServer::eventLine("MODIFIED", nodeSet("11")),
                               TestApiServer::eventLine("DELETED", nodeSet("12")),
                               TestApiServer::eventLine("BOOKMARK", bookmark)},
                              false, &self));
  self = &server;
  KubeClient client(server.config());
  std::vector<std::string> got;
  std::atomic<bool> stop{false};
  WatchOptions options;
  options.resourceVersion = "9";
  options.labelSelector = "app=slurm";
  auto end = client.watch(kNodeSets, options, [&](const WatchEvent& e) {
    got.push_back(std::string(watchEventTypeName(e.type)) + " " +
                  e.object["metadata"]["resourceVersion"].get<std::string>());
    return Status::ok();
  }, stop);
  ASSERT_TRUE(end.isOk()) << end.status().toString();
  EXPECT_EQ(*end, WatchEnd::kClosed);
  EXPECT_THAT(got, ElementsAre("ADDED 10", "MODIFIED 11", "DELETED 12", "BOOKMARK 13"));
  auto seen = server.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].target, kNodeSets +
                                "?watch=1&resourceVersion=9&labelSelector=app%3Dslurm&"
                                "allowWatchBookmarks=true&timeoutSeconds=300");
  EXPECT_EQ(seen[0].clientCn, "corral-test");
  EXPECT_EQ(client.requestCount(), 1u);
}

TEST(KubeClientTest, WatchReportsGoneAsExpired) {
  TestApiServer server([](const httplib::Request&, httplib::Response& res) {
    replyJson(res, 410, apiStatus(410, "Expired", "too old resource version: 1 (500)"));
  });
  KubeClient client(server.config());
  std::atomic<bool> stop{false};
  int events = 0;
  auto end = client.watch(kNodeSets, watchFrom("1"), [&](const WatchEvent&) {
    ++events;
    return Status::ok();
  }, stop);
  ASSERT_TRUE(end.isOk()) << end.status().toString();
  EXPECT_EQ(*end, WatchEnd::kExpired);
  EXPECT_EQ(events, 0);
}

TEST(KubeClientTest, AnErrorEvent410InTheStreamIsExpiredToo) {
  TestApiServer* self = nullptr;
  TestApiServer server(
      stream({TestApiServer::eventLine("ADDED", nodeSet("10")),
              TestApiServer::eventLine("ERROR",
                                       apiStatus(410, "Expired", "too old resource version")),
              TestApiServer::eventLine("ADDED", nodeSet("11"))},
             true, &self));
  self = &server;
  KubeClient client(server.config());
  std::atomic<bool> stop{false};
  std::vector<std::string> got;
  auto end = client.watch(kNodeSets, {}, [&](const WatchEvent& e) {
    got.push_back(e.object["metadata"]["resourceVersion"]);
    return Status::ok();
  }, stop);
  ASSERT_TRUE(end.isOk()) << end.status().toString();
  EXPECT_EQ(*end, WatchEnd::kExpired);
  EXPECT_THAT(got, ElementsAre("10"));  // Nothing after the ERROR is handed on.
}

TEST(KubeClientTest, AnotherErrorEventEndsTheWatchWithItsMessage) {
  TestApiServer* self = nullptr;
  TestApiServer server(stream(
      {TestApiServer::eventLine("ERROR", apiStatus(500, "InternalError", "etcd went away"))}, true,
      &self));
  self = &server;
  KubeClient client(server.config());
  std::atomic<bool> stop{false};
  auto end = client.watch(kNodeSets, {}, [](const WatchEvent&) { return Status::ok(); }, stop);
  ASSERT_FALSE(end.isOk());
  EXPECT_EQ(end.status().code(), Code::kUnavailable);
  EXPECT_EQ(end.status().message(),
            "Kubernetes API: watch " + kNodeSets + ": etcd went away (HTTP 500 InternalError)");
}

TEST(KubeClientTest, WatchRefusalsAreMappedLikeAnyOther) {
  TestApiServer server([](const httplib::Request&, httplib::Response& res) {
    replyJson(res, 403, apiStatus(403, "Forbidden", "nodesets is forbidden: cannot watch"));
  });
  KubeClient client(server.config());
  std::atomic<bool> stop{false};
  auto end = client.watch(kNodeSets, watchFrom("", 0),
                          [](const WatchEvent&) { return Status::ok(); }, stop);
  EXPECT_EQ(end.status().code(), Code::kPermissionDenied);
  EXPECT_EQ(end.status().message(), "Kubernetes API: GET " + kNodeSets +
                                        "?watch=1&allowWatchBookmarks=true: nodesets is "
                                        "forbidden: cannot watch (HTTP 403 Forbidden)");
}

TEST(KubeClientTest, StopFromTheHandlerEndsTheWatchAtOnce) {
  TestApiServer* self = nullptr;
  TestApiServer server(stream({TestApiServer::eventLine("ADDED", nodeSet("10")),
                               TestApiServer::eventLine("ADDED", nodeSet("11")),
                               TestApiServer::eventLine("ADDED", nodeSet("12"))},
                              true, &self));
  self = &server;
  KubeClient client(server.config());
  std::atomic<bool> stop{false};
  int events = 0;
  auto end = client.watch(kNodeSets, {}, [&](const WatchEvent&) {
    if (++events == 2) stop = true;
    return Status::ok();
  }, stop);
  ASSERT_TRUE(end.isOk()) << end.status().toString();
  EXPECT_EQ(*end, WatchEnd::kStopped);
  EXPECT_EQ(events, 2);
}

TEST(KubeClientTest, StopFromAnotherThreadEndsAnIdleWatch) {
  TestApiServer* self = nullptr;
  TestApiServer server(stream({TestApiServer::eventLine("ADDED", nodeSet("10"))}, true, &self));
  self = &server;
  KubeClient client(server.config());
  std::atomic<bool> stop{false};
  std::promise<void> firstEvent;
  std::thread stopper([&] {
    firstEvent.get_future().wait();
    stop = true;
  });
  auto end = client.watch(kNodeSets, {}, [&](const WatchEvent&) {
    firstEvent.set_value();
    return Status::ok();
  }, stop);
  stopper.join();
  ASSERT_TRUE(end.isOk()) << end.status().toString();
  EXPECT_EQ(*end, WatchEnd::kStopped);
}

TEST(KubeClientTest, AHandlersErrorEndsTheWatchWithIt) {
  TestApiServer* self = nullptr;
  TestApiServer server(stream({TestApiServer::eventLine("ADDED", nodeSet("10")),
                               TestApiServer::eventLine("ADDED", nodeSet("11"))},
                              true, &self));
  self = &server;
  KubeClient client(server.config());
  std::atomic<bool> stop{false};
  int events = 0;
  auto end = client.watch(kNodeSets, {}, [&](const WatchEvent&) {
    ++events;
    return conflict("the cluster moved on");
  }, stop);
  EXPECT_EQ(end.status().code(), Code::kConflict);
  EXPECT_EQ(end.status().message(), "the cluster moved on");
  EXPECT_EQ(events, 1);
}

TEST(KubeClientTest, AGarbledStreamIsAnError) {
  TestApiServer* self = nullptr;
  TestApiServer server(stream({"{\"type\":\"ADDED\"\n"}, true, &self));
  self = &server;
  KubeClient client(server.config());
  std::atomic<bool> stop{false};
  auto end = client.watch(kNodeSets, {}, [](const WatchEvent&) { return Status::ok(); }, stop);
  EXPECT_EQ(end.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(end.status().message(), HasSubstr("a watch event is not a JSON object"));
}

TEST(KubeClientTest, AWatchAlreadyStoppedSendsNothing) {
  TestApiServer server(always(Json::object()));
  KubeClient client(server.config());
  std::atomic<bool> stop{true};
  auto end = client.watch(kNodeSets, {}, [](const WatchEvent&) { return Status::ok(); }, stop);
  ASSERT_TRUE(end.isOk());
  EXPECT_EQ(*end, WatchEnd::kStopped);
  EXPECT_EQ(client.requestCount(), 0u);
  EXPECT_TRUE(server.seen().empty());
}

TEST(KubeClientTest, CountsEveryRequestAndReusesConnections) {
  TestApiServer server([](const httplib::Request& req, httplib::Response& res) {
    if (req.has_param("watch")) {
      res.set_content(TestApiServer::eventLine("ADDED", nodeSet("1")), "application/json");
    } else if (req.has_param("limit")) {
      replyJson(res, 200, {{"metadata", {{"resourceVersion", "1"}}}, {"items", Json::array()}});
    } else {
      replyJson(res, 200, nodeSet("1"));
    }
  });
  KubeClient client(server.config());
  std::atomic<bool> stop{false};
  ASSERT_TRUE(client.get(kNodeSet).isOk());
  ASSERT_TRUE(client.list(kNodeSets, "").isOk());
  ASSERT_TRUE(client.apply(kNodeSet, nodeSet("")).isOk());
  ASSERT_TRUE(client.remove(kNodeSet).isOk());
  ASSERT_TRUE(client.watch(kNodeSets, {}, [](const WatchEvent&) { return Status::ok(); }, stop)
                  .isOk());
  EXPECT_EQ(client.requestCount(), 5u);
  EXPECT_EQ(server.seen().size(), 5u);
}

TEST(KubeClientTest, IsSafeToShareBetweenThreads) {
  TestApiServer server(always(nodeSet("1")));
  KubeClient client(server.config());
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) ok += client.get(kNodeSet).isOk() ? 1 : 0;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 20);
  EXPECT_EQ(client.requestCount(), 20u);
  EXPECT_EQ(server.seen().size(), 20u);
}

}  // namespace
}  // namespace corral::kube
