// `FakeKubeApi` keeps the contract a runtime relies on: apply is
// idempotent, versions rise, a watch from a list's version sees exactly the
// later changes, and errors read as the server's.

#include "fakes/fake_kube_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kube/paths.h"

namespace corral::kube {
namespace {

using ::testing::ElementsAre;
using Json = nlohmann::json;

const std::string kSecrets = collectionPath(resources::kSecrets, "ns");

std::string secretPath(const std::string& name) {
  return objectPath(resources::kSecrets, "ns", name);
}

Json secret(const std::string& name, const std::string& cluster, const std::string& data = "x") {
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata", {{"name", name}, {"labels", {{"corral.dev/cluster", cluster}}}}},
          {"data", {{"key", data}}}};
}

WatchOptions watchFrom(const std::string& resourceVersion, const std::string& labelSelector = "") {
  WatchOptions options;
  options.resourceVersion = resourceVersion;
  options.labelSelector = labelSelector;
  return options;
}

std::vector<std::string> watchAll(FakeKubeApi& api, const WatchOptions& options,
                                  WatchEnd* endOut = nullptr) {
  std::vector<std::string> got;
  std::atomic<bool> stop{false};
  auto end = api.watch(kSecrets, options, [&](const WatchEvent& e) {
    std::string name = e.object["metadata"].value("name", "");
    got.push_back(std::string(watchEventTypeName(e.type)) + (name.empty() ? "" : " " + name) +
                  " " + e.object["metadata"]["resourceVersion"].get<std::string>());
    return Status::ok();
  }, stop);
  EXPECT_TRUE(end.isOk()) << end.status().toString();
  if (endOut != nullptr && end.isOk()) *endOut = *end;
  return got;
}

TEST(FakeKubeApiTest, ApplyCreatesThenChangesOnlyWhatDiffers) {
  FakeKubeApi api;
  auto created = api.apply(secretPath("munge"), secret("munge", "demo"));
  ASSERT_TRUE(created.isOk()) << created.status().toString();
  EXPECT_EQ((*created)["metadata"]["resourceVersion"], "1");
  EXPECT_EQ((*created)["metadata"]["generation"], 1);
  EXPECT_EQ((*created)["metadata"]["uid"], "uid-1");

  auto same = api.apply(secretPath("munge"), secret("munge", "demo"));
  ASSERT_TRUE(same.isOk());
  EXPECT_EQ(*same, *created);  // A no-op apply: no new version.
  EXPECT_EQ(api.resourceVersion(), 1);

  auto changed = api.apply(secretPath("munge"), secret("munge", "demo", "y"));
  ASSERT_TRUE(changed.isOk());
  EXPECT_EQ((*changed)["metadata"]["resourceVersion"], "2");
  EXPECT_EQ((*changed)["metadata"]["generation"], 2);
  EXPECT_EQ((*changed)["metadata"]["uid"], "uid-1");
  EXPECT_EQ((*changed)["data"]["key"], "y");
  EXPECT_EQ(api.requestCount(), 3u);
}

TEST(FakeKubeApiTest, StatusIsWrittenOnlyThroughItsSubresource) {
  FakeKubeApi api;
  std::string path = secretPath("s");
  Json withStatus = secret("s", "demo");
  withStatus["status"] = {{"phase", "ignored"}};
  ASSERT_TRUE(api.apply(path, withStatus).isOk());
  EXPECT_FALSE(api.object(path)->contains("status"));

  Json ready = {{"apiVersion", "v1"},
                {"kind", "Secret"},
                {"metadata", {{"name", "s"}}},
                {"status", {{"phase", "Ready"}}}};
  auto st = api.applyStatus(path, ready);
  ASSERT_TRUE(st.isOk()) << st.status().toString();
  EXPECT_EQ((*st)["status"]["phase"], "Ready");
  EXPECT_EQ((*st)["metadata"]["resourceVersion"], "2");
  EXPECT_EQ((*st)["metadata"]["generation"], 1);  // Status changes leave the generation.

  ASSERT_TRUE(api.apply(path, secret("s", "demo", "z")).isOk());
  EXPECT_EQ((*api.object(path))["status"]["phase"], "Ready");  // Apply keeps the status.
  EXPECT_EQ(api.applyStatus(secretPath("none"), {{"status", {}}}).status().code(),
            Code::kNotFound);
}

TEST(FakeKubeApiTest, RefusesWhatTheServerRefuses) {
  FakeKubeApi api;
  Status wrongName = api.apply(secretPath("a"), secret("b", "demo")).status();
  EXPECT_EQ(wrongName.code(), Code::kInvalidArgument);
  EXPECT_EQ(wrongName.message(), "Kubernetes API: PATCH /api/v1/namespaces/ns/secrets/a: the name "
                                 "of the object (b) does not match the name on the URL (a) (HTTP "
                                 "400 BadRequest)");
  Status missing = api.get(secretPath("a")).status();
  EXPECT_EQ(missing.code(), Code::kNotFound);
  EXPECT_EQ(missing.message(), "Kubernetes API: GET /api/v1/namespaces/ns/secrets/a: secrets \"a\" "
                               "not found (HTTP 404 NotFound)");
  EXPECT_EQ(api.remove(secretPath("a")).code(), Code::kNotFound);
}

TEST(FakeKubeApiTest, ListFiltersByCollectionAndLabels) {
  FakeKubeApi api;
  ASSERT_TRUE(api.apply(secretPath("a"), secret("a", "demo")).isOk());
  ASSERT_TRUE(api.apply(secretPath("b"), secret("b", "other")).isOk());
  api.put(objectPath(resources::kSecrets, "elsewhere", "c"), secret("c", "demo"));
  api.put(objectPath(resources::kConfigMaps, "ns", "d"), secret("d", "demo"));

  auto all = api.list(kSecrets, "");
  ASSERT_TRUE(all.isOk());
  EXPECT_EQ(all->items.size(), 2u);
  EXPECT_EQ(all->resourceVersion, "4");
  auto demo = api.list(kSecrets, "corral.dev/cluster=demo");
  ASSERT_TRUE(demo.isOk());
  ASSERT_EQ(demo->items.size(), 1u);
  EXPECT_EQ(demo->items[0]["metadata"]["name"], "a");
  EXPECT_EQ(api.list(kSecrets, "a,,b").status().code(), Code::kInvalidArgument);
}

TEST(FakeKubeApiTest, AWatchFromAListsVersionSeesExactlyTheLaterChanges) {
  FakeKubeApi api;
  ASSERT_TRUE(api.apply(secretPath("a"), secret("a", "demo")).isOk());
  auto listed = api.list(kSecrets, "");
  ASSERT_TRUE(listed.isOk());
  ASSERT_TRUE(api.apply(secretPath("a"), secret("a", "demo", "2")).isOk());
  ASSERT_TRUE(api.apply(secretPath("b"), secret("b", "other")).isOk());
  ASSERT_TRUE(api.remove(secretPath("a")).isOk());

  WatchEnd end = WatchEnd::kStopped;
  EXPECT_THAT(watchAll(api, watchFrom(listed->resourceVersion), &end),
              ElementsAre("MODIFIED a 2", "ADDED b 3", "DELETED a 4", "BOOKMARK 4"));
  EXPECT_EQ(end, WatchEnd::kClosed);
  EXPECT_THAT(watchAll(api, watchFrom("1", "corral.dev/cluster=other")),
              ElementsAre("ADDED b 3", "BOOKMARK 4"));
  // Without a version: the current objects, as the server's synthetic ADDED.
  EXPECT_THAT(watchAll(api, {}), ElementsAre("ADDED b 3", "BOOKMARK 4"));
}

TEST(FakeKubeApiTest, AWatchFromAnExpiredVersionIsExpired) {
  FakeKubeApi api;
  ASSERT_TRUE(api.apply(secretPath("a"), secret("a", "demo")).isOk());
  ASSERT_TRUE(api.apply(secretPath("a"), secret("a", "demo", "2")).isOk());
  api.expireBefore(2);
  WatchEnd end = WatchEnd::kClosed;
  EXPECT_TRUE(watchAll(api, watchFrom("1"), &end).empty());
  EXPECT_EQ(end, WatchEnd::kExpired);
  EXPECT_THAT(watchAll(api, watchFrom("2")), ElementsAre("BOOKMARK 2"));
}

TEST(FakeKubeApiTest, FailNextFailsOneCallAndChangesNothing) {
  FakeKubeApi api;
  api.failNext(unavailable("the API server is restarting"));
  Status st = api.apply(secretPath("a"), secret("a", "demo")).status();
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_FALSE(api.object(secretPath("a")).has_value());
  EXPECT_TRUE(api.apply(secretPath("a"), secret("a", "demo")).isOk());
  EXPECT_EQ(api.requestCount(), 2u);
  EXPECT_THAT(api.calls(), ElementsAre("PATCH /api/v1/namespaces/ns/secrets/a",
                                       "PATCH /api/v1/namespaces/ns/secrets/a"));
}

TEST(LabelSelectorTest, MatchesEqualityInequalityAndExistence) {
  Json labels = {{"app", "slurm"}, {"tier", "worker"}};
  std::pair<std::string, bool> cases[] = {
      {"", true},           {"app=slurm", true},          {"app==slurm", true},
      {"app=other", false}, {"app!=other", true},         {"app!=slurm", false},
      {"tier", true},       {"missing", false},           {"!missing", true},
      {"!tier", false},     {"app=slurm,tier=worker", true}, {"app=slurm,tier=login", false},
      {"missing!=x", true},
  };
  for (const auto& [selector, want] : cases) {
    auto got = matchesLabelSelector(labels, selector);
    ASSERT_TRUE(got.isOk()) << selector;
    EXPECT_EQ(*got, want) << selector;
  }
  EXPECT_EQ(matchesLabelSelector(labels, "app in (a,b)").status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace corral::kube
