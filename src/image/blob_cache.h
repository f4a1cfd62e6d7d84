#pragma once

// The blob store of a cache directory: `<cacheDir>/blobs/sha256/<hex>`,
// each verified against its digest and renamed into place once complete.
// Internal to corral_image.

#include <functional>
#include <string>

#include "corral/status.h"
#include "image/registry_client.h"

namespace corral::image {

class BlobCache {
 public:
  explicit BlobCache(const std::string& cacheDir);

  // Creates the directories.
  Status init();

  // Where the blob `digest` (a valid sha256 digest) lives when present.
  std::string path(const std::string& digest) const;
  bool has(const std::string& digest) const;

  // Writes the blob's content through the sink it is given; called again,
  // from the start, when an attempt fails with Unavailable.
  using Fetch = std::function<Status(const BodySink& sink)>;

  // Makes sure `digest` is in the cache. Downloads through `fetch` under an
  // flock on `<hex>.lock`, so that of many threads or processes wanting the
  // same blob one downloads and the others wait and reuse it. Returns
  // whether this call downloaded it. `what` names the blob in errors
  // ("layer sha256:…"). Thread-safe.
  StatusOr<bool> ensure(const std::string& digest, const Fetch& fetch, const std::string& what,
                        int attempts = 3) const;

 private:
  Status downloadOnce(const std::string& digest, const Fetch& fetch, const std::string& what,
                      const std::string& tmp) const;
  std::string dir_;
};

}  // namespace corral::image
