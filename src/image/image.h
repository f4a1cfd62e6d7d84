#pragma once

// Container images: references, the registry protocol, the layer cache and
// the unpacked root filesystems that containers are made from. What the
// Enroot-compatible runtime (`enroot import`, `create docker://…`) and the
// Pyxis-compatible SPANK plugin build on.
//
// The cache directory (ENROOT_CACHE_PATH) holds, for one user:
//   blobs/sha256/<hex>        layers and configs, verified, written once
//   rootfs/<manifest-hex>/    an image unpacked (whiteouts applied), read-only
//   rootfs/<manifest-hex>.json  its ImageConfig
// Every entry is made in a temporary name and renamed into place under an
// flock, so many nodes sharing one cache on a volume neither corrupt it nor
// download the same blob twice.

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "corral/status.h"

namespace corral::image {

// An image reference. Enroot's URI form `docker://[USER@][REGISTRY#]IMAGE[:TAG]`
// (the `docker://` prefix optional) and Docker's `REGISTRY/IMAGE[:TAG]` (the
// first component is a registry when it holds a '.' or ':' or is
// "localhost"); a tag or `@sha256:<hex>` digest. Docker Hub's one-component
// names get "library/".
struct Reference {
  std::string user;        // From USER@, for the credentials lookup; may be empty.
  std::string registry;    // "registry-1.docker.io" by default; host[:port].
  std::string repository;  // "library/ubuntu", "test/busybox".
  std::string tag;         // "latest" unless a tag or digest was given.
  std::string digest;      // "sha256:<hex>" when pinned; then tag is empty.

  std::string toString() const;  // registry/repository[:tag|@digest]
};

// Parses `text`; a clear InvalidArgument ("malformed image reference …")
// otherwise.
StatusOr<Reference> parseReference(const std::string& text);

// True for what Pyxis treats as a squashfs file: a path starting with '/' or
// "./".
bool isSquashfsPath(const std::string& text);

// What a container takes from the image's config.
struct ImageConfig {
  std::vector<std::string> env;         // "KEY=VALUE", in the image's order.
  std::string workdir;                  // "" means "/".
  std::vector<std::string> entrypoint;  // May be empty.
  std::vector<std::string> cmd;         // May be empty.
};
std::string toJson(const ImageConfig& c);
StatusOr<ImageConfig> imageConfigFromJson(const std::string& text);

struct RegistryOptions {
  // Registries (host[:port]) spoken to over plain http; everything else is
  // https. "*" allows http everywhere (ENROOT_ALLOW_HTTP=yes).
  std::vector<std::string> httpRegistries;
  // netrc-format credentials ("machine HOST login USER password PASS"), as
  // Enroot's $ENROOT_CONFIG_PATH/.credentials; empty: none.
  std::string credentialsFile;
  int parallelDownloads = 4;
  std::chrono::seconds connectTimeout{10};
  std::chrono::seconds transferTimeout{600};
};

// The result of resolving and fetching an image into the cache.
struct PulledImage {
  std::string manifestDigest;  // "sha256:…" of the image manifest (linux/amd64).
  ImageConfig config;
  std::vector<std::string> layers;  // Layer digests, bottom first.
  std::string rootfs;               // The unpacked root filesystem in the cache (read-only use).
  bool cached = false;              // True when nothing had to be downloaded or unpacked.
};

// Progress lines for a CLI ("Downloading layer sha256:… 12 MB"); may be empty.
using ProgressFn = std::function<void(const std::string&)>;

// Resolves `ref` against its registry (token and basic authentication, the
// manifest list's linux/amd64 entry, Docker v2 and OCI manifests), downloads
// missing layers in parallel into `cacheDir`/blobs, verifies their digests,
// and unpacks them into `cacheDir`/rootfs/<manifest-hex> unless already there.
// Errors say what went wrong: "image not found: …", "registry unreachable: …",
// "authentication failed: …", "no space left on device while …".
StatusOr<PulledImage> pull(const Reference& ref, const std::string& cacheDir,
                           const RegistryOptions& options, const ProgressFn& progress = {});

// Unpacks layer files (tar, optionally gzip/zstd-compressed), bottom first,
// into `dest`, honouring whiteouts (".wh.NAME" removes NAME, ".wh..wh..opq"
// empties the directory of what lower layers put there). Unprivileged: owners
// are not kept, device nodes are skipped.
Status unpackLayers(const std::vector<std::string>& layerFiles, const std::string& dest);

// mksquashfs / unsquashfs.
Status makeSquashfs(const std::string& dir, const std::string& output);
Status unsquash(const std::string& squashfs, const std::string& dest);

// Pushing (tests, benchmarks and demos fill the registry with images built
// from local content): each directory becomes one gzip layer, bottom first.
Status push(const Reference& ref, const std::vector<std::string>& layerDirs,
            const ImageConfig& config, const RegistryOptions& options);

// How push lays out what it uploads.
struct PushOptions {
  // gzip: Docker v2 manifests and layers. zstd: OCI manifests with
  // application/vnd.oci.image.layer.v1.tar+zstd layers.
  enum class Compression { kGzip, kZstd };
  Compression compression = Compression::kGzip;
  // "OS/ARCH[/VARIANT]" entries besides linux/amd64: the tag then names a
  // manifest list (an OCI index with zstd) that lists each of them first and
  // linux/amd64 last, every entry an image of the same layers whose config
  // names its platform. Fixtures for multi-platform pulls, nothing runnable.
  std::vector<std::string> extraPlatforms;
};

// What push left in the registry.
struct PushResult {
  std::string digest;       // What the tag names: the manifest, or the list.
  std::string amd64Digest;  // The linux/amd64 image manifest (== digest without a list).
};

StatusOr<PushResult> push(const Reference& ref, const std::vector<std::string>& layerDirs,
                          const ImageConfig& config, const RegistryOptions& options,
                          const PushOptions& how);

}  // namespace corral::image
