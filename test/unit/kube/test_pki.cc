#include "unit/kube/test_pki.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdlib>
#include <memory>

namespace corral::kube::testing {
namespace {

struct Issued {
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
};

void check(bool ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "test PKI: %s failed\n", what);
    std::abort();
  }
}

void addExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  check(ext != nullptr, value);
  check(X509_add_ext(cert, ext, -1) == 1, "X509_add_ext");
  X509_EXTENSION_free(ext);
}

// A certificate for `cn` (and `org`), signed by `issuer` (self-signed when
// null), with `extensions` as {nid, value} pairs.
Issued issue(const char* cn, const char* org, const Issued* issuer,
             std::initializer_list<std::pair<int, const char*>> extensions) {
  static long serial = 1;
  Issued out;
  out.key = EVP_EC_gen("P-256");
  check(out.key != nullptr, "EVP_EC_gen");
  out.cert = X509_new();
  X509_set_version(out.cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(out.cert), serial++);
  X509_gmtime_adj(X509_getm_notBefore(out.cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(out.cert), 7 * 86400);
  X509_set_pubkey(out.cert, out.key);
  X509_NAME* name = X509_get_subject_name(out.cert);
  if (org != nullptr)
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(org), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509* issuerCert = issuer ? issuer->cert : out.cert;
  X509_set_issuer_name(out.cert, X509_get_subject_name(issuerCert));
  addExtension(out.cert, issuerCert, NID_subject_key_identifier, "hash");
  addExtension(out.cert, issuerCert, NID_authority_key_identifier, "keyid:always");
  for (const auto& [nid, value] : extensions) addExtension(out.cert, issuerCert, nid, value);
  check(X509_sign(out.cert, issuer ? issuer->key : out.key, EVP_sha256()) > 0, "X509_sign");
  return out;
}

Issued issueCa(const char* cn) {
  return issue(cn, nullptr, nullptr,
               {{NID_basic_constraints, "critical,CA:TRUE"},
                {NID_key_usage, "critical,keyCertSign,cRLSign"}});
}

Issued issueClient(const Issued& ca) {
  return issue("corral-test", "system:masters", &ca,
               {{NID_basic_constraints, "critical,CA:FALSE"},
                {NID_key_usage, "critical,digitalSignature"},
                {NID_ext_key_usage, "clientAuth"}});
}

std::string bioText(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

KeyPair pemOf(const Issued& issued) {
  KeyPair out;
  BIO* cert = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(cert, issued.cert);
  out.certPem = bioText(cert);
  BIO* key = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(key, issued.key, nullptr, nullptr, 0, nullptr, nullptr);
  out.keyPem = bioText(key);
  return out;
}

void release(Issued& issued) {
  X509_free(issued.cert);
  EVP_PKEY_free(issued.key);
}

TestPki makePki() {
  Issued ca = issueCa("corral test CA");
  Issued server = issue("kube-apiserver", nullptr, &ca,
                        {{NID_basic_constraints, "critical,CA:FALSE"},
                         {NID_key_usage, "critical,digitalSignature"},
                         {NID_ext_key_usage, "serverAuth"},
                         {NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost"}});
  Issued client = issueClient(ca);
  Issued otherCa = issueCa("some other CA");
  Issued stranger = issueClient(otherCa);
  TestPki pki{pemOf(ca), pemOf(server), pemOf(client), pemOf(otherCa), pemOf(stranger)};
  for (Issued* i : {&ca, &server, &client, &otherCa, &stranger}) release(*i);
  return pki;
}

}  // namespace

const TestPki& testPki() {
  static const TestPki pki = makePki();
  return pki;
}

std::string commonNameOfPem(const std::string& certPem) {
  BIO* bio = BIO_new_mem_buf(certPem.data(), static_cast<int>(certPem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (cert == nullptr) return "";
  char buf[256] = {0};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, buf, sizeof buf);
  X509_free(cert);
  return buf;
}

}  // namespace corral::kube::testing
