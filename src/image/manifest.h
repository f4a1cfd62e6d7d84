#pragma once

// The registry's JSON documents: manifests, manifest lists / OCI indexes and
// image config blobs. Internal to corral_image.

#include <cstdint>
#include <string>
#include <vector>

#include "corral/status.h"
#include "image/image.h"

namespace corral::image {

inline constexpr const char* kDockerManifest =
    "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr const char* kDockerManifestList =
    "application/vnd.docker.distribution.manifest.list.v2+json";
inline constexpr const char* kOciManifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr const char* kOciIndex = "application/vnd.oci.image.index.v1+json";
inline constexpr const char* kDockerConfig = "application/vnd.docker.container.image.v1+json";
inline constexpr const char* kDockerLayerGzip = "application/vnd.docker.image.rootfs.diff.tar.gzip";

struct Descriptor {
  std::string mediaType;
  std::string digest;  // Always a valid sha256 digest once parsed.
  int64_t size = 0;
};

struct Manifest {
  Descriptor config;
  std::vector<Descriptor> layers;  // Bottom first.
};

// What a fetched manifest document is: an image manifest, or a list/index
// of per-platform manifests. `contentType` is the response's Content-Type;
// the document's own "mediaType" decides when that is missing or generic.
enum class ManifestKind { kImage, kIndex };
StatusOr<ManifestKind> manifestKind(const std::string& body, const std::string& contentType);

// The digest of the linux/amd64 entry of a manifest list or OCI index.
StatusOr<std::string> pickLinuxAmd64(const std::string& body, const std::string& refText);

StatusOr<Manifest> parseManifest(const std::string& body);

// Env/WorkingDir/Entrypoint/Cmd from an image config blob.
StatusOr<ImageConfig> parseImageConfigBlob(const std::string& body);

// Documents for push.
std::string makeConfigBlob(const ImageConfig& config, const std::vector<std::string>& diffIds);
std::string makeManifest(const Descriptor& config, const std::vector<Descriptor>& layers);

}  // namespace corral::image
