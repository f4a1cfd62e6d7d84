#pragma once

// Cluster image recipes (images/*.yaml, docs/images.md): what a cluster
// image is built from. Pure functions: parsing, validation, inheritance and
// the content id that names a build.

#include <string>
#include <vector>

#include "corral/status.h"

namespace corral {

struct Recipe {
  std::string name;         // debian13-slurm24.11; [a-z0-9][a-z0-9.-]*, at most 63
  std::string description;
  std::string os;           // "Debian 13 (trixie)"
  std::string suite;        // A Debian suite mmdebstrap knows: bookworm, trixie, unstable…
  std::string slurm;        // The Slurm release the suite ships, "24.11"
  std::string extends;      // Another recipe whose packages and setup come first.
  std::vector<std::string> packages;
  std::vector<std::string> setup;  // Shell scripts run in the image, in order, as root.
  bool operator==(const Recipe&) const = default;
};

inline constexpr size_t kMaxRecipePackages = 512;
inline constexpr size_t kMaxRecipeSetupSteps = 64;
inline constexpr size_t kMaxRecipeBytes = 256 * 1024;

// Parses and validates a recipe's YAML. Errors say which field is wrong and
// why. Unknown fields are refused (a typo must not be silently ignored).
StatusOr<Recipe> parseRecipe(const std::string& yaml);

// An image name: 1-63 characters of a-z, 0-9, '.' and '-'.
Status validateImageName(const std::string& name);

// The recipe's fields each on their own terms (name, suite, Slurm release,
// package names); `parseRecipe` calls it.
Status validateRecipe(const Recipe& r);

// `derived` on top of `base`: base's suite and Slurm release (a derived
// recipe that names others is refused), base's packages then derived's
// (without repeats), base's setup steps then derived's. Name, description
// and os are derived's (os falls back to base's).
StatusOr<Recipe> resolveRecipe(const Recipe& base, const Recipe& derived);

// The content id of a resolved recipe: the SHA-256 (hex) of what decides
// the build (suite, Slurm release, sorted packages, setup steps, and the
// version of corral's builder), not its name or description.
std::string recipeId(const Recipe& resolved);

// The YAML of a resolved recipe, as kept with a build.
std::string recipeToYaml(const Recipe& r);

// "24.11" from a Debian package version such as "24.11.5-4+deb13u1", or ""
// when it does not look like one.
std::string slurmReleaseOf(const std::string& packageVersion);

}  // namespace corral
