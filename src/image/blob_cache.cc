#include "image/blob_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/file_lock.h"
#include "common/fs.h"
#include "common/unique_fd.h"
#include "image/sha256.h"

namespace corral::image {

BlobCache::BlobCache(const std::string& cacheDir) : dir_(cacheDir + "/blobs/sha256") {}

Status BlobCache::init() { return makeDirs(dir_); }

std::string BlobCache::path(const std::string& digest) const {
  return dir_ + "/" + digestHex(digest);
}

bool BlobCache::has(const std::string& digest) const {
  return isSha256Digest(digest) && pathExists(path(digest));
}

StatusOr<bool> BlobCache::ensure(const std::string& digest, const Fetch& fetch,
                                 const std::string& what, int attempts) const {
  if (!isSha256Digest(digest)) return invalidArgument("invalid blob digest '" + digest + "'");
  if (has(digest)) return false;
  ASSIGN_OR_RETURN(FileLock lock, FileLock::acquire(path(digest) + ".lock"));
  if (has(digest)) return false;  // Another process finished it while we waited.
  // Holding the lock, the temporary name is ours alone; a stale one left by
  // a crash is simply overwritten.
  std::string tmp = path(digest) + ".partial";
  Status st;
  for (int i = 0; i < std::max(attempts, 1); ++i) {
    st = downloadOnce(digest, fetch, what, tmp);
    if (st.isOk() || st.code() != Code::kUnavailable) break;
  }
  if (!st.isOk()) {
    unlink(tmp.c_str());
    return st;
  }
  if (rename(tmp.c_str(), path(digest).c_str()) != 0) {
    int e = errno;
    unlink(tmp.c_str());
    return fileError("storing " + what + " in the cache", e);
  }
  return true;
}

Status BlobCache::downloadOnce(const std::string& digest, const Fetch& fetch,
                               const std::string& what, const std::string& tmp) const {
  UniqueFd fd(open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) return fileError("downloading " + what, errno);
  Sha256 hash;
  BodySink sink = [&](const char* data, size_t size) -> Status {
    hash.update(data, size);
    int err = writeAll(fd.get(), data, size);
    if (err != 0) return fileError("downloading " + what, err);
    return Status::ok();
  };
  RETURN_IF_ERROR(fetch(sink));
  std::string got = "sha256:" + hash.hexDigest();
  if (got != digest) {
    return internalError("digest mismatch for " + what +
                         ": the registry sent content with digest " + got +
                         " (a corrupted download or a misbehaving registry)");
  }
  if (fsync(fd.get()) != 0) return fileError("downloading " + what, errno);
  int raw = fd.release();
  if (close(raw) != 0) return fileError("downloading " + what, errno);
  return Status::ok();
}

}  // namespace corral::image
