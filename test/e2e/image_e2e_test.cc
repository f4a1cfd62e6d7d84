// End-to-end tests of cluster images (issue 12): an operator's image, built
// from a recipe of theirs (and its build surviving a crash of the builder),
// an image update while a job runs, and an update Slurm cannot make.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "e2e/harness.h"

namespace fs = std::filesystem;

namespace corral::e2e {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// `corrald image build -f RECIPE` in a process group of its own, its
// stderr in `log`; returns its PID.
pid_t startBuild(const std::string& recipe, const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    FILE* f = fopen(log.c_str(), "w");
    if (f) dup2(fileno(f), 2), dup2(fileno(f), 1);
    execl(binary("corrald").c_str(), "corrald", "image", "build", "-f", recipe.c_str(), nullptr);
    _exit(127);
  }
  return pid;
}

// Waits until `log` holds `text`, at most `seconds`.
bool waitForLog(const std::string& log, const std::string& text, int seconds) {
  auto deadline = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < deadline) {
    std::ifstream in(log);
    std::stringstream s;
    s << in.rdbuf();
    if (s.str().find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

// PIDs of the processes whose command line names `text`.
std::vector<std::string> processesNaming(const std::string& text) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    std::string pid = e.path().filename();
    if (pid.empty() || !std::isdigit(static_cast<unsigned char>(pid[0]))) continue;
    std::ifstream in(e.path() / "cmdline");
    std::stringstream s;
    s << in.rdbuf();
    if (s.str().find(text) != std::string::npos) out.push_back(pid);
  }
  return out;
}

std::string buildDirOf(const std::string& log) {
  std::ifstream in(log);
  std::stringstream s;
  s << in.rdbuf();
  auto p = s.str().find("/.build-");
  if (p == std::string::npos) return "";
  auto start = s.str().rfind(' ', p) + 1;
  auto end = s.str().find('/', p + 8);
  return s.str().substr(start, end - start);
}

TEST(ImageE2E, AnOperatorsImageSurvivesACrashedBuildAndUpdatesARunningCluster) {
  Harness h;
  h.start();
  const std::string name = "e2e-tree-" + std::to_string(getpid());
  const std::string recipe = h.dataDir() + "-recipe.yaml";
  // One extra package, and a setup step that waits for the test's word, so
  // that the test can crash the builder in the middle of the build.
  std::ofstream(recipe) << "name: " << name << "\nextends: " << Harness::image()
                        << "\ndescription: the default image with tree\npackages: [tree]\n"
                        << "setup:\n  - while [ ! -e /etc/corral-go ]; do sleep 0.2; done; rm /etc/corral-go\n";
  const std::string log = h.dataDir() + "-build.log";
  pid_t first = startBuild(recipe, log);
  ASSERT_TRUE(waitForLog(log, "corral: setup step", 600)) << "the build never reached its setup step";
  // corrald crashes: mmdebstrap and everything it ran go with it.
  ASSERT_EQ(kill(first, SIGKILL), 0);
  waitpid(first, nullptr, 0);
  std::string staging = buildDirOf(log);
  ASSERT_FALSE(staging.empty());
  bool orphans = true;
  for (int i = 0; i < 100 && orphans; ++i) {
    orphans = !processesNaming(staging).empty();
    if (orphans) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_FALSE(orphans) << "a build outlived the corrald that started it";
  // Nothing half-built is in use, and nothing of the build stays mounted.
  auto listed = h.corral({"image", "list", "-o", "json"});
  json images = json::parse(listed.out, nullptr, false);
  bool built = true;
  for (const auto& i : images["images"])
    if (i["name"] == name) built = i["built"];
  EXPECT_FALSE(built);
  auto mounts = realProcessRunner().run({"grep", "-c", staging, "/proc/self/mountinfo"});
  ASSERT_TRUE(mounts.isOk());
  EXPECT_EQ(trim(mounts->out), "0");

  // The next build starts over and completes.
  const std::string log2 = log + ".2";
  pid_t second = startBuild(recipe, log2);
  ASSERT_TRUE(waitForLog(log2, "corral: setup step", 600));
  std::ofstream(staging + "/rootfs/etc/corral-go") << "go\n";
  int st = 0;
  waitpid(second, &st, 0);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "the second build failed; see " << log;

  // A cluster on the default image, with a job running and one done.
  ASSERT_EQ(h.corral({"cluster", "create", "roll", "--gpu-nodes", "2", "--wait"}).exitCode, 0);
  std::string done = trim(h.ssh("roll", "sbatch --parsable --wait -o /dev/null --wrap true").out);
  std::string job = trim(
      h.ssh("roll", "sbatch --parsable -w slinky-1 -o /shared/long.out --wrap 'sleep 12; echo finished'").out);
  for (int i = 0; i < 100 && trim(h.ssh("roll", "squeue -h -j " + job + " -o %T").out) != "RUNNING"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(h.ssh("roll", "which tree || echo none").out, "none\n");
  auto update = h.corral({"cluster", "set-image", "roll", name, "--no-wait"});
  ASSERT_EQ(update.exitCode, 0) << update.out << update.err;
  // corrald crashes while the workers roll (slinky-1 waits for its job);
  // the next corrald finishes the update.
  auto phase = [&] {
    json c = json::parse(h.corral({"cluster", "get", "roll", "-o", "json"}).out, nullptr, false);
    return c.is_object() ? c.value("phase", "") : "";
  };
  for (int i = 0; i < 600 && phase().find("rolling workers") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_NE(phase().find("rolling workers"), std::string::npos) << phase();
  h.stop(SIGKILL);
  h.start();
  for (int i = 0; i < 1200; ++i) {
    json c = json::parse(h.corral({"cluster", "get", "roll", "-o", "json"}).out, nullptr, false);
    if (c.is_object() && c["appliedRevision"] == c["revision"] && c["spec"]["image"]["name"] == name) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // The job ran to its end on its old node, which was recreated after it.
  EXPECT_EQ(trim(h.ssh("roll", "sacct -n -X -P -j " + job + " -o State").out), "COMPLETED");
  EXPECT_EQ(h.ssh("roll", "cat /shared/long.out").out, "finished\n");
  EXPECT_EQ(trim(h.ssh("roll", "sacct -n -X -P -j " + done + " -o State").out), "COMPLETED");
  // The package is on every node now.
  EXPECT_EQ(h.ssh("roll", "which tree").out, "/usr/bin/tree\n");
  EXPECT_EQ(h.ssh("roll", "srun -N2 which tree").out, "/usr/bin/tree\n/usr/bin/tree\n");
  json c = json::parse(h.corral({"cluster", "get", "roll", "-o", "json"}).out, nullptr, false);
  EXPECT_EQ(c["spec"]["image"]["name"], name);
  EXPECT_EQ(c["status"], "Running");
  auto sinfo = h.ssh("roll", "sinfo -h -o '%P %a %D %T'");
  EXPECT_EQ(sinfo.out, "all* up 2 idle\nslinky up 2 idle\n") << sinfo.out;
  auto events = h.corral({"events", "roll"});
  EXPECT_NE(events.out.find("WorkerRolled"), std::string::npos) << events.out;

  // Restarting the workers rolls them the same way, on the same image.
  ASSERT_EQ(h.corral({"cluster", "restart-workers", "roll"}, 300).exitCode, 0);
  EXPECT_EQ(h.ssh("roll", "srun -N2 hostname | sort").out, "slinky-0\nslinky-1\n");

  ASSERT_EQ(h.corral({"cluster", "delete", "roll", "--wait"}).exitCode, 0);
  auto removed = realProcessRunner().run(
      {binary("corrald"), "--data-dir", h.dataDir(), "image", "remove", name, "--build"});
  ASSERT_TRUE(removed.isOk());
  EXPECT_EQ(removed->exitCode, 0) << removed->err;
  fs::remove(recipe);
  fs::remove(log);
  fs::remove(log2);
}

TEST(ImageE2E, AnUpdateSlurmCannotMakeInPlaceIsRefusedBeforeAnythingChanges) {
  Harness h;
  h.start();
  auto built = realProcessRunner().run({binary("corrald"), "image", "build", "debian12-slurm22.05"},
                                       {"", std::chrono::seconds(1800), {}, {}});
  ASSERT_TRUE(built.isOk() && built->exitCode == 0);
  ASSERT_EQ(h.corral({"cluster", "create", "old", "--image", "debian12-slurm22.05", "--gpu-nodes", "1",
                      "--wait"})
                .exitCode,
            0);
  EXPECT_EQ(trim(h.ssh("old", "sinfo --version").out), "slurm-wlm 22.05.8");
  json before = json::parse(h.corral({"cluster", "get", "old", "-o", "json"}).out, nullptr, false);
  auto up = h.corral({"cluster", "set-image", "old", "debian13-slurm24.11"});
  EXPECT_NE(up.exitCode, 0);
  EXPECT_NE(up.err.find("upgrades in place only from the 3 releases before it"), std::string::npos) << up.err;
  EXPECT_NE(up.err.find("cluster clone"), std::string::npos) << up.err;
  json after = json::parse(h.corral({"cluster", "get", "old", "-o", "json"}).out, nullptr, false);
  EXPECT_EQ(after["revision"], before["revision"]);
  EXPECT_EQ(after["spec"]["image"], before["spec"]["image"]);
  // The way there: a clone on the newer image.
  ASSERT_EQ(h.corral({"cluster", "clone", "old", "new", "--image", "debian13-slurm24.11", "--wait"}).exitCode, 0);
  EXPECT_EQ(trim(h.ssh("new", "sinfo --version").out).rfind("slurm-wlm 24.11", 0), 0u);
  for (const char* c : {"old", "new"}) EXPECT_EQ(h.corral({"cluster", "delete", c, "--wait"}).exitCode, 0);
}

}  // namespace
}  // namespace corral::e2e
