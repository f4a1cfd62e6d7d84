#include "unit/kube/test_api_server.h"

#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "unit/kube/test_pki.h"

namespace corral::kube::testing {
namespace {

X509* certOf(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return cert;
}

EVP_PKEY* keyOf(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return key;
}

// The server's certificate and key, and kube-apiserver's client
// verification: a certificate is optional, but one offered must chain to
// the CA.
bool setUpTls(SSL_CTX& ctx) {
  const TestPki& pki = testPki();
  X509* cert = certOf(pki.server.certPem);
  EVP_PKEY* key = keyOf(pki.server.keyPem);
  X509* ca = certOf(pki.ca.certPem);
  bool ok = cert && key && ca && SSL_CTX_use_certificate(&ctx, cert) == 1 &&
            SSL_CTX_use_PrivateKey(&ctx, key) == 1 &&
            X509_STORE_add_cert(SSL_CTX_get_cert_store(&ctx), ca) == 1;
  SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER, nullptr);
  X509_free(cert);
  EVP_PKEY_free(key);
  X509_free(ca);
  return ok;
}

std::string peerCommonName(const SSL* ssl) {
  if (ssl == nullptr) return "";
  X509* peer = SSL_get1_peer_certificate(ssl);
  if (peer == nullptr) return "";
  char buf[256] = {0};
  X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, buf, sizeof buf);
  X509_free(peer);
  return buf;
}

}  // namespace

TestApiServer::TestApiServer(Handler handler) : server_(setUpTls), handler_(std::move(handler)) {
  auto serve = [this](const httplib::Request& req, httplib::Response& res) {
    Seen s;
    s.method = req.method;
    s.path = req.path;
    s.target = req.target;
    for (const auto& [k, v] : req.params) s.params[k] = v;
    s.contentType = req.get_header_value("Content-Type");
    s.authorization = req.get_header_value("Authorization");
    s.clientCn = peerCommonName(req.ssl);
    s.body = req.body;
    {
      std::lock_guard<std::mutex> lock(mu_);
      seen_.push_back(s);
    }
    handler_(req, res);
  };
  server_.Get(".*", serve);
  server_.Post(".*", serve);
  server_.Put(".*", serve);
  server_.Patch(".*", serve);
  server_.Delete(".*", serve);
  port_ = server_.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  while (!server_.is_running()) std::this_thread::yield();
}

TestApiServer::~TestApiServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  server_.stop();
  thread_.join();
}

std::string TestApiServer::url() const { return "https://127.0.0.1:" + std::to_string(port_); }

KubeConfig TestApiServer::config() const {
  KubeConfig c;
  c.server = url();
  c.caPem = testPki().ca.certPem;
  c.clientCertPem = testPki().client.certPem;
  c.clientKeyPem = testPki().client.keyPem;
  c.source = "the test's config";
  return c;
}

std::vector<TestApiServer::Seen> TestApiServer::seen() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_;
}

void TestApiServer::holdOpen() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::seconds(20), [this] { return closing_; });
}

std::string TestApiServer::eventLine(const std::string& type, const nlohmann::json& object) {
  return nlohmann::json{{"type", type}, {"object", object}}.dump() + "\n";
}

}  // namespace corral::kube::testing
