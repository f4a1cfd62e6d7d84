#include <gtest/gtest.h>

#include "image/image.h"

namespace corral::image {
namespace {

const std::string kHex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

struct Good {
  std::string text, user, registry, repository, tag, digest;
};

class ParseGood : public ::testing::TestWithParam<Good> {};

TEST_P(ParseGood, Parses) {
  const Good& g = GetParam();
  auto r = parseReference(g.text);
  ASSERT_TRUE(r.isOk()) << g.text << ": " << r.status().message();
  EXPECT_EQ(r->user, g.user) << g.text;
  EXPECT_EQ(r->registry, g.registry) << g.text;
  EXPECT_EQ(r->repository, g.repository) << g.text;
  EXPECT_EQ(r->tag, g.tag) << g.text;
  EXPECT_EQ(r->digest, g.digest) << g.text;
}

INSTANTIATE_TEST_SUITE_P(
    References, ParseGood,
    ::testing::Values(
        Good{"ubuntu", "", "registry-1.docker.io", "library/ubuntu", "latest", ""},
        Good{"ubuntu:22.04", "", "registry-1.docker.io", "library/ubuntu", "22.04", ""},
        Good{"docker://ubuntu", "", "registry-1.docker.io", "library/ubuntu", "latest", ""},
        Good{"docker://alice@ubuntu:20.04", "alice", "registry-1.docker.io", "library/ubuntu",
             "20.04", ""},
        Good{"nvidia/cuda:12.2.0-base-ubuntu22.04", "", "registry-1.docker.io", "nvidia/cuda",
             "12.2.0-base-ubuntu22.04", ""},
        Good{"docker://nvcr.io#nvidia/pytorch:23.10-py3", "", "nvcr.io", "nvidia/pytorch",
             "23.10-py3", ""},
        Good{"docker://$oauthtoken@nvcr.io#nvidia/pytorch:23.10-py3", "$oauthtoken", "nvcr.io",
             "nvidia/pytorch", "23.10-py3", ""},
        Good{"nvcr.io/nvidia/pytorch:23.10-py3", "", "nvcr.io", "nvidia/pytorch", "23.10-py3", ""},
        Good{"localhost/test/busybox", "", "localhost", "test/busybox", "latest", ""},
        Good{"localhost:5000/test/busybox:v1", "", "localhost:5000", "test/busybox", "v1", ""},
        Good{"docker://127.0.0.1:5000#busybox", "", "127.0.0.1:5000", "busybox", "latest", ""},
        Good{"registry.example.com:443/a/b/c:t", "", "registry.example.com:443", "a/b/c", "t", ""},
        Good{"docker.io/ubuntu", "", "registry-1.docker.io", "library/ubuntu", "latest", ""},
        Good{"index.docker.io/library/ubuntu", "", "registry-1.docker.io", "library/ubuntu",
             "latest", ""},
        Good{"ubuntu@sha256:" + kHex, "", "registry-1.docker.io", "library/ubuntu", "",
             "sha256:" + kHex},
        Good{"ubuntu:22.04@sha256:" + kHex, "", "registry-1.docker.io", "library/ubuntu", "",
             "sha256:" + kHex},
        Good{"docker://bob@host.io#team/img@sha256:" + kHex, "bob", "host.io", "team/img", "",
             "sha256:" + kHex},
        Good{"my-registry.local:8080/some_team/my.image__x--y:Tag_1.0-rc", "",
             "my-registry.local:8080", "some_team/my.image__x--y", "Tag_1.0-rc", ""},
        Good{"[::1]:5000/test/img", "", "[::1]:5000", "test/img", "latest", ""},
        Good{"team/image", "", "registry-1.docker.io", "team/image", "latest", ""}));

class ParseBad : public ::testing::TestWithParam<std::string> {};

TEST_P(ParseBad, IsInvalidArgument) {
  auto r = parseReference(GetParam());
  ASSERT_FALSE(r.isOk()) << GetParam() << " parsed as " << r->toString();
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(r.status().message().rfind("malformed image reference '", 0), 0u)
      << r.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    References, ParseBad,
    ::testing::Values("", "docker://", "Ubuntu", "library/UBUNTU", "ubuntu:", "ubuntu:-tag",
                      "ubuntu:.tag", "ubuntu:ta/g", "ubuntu:" + std::string(129, 'a'), "ub..untu",
                      "ubuntu-", "-ubuntu", "ub___untu", "ub.-untu", "a//b", "/ubuntu", "ubuntu/",
                      "ubu ntu", "ubuntu\n", "ubuntu@sha256:abc",
                      "ubuntu@sha256:" + std::string(64, 'G'),
                      "ubuntu@sha512:" + std::string(128, 'a'),
                      "ubuntu@md5:" + std::string(32, 'a'), "@ubuntu", "docker://#ubuntu",
                      "host.io#", "a#b#c", "dockerd://ubuntu", "http://ubuntu", "host.io:99999/img",
                      "host.io:abc/img", "-bad.io/img", "bad_host.io/img", "a@b@c", "a:b:c",
                      "host:5000#img:tag:x", std::string(300, 'a'), "ubuntu$", "al/ice@ubuntu"));

TEST(Reference, ErrorSaysWhy) {
  auto r = parseReference("docker://nvcr.io#NVIDIA/pytorch");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(),
            "malformed image reference 'docker://nvcr.io#NVIDIA/pytorch': repository names must be "
            "lowercase ('NVIDIA')");
  r = parseReference("ubuntu:bad tag");
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("whitespace"), std::string::npos);
}

TEST(Reference, ToString) {
  EXPECT_EQ(parseReference("ubuntu")->toString(), "registry-1.docker.io/library/ubuntu:latest");
  EXPECT_EQ(parseReference("docker://u@nvcr.io#nvidia/pytorch:23.10-py3")->toString(),
            "nvcr.io/nvidia/pytorch:23.10-py3");
  EXPECT_EQ(parseReference("localhost:5000/x@sha256:" + kHex)->toString(),
            "localhost:5000/x@sha256:" + kHex);
  // What toString gives parses back to the same reference.
  for (const std::string& text : std::vector<std::string>{
           "ubuntu:22.04", "nvcr.io#nvidia/pytorch:1", "localhost:5000/a/b", "x@sha256:" + kHex}) {
    auto a = parseReference(text);
    ASSERT_TRUE(a.isOk());
    auto b = parseReference(a->toString());
    ASSERT_TRUE(b.isOk()) << a->toString();
    EXPECT_EQ(a->registry, b->registry);
    EXPECT_EQ(a->repository, b->repository);
    EXPECT_EQ(a->tag, b->tag);
    EXPECT_EQ(a->digest, b->digest);
  }
}

TEST(Reference, SquashfsPaths) {
  EXPECT_TRUE(isSquashfsPath("/shared/images/pytorch.sqsh"));
  EXPECT_TRUE(isSquashfsPath("./pytorch.sqsh"));
  EXPECT_FALSE(isSquashfsPath("pytorch.sqsh"));
  EXPECT_FALSE(isSquashfsPath("nvcr.io#nvidia/pytorch"));
  EXPECT_FALSE(isSquashfsPath("docker://ubuntu"));
  EXPECT_FALSE(isSquashfsPath(""));
}

}  // namespace
}  // namespace corral::image
