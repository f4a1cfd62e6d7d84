#include "kube/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <stdlib.h>

#include <map>

#include "common/fs.h"
#include "unit/kube/test_pki.h"

namespace corral::kube {
namespace {

using ::testing::HasSubstr;
using testing::testPki;

std::string base64(const std::string& in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

class KubeConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/corral-kubeconfig-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { ASSERT_TRUE(removeTree(dir_).isOk()); }

  std::string write(const std::string& name, const std::string& content) {
    std::string path = dir_ + "/" + name;
    EXPECT_TRUE(writeFileAtomic(path, content, 0600).isOk());
    return path;
  }

  std::string dir_;
};

// Two contexts over two clusters and two users: one with everything in
// files (relative paths), one with everything inline.
std::string twoContexts(const std::string& current) {
  const auto& pki = testPki();
  return R"(apiVersion: v1
kind: Config
current-context: )" + current + R"(
contexts:
- name: files
  context: {cluster: local, user: admin}
- name: inline
  context: {cluster: remote, user: robot, namespace: slurm}
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority: pki/ca.crt
- name: remote
  cluster:
    server: https://kube.example:443/prefix
    certificate-authority-data: )" + base64(pki.ca.certPem) + R"(
users:
- name: admin
  user:
    client-certificate: pki/client.crt
    client-key: /ABS/client.key
- name: robot
  user:
    client-certificate-data: )" + base64(pki.client.certPem) + R"(
    client-key-data: )" + base64(pki.client.keyPem) + R"(
    token: abc.def
)";
}

TEST_F(KubeConfigTest, ReadsTheCurrentContextsFilesRelativeToTheBaseDir) {
  const auto& pki = testPki();
  ASSERT_TRUE(makeDirs(dir_ + "/pki").isOk());
  write("pki/ca.crt", pki.ca.certPem);
  write("pki/client.crt", pki.client.certPem);
  std::string keyPath = write("pki/client.key", pki.client.keyPem);
  std::string text = twoContexts("files");
  text.replace(text.find("/ABS/client.key"), 15, keyPath);

  auto c = parseKubeConfig(text, dir_);
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");
  EXPECT_EQ(c->caPem, pki.ca.certPem);
  EXPECT_EQ(c->clientCertPem, pki.client.certPem);
  EXPECT_EQ(c->clientKeyPem, pki.client.keyPem);
  EXPECT_EQ(c->token, "");
  EXPECT_EQ(c->tokenFile, "");
  EXPECT_FALSE(c->insecureSkipTlsVerify);
  EXPECT_EQ(c->defaultNamespace, "default");
  EXPECT_EQ(c->source, "kubeconfig (context \"files\")");
}

TEST_F(KubeConfigTest, ANamedContextWinsOverTheCurrentOneAndDataFieldsAreDecoded) {
  const auto& pki = testPki();
  auto c = parseKubeConfig(twoContexts("files"), dir_, "inline");
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->server, "https://kube.example:443/prefix");
  EXPECT_EQ(c->caPem, pki.ca.certPem);
  EXPECT_EQ(c->clientCertPem, pki.client.certPem);
  EXPECT_EQ(c->clientKeyPem, pki.client.keyPem);
  EXPECT_EQ(c->token, "abc.def");
  EXPECT_EQ(c->defaultNamespace, "slurm");
}

TEST_F(KubeConfigTest, DataWinsOverItsFileForm) {
  const auto& pki = testPki();
  std::string text = "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
                     "clusters: [{name: k, cluster: {server: 'https://h', certificate-authority: "
                     "/nonexistent/ca.crt, certificate-authority-data: " +
                     base64(pki.otherCa.certPem) + "}}]\n";
  auto c = parseKubeConfig(text, dir_);
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->caPem, pki.otherCa.certPem);
  EXPECT_EQ(c->clientCertPem, "");  // A context without a user: anonymous.
}

TEST_F(KubeConfigTest, ReadsTokenFileAndInsecureSkipTlsVerify) {
  write("token", "  s3cr3t-token\n");
  std::string text =
      "current-context: c\n"
      "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
      "clusters: [{name: k, cluster: {server: 'http://127.0.0.1:8080', "
      "insecure-skip-tls-verify: true}}]\n"
      "users: [{name: u, user: {tokenFile: token}}]\n";
  auto c = parseKubeConfig(text, dir_);
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_TRUE(c->insecureSkipTlsVerify);
  EXPECT_EQ(c->server, "http://127.0.0.1:8080");
  EXPECT_EQ(c->tokenFile, dir_ + "/token");
  EXPECT_EQ(c->token, "s3cr3t-token");
}

TEST_F(KubeConfigTest, LoadResolvesPathsAgainstTheFilesDirectoryAndNamesTheFile) {
  const auto& pki = testPki();
  write("ca.pem", pki.ca.certPem);
  std::string path = write(
      "config", "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
                "clusters: [{name: k, cluster: {server: 'https://h:1', certificate-authority: "
                "ca.pem}}]\n");
  auto c = loadKubeConfig(path);
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->caPem, pki.ca.certPem);
  EXPECT_EQ(c->source, "kubeconfig " + path + " (context \"c\")");

  auto missing = loadKubeConfig(dir_ + "/nope");
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "kubeconfig: cannot read " + dir_ + "/nope: No such file or directory");

  auto bad = loadKubeConfig(path, "other");
  EXPECT_EQ(bad.status().message(), "kubeconfig " + path +
                                        ": context \"other\" not found (the file has \"c\")");
}

TEST_F(KubeConfigTest, SaysWhatIsWrong) {
  std::string head = "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n";
  std::string cluster = "clusters: [{name: k, cluster: {server: 'https://h'}}]\n";
  std::string ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  struct Case {
    std::string yaml;
    Code code;
    std::string message;
  } cases[] = {
      {"[1, 2]", Code::kInvalidArgument,
       "kubeconfig: not a YAML mapping (apiVersion:, clusters:, …)"},
      {"a: [", Code::kInvalidArgument, "kubeconfig: not valid YAML: "},
      {"clusters: []\n", Code::kInvalidArgument,
       "kubeconfig: no current-context, and no context was named"},
      {"current-context: x\ncontexts: [{name: a}, {name: b}]\n", Code::kInvalidArgument,
       "kubeconfig: context \"x\" not found (the file has \"a\", \"b\")"},
      {"current-context: x\n", Code::kInvalidArgument,
       "kubeconfig: context \"x\" not found (the file has no contexts)"},
      {"current-context: c\ncontexts: [{name: c, context: {user: u}}]\n", Code::kInvalidArgument,
       "kubeconfig: context \"c\" names no cluster"},
      {head, Code::kInvalidArgument,
       "kubeconfig: cluster \"k\" not found (the file has no clusters)"},
      {head + cluster, Code::kInvalidArgument,
       "kubeconfig: user \"u\" not found (the file has no users)"},
      {head + cluster + "users: [{name: v, user: {token: t}}]\n", Code::kInvalidArgument,
       "kubeconfig: user \"u\" not found (the file has \"v\")"},
      {head + "clusters: [{name: k, cluster: {}}]\n", Code::kInvalidArgument,
       "kubeconfig: cluster \"k\" has no server"},
      {head + "clusters: [{name: k, cluster: {server: [a]}}]\n", Code::kInvalidArgument,
       "kubeconfig: cluster \"k\": server must be a string"},
      {head + "clusters: [{name: k, cluster: {server: 'h:6443'}}]\n", Code::kInvalidArgument,
       "kubeconfig: cluster \"k\": server \"h:6443\" must be an https:// (or http://) URL"},
      {head + "clusters: [{name: k, cluster: {server: 'https://h', insecure-skip-tls-verify: "
              "maybe}}]\n",
       Code::kInvalidArgument,
       "kubeconfig: cluster \"k\": insecure-skip-tls-verify must be true or false"},
      {head + "clusters: [{name: k, cluster: {server: 'https://h', insecure-skip-tls-verify: "
              "true, certificate-authority-data: " + base64(ca) + "}}]\n",
       Code::kInvalidArgument,
       "kubeconfig: cluster \"k\": insecure-skip-tls-verify and a certificate-authority "
       "contradict each other; keep one"},
      {head + "clusters: [{name: k, cluster: {server: 'https://h', certificate-authority-data: "
              "'not*base64'}}]\n",
       Code::kInvalidArgument,
       "kubeconfig: cluster \"k\": certificate-authority-data is not valid base64 (its length "
       "(10 characters without whitespace) is not a multiple of 4)"},
      {head + "clusters: [{name: k, cluster: {server: 'https://h', certificate-authority-data: "
              "'ab*d'}}]\n",
       Code::kInvalidArgument,
       "kubeconfig: cluster \"k\": certificate-authority-data is not valid base64 (character "
       "\"*\" at 2 is not base64)"},
      {head + "clusters: [{name: k, cluster: {server: 'https://h', certificate-authority-data: " +
           base64("hello") + "}}]\n",
       Code::kInvalidArgument,
       "kubeconfig: cluster \"k\": certificate-authority-data holds no PEM block (-----BEGIN …)"},
      {head + "clusters: [{name: k, cluster: {server: 'https://h', certificate-authority: "
              "/nonexistent/ca.crt}}]\n",
       Code::kNotFound,
       "kubeconfig: cluster \"k\": certificate-authority: cannot read /nonexistent/ca.crt: No "
       "such file or directory"},
      {head + cluster + "users: [{name: u, user: {client-certificate-data: " + base64(ca) +
           "}}]\n",
       Code::kInvalidArgument,
       "kubeconfig: user \"u\" has a client certificate but no client-key; give both"},
      {head + cluster + "users: [{name: u, user: {client-key-data: " + base64(ca) + "}}]\n",
       Code::kInvalidArgument,
       "kubeconfig: user \"u\" has a client key but no client-certificate; give both"},
      {head + cluster + "users: [{name: u, user: {client-key-data: 'YQ='}}]\n",
       Code::kInvalidArgument,
       "kubeconfig: user \"u\": client-key-data is not valid base64 (its length (3 characters "
       "without whitespace) is not a multiple of 4)"},
      {head + cluster + "users: [{name: u, user: {tokenFile: /nonexistent/token}}]\n",
       Code::kNotFound,
       "kubeconfig: user \"u\": tokenFile: cannot read /nonexistent/token: No such file or "
       "directory"},
      {head + cluster + "users: [{name: u, user: {exec: {command: aws}}}]\n",
       Code::kInvalidArgument,
       "kubeconfig: user \"u\" authenticates with exec, which corral does not support; give it "
       "client-certificate and client-key, token or tokenFile"},
      {head + cluster + "users: [{name: u, user: {username: a, password: b}}]\n",
       Code::kInvalidArgument,
       "kubeconfig: user \"u\" authenticates with username, which corral does not support; give "
       "it client-certificate and client-key, token or tokenFile"},
  };
  for (const auto& c : cases) {
    auto r = parseKubeConfig(c.yaml, dir_);
    ASSERT_FALSE(r.isOk()) << c.yaml;
    EXPECT_EQ(r.status().code(), c.code) << c.yaml;
    if (c.message.ends_with(": ")) {
      EXPECT_THAT(r.status().message(), ::testing::StartsWith(c.message)) << c.yaml;
    } else {
      EXPECT_EQ(r.status().message(), c.message) << c.yaml;
    }
  }
}

TEST_F(KubeConfigTest, AnExecUserWithATokenUsesTheToken) {
  std::string text = "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
                     "clusters: [{name: k, cluster: {server: 'https://h'}}]\n"
                     "users: [{name: u, user: {token: t, exec: {command: aws}}}]\n";
  auto c = parseKubeConfig(text, dir_);
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->token, "t");
}

EnvLookup envOf(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST_F(KubeConfigTest, InClusterReadsTheServiceAccount) {
  write("token", "sa-token\n");
  write("ca.crt", testPki().ca.certPem);
  write("namespace", "corral-system\n");
  auto c = inClusterConfig(
      dir_, envOf({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}));
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->token, "sa-token");
  EXPECT_EQ(c->tokenFile, dir_ + "/token");
  EXPECT_EQ(c->caPem, testPki().ca.certPem);
  EXPECT_EQ(c->defaultNamespace, "corral-system");
  EXPECT_EQ(c->clientCertPem, "");
  EXPECT_EQ(c->source, "in-cluster service account (" + dir_ + ")");
}

TEST_F(KubeConfigTest, InClusterBracketsAnIpv6HostAndDefaultsTheNamespace) {
  write("token", "t");
  write("ca.crt", testPki().ca.certPem);
  auto c = inClusterConfig(
      dir_, envOf({{"KUBERNETES_SERVICE_HOST", "fd00::1"}, {"KUBERNETES_SERVICE_PORT", "6443"}}));
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->server, "https://[fd00::1]:6443");
  EXPECT_EQ(c->defaultNamespace, "default");
}

TEST_F(KubeConfigTest, InClusterSaysWhatIsMissing) {
  auto env = envOf({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}});
  auto outside = inClusterConfig(dir_, envOf({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}}));
  EXPECT_EQ(outside.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(outside.status().message(),
            "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set "
            "(corrald is not running in a Kubernetes pod; give it a kubeconfig instead)");

  auto noToken = inClusterConfig(dir_, env);
  EXPECT_EQ(noToken.status().code(), Code::kNotFound);
  EXPECT_EQ(noToken.status().message(), "in-cluster config: service account token: cannot read " +
                                            dir_ + "/token: No such file or directory");

  write("token", "t");
  auto noCa = inClusterConfig(dir_, env);
  EXPECT_EQ(noCa.status().code(), Code::kNotFound);
  EXPECT_EQ(noCa.status().message(), "in-cluster config: service account CA: cannot read " + dir_ +
                                         "/ca.crt: No such file or directory");
}

}  // namespace
}  // namespace corral::kube
