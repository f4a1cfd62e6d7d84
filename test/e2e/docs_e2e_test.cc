// The examples a user is shown run as written: the hints scripts/demo.sh
// prints, the `corral ssh demo -- …` lines of the README, and every console
// block of the docs marked "example: run as written" (its output compared
// too). They run in bash, as a user would paste them, against a cluster
// created as demo.sh creates it.

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "e2e/harness.h"

namespace corral::e2e {
namespace {

using nlohmann::json;

std::string source(const std::string& path) {
  std::ifstream in(std::string(CORRAL_SOURCE_DIR) + "/" + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string ltrim(const std::string& s) {
  size_t i = s.find_first_not_of(' ');
  return i == std::string::npos ? "" : s.substr(i);
}

// Lines ending in a backslash continue on the next one, as in a shell.
std::vector<std::string> joinContinuations(const std::vector<std::string>& in) {
  std::vector<std::string> out;
  std::string pending;
  for (const auto& l : in) {
    std::string line = pending.empty() ? l : pending + " " + ltrim(l);
    if (!line.empty() && line.back() == '\\') {
      pending = line.substr(0, line.size() - 1);
      while (!pending.empty() && pending.back() == ' ') pending.pop_back();
      continue;
    }
    pending.clear();
    out.push_back(line);
  }
  return out;
}

// The `corral …` lines of demo.sh's closing message, as the heredoc prints
// them for cluster `name`.
std::vector<std::string> demoHints(const std::string& name) {
  std::vector<std::string> body;
  bool in = false;
  for (const auto& l : lines(source("scripts/demo.sh"))) {
    if (l == "cat <<MSG") in = true;
    else if (l == "MSG") in = false;
    else if (in) body.push_back(l);
  }
  // What an unquoted heredoc does to the text: \$ and \\ lose a backslash.
  std::vector<std::string> printed;
  for (const auto& l : body) {
    std::string p;
    for (size_t i = 0; i < l.size(); ++i) {
      if (l[i] == '\\' && i + 1 < l.size() && (l[i + 1] == '$' || l[i + 1] == '\\')) ++i;
      p += l[i];
    }
    for (size_t at; (at = p.find("$name")) != std::string::npos;) p.replace(at, 5, name);
    printed.push_back(p);
  }
  // The commands are the indented lines; the rest is prose.
  std::vector<std::string> out;
  for (const auto& l : joinContinuations(printed)) {
    if (l.rfind("  corral ", 0) == 0) out.push_back(ltrim(l));
  }
  return out;
}

// The README's `corral ssh demo -- …` lines, in fenced blocks.
std::vector<std::string> readmeSshExamples() {
  std::vector<std::string> block, out;
  bool fenced = false;
  for (const auto& l : lines(source("README.md"))) {
    if (l.rfind("```", 0) == 0) {
      if (fenced) {
        for (const auto& c : joinContinuations(block)) {
          if (c.rfind("corral ssh demo -- ", 0) != 0) continue;
          std::string cmd = c;
          // A trailing comment is the README's, not the command's.
          if (size_t hash = cmd.find("   #"); hash != std::string::npos) cmd.resize(hash);
          while (!cmd.empty() && cmd.back() == ' ') cmd.pop_back();
          out.push_back(cmd);
        }
      }
      fenced = !fenced;
      block.clear();
      continue;
    }
    if (fenced) block.push_back(l);
  }
  return out;
}

struct Example {
  std::string where;  // file:line
  std::string command;
  std::vector<std::string> expected;  // "…" matches whatever follows.
  int exitCode = 0;
};

// The console blocks after the marker in a doc: each `$ ` line and the
// output shown under it ("[exit N]" is the exit status).
std::vector<Example> markedExamples(const std::string& file) {
  std::vector<Example> out;
  auto all = lines(source(file));
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].find("<!-- example: run as written") != 0) continue;
    for (size_t j = i + 2; j < all.size() && all[j] != "```"; ++j) {
      const std::string& l = all[j];
      if (l.rfind("$ ", 0) == 0) {
        out.push_back({file + ":" + std::to_string(j + 1), l.substr(2), {}, 0});
      } else if (!out.empty() && l.rfind("[exit ", 0) == 0) {
        out.back().exitCode = std::stoi(l.substr(6));
      } else if (!out.empty()) {
        out.back().expected.push_back(l);
      }
    }
  }
  // A blank line between examples belongs to neither.
  for (auto& e : out)
    while (!e.expected.empty() && e.expected.back().empty()) e.expected.pop_back();
  return out;
}

class DocsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    h_.start();
    // As scripts/demo.sh creates it (four GPU nodes, its own registry and a
    // shared image cache), then its busybox image in the registry.
    auto c = h_.corral({"cluster", "create", "demo", "--image", Harness::image(), "--registry",
                        "--image-cache", "/shared/enroot-cache", "--wait"});
    ASSERT_EQ(c.exitCode, 0) << c.out << c.err;
    auto pushed = shell(std::string(CORRAL_SOURCE_DIR) + "/scripts/demo-image.sh demo");
    ASSERT_EQ(pushed.exitCode, 0) << pushed.out << pushed.err;
    ASSERT_NE(pushed.out.find("pushed registry:5000/demo/busybox"), std::string::npos);
    // The README's `sbatch job.sh` needs a job.sh in /shared.
    ASSERT_EQ(h_.ssh("demo", "printf '#!/bin/sh\\nhostname\\n' > /shared/job.sh").exitCode, 0);
  }

  // `command` in bash, with the build's binaries first on PATH and the
  // harness's corrald and token in the environment, as after demo.sh.
  ProcessResult shell(const std::string& command) {
    ProcessOptions o;
    o.timeout = std::chrono::seconds(300);
    o.env["HOME"] = h_.home();
    o.env["CORRAL_SERVER"] = h_.url();
    o.env["CORRAL_TOKEN"] = h_.token();
    o.env["PATH"] = std::string(CORRAL_BUILD_DIR) + ":" + getenv("PATH");
    auto r = realProcessRunner().run({"bash", "-c", command}, o);
    if (!r.isOk()) throw std::runtime_error(r.status().message());
    return *r;
  }

  Harness h_;
};

TEST_F(DocsE2E, EveryShownExampleRunsAsWritten) {
  auto hints = demoHints("demo");
  ASSERT_GE(hints.size(), 5u) << "demo.sh's hints were not found";
  ASSERT_EQ(hints.back(), "corral cluster delete demo --wait");
  hints.pop_back();  // Last, below.
  auto readme = readmeSshExamples();
  ASSERT_GE(readme.size(), 2u);
  std::vector<std::string> commands = hints;
  commands.insert(commands.end(), readme.begin(), readme.end());
  for (const auto& cmd : commands) {
    SCOPED_TRACE(cmd);
    auto r = shell("exec </dev/null; " + cmd);
    EXPECT_EQ(r.exitCode, 0) << "stdout:\n" << r.out << "stderr:\n" << r.err;
  }

  auto examples = markedExamples("docs/walkthrough.md");
  ASSERT_GE(examples.size(), 5u);
  for (const auto& e : examples) {
    SCOPED_TRACE(e.where + ": " + e.command);
    auto r = shell(e.command);
    EXPECT_EQ(r.exitCode, e.exitCode) << r.err;
    auto got = lines(r.out);
    size_t i = 0;
    for (; i < e.expected.size(); ++i) {
      if (e.expected[i] == "…") break;
      ASSERT_LT(i, got.size()) << "missing line: " << e.expected[i] << "\nall output:\n" << r.out;
      EXPECT_EQ(got[i], e.expected[i]) << "all output:\n" << r.out;
    }
    if (i == e.expected.size()) {
      EXPECT_EQ(got.size(), e.expected.size()) << r.out;
    }
  }

  std::string subnet = json::parse(h_.corral({"cluster", "get", "demo", "-o", "json"}).out)["subnet"];
  auto del = shell("corral cluster delete demo --wait");
  EXPECT_EQ(del.exitCode, 0) << del.err;
  Leftovers left = h_.leftoversOf("demo", subnet);
  EXPECT_TRUE(left.empty()) << left.describe();
}

}  // namespace
}  // namespace corral::e2e
