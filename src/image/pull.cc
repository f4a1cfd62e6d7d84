// `pull`: resolve a reference, fetch what the cache lacks, unpack once.

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <mutex>

#include "common/files.h"
#include "image/blob_cache.h"
#include "common/file_lock.h"
#include "common/fs.h"
#include "common/parallel.h"
#include "common/unique_fd.h"
#include "image/image.h"
#include "image/manifest.h"
#include "image/registry_client.h"
#include "image/sha256.h"

namespace corral::image {
namespace {

std::string humanSize(int64_t bytes) {
  if (bytes >= (int64_t(1) << 30)) return std::to_string(bytes >> 30) + " GB";
  if (bytes >= (int64_t(1) << 20)) return std::to_string(bytes >> 20) + " MB";
  if (bytes >= 1024) return std::to_string(bytes >> 10) + " KB";
  return std::to_string(bytes) + " B";
}

// Calls the caller's progress function from one thread at a time.
class Progress {
 public:
  explicit Progress(const ProgressFn& fn) : fn_(fn) {}
  void operator()(const std::string& line) {
    if (!fn_) return;
    std::lock_guard<std::mutex> lock(mu_);
    fn_(line);
  }

 private:
  const ProgressFn& fn_;
  std::mutex mu_;
};

// The image manifest for linux/amd64, following a list or index.
StatusOr<RegistryClient::FetchedManifest> resolve(RegistryClient& client, const Reference& ref) {
  ASSIGN_OR_RETURN(auto top, client.getManifest(ref.digest.empty() ? ref.tag : ref.digest));
  ASSIGN_OR_RETURN(ManifestKind kind, manifestKind(top.body, top.contentType));
  if (kind == ManifestKind::kImage) return top;
  ASSIGN_OR_RETURN(std::string digest, pickLinuxAmd64(top.body, ref.toString()));
  ASSIGN_OR_RETURN(auto image, client.getManifest(digest));
  ASSIGN_OR_RETURN(ManifestKind innerKind, manifestKind(image.body, image.contentType));
  if (innerKind != ManifestKind::kImage) {
    return internalError("the linux/amd64 entry of " + ref.toString() +
                         " is not an image manifest");
  }
  return image;
}

// Downloads the blobs the cache lacks, `parallel` at a time. Returns how
// many this call downloaded.
StatusOr<int> fetchBlobs(RegistryClient& client, const BlobCache& cache,
                         const std::vector<Descriptor>& blobs, const std::string& kind,
                         int parallel, Progress& progress) {
  std::vector<const Descriptor*> missing;
  for (const auto& b : blobs) {
    if (!cache.has(b.digest)) missing.push_back(&b);
  }
  if (missing.empty()) return 0;
  std::atomic<int> downloaded{0};
  RETURN_IF_ERROR(runInParallel(missing.size(), parallel, [&](size_t i) -> Status {
    const Descriptor& d = *missing[i];
    std::string what = kind + " " + d.digest;
    auto fetch = [&](const BodySink& sink) {
      progress("Downloading " + what + " (" + humanSize(d.size) + ")");
      return client.getBlob(d.digest, sink);
    };
    ASSIGN_OR_RETURN(bool fetched, cache.ensure(d.digest, fetch, what));
    if (fetched) downloaded.fetch_add(1);
    return Status::ok();
  }));
  return downloaded.load();
}

StatusOr<ImageConfig> readStoredConfig(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, readFile(path));
  auto c = imageConfigFromJson(text);
  if (!c.isOk())
    return internalError("the cache entry " + path + " is damaged: " + c.status().message());
  return c;
}

}  // namespace

StatusOr<PulledImage> pull(const Reference& ref, const std::string& cacheDir,
                           const RegistryOptions& options, const ProgressFn& progressFn) {
  if (cacheDir.empty()) return invalidArgument("no image cache directory given");
  Progress progress(progressFn);
  BlobCache cache(cacheDir);
  RETURN_IF_ERROR(cache.init());
  std::string rootfsDir = cacheDir + "/rootfs";
  RETURN_IF_ERROR(makeDirs(rootfsDir));

  RegistryClient client(ref, options, "pull");
  ASSIGN_OR_RETURN(auto fetched, resolve(client, ref));
  ASSIGN_OR_RETURN(Manifest manifest, parseManifest(fetched.body));

  PulledImage out;
  out.manifestDigest = fetched.digest;
  for (const auto& l : manifest.layers) out.layers.push_back(l.digest);
  std::string hex = digestHex(fetched.digest);
  out.rootfs = rootfsDir + "/" + hex;
  std::string configPath = out.rootfs + ".json";

  // The JSON is renamed into place before the directory, so a present
  // directory always has its config.
  if (isDirectory(out.rootfs)) {
    ASSIGN_OR_RETURN(out.config, readStoredConfig(configPath));
    out.cached = true;
    return out;
  }

  ASSIGN_OR_RETURN(int configDownloads,
                   fetchBlobs(client, cache, {manifest.config}, "config", 1, progress));
  ASSIGN_OR_RETURN(std::string configText, readFile(cache.path(manifest.config.digest)));
  ASSIGN_OR_RETURN(out.config, parseImageConfigBlob(configText));
  ASSIGN_OR_RETURN(int layerDownloads, fetchBlobs(client, cache, manifest.layers, "layer",
                                                  options.parallelDownloads, progress));

  ASSIGN_OR_RETURN(FileLock lock, FileLock::acquire(out.rootfs + ".lock"));
  if (isDirectory(out.rootfs)) {  // Unpacked by another process meanwhile.
    ASSIGN_OR_RETURN(out.config, readStoredConfig(configPath));
    out.cached = configDownloads == 0 && layerDownloads == 0;
    return out;
  }
  // Under the lock the temporary name is ours; a crash's leftover goes.
  std::string tmp = out.rootfs + ".partial";
  RETURN_IF_ERROR(removeTree(tmp));
  std::vector<std::string> files;
  for (const auto& l : manifest.layers) files.push_back(cache.path(l.digest));
  progress("Unpacking " + std::to_string(files.size()) + " layers of " + ref.toString());
  Status st = unpackLayers(files, tmp);
  if (st.isOk()) st = writeFileAtomic(configPath, toJson(out.config));
  if (st.isOk() && rename(tmp.c_str(), out.rootfs.c_str()) != 0) {
    st = fileError("moving the unpacked image into " + out.rootfs, errno);
  }
  if (!st.isOk()) {
    (void)removeTree(tmp);
    return st;
  }
  out.cached = false;
  return out;
}

}  // namespace corral::image
