#pragma once

// Cluster images: the root filesystem every pod of a cluster runs on, holding
// its Slurm stack (the seed's "Image you pick when creating the cluster … the
// cluster's own Slurm software stack"). Not a job's container image: those
// are src/image's.
//
// An image is built from a recipe (a Debian suite, packages and a few setup
// steps; see images/*.yaml and docs/images.md) and identified by the
// content hash of that recipe, so a changed recipe is a new image and a
// cluster's revision names exactly what it runs.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "corral/status.h"

namespace corral {

// What a cluster's spec records of its image.
struct ImageRef {
  std::string name;          // e.g. debian13-slurm24.11
  std::string id;            // sha256 of the canonical recipe (64 hex digits)
  std::string slurmVersion;  // Slurm's major release, e.g. "24.11": what the renderer renders for
  bool operator==(const ImageRef&) const = default;
};

struct ImageInfo {
  ImageRef ref;
  std::string description;
  std::string os;     // "Debian 13 (trixie)"
  std::string suite;  // trixie
  std::string base;   // The image this one extends, if any.
  std::vector<std::string> packages;  // Every package the recipe asks for.
  bool builtIn = false;  // Shipped with corral (images/).
  bool built = false;
  int64_t sizeBytes = 0;  // On disk, once built.
  int64_t builtAt = 0;    // Unix seconds.
  std::string slurmPackage;  // The slurmctld package version the build holds.
};

// Progress of a build, one line at a time (the builder's own output).
using BuildProgress = std::function<void(const std::string& line)>;

// Every cluster image this host knows: corral's own recipes and those an
// operator added. Implementations are thread-safe.
class ImageCatalog {
 public:
  virtual ~ImageCatalog() = default;

  // Every image, built or not, sorted by name.
  virtual StatusOr<std::vector<ImageInfo>> list() = 0;

  // One image by name; NotFound names the images there are.
  virtual StatusOr<ImageInfo> find(const std::string& name) = 0;

  // Builds `ref.id` unless it is built, then returns. Blocks for as long as
  // the build takes (about a minute); a build of the same image already
  // running elsewhere is waited for, not repeated. A failed build leaves
  // nothing behind and says why in the builder's own words.
  virtual Status ensureBuilt(const ImageRef& ref, const BuildProgress& progress) = 0;
};

}  // namespace corral
