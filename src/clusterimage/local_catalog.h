#pragma once

// `LocalImageCatalog`: cluster images built on this host with mmdebstrap and
// kept in a cache shared by every corrald on it (and by test runs), outside
// any data directory:
//
//   <cacheDir>/<id>/rootfs/       the image's root filesystem (read-only to pods)
//   <cacheDir>/<id>/image.json    what was built, when, how big; written last
//   <cacheDir>/<id>/recipe.yaml   the resolved recipe it was built from
//   <cacheDir>/<id>/build.log     mmdebstrap's output
//   <cacheDir>/<id>.lock          held while it is being built
//   <cacheDir>/recipes/<name>.yaml  recipes an operator added
//
// A build happens in `<cacheDir>/.build-<id>` and is renamed into place only
// when complete and checked, so a crash or a broken recipe never leaves a
// half-built image where a pod could use it.

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "clusterimage/recipe.h"
#include "corral/clock.h"
#include "corral/image.h"
#include "corral/process.h"

namespace corral {

inline constexpr const char* kDefaultImageCacheDir = "/var/cache/corral/images";
inline constexpr const char* kDefaultDebianMirror = "http://deb.debian.org/debian";
inline constexpr const char* kDefaultClusterImage = "debian13-slurm24.11";

struct LocalImageCatalogOptions {
  std::string cacheDir = kDefaultImageCacheDir;
  std::string mirror = kDefaultDebianMirror;
  // corral's own recipes by name (YAML), compiled into corrald from images/.
  std::map<std::string, std::string> builtInRecipes;
  ProcessRunner* runner = nullptr;  // Not owned; realProcessRunner() if null.
  Clock* clock = nullptr;           // Not owned; realClock() if null.
  std::chrono::seconds buildTimeout{1800};
};

class LocalImageCatalog : public ImageCatalog {
 public:
  explicit LocalImageCatalog(LocalImageCatalogOptions options);

  StatusOr<std::vector<ImageInfo>> list() override;
  StatusOr<ImageInfo> find(const std::string& name) override;
  Status ensureBuilt(const ImageRef& ref, const BuildProgress& progress) override;

  // Adds an operator's recipe, or replaces one (a new id: clusters keep the
  // build they run until their image is set again). Refuses the name of one
  // of corral's own images.
  StatusOr<ImageInfo> addRecipe(const std::string& yaml);
  // Forgets an operator's recipe. Its build stays for the clusters that use
  // it, unless `withBuild` (the caller checked that none does).
  Status removeRecipe(const std::string& name, bool withBuild = false);

  // The root filesystem of build `id` (which may not be built yet).
  std::string rootfsOf(const std::string& id) const;

 private:
  // The names of every recipe there is, unresolved.
  std::set<std::string> names() const;
  // The recipe called `name` with its base folded in.
  StatusOr<Recipe> resolve(const std::string& name);
  StatusOr<Recipe> rawRecipe(const std::string& name);
  ImageInfo describe(const Recipe& resolved, bool builtIn);
  Status build(const Recipe& resolved, const std::string& id, const BuildProgress& progress);

  LocalImageCatalogOptions options_;
  ProcessRunner& runner_;
  Clock& clock_;
  std::mutex recipesMu_;  // Serialises addRecipe/removeRecipe.
};

// corral's own recipes (images/*.yaml, compiled in), by image name.
std::map<std::string, std::string> builtInRecipes();

// What a finished build must hold for corral's pods to run on it; the
// first thing missing, as an error. Pure over `exists` (tests fake it).
Status checkImageContents(const std::function<bool(const std::string& path)>& exists);

// The version of `package` in a dpkg status file's text, or "".
std::string dpkgVersionOf(const std::string& statusText, const std::string& package);

}  // namespace corral
