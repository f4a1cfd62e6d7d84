// pull against a fake registry: authentication, manifest lists, the cache,
// concurrency, and the errors a user sees.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "fakes/fake_registry.h"
#include "image/image.h"
#include "image/manifest.h"
#include "support/image_test_util.h"

namespace corral::image {
namespace {

using testing::exists;
using testing::FakeRegistry;
using testing::readText;
using testing::TarBuilder;
using testing::TempDir;

struct Published {
  std::string manifestDigest;  // The linux/amd64 image manifest.
  std::string listDigest;
  std::vector<std::string> layers;
  std::string config;
};

// Publishes test/app:<tag>: two layers (the second whites out a file of the
// first) behind a manifest list (or OCI index) with an arm64 decoy.
Published publish(FakeRegistry& reg, const TempDir& tmp, const std::string& tag, bool oci = false) {
  Published p;
  std::string l1 = tmp / "l1.tar.gz", l2 = tmp / "l2.tar.gz";
  TarBuilder()
      .file("bin/hello", "#!/bin/sh\necho hello\n", 0755)
      .file("etc/old", "old")
      .symlink("bin/sh", "hello")
      .write(l1);
  TarBuilder().file("etc/.wh.old", "").file("etc/new", "new").write(l2);
  p.layers = {reg.addBlob(readText(l1)), reg.addBlob(readText(l2))};
  p.config =
      reg.addBlob(R"({"architecture":"amd64","os":"linux","config":{"Env":["PATH=/bin","A=1"],)"
                  R"("WorkingDir":"/srv","Entrypoint":["/bin/hello"],"Cmd":["--loud"]},)"
                  R"("rootfs":{"type":"layers","diff_ids":[]}})");
  nlohmann::json m = {
      {"schemaVersion", 2},
      {"mediaType", oci ? kOciManifest : kDockerManifest},
      {"config", {{"mediaType", kDockerConfig}, {"size", 10}, {"digest", p.config}}},
      {"layers", nlohmann::json::array()}};
  for (const auto& l : p.layers) {
    m["layers"].push_back({{"mediaType", kDockerLayerGzip}, {"size", 100}, {"digest", l}});
  }
  p.manifestDigest =
      reg.addManifest("test/app", "", oci ? kOciManifest : kDockerManifest, m.dump());
  std::string decoy = reg.addManifest("test/app", "", kDockerManifest, "{\"decoy\":true}");
  nlohmann::json list = {{"schemaVersion", 2},
                         {"mediaType", oci ? kOciIndex : kDockerManifestList},
                         {"manifests",
                          {{{"mediaType", kDockerManifest},
                            {"digest", decoy},
                            {"size", 1},
                            {"platform", {{"os", "linux"}, {"architecture", "arm64"}}}},
                           {{"mediaType", kDockerManifest},
                            {"digest", p.manifestDigest},
                            {"size", 1},
                            {"platform", {{"os", "linux"}, {"architecture", "amd64"}}}}}}};
  p.listDigest =
      reg.addManifest("test/app", tag, oci ? kOciIndex : kDockerManifestList, list.dump());
  return p;
}

class PullTest : public ::testing::Test {
 protected:
  Reference ref(const std::string& suffix) {
    auto r = parseReference(reg_.host() + "/test/app" + suffix);
    EXPECT_TRUE(r.isOk()) << r.status().message();
    return *r;
  }
  RegistryOptions options() {
    RegistryOptions o;
    o.httpRegistries = {reg_.host()};
    o.connectTimeout = std::chrono::seconds(5);
    return o;
  }
  std::string cache() const { return tmp_ / "cache"; }

  TempDir tmp_;
  FakeRegistry reg_;
};

TEST_F(PullTest, PullsThroughTokenAuthAndManifestList) {
  Published img = publish(reg_, tmp_, "v1");
  std::vector<std::string> progress;
  auto pulled =
      pull(ref(":v1"), cache(), options(), [&](const std::string& l) { progress.push_back(l); });
  ASSERT_TRUE(pulled.isOk()) << pulled.status().message();
  EXPECT_EQ(pulled->manifestDigest, img.manifestDigest);
  EXPECT_EQ(pulled->layers, img.layers);
  EXPECT_FALSE(pulled->cached);
  EXPECT_EQ(pulled->config.env, (std::vector<std::string>{"PATH=/bin", "A=1"}));
  EXPECT_EQ(pulled->config.workdir, "/srv");
  EXPECT_EQ(pulled->config.entrypoint, std::vector<std::string>{"/bin/hello"});
  EXPECT_EQ(pulled->config.cmd, std::vector<std::string>{"--loud"});
  EXPECT_EQ(pulled->rootfs, cache() + "/rootfs/" + img.manifestDigest.substr(7));
  EXPECT_EQ(readText(pulled->rootfs + "/bin/hello"), "#!/bin/sh\necho hello\n");
  EXPECT_EQ(readText(pulled->rootfs + "/etc/new"), "new");
  EXPECT_FALSE(exists(pulled->rootfs + "/etc/old"));
  auto stored = imageConfigFromJson(readText(pulled->rootfs + ".json"));
  ASSERT_TRUE(stored.isOk());
  EXPECT_EQ(stored->cmd, pulled->config.cmd);
  for (const auto& l : img.layers) EXPECT_TRUE(exists(cache() + "/blobs/sha256/" + l.substr(7)));
  EXPECT_GE(reg_.tokenRequests(), 1);
  EXPECT_EQ(reg_.lastScope(), "repository:test/app:pull");
  EXPECT_EQ(reg_.totalBlobFetches(), 3);  // Two layers and the config.
  EXPECT_FALSE(progress.empty());

  // Again: nothing to download or unpack.
  auto again = pull(ref(":v1"), cache(), options());
  ASSERT_TRUE(again.isOk()) << again.status().message();
  EXPECT_TRUE(again->cached);
  EXPECT_EQ(again->rootfs, pulled->rootfs);
  EXPECT_EQ(again->config.env, pulled->config.env);
  EXPECT_EQ(reg_.totalBlobFetches(), 3);
}

TEST_F(PullTest, UnpacksAgainFromCachedBlobs) {
  Published img = publish(reg_, tmp_, "v1");
  auto first = pull(ref(":v1"), cache(), options());
  ASSERT_TRUE(first.isOk()) << first.status().message();
  std::filesystem::remove_all(first->rootfs);
  auto second = pull(ref(":v1"), cache(), options());
  ASSERT_TRUE(second.isOk()) << second.status().message();
  EXPECT_FALSE(second->cached);           // Unpacked again...
  EXPECT_EQ(reg_.totalBlobFetches(), 3);  // ...without downloading.
  EXPECT_EQ(readText(second->rootfs + "/etc/new"), "new");
}

TEST_F(PullTest, PullsByDigestAndOciIndex) {
  Published img = publish(reg_, tmp_, "oci", /*oci=*/true);
  auto byTag = pull(ref(":oci"), cache(), options());
  ASSERT_TRUE(byTag.isOk()) << byTag.status().message();
  EXPECT_EQ(byTag->manifestDigest, img.manifestDigest);
  auto byListDigest = pull(ref("@" + img.listDigest), cache(), options());
  ASSERT_TRUE(byListDigest.isOk()) << byListDigest.status().message();
  EXPECT_EQ(byListDigest->manifestDigest, img.manifestDigest);
  EXPECT_TRUE(byListDigest->cached);
  auto byImageDigest = pull(ref("@" + img.manifestDigest), cache(), options());
  ASSERT_TRUE(byImageDigest.isOk()) << byImageDigest.status().message();
  EXPECT_EQ(byImageDigest->manifestDigest, img.manifestDigest);
}

TEST_F(PullTest, AccessTokenKeyWorksToo) {
  publish(reg_, tmp_, "v1");
  reg_.useAccessToken = true;
  auto pulled = pull(ref(":v1"), cache(), options());
  ASSERT_TRUE(pulled.isOk()) << pulled.status().message();
}

TEST_F(PullTest, MissingTagIsNotFound) {
  publish(reg_, tmp_, "v1");
  auto pulled = pull(ref(":nope"), cache(), options());
  ASSERT_FALSE(pulled.isOk());
  EXPECT_EQ(pulled.status().code(), Code::kNotFound);
  EXPECT_EQ(pulled.status().message(),
            "image not found: " + reg_.host() +
                "/test/app:nope (the registry has no such repository or tag)");
}

TEST_F(PullTest, MissingBlobIsNotFound) {
  publish(reg_, tmp_, "v1");
  nlohmann::json m = {{"schemaVersion", 2},
                      {"mediaType", kDockerManifest},
                      {"config", {{"digest", sha256Digest("nowhere")}, {"size", 1}}},
                      {"layers", nlohmann::json::array()}};
  reg_.addManifest("test/app", "broken", kDockerManifest, m.dump());
  auto pulled = pull(ref(":broken"), cache(), options());
  ASSERT_FALSE(pulled.isOk());
  EXPECT_EQ(pulled.status().code(), Code::kNotFound);
  EXPECT_NE(pulled.status().message().find(sha256Digest("nowhere")), std::string::npos);
}

TEST_F(PullTest, UnreachableRegistryIsUnavailable) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len);
  close(s);  // Nobody listens there now.
  std::string host = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  RegistryOptions o;
  o.httpRegistries = {"*"};
  o.connectTimeout = std::chrono::seconds(2);
  auto pulled = pull(*parseReference(host + "/test/app:v1"), cache(), o);
  ASSERT_FALSE(pulled.isOk());
  EXPECT_EQ(pulled.status().code(), Code::kUnavailable);
  EXPECT_EQ(pulled.status().message().rfind("registry unreachable: " + host + ": ", 0), 0u)
      << pulled.status().message();
}

TEST_F(PullTest, BadDigestFailsAndLeavesNothing) {
  Published img = publish(reg_, tmp_, "v1");
  reg_.corruptBlob(img.layers[1], "tampered content");
  auto pulled = pull(ref(":v1"), cache(), options());
  ASSERT_FALSE(pulled.isOk());
  EXPECT_NE(pulled.status().message().find("digest mismatch for layer " + img.layers[1]),
            std::string::npos)
      << pulled.status().message();
  std::string hex = img.layers[1].substr(7);
  EXPECT_FALSE(exists(cache() + "/blobs/sha256/" + hex));
  EXPECT_FALSE(exists(cache() + "/blobs/sha256/" + hex + ".partial"));
  EXPECT_FALSE(exists(cache() + "/rootfs/" + img.manifestDigest.substr(7)));
}

TEST_F(PullTest, RejectedTokenIsAuthenticationFailure) {
  publish(reg_, tmp_, "v1");
  reg_.rejectTokens = true;
  auto pulled = pull(ref(":v1"), cache(), options());
  ASSERT_FALSE(pulled.isOk());
  EXPECT_EQ(pulled.status().code(), Code::kUnauthenticated);
  EXPECT_EQ(pulled.status().message().rfind("authentication failed: ", 0), 0u)
      << pulled.status().message();
}

TEST_F(PullTest, ConcurrentPullsDownloadEachBlobOnce) {
  Published img = publish(reg_, tmp_, "v1");
  reg_.blobDelayMs = 20;  // Long enough that the pulls overlap.
  constexpr int kPullers = 6;
  std::vector<StatusOr<PulledImage>> results(kPullers, Status(Code::kInternal, "not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kPullers; ++i) {
    threads.emplace_back([&, i] { results[i] = pull(ref(":v1"), cache(), options()); });
  }
  for (auto& t : threads) t.join();
  for (const auto& r : results) {
    ASSERT_TRUE(r.isOk()) << r.status().message();
    EXPECT_EQ(r->rootfs, results[0]->rootfs);
  }
  for (const auto& l : img.layers) EXPECT_EQ(reg_.blobFetches(l), 1) << l;
  EXPECT_EQ(reg_.blobFetches(img.config), 1);
  EXPECT_EQ(readText(results[0]->rootfs + "/etc/new"), "new");
  // No temporary leftovers.
  for (const auto& e : std::filesystem::directory_iterator(cache() + "/rootfs")) {
    EXPECT_EQ(e.path().string().find(".partial"), std::string::npos) << e.path();
  }
}

TEST(PullBasicAuth, UsesNetrcCredentials) {
  TempDir tmp;
  FakeRegistry reg(FakeRegistry::Auth::kBasic);
  publish(reg, tmp, "v1");
  RegistryOptions o;
  o.httpRegistries = {"*"};
  auto ref = *parseReference(reg.host() + "/test/app:v1");

  auto anonymous = pull(ref, tmp / "c1", o);
  ASSERT_FALSE(anonymous.isOk());
  EXPECT_EQ(anonymous.status().code(), Code::kUnauthenticated);
  EXPECT_NE(anonymous.status().message().find("requires a login"), std::string::npos)
      << anonymous.status().message();

  testing::writeText(tmp / "credentials", "machine 127.0.0.1 login alice password wrong\n");
  o.credentialsFile = tmp / "credentials";
  auto wrong = pull(ref, tmp / "c2", o);
  ASSERT_FALSE(wrong.isOk());
  EXPECT_EQ(wrong.status().code(), Code::kUnauthenticated);

  testing::writeText(tmp / "credentials",
                     "machine " + reg.host() + " login alice password s3cret\n");
  auto ok = pull(ref, tmp / "c3", o);
  ASSERT_TRUE(ok.isOk()) << ok.status().message();
  EXPECT_TRUE(exists(ok->rootfs + "/bin/hello"));
}

}  // namespace
}  // namespace corral::image
