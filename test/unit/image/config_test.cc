// Config JSON, registry documents, digests and the small parsers of the
// registry client.

#include <gtest/gtest.h>

#include "image/image.h"
#include "image/manifest.h"
#include "image/registry_client.h"
#include "image/sha256.h"

namespace corral::image {
namespace {

TEST(ImageConfigJson, RoundTrips) {
  ImageConfig c;
  c.env = {"PATH=/usr/bin:/bin", "EMPTY=", "WITH_EQ=a=b"};
  c.workdir = "/work";
  c.entrypoint = {"/bin/sh", "-c"};
  c.cmd = {"echo \"hi\"", "ünïcode"};
  auto back = imageConfigFromJson(toJson(c));
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(back->env, c.env);
  EXPECT_EQ(back->workdir, c.workdir);
  EXPECT_EQ(back->entrypoint, c.entrypoint);
  EXPECT_EQ(back->cmd, c.cmd);
}

TEST(ImageConfigJson, EmptyAndMissingKeys) {
  auto c = imageConfigFromJson("{}");
  ASSERT_TRUE(c.isOk());
  EXPECT_TRUE(c->env.empty());
  EXPECT_EQ(c->workdir, "");
  auto n = imageConfigFromJson(R"({"env":null,"workdir":null,"cmd":["x"]})");
  ASSERT_TRUE(n.isOk());
  EXPECT_EQ(n->cmd, std::vector<std::string>{"x"});
}

TEST(ImageConfigJson, RejectsBadInput) {
  for (const char* bad :
       {"", "not json", "[]", R"({"env":"A=B"})", R"({"cmd":[1]})", R"({"workdir":5})"}) {
    auto c = imageConfigFromJson(bad);
    EXPECT_FALSE(c.isOk()) << bad;
    if (!c.isOk()) {
      EXPECT_EQ(c.status().code(), Code::kInvalidArgument);
    }
  }
}

TEST(ImageConfigBlob, TakesEnvWorkdirEntrypointCmd) {
  auto c = parseImageConfigBlob(R"({
    "architecture": "amd64", "os": "linux",
    "config": {"Env": ["PATH=/bin", "A=1"], "WorkingDir": "/srv",
               "Entrypoint": ["/entry.sh"], "Cmd": ["serve", "--port=80"],
               "Labels": {"x": "y"}},
    "rootfs": {"type": "layers", "diff_ids": []}})");
  ASSERT_TRUE(c.isOk()) << c.status().message();
  EXPECT_EQ(c->env, (std::vector<std::string>{"PATH=/bin", "A=1"}));
  EXPECT_EQ(c->workdir, "/srv");
  EXPECT_EQ(c->entrypoint, std::vector<std::string>{"/entry.sh"});
  EXPECT_EQ(c->cmd, (std::vector<std::string>{"serve", "--port=80"}));

  auto nulls =
      parseImageConfigBlob(R"({"config": {"Entrypoint": null, "Cmd": null, "Env": null}})");
  ASSERT_TRUE(nulls.isOk());
  EXPECT_TRUE(nulls->entrypoint.empty());
  auto none = parseImageConfigBlob(R"({"architecture": "amd64"})");
  ASSERT_TRUE(none.isOk());
  EXPECT_FALSE(parseImageConfigBlob("garbage").isOk());
}

TEST(ImageConfigBlob, PushedConfigParsesBack) {
  ImageConfig c;
  c.env = {"A=1"};
  c.cmd = {"/bin/sh"};
  std::string blob = makeConfigBlob(c, {sha256Digest("x")});
  auto back = parseImageConfigBlob(blob);
  ASSERT_TRUE(back.isOk());
  EXPECT_EQ(back->env, c.env);
  EXPECT_EQ(back->cmd, c.cmd);
  EXPECT_NE(blob.find("\"diff_ids\":[\"" + sha256Digest("x") + "\"]"), std::string::npos);
}

const std::string kD1 = sha256Digest("one");
const std::string kD2 = sha256Digest("two");

TEST(Manifest, KindFromContentTypeOrBody) {
  EXPECT_EQ(*manifestKind("{}", kDockerManifestList), ManifestKind::kIndex);
  EXPECT_EQ(*manifestKind("{}", std::string(kOciIndex) + "; charset=utf-8"), ManifestKind::kIndex);
  EXPECT_EQ(*manifestKind("{}", kOciManifest), ManifestKind::kImage);
  EXPECT_EQ(
      *manifestKind(R"({"mediaType":")" + std::string(kDockerManifest) + "\"}", "application/json"),
      ManifestKind::kImage);
  EXPECT_EQ(*manifestKind(R"({"schemaVersion":2,"manifests":[]})", ""), ManifestKind::kIndex);
  auto v1 = manifestKind(R"({"schemaVersion":1,"fsLayers":[]})", "application/json");
  ASSERT_FALSE(v1.isOk());
  EXPECT_NE(v1.status().message().find("schema 1"), std::string::npos);
}

TEST(Manifest, PicksLinuxAmd64) {
  std::string list = R"({"manifests":[
      {"digest":")" + kD1 +
                     R"(","platform":{"os":"linux","architecture":"arm64"}},
      {"digest":")" + kD2 +
                     R"(","platform":{"os":"linux","architecture":"amd64"}}]})";
  auto d = pickLinuxAmd64(list, "x");
  ASSERT_TRUE(d.isOk());
  EXPECT_EQ(*d, kD2);
  std::string armOnly = R"({"manifests":[
      {"digest":")" + kD1 +
                        R"(","platform":{"os":"linux","architecture":"arm64"}}]})";
  auto none = pickLinuxAmd64(armOnly, "host/img:1");
  ASSERT_FALSE(none.isOk());
  EXPECT_EQ(none.status().code(), Code::kNotFound);
  EXPECT_EQ(none.status().message(),
            "image host/img:1 has no linux/amd64 variant (it has: linux/arm64)");
}

TEST(Manifest, ParsesLayersAndRejectsUnsafeDigests) {
  std::string m = R"({"schemaVersion":2,"config":{"digest":")" + kD1 + R"(","size":3},
      "layers":[{"digest":")" +
                  kD2 + R"(","size":10},{"digest":")" + kD1 + R"(","size":5}]})";
  auto p = parseManifest(m);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_EQ(p->config.digest, kD1);
  ASSERT_EQ(p->layers.size(), 2u);
  EXPECT_EQ(p->layers[0].digest, kD2);
  EXPECT_EQ(p->layers[0].size, 10);
  // A digest becomes a file name in the cache: nothing else may pass.
  std::string evil = R"({"config":{"digest":")" + kD1 + R"("},
      "layers":[{"digest":"sha256:../../../etc/passwd"}]})";
  EXPECT_FALSE(parseManifest(evil).isOk());
  EXPECT_FALSE(parseManifest("[]").isOk());
  EXPECT_FALSE(parseManifest(R"({"layers":[]})").isOk());
}

TEST(Sha256, KnownVectors) {
  struct V {
    std::string in, hex;
  };
  std::vector<V> vectors = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {std::string(1000000, 'a'),
       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
  };
  for (const auto& v : vectors) {
    Sha256 h;
    h.update(v.in);
    EXPECT_EQ(h.hexDigest(), v.hex) << "len=" << v.in.size();
    // Fed in odd-sized pieces.
    Sha256 p;
    for (size_t i = 0; i < v.in.size(); i += 37) p.update(v.in.substr(i, 37));
    EXPECT_EQ(p.hexDigest(), v.hex);
  }
  EXPECT_EQ(sha256Digest("abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, DigestValidation) {
  EXPECT_TRUE(isSha256Digest(sha256Digest("x")));
  EXPECT_FALSE(isSha256Digest("sha256:" + std::string(63, 'a')));
  EXPECT_FALSE(isSha256Digest("sha256:" + std::string(64, 'A')));
  EXPECT_FALSE(isSha256Digest("sha512:" + std::string(64, 'a')));
  EXPECT_FALSE(isSha256Digest("sha256:" + std::string(62, 'a') + "/."));
}

TEST(Netrc, ParsesEntries) {
  auto c = parseNetrc(
      "# Enroot credentials\n"
      "machine nvcr.io login $oauthtoken password abc123\n"
      "machine auth.docker.io\n  login alice\n  password \"pa ss\"\n"
      "default login anon password none\n");
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].machine, "nvcr.io");
  EXPECT_EQ(c[0].login, "$oauthtoken");
  EXPECT_EQ(c[0].password, "abc123");
  EXPECT_EQ(c[1].machine, "auth.docker.io");
  EXPECT_EQ(c[1].password, "pa ss");
  EXPECT_EQ(c[2].machine, "");
  EXPECT_EQ(c[2].login, "anon");
}

TEST(Challenge, ParsesBearerAndBasic) {
  auto b = parseChallenge(
      R"(Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/ubuntu:pull,push")");
  EXPECT_EQ(b.scheme, "bearer");
  EXPECT_EQ(b.params["realm"], "https://auth.docker.io/token");
  EXPECT_EQ(b.params["service"], "registry.docker.io");
  EXPECT_EQ(b.params["scope"], "repository:library/ubuntu:pull,push");
  auto basic = parseChallenge(R"(Basic realm="Registry Realm")");
  EXPECT_EQ(basic.scheme, "basic");
  EXPECT_EQ(basic.params["realm"], "Registry Realm");
  auto bare = parseChallenge("Bearer realm=http://h/token, service=svc");
  EXPECT_EQ(bare.params["realm"], "http://h/token");
  EXPECT_EQ(bare.params["service"], "svc");
}

}  // namespace
}  // namespace corral::image
