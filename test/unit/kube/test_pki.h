#pragma once

// A throwaway PKI for the client's TLS tests, made with OpenSSL's C API in
// memory: a CA, a server certificate for 127.0.0.1 and localhost, and a
// client certificate (CN "corral-test", O "system:masters"), all signed by
// it, plus a second, unrelated CA. P-256 keys; PEM text throughout.

#include <string>

namespace corral::kube::testing {

struct KeyPair {
  std::string certPem;
  std::string keyPem;
};

struct TestPki {
  KeyPair ca;
  KeyPair server;
  KeyPair client;
  KeyPair otherCa;
  // A client certificate signed by `otherCa`: the server must refuse it.
  KeyPair strangerClient;
};

// Made once per process (key generation is the slow part) and shared.
const TestPki& testPki();

// The certificate's subject common name, or "" (for checks in a handler).
std::string commonNameOfPem(const std::string& certPem);

}  // namespace corral::kube::testing
