#pragma once

// SHA-256, for blob digests: OpenSSL's (SHA-NI, ~1.4 GB/s here).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

typedef struct evp_md_ctx_st EVP_MD_CTX;

namespace corral::image {

// Incremental hashing; one object per stream, not thread-safe.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // Lowercase hex of the digest. Ends the stream: call once.
  std::string hexDigest();

 private:
  EVP_MD_CTX* ctx_;
};

// "sha256:<hex>" of `data`.
std::string sha256Digest(std::string_view data);

// True for "sha256:" followed by exactly 64 lowercase hex digits: the only
// digests we accept, and what makes a digest safe to use as a file name.
bool isSha256Digest(std::string_view digest);

// The hex part of a valid digest.
inline std::string digestHex(std::string_view digest) { return std::string(digest.substr(7)); }

}  // namespace corral::image
