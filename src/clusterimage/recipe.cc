#include "clusterimage/recipe.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "common/sha256.h"
#include "common/text.h"
#include "slurm/release.h"

namespace corral {
namespace {

// Part of every id: a change to how corral builds an image (the builder's
// command line, what it adds) must not reuse builds made the old way.
constexpr const char* kBuilderVersion = "corral-mmdebstrap-1";

const std::set<std::string>& knownFields() {
  static const std::set<std::string> fields = {"name",   "description", "os",       "suite",
                                               "slurm", "extends",     "packages", "setup"};
  return fields;
}

Status checkName(const std::string& field, const std::string& value) {
  static const std::regex re("[a-z0-9][a-z0-9.-]{0,62}");
  if (!std::regex_match(value, re))
    return invalidArgument(field + " " + quoteForMessage(value) +
                           " must be 1-63 characters of a-z, 0-9, '.' and '-', starting with a "
                           "letter or digit");
  return Status::ok();
}

StatusOr<std::string> scalar(const YAML::Node& n, const std::string& field) {
  if (!n.IsScalar()) return invalidArgument("recipe field \"" + field + "\" must be a string");
  return n.as<std::string>();
}

StatusOr<std::vector<std::string>> list(const YAML::Node& n, const std::string& field) {
  if (!n.IsSequence()) return invalidArgument("recipe field \"" + field + "\" must be a list");
  std::vector<std::string> out;
  for (const auto& item : n) {
    if (!item.IsScalar())
      return invalidArgument("every entry of recipe field \"" + field + "\" must be a string");
    out.push_back(item.as<std::string>());
  }
  return out;
}

Status parseFields(const YAML::Node& doc, Recipe& r) {
  for (const auto& kv : doc) {
    std::string key = kv.first.as<std::string>();
    if (!knownFields().count(key))
      return invalidArgument("unknown recipe field " + quoteForMessage(key) +
                             " (known: name, description, os, suite, slurm, extends, packages, "
                             "setup)");
    const YAML::Node& v = kv.second;
    if (key == "packages") {
      ASSIGN_OR_RETURN(r.packages, list(v, key));
    } else if (key == "setup") {
      ASSIGN_OR_RETURN(r.setup, list(v, key));
    } else {
      ASSIGN_OR_RETURN(std::string value, scalar(v, key));
      if (key == "name") r.name = value;
      if (key == "description") r.description = value;
      if (key == "os") r.os = value;
      if (key == "suite") r.suite = value;
      if (key == "slurm") r.slurm = value;
      if (key == "extends") r.extends = value;
    }
  }
  return Status::ok();
}

}  // namespace

Status validateImageName(const std::string& name) { return checkName("image name", name); }

StatusOr<Recipe> parseRecipe(const std::string& yaml) {
  if (yaml.size() > kMaxRecipeBytes)
    return invalidArgument("a recipe is at most " + std::to_string(kMaxRecipeBytes / 1024) + " KiB");
  Recipe r;
  try {
    YAML::Node doc = YAML::Load(yaml);
    if (!doc.IsMap()) return invalidArgument("a recipe is a YAML mapping (name:, suite:, packages:, …)");
    RETURN_IF_ERROR(parseFields(doc, r));
  } catch (const YAML::Exception& e) {
    return invalidArgument(std::string("the recipe is not valid YAML: ") + e.what());
  }
  RETURN_IF_ERROR(validateRecipe(r));
  return r;
}

Status validateRecipe(const Recipe& r) {
  if (r.name.empty()) return invalidArgument("a recipe needs a name");
  RETURN_IF_ERROR(checkName("image name", r.name));
  if (r.description.size() > 200) return invalidArgument("description is at most 200 characters");
  if (r.os.size() > 100) return invalidArgument("os is at most 100 characters");
  if (!r.extends.empty()) {
    RETURN_IF_ERROR(checkName("extends", r.extends));
    if (r.extends == r.name) return invalidArgument("a recipe cannot extend itself");
  } else {
    if (r.suite.empty()) return invalidArgument("a recipe needs a suite (bookworm, trixie, …) or extends another");
    if (r.slurm.empty()) return invalidArgument("a recipe needs the Slurm release its suite ships (slurm: \"24.11\")");
  }
  static const std::regex suite("[a-z][a-z0-9-]{1,30}");
  if (!r.suite.empty() && !std::regex_match(r.suite, suite))
    return invalidArgument("suite " + quoteForMessage(r.suite) + " is not a Debian suite name");
  static const std::regex release("[0-9]{2}\\.[0-9]{2}");
  if (!r.slurm.empty() && !std::regex_match(r.slurm, release))
    return invalidArgument("slurm " + quoteForMessage(r.slurm) +
                           " must be a Slurm release as YY.MM, e.g. \"24.11\"");
  if (!r.slurm.empty()) RETURN_IF_ERROR(checkSupportedSlurmRelease(r.slurm));
  if (r.packages.size() > kMaxRecipePackages)
    return invalidArgument("a recipe has at most " + std::to_string(kMaxRecipePackages) + " packages");
  // Debian policy 5.6.1: package names, and an optional "=version" pin.
  static const std::regex package("[a-z0-9][a-z0-9+.-]+(=[A-Za-z0-9.+~:-]+)?");
  for (const auto& p : r.packages)
    if (!std::regex_match(p, package))
      return invalidArgument("package " + quoteForMessage(p) + " is not a Debian package name");
  if (r.setup.size() > kMaxRecipeSetupSteps)
    return invalidArgument("a recipe has at most " + std::to_string(kMaxRecipeSetupSteps) + " setup steps");
  for (const auto& s : r.setup)
    if (s.find('\0') != std::string::npos) return invalidArgument("a setup step holds a NUL byte");
  return Status::ok();
}

StatusOr<Recipe> resolveRecipe(const Recipe& base, const Recipe& derived) {
  if (!base.extends.empty())
    return invalidArgument("image " + quoteForMessage(base.name) +
                           " extends another itself; extend the image it extends instead");
  if (!derived.suite.empty() && derived.suite != base.suite)
    return invalidArgument("image " + quoteForMessage(derived.name) + " extends " + base.name +
                           ", which is built from suite " + base.suite + ", not " + derived.suite);
  if (!derived.slurm.empty() && derived.slurm != base.slurm)
    return invalidArgument("image " + quoteForMessage(derived.name) + " extends " + base.name +
                           ", whose Slurm is " + base.slurm + ", not " + derived.slurm);
  Recipe out = base;
  out.name = derived.name;
  out.description = derived.description;
  if (!derived.os.empty()) out.os = derived.os;
  out.extends = base.name;
  for (const auto& p : derived.packages)
    if (std::find(out.packages.begin(), out.packages.end(), p) == out.packages.end())
      out.packages.push_back(p);
  out.setup.insert(out.setup.end(), derived.setup.begin(), derived.setup.end());
  if (out.packages.size() > kMaxRecipePackages)
    return invalidArgument("with its base, a recipe has at most " +
                           std::to_string(kMaxRecipePackages) + " packages");
  return out;
}

std::string recipeId(const Recipe& r) {
  std::vector<std::string> packages = r.packages;
  std::sort(packages.begin(), packages.end());
  packages.erase(std::unique(packages.begin(), packages.end()), packages.end());
  nlohmann::json j = {{"builder", kBuilderVersion},
                      {"suite", r.suite},
                      {"slurm", r.slurm},
                      {"packages", packages},
                      {"setup", r.setup}};
  return sha256Hex(j.dump());
}

std::string recipeToYaml(const Recipe& r) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << r.name;
  if (!r.description.empty()) out << YAML::Key << "description" << YAML::Value << r.description;
  if (!r.os.empty()) out << YAML::Key << "os" << YAML::Value << r.os;
  if (!r.extends.empty()) out << YAML::Key << "extends" << YAML::Value << r.extends;
  if (!r.suite.empty()) out << YAML::Key << "suite" << YAML::Value << r.suite;
  if (!r.slurm.empty()) out << YAML::Key << "slurm" << YAML::Value << YAML::DoubleQuoted << r.slurm;
  out << YAML::Key << "packages" << YAML::Value << YAML::BeginSeq;
  for (const auto& p : r.packages) out << p;
  out << YAML::EndSeq;
  out << YAML::Key << "setup" << YAML::Value << YAML::BeginSeq;
  // A literal block keeps a script as written; it always ends in a newline,
  // so one-line steps are written plain.
  for (const auto& s : r.setup) {
    if (!s.empty() && s.back() == '\n') out << YAML::Literal << s;
    else out << YAML::DoubleQuoted << s;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::string slurmReleaseOf(const std::string& packageVersion) {
  static const std::regex re("([0-9]{2})\\.([0-9]{2})\\..*");
  std::smatch m;
  if (!std::regex_match(packageVersion, m, re)) return "";
  return m[1].str() + "." + m[2].str();
}

}  // namespace corral
