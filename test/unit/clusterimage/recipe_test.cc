#include "clusterimage/recipe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clusterimage/local_catalog.h"

namespace corral {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kBase = R"(
name: base-img
description: a base
os: Debian 13 (trixie)
suite: trixie
slurm: "24.11"
packages: [slurm-wlm, munge]
setup:
  - echo one
)";

TEST(RecipeTest, ParsesEveryField) {
  auto r = parseRecipe(kBase);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(r->name, "base-img");
  EXPECT_EQ(r->suite, "trixie");
  EXPECT_EQ(r->slurm, "24.11");
  EXPECT_THAT(r->packages, ElementsAre("slurm-wlm", "munge"));
  EXPECT_THAT(r->setup, ElementsAre("echo one"));
}

TEST(RecipeTest, RefusesWhatIsWrongWithTheField) {
  struct Case {
    std::string yaml, says;
  } cases[] = {
      {"name: x\nsuite: trixie\nslurm: '24.11'\npackage: [a]\n", "unknown recipe field \"package\""},
      {"suite: trixie\nslurm: '24.11'\n", "needs a name"},
      {"name: ../etc\nsuite: trixie\nslurm: '24.11'\n", "image name"},
      {"name: x\nslurm: '24.11'\n", "needs a suite"},
      {"name: x\nsuite: trixie\n", "Slurm release"},
      {"name: x\nsuite: trixie\nslurm: '24'\n", "YY.MM"},
      {"name: x\nsuite: trixie\nslurm: '19.05'\n", "does not support Slurm 19.05"},
      {"name: x\nsuite: trixie\nslurm: '24.11'\npackages: ['rm -rf /']\n", "not a Debian package"},
      {"name: x\nsuite: 'tri xie'\nslurm: '24.11'\n", "not a Debian suite"},
      {"name: x\nsuite: trixie\nslurm: '24.11'\npackages: a\n", "must be a list"},
      {"- a\n- b\n", "YAML mapping"},
      {"name: [\n", "not valid YAML"},
      {"name: x\nextends: x\n", "cannot extend itself"},
  };
  for (const auto& c : cases) {
    auto r = parseRecipe(c.yaml);
    ASSERT_FALSE(r.isOk()) << c.yaml;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << c.yaml;
    EXPECT_THAT(r.status().message(), HasSubstr(c.says)) << c.yaml;
  }
}

TEST(RecipeTest, ADerivedRecipeAddsToItsBase) {
  auto base = parseRecipe(kBase);
  auto derived = parseRecipe("name: extra\nextends: base-img\npackages: [munge, htop]\nsetup: [echo two]\n");
  ASSERT_TRUE(base.isOk() && derived.isOk());
  auto r = resolveRecipe(*base, *derived);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(r->name, "extra");
  EXPECT_EQ(r->suite, "trixie");
  EXPECT_EQ(r->slurm, "24.11");
  EXPECT_EQ(r->os, "Debian 13 (trixie)");
  EXPECT_THAT(r->packages, ElementsAre("slurm-wlm", "munge", "htop"));
  EXPECT_THAT(r->setup, ElementsAre("echo one", "echo two"));
}

TEST(RecipeTest, ADerivedRecipeKeepsItsBasesSuiteAndSlurm) {
  auto base = parseRecipe(kBase);
  auto other = parseRecipe("name: e\nextends: base-img\nsuite: bookworm\n");
  ASSERT_TRUE(base.isOk() && other.isOk());
  auto r = resolveRecipe(*base, *other);
  ASSERT_FALSE(r.isOk());
  EXPECT_THAT(r.status().message(), HasSubstr("built from suite trixie, not bookworm"));
}

TEST(RecipeTest, TheIdIsTheContentNotTheName) {
  auto a = parseRecipe(kBase);
  ASSERT_TRUE(a.isOk());
  Recipe renamed = *a;
  renamed.name = "other";
  renamed.description = "same content";
  EXPECT_EQ(recipeId(*a), recipeId(renamed));
  Recipe reordered = *a;
  std::reverse(reordered.packages.begin(), reordered.packages.end());
  EXPECT_EQ(recipeId(*a), recipeId(reordered));
  Recipe more = *a;
  more.packages.push_back("htop");
  EXPECT_NE(recipeId(*a), recipeId(more));
  Recipe step = *a;
  step.setup.push_back("echo two");
  EXPECT_NE(recipeId(*a), recipeId(step));
  EXPECT_EQ(recipeId(*a).size(), 64u);
}

TEST(RecipeTest, YamlRoundTrips) {
  auto a = parseRecipe(kBase);
  ASSERT_TRUE(a.isOk());
  auto back = parseRecipe(recipeToYaml(*a));
  ASSERT_TRUE(back.isOk()) << back.status().toString() << "\n" << recipeToYaml(*a);
  EXPECT_EQ(*back, *a);
}

TEST(RecipeTest, SlurmReleaseOfAPackageVersion) {
  EXPECT_EQ(slurmReleaseOf("24.11.5-4+deb13u1"), "24.11");
  EXPECT_EQ(slurmReleaseOf("22.05.8-4+deb12u3"), "22.05");
  EXPECT_EQ(slurmReleaseOf(""), "");
  EXPECT_EQ(slurmReleaseOf("1:2.3"), "");
}

TEST(RecipeTest, CorralsOwnRecipesParseAndHoldASupportedSlurm) {
  auto all = builtInRecipes();
  ASSERT_TRUE(all.count("debian13-slurm24.11"));
  ASSERT_TRUE(all.count("debian12-slurm22.05"));
  for (const auto& [name, yaml] : all) {
    auto r = parseRecipe(yaml);
    ASSERT_TRUE(r.isOk()) << name << ": " << r.status().toString();
    EXPECT_EQ(r->name, name);
  }
  EXPECT_EQ(parseRecipe(all["debian13-slurm24.11"])->slurm, "24.11");
  EXPECT_EQ(parseRecipe(all["debian12-slurm22.05"])->slurm, "22.05");
}

// The image for Kubernetes: Debian unstable's Slurm 26.05 (Slinky's operator
// speaks slurmrestd v0.0.44), with what Slinky's pods run besides Slurm's
// daemons, and the slurm user at the uid Slinky's pods run it as.
TEST(RecipeTest, TheUnstableImageHoldsWhatSlinkysPodsRun) {
  auto all = builtInRecipes();
  ASSERT_TRUE(all.count("debian-unstable-slurm26.05"));
  auto r = parseRecipe(all["debian-unstable-slurm26.05"]);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(r->suite, "unstable");
  EXPECT_EQ(r->slurm, "26.05");
  for (const char* p : {"slurm-wlm", "slurmdbd", "slurmrestd", "sackd", "tini", "openssh-server",
                        "mariadb-server", "passwd"})
    EXPECT_THAT(r->packages, Contains(p));
  bool uid401 = false;
  for (const auto& step : r->setup)
    uid401 = uid401 || (step.find("usermod -u 401 -g 401 slurm") != std::string::npos &&
                        step.find("groupmod -g 401 slurm") != std::string::npos);
  EXPECT_TRUE(uid401) << "no setup step makes slurm uid and gid 401";
}

TEST(RecipeTest, Slurm2605IsSupportedAndUnsupportedReleasesAreNot) {
  std::string yaml = "name: x\nsuite: unstable\nslurm: \"26.05\"\npackages: [slurm-wlm]\n";
  EXPECT_TRUE(parseRecipe(yaml).isOk());
  auto refused = parseRecipe("name: x\nsuite: unstable\nslurm: \"25.05\"\npackages: [slurm-wlm]\n");
  ASSERT_FALSE(refused.isOk());
  EXPECT_THAT(refused.status().message(), HasSubstr("supports 22.05, 24.11, 26.05"));
}

}  // namespace
}  // namespace corral
