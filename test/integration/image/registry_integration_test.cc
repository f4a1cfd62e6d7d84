// push and pull against the real registry (Debian's docker-registry, the
// distribution project's v2 server), when it is installed.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "image/image.h"
#include "support/image_test_util.h"

extern char** environ;

namespace corral::image {
namespace {

using testing::exists;
using testing::readText;
using testing::TempDir;
using testing::writeText;

constexpr const char* kRegistry = "/usr/bin/docker-registry";

int freePort() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len);
  close(s);
  return ntohs(addr.sin_port);
}

class DockerRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A missing prerequisite (scripts/install-deps.sh installs it) fails.
    if (access(kRegistry, X_OK) != 0) FAIL() << kRegistry << " is not installed";
    port_ = freePort();
    writeText(tmp_ / "config.yml",
              "version: 0.1\n"
              "log:\n  level: error\n"
              "storage:\n  filesystem:\n    rootdirectory: " +
                  tmp_ / "data" +
                  "\n"
                  "http:\n  addr: 127.0.0.1:" +
                  std::to_string(port_) + "\n");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    std::string log = tmp_ / "registry.log";
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::string config = tmp_ / "config.yml";
    std::vector<char*> argv = {const_cast<char*>(kRegistry), const_cast<char*>("serve"),
                               config.data(), nullptr};
    ASSERT_EQ(posix_spawn(&pid_, kRegistry, &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    // Starting a server is the one wait in these tests.
    httplib::Client client("127.0.0.1", port_);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (true) {
      auto res = client.Get("/v2/");
      if (res && res->status == 200) break;
      ASSERT_LT(std::chrono::steady_clock::now(), deadline)
          << "docker-registry did not start: " << readText(log);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status;
      waitpid(pid_, &status, 0);
    }
  }

  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
  RegistryOptions options() const {
    RegistryOptions o;
    o.httpRegistries = {host()};
    return o;
  }

  TempDir tmp_;
  int port_ = 0;
  pid_t pid_ = -1;
};

TEST_F(DockerRegistryTest, PushThenPullTwoLayersWithWhiteout) {
  // A busybox-style root, and a layer above that deletes and adds files.
  std::string lower = tmp_ / "lower", upper = tmp_ / "upper";
  std::string busybox = exists("/bin/busybox") ? readText("/bin/busybox") : "#!/bin/sh\n";
  writeText(lower + "/bin/busybox", busybox);
  chmod((lower + "/bin/busybox").c_str(), 0755);
  for (const char* tool : {"sh", "ls", "cat"}) symlink("busybox", (lower + "/bin/" + tool).c_str());
  writeText(lower + "/etc/remove-me", "lower");
  writeText(lower + "/etc/keep", "kept");
  writeText(lower + "/opt/gone/deep/file", "x");
  link((lower + "/bin/busybox").c_str(), (lower + "/bin/busybox-hardlink").c_str());
  writeText(upper + "/etc/.wh.remove-me", "");
  writeText(upper + "/opt/.wh.gone", "");
  writeText(upper + "/etc/added", "upper");

  ImageConfig config;
  config.env = {"PATH=/bin", "GREETING=hi"};
  config.workdir = "/etc";
  config.entrypoint = {"/bin/sh", "-c"};
  config.cmd = {"cat /etc/added"};
  auto ref = parseReference(host() + "/test/busybox:v1");
  ASSERT_TRUE(ref.isOk());
  Status pushed = push(*ref, {lower, upper}, config, options());
  ASSERT_TRUE(pushed.isOk()) << pushed.message();

  auto pulled = pull(*ref, tmp_ / "cache", options());
  ASSERT_TRUE(pulled.isOk()) << pulled.status().message();
  EXPECT_FALSE(pulled->cached);
  EXPECT_EQ(pulled->layers.size(), 2u);
  const std::string& root = pulled->rootfs;
  EXPECT_EQ(readText(root + "/bin/busybox"), busybox);
  EXPECT_EQ(std::filesystem::read_symlink(root + "/bin/sh"), "busybox");
  EXPECT_TRUE(std::filesystem::equivalent(root + "/bin/busybox", root + "/bin/busybox-hardlink"));
  EXPECT_FALSE(exists(root + "/etc/remove-me"));
  EXPECT_FALSE(exists(root + "/etc/.wh.remove-me"));
  EXPECT_FALSE(exists(root + "/opt/gone"));
  EXPECT_EQ(readText(root + "/etc/keep"), "kept");
  EXPECT_EQ(readText(root + "/etc/added"), "upper");
  EXPECT_EQ(pulled->config.env, config.env);
  EXPECT_EQ(pulled->config.workdir, config.workdir);
  EXPECT_EQ(pulled->config.entrypoint, config.entrypoint);
  EXPECT_EQ(pulled->config.cmd, config.cmd);

  // Layers are deterministic: pushing the same content again changes nothing.
  ASSERT_TRUE(push(*ref, {lower, upper}, config, options()).isOk());
  auto again = pull(*ref, tmp_ / "cache", options());
  ASSERT_TRUE(again.isOk()) << again.status().message();
  EXPECT_EQ(again->manifestDigest, pulled->manifestDigest);
  EXPECT_TRUE(again->cached);

  auto missing = pull(*parseReference(host() + "/test/busybox:nope"), tmp_ / "cache", options());
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  auto noRepo = pull(*parseReference(host() + "/test/nothing:v1"), tmp_ / "cache", options());
  ASSERT_FALSE(noRepo.isOk());
  EXPECT_EQ(noRepo.status().code(), Code::kNotFound);
  EXPECT_EQ(noRepo.status().message(),
            "image not found: " + host() +
                "/test/nothing:v1 (the registry has no such repository or tag)");
}

// Every Debian root has non-ASCII names (ca-certificates' links); in the "C"
// locale these tests run in, libarchive could not write them before push
// made its thread's names UTF-8.
TEST_F(DockerRegistryTest, PushesAndPullsNonAsciiNames) {
  std::string dir = tmp_ / "root";
  const std::string name = "NetLock_Arany_=Class_Gold=_F\xc5\x91tan\xc3\xbas\xc3\xadtv\xc3\xa1ny.pem";
  writeText(dir + "/usr/share/ca-certificates/" + name, "cert");
  std::filesystem::create_directories(dir + "/etc/ssl/certs");
  symlink(("/usr/share/ca-certificates/" + name).c_str(), (dir + "/etc/ssl/certs/988a38cb.0").c_str());
  auto ref = parseReference(host() + "/test/names:v1");
  ASSERT_TRUE(ref.isOk());
  Status pushed = push(*ref, {dir}, ImageConfig{}, options());
  ASSERT_TRUE(pushed.isOk()) << pushed.message();
  auto pulled = pull(*ref, tmp_ / "cache", options());
  ASSERT_TRUE(pulled.isOk()) << pulled.status().message();
  EXPECT_EQ(readText(pulled->rootfs + "/usr/share/ca-certificates/" + name), "cert");
  EXPECT_EQ(std::filesystem::read_symlink(pulled->rootfs + "/etc/ssl/certs/988a38cb.0"),
            "/usr/share/ca-certificates/" + name);
}

TEST_F(DockerRegistryTest, PushZstdLayersAsOciAndPullThem) {
  std::string lower = tmp_ / "zlower", upper = tmp_ / "zupper";
  writeText(lower + "/etc/os-release", "NAME=zstd\n");
  writeText(lower + "/bin/tool", "#!/bin/sh\necho tool\n");
  writeText(upper + "/etc/.wh.os-release", "");
  writeText(upper + "/etc/motd", "zstd upper\n");
  ImageConfig config;
  config.env = {"COMPRESSED=zstd"};
  PushOptions how;
  how.compression = PushOptions::Compression::kZstd;
  auto ref = parseReference(host() + "/test/zstd:v1");
  ASSERT_TRUE(ref.isOk());
  auto pushed = push(*ref, {lower, upper}, config, options(), how);
  ASSERT_TRUE(pushed.isOk()) << pushed.status().message();
  EXPECT_EQ(pushed->digest, pushed->amd64Digest);

  // The registry serves an OCI manifest whose layers are zstd.
  httplib::Client http("127.0.0.1", port_);
  auto m = http.Get("/v2/test/zstd/manifests/v1",
                    {{"Accept", "application/vnd.oci.image.manifest.v1+json"}});
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("application/vnd.oci.image.manifest.v1+json"), std::string::npos);
  EXPECT_NE(m->body.find("application/vnd.oci.image.layer.v1.tar+zstd"), std::string::npos)
      << m->body;
  EXPECT_EQ(m->body.find("tar.gzip"), std::string::npos) << m->body;

  auto pulled = pull(*ref, tmp_ / "cache", options());
  ASSERT_TRUE(pulled.isOk()) << pulled.status().message();
  EXPECT_EQ(pulled->manifestDigest, pushed->digest);
  EXPECT_EQ(readText(pulled->rootfs + "/bin/tool"), "#!/bin/sh\necho tool\n");
  EXPECT_EQ(readText(pulled->rootfs + "/etc/motd"), "zstd upper\n");
  EXPECT_FALSE(exists(pulled->rootfs + "/etc/os-release"));
  EXPECT_EQ(pulled->config.env, config.env);

  // By digest, as `IMAGE@sha256:…`.
  auto byDigest = parseReference(host() + "/test/zstd@" + pushed->digest);
  ASSERT_TRUE(byDigest.isOk());
  auto again = pull(*byDigest, tmp_ / "cache2", options());
  ASSERT_TRUE(again.isOk()) << again.status().message();
  EXPECT_EQ(readText(again->rootfs + "/etc/motd"), "zstd upper\n");
}

TEST_F(DockerRegistryTest, PushMultiPlatformListAndPullPicksAmd64) {
  std::string dir = tmp_ / "multi";
  writeText(dir + "/etc/os-release", "NAME=multi\n");
  for (auto compression : {PushOptions::Compression::kGzip, PushOptions::Compression::kZstd}) {
    bool zstd = compression == PushOptions::Compression::kZstd;
    PushOptions how;
    how.compression = compression;
    how.extraPlatforms = {"linux/arm64/v8", "linux/ppc64le"};
    auto ref = parseReference(host() + (zstd ? "/test/multi:oci" : "/test/multi:docker"));
    ASSERT_TRUE(ref.isOk());
    auto pushed = push(*ref, {dir}, ImageConfig{}, options(), how);
    ASSERT_TRUE(pushed.isOk()) << pushed.status().message();
    EXPECT_NE(pushed->digest, pushed->amd64Digest);

    httplib::Client http("127.0.0.1", port_);
    const char* listType = zstd ? "application/vnd.oci.image.index.v1+json"
                                : "application/vnd.docker.distribution.manifest.list.v2+json";
    auto list = http.Get("/v2/test/multi/manifests/" + ref->tag, {{"Accept", listType}});
    ASSERT_TRUE(list);
    EXPECT_EQ(list->status, 200);
    EXPECT_NE(list->body.find(listType), std::string::npos) << list->body;
    // linux/amd64 is not the first entry: the puller has to choose.
    size_t arm = list->body.find("arm64"), amd = list->body.find("amd64");
    ASSERT_NE(arm, std::string::npos);
    ASSERT_NE(amd, std::string::npos);
    EXPECT_LT(arm, amd);
    EXPECT_NE(list->body.find("\"variant\": \"v8\""), std::string::npos) << list->body;

    auto pulled = pull(*ref, tmp_ / (zstd ? "cache-oci" : "cache-docker"), options());
    ASSERT_TRUE(pulled.isOk()) << pulled.status().message();
    EXPECT_EQ(pulled->manifestDigest, pushed->amd64Digest);
    EXPECT_EQ(readText(pulled->rootfs + "/etc/os-release"), "NAME=multi\n");
  }
  PushOptions bad;
  bad.extraPlatforms = {"linux"};
  auto ref = parseReference(host() + "/test/multi:bad");
  auto refused = push(*ref, {dir}, ImageConfig{}, options(), bad);
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
  bad.extraPlatforms = {"linux/amd64"};
  EXPECT_FALSE(push(*ref, {dir}, ImageConfig{}, options(), bad).isOk());
}

}  // namespace
}  // namespace corral::image
