#include "spank/options.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace corral::spank {
namespace {

Status set(Options& o, OptionId id, const std::string& v) { return setOption(o, id, v); }

TEST(PyxisOptions, TableHasEveryPyxisFlag) {
  std::vector<std::string> names;
  for (const auto& o : optionTable()) names.push_back(o.name);
  for (const char* want :
       {"container-image", "container-mounts", "container-workdir", "container-name",
        "container-save", "container-mount-home", "no-container-mount-home",
        "container-remap-root", "no-container-remap-root", "container-writable",
        "container-readonly", "container-entrypoint", "no-container-entrypoint", "container-env",
        "container-unshare", "container-entrypoint-log"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
}

TEST(PyxisOptions, ImageAcceptsReferencesAndSquashfsPaths) {
  for (const char* ok : {"ubuntu:22.04", "nvcr.io/nvidia/pytorch:25.09-py3",
                         "nvcr.io#nvidia/pytorch:25.09-py3", "docker://registry:5000/test/busybox:1",
                         "alice@registry:5000#test/busybox", "/pfs/images/app.sqsh", "./app.sqsh"}) {
    Options o;
    EXPECT_TRUE(set(o, OptionId::kImage, ok).isOk()) << ok;
    EXPECT_EQ(o.image, ok);
  }
  for (const char* bad : {"", "UPPER/case", "ubuntu:bad tag", "registry:5000/:1"}) {
    Options o;
    Status s = set(o, OptionId::kImage, bad);
    EXPECT_FALSE(s.isOk()) << bad;
    EXPECT_NE(s.message().find("--container-image"), std::string::npos) << s.message();
    EXPECT_TRUE(o.image.empty());
  }
}

TEST(PyxisOptions, NameFlags) {
  Options o;
  ASSERT_TRUE(set(o, OptionId::kName, "work").isOk());
  EXPECT_EQ(o.name, "work");
  EXPECT_EQ(o.nameMode, NameMode::kAuto);
  ASSERT_TRUE(set(o, OptionId::kName, "work:create").isOk());
  EXPECT_EQ(o.nameMode, NameMode::kCreate);
  ASSERT_TRUE(set(o, OptionId::kName, "w2:exec").isOk());
  EXPECT_EQ(o.nameMode, NameMode::kExec);
  ASSERT_TRUE(set(o, OptionId::kName, "w2:no_exec").isOk());
  EXPECT_EQ(o.nameMode, NameMode::kNoExec);
  EXPECT_FALSE(set(o, OptionId::kName, "w2:sometimes").isOk());
  EXPECT_FALSE(set(o, OptionId::kName, "../etc").isOk());
  EXPECT_FALSE(set(o, OptionId::kName, "").isOk());
}

TEST(PyxisOptions, WorkdirMountsEnvAndSave) {
  Options o;
  // As Pyxis: a relative workdir is the container root's ("../" is "/").
  EXPECT_TRUE(set(o, OptionId::kWorkdir, "../").isOk());
  EXPECT_FALSE(set(o, OptionId::kWorkdir, "").isOk());
  EXPECT_TRUE(set(o, OptionId::kWorkdir, "/workspace").isOk());
  EXPECT_EQ(o.workdir, "/workspace");
  EXPECT_FALSE(set(o, OptionId::kMounts, "").isOk());
  EXPECT_FALSE(set(o, OptionId::kMounts, ":").isOk());
  EXPECT_FALSE(set(o, OptionId::kMounts, "/tmp:").isOk());
  EXPECT_FALSE(set(o, OptionId::kMounts, "/tmp:mnt:ro").isOk());
  EXPECT_FALSE(set(o, OptionId::kMounts, "devpts:/dev/pts2").isOk());
  EXPECT_TRUE(set(o, OptionId::kMounts, "/pfs:/pfs,/data:/data:ro").isOk());
  EXPECT_FALSE(set(o, OptionId::kMounts, "pfs:/pfs").isOk());
  EXPECT_EQ(o.mounts, "/pfs:/pfs,/data:/data:ro");
  EXPECT_TRUE(set(o, OptionId::kEnv, "HOME,NCCL_DEBUG").isOk());
  EXPECT_EQ(o.env, (std::vector<std::string>{"HOME", "NCCL_DEBUG"}));
  EXPECT_FALSE(set(o, OptionId::kEnv, "A,,B").isOk());
  EXPECT_FALSE(set(o, OptionId::kEnv, "1BAD").isOk());
  EXPECT_FALSE(set(o, OptionId::kEnv, "").isOk());
  EXPECT_FALSE(set(o, OptionId::kEnv, "FOO,").isOk());
  for (const char* dir : {"/pfs/dir/", "/", "./", ".", "..", "/pfs/.."})
    EXPECT_FALSE(set(o, OptionId::kSave, dir).isOk()) << dir;
  EXPECT_TRUE(set(o, OptionId::kSave, "/pfs/out.sqsh").isOk());
  EXPECT_TRUE(set(o, OptionId::kSave, "./out.sqsh").isOk());
}

TEST(PyxisOptions, FlagsAndTheirNegations) {
  Options o;
  EXPECT_FALSE(o.any());
  ASSERT_TRUE(set(o, OptionId::kReadonly, "").isOk());
  EXPECT_EQ(o.writable, false);
  ASSERT_TRUE(set(o, OptionId::kReadonly, "").isOk()) << "the same flag again is fine";
  Status both = set(o, OptionId::kWritable, "");
  EXPECT_FALSE(both.isOk());
  EXPECT_NE(both.message().find("mutually exclusive"), std::string::npos) << both.message();
  EXPECT_EQ(o.writable, false);
  Options w;
  ASSERT_TRUE(set(w, OptionId::kWritable, "").isOk());
  EXPECT_EQ(w.writable, true);
  EXPECT_FALSE(set(w, OptionId::kReadonly, "").isOk());
  ASSERT_TRUE(set(o, OptionId::kNoRemapRoot, "").isOk());
  EXPECT_EQ(o.remapRoot, false);
  EXPECT_TRUE(o.any());
}

TEST(PyxisOptions, EnvironmentDefaultsFillOnlyWhatTheCommandLineLeftUnset) {
  Options o;
  ASSERT_TRUE(set(o, OptionId::kImage, "registry:5000/a/b:1").isOk());
  std::map<std::string, std::string> env = {{"PYXIS_CONTAINER_IMAGE", "registry:5000/other:2"},
                                            {"PYXIS_CONTAINER_MOUNTS", "/pfs:/pfs"},
                                            {"PYXIS_CONTAINER_READONLY", "yes"},
                                            {"PYXIS_CONTAINER_REMAP_ROOT", "0"}};
  ASSERT_TRUE(applyEnvironmentDefaults(o, env).isOk());
  EXPECT_EQ(o.image, "registry:5000/a/b:1");
  EXPECT_EQ(o.mounts, "/pfs:/pfs");
  EXPECT_EQ(o.writable, false);
  EXPECT_EQ(o.remapRoot, false);

  Options bad;
  Status s = applyEnvironmentDefaults(bad, {{"PYXIS_CONTAINER_WRITABLE", "perhaps"}});
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("PYXIS_CONTAINER_WRITABLE"), std::string::npos);
  s = applyEnvironmentDefaults(bad, {{"PYXIS_CONTAINER_IMAGE", "Not A Ref"}});
  EXPECT_NE(s.message().find("PYXIS_CONTAINER_IMAGE"), std::string::npos) << s.message();
}

TEST(PyxisOptions, PluginArguments) {
  auto a = parsePluginArgs({"runtime_path=/.corral-bin/enroot", "remap_root=0",
                            "container_mount_home=yes"});
  ASSERT_TRUE(a.isOk()) << a.status().message();
  EXPECT_EQ(a->runtimePath, "/.corral-bin/enroot");
  EXPECT_FALSE(a->remapRoot);
  EXPECT_TRUE(a->mountHome);
  EXPECT_FALSE(parsePluginArgs({"remap_root"}).isOk());
  EXPECT_FALSE(parsePluginArgs({"colour=blue"}).isOk());
  EXPECT_FALSE(parsePluginArgs({"remap_root=maybe"}).isOk());
}

TEST(PyxisOptions, ResolveAppliesPluginDefaults) {
  PluginArgs a;
  a.remapRoot = true;
  a.writable = false;
  Options o;
  o.writable = true;
  Resolved r = resolve(o, a);
  EXPECT_TRUE(r.remapRoot);
  EXPECT_TRUE(r.writable);
  EXPECT_FALSE(r.mountHome);
}

TEST(PyxisOptions, ContainerNames) {
  Options o;
  EXPECT_EQ(containerName(o, 42, 3), "pyxis_42.3");
  o.name = "work";
  EXPECT_EQ(containerName(o, 42, 3), "pyxis_42_work");
  EXPECT_TRUE(isJobContainer("pyxis_42_work", 42));
  EXPECT_TRUE(isJobContainer("pyxis_42.0", 42));
  EXPECT_FALSE(isJobContainer("pyxis_420_work", 42));
  EXPECT_FALSE(isJobContainer("pyxis_42", 42));
  EXPECT_FALSE(isJobContainer("mine", 42));
}

TEST(PyxisOptions, CommandLinesForTheRuntime) {
  PluginArgs a;
  a.runtimePath = "/.corral-bin/enroot";
  Options o;
  ASSERT_TRUE(setOption(o, OptionId::kImage, "registry:5000/test/busybox:1").isOk());
  ASSERT_TRUE(setOption(o, OptionId::kMounts, "/pfs:/pfs,/data:/in:ro").isOk());
  ASSERT_TRUE(setOption(o, OptionId::kWorkdir, "/work").isOk());
  Resolved r = resolve(o, a);
  EXPECT_EQ(createCommand(a, r, "pyxis_7.0"),
            (std::vector<std::string>{"/.corral-bin/enroot", "create", "--name", "pyxis_7.0",
                                      "docker://registry:5000/test/busybox:1"}));
  auto start = startCommand(a, r, "pyxis_7.0", 3, "0,1", "/shared/home/alice",
                            {"/var/spool/slurmd/job7/slurm_script:/var/spool/slurmd/job7/slurm_script:ro"});
  std::vector<std::string> want = {"/.corral-bin/enroot", "start", "--hold-fd", "3", "--root",
                                   "--rw", "--gpus", "0,1", "--workdir", "/work", "--mount",
                                   "/var/spool/slurmd/job7/slurm_script:/var/spool/slurmd/job7/slurm_script:ro",
                                   "--mount", "/pfs:/pfs", "--mount", "/data:/in:ro", "pyxis_7.0"};
  EXPECT_EQ(start, want);

  Options sq;
  ASSERT_TRUE(setOption(sq, OptionId::kImage, "/pfs/app.sqsh").isOk());
  ASSERT_TRUE(setOption(sq, OptionId::kMountHome, "").isOk());
  Resolved rs = resolve(sq, a);
  EXPECT_EQ(createCommand(a, rs, "n").back(), "/pfs/app.sqsh");
  auto s2 = startCommand(a, rs, "n", 3, "", "/shared/home/bob", {});
  // Under remap-root the home is root's.
  EXPECT_NE(std::find(s2.begin(), s2.end(), "/shared/home/bob:/root"), s2.end());
  ASSERT_TRUE(setOption(sq, OptionId::kNoRemapRoot, "").isOk());
  auto s3 = startCommand(a, resolve(sq, a), "n", 3, "", "/shared/home/bob", {});
  EXPECT_NE(std::find(s3.begin(), s3.end(), "/shared/home/bob:/shared/home/bob"), s3.end());
  EXPECT_EQ(std::find(s3.begin(), s3.end(), "--root"), s3.end());
}

TEST(PyxisOptions, ReadonlyUnshareEntrypointAndEnvReachTheRuntime) {
  PluginArgs a;
  a.runtimePath = "enroot";
  Options o;
  ASSERT_TRUE(setOption(o, OptionId::kImage, "ubuntu:24.04").isOk());
  ASSERT_TRUE(setOption(o, OptionId::kReadonly, "").isOk());
  ASSERT_TRUE(setOption(o, OptionId::kUnshare, "uts,net").isOk());
  ASSERT_TRUE(setOption(o, OptionId::kEntrypoint, "").isOk());
  ASSERT_TRUE(setOption(o, OptionId::kEnv, "DOCKER_TLS_VERIFY").isOk());
  auto cmd = startCommand(a, resolve(o, a), "n", 3, "", "", {});
  auto has = [&](const std::vector<std::string>& seq) {
    return std::search(cmd.begin(), cmd.end(), seq.begin(), seq.end()) != cmd.end();
  };
  EXPECT_TRUE(has({"--ro"}));
  EXPECT_FALSE(has({"--rw"}));
  EXPECT_TRUE(has({"--unshare", "net,uts"}));
  EXPECT_TRUE(has({"--entrypoint"}));
  EXPECT_TRUE(has({"--env", "DOCKER_TLS_VERIFY"}));
  EXPECT_EQ(cmd.back(), "n");
  EXPECT_EQ(exportCommand(a, "n", "./out.sqsh"),
            (std::vector<std::string>{"enroot", "export", "--force", "--output", "./out.sqsh", "n"}));
}

TEST(PyxisOptions, UnshareAndEntrypointLogOptions) {
  Options o;
  Status bad = setOption(o, OptionId::kUnshare, "net,foo");
  EXPECT_FALSE(bad.isOk());
  EXPECT_NE(bad.message().find("unknown namespace"), std::string::npos) << bad.message();
  EXPECT_FALSE(o.unshare.has_value());
  EXPECT_FALSE(setOption(o, OptionId::kUnshare, "").isOk());
  ASSERT_TRUE(setOption(o, OptionId::kUnshare, "ipc").isOk());
  EXPECT_TRUE(o.unshare->ipc);
  EXPECT_FALSE(o.unshare->net);
  EXPECT_TRUE(o.any());

  Options e;
  ASSERT_TRUE(applyEnvironmentDefaults(e, {{"PYXIS_CONTAINER_UNSHARE", "net"},
                                           {"PYXIS_CONTAINER_ENTRYPOINT_LOG", "1"}})
                  .isOk());
  EXPECT_TRUE(e.unshare && e.unshare->net);
  EXPECT_EQ(e.entrypointLog, true);
  Options cli;
  ASSERT_TRUE(setOption(cli, OptionId::kUnshare, "uts").isOk());
  ASSERT_TRUE(applyEnvironmentDefaults(cli, {{"PYXIS_CONTAINER_UNSHARE", "net"}}).isOk());
  EXPECT_FALSE(cli.unshare->net) << "the command line wins";
  Options wrong;
  EXPECT_FALSE(applyEnvironmentDefaults(wrong, {{"PYXIS_CONTAINER_UNSHARE", "pid"}}).isOk());
}

TEST(PyxisOptions, AStepNameOfThisJobNamesItsUnnamedContainer) {
  Options o;
  ASSERT_TRUE(setOption(o, OptionId::kName, "42.3").isOk());
  EXPECT_TRUE(namesUnnamedContainer(o, 42));
  EXPECT_EQ(containerName(o, 42, 5), "pyxis_42.3");
  EXPECT_FALSE(namesUnnamedContainer(o, 43));
  EXPECT_EQ(containerName(o, 43, 5), "pyxis_43_42.3");
  ASSERT_TRUE(setOption(o, OptionId::kName, "42.x").isOk());
  EXPECT_FALSE(namesUnnamedContainer(o, 42));
}

TEST(PyxisOptions, TaskEnvironmentImageWinsExceptKeptNamesTheJobSets) {
  std::map<std::string, std::string> job = {{"HOME", "/home/a"}, {"PATH", "/bin"}};
  auto env = taskEnvironment({"PATH=/usr/local/bin:/usr/bin", "HOME=/root", "LANG=C.UTF-8",
                              "CUDA_VERSION=11.8.0", "BAD"},
                             {"HOME", "CUDA_VERSION"}, {{"CUDA_VISIBLE_DEVICES", "0,1"}}, job);
  EXPECT_EQ(env.set.at("PATH"), "/usr/local/bin:/usr/bin");
  EXPECT_EQ(env.set.count("HOME"), 0u) << "the job's HOME is kept";
  EXPECT_EQ(env.set.at("CUDA_VERSION"), "11.8.0") << "an unset kept name keeps the image's";
  EXPECT_EQ(env.set.at("LANG"), "C.UTF-8");
  EXPECT_EQ(env.set.at("CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(env.set.count("BAD"), 0u);
}

TEST(PyxisOptions, TaskEnvironmentDropsTheNodesLocaleUnlessKept) {
  std::map<std::string, std::string> job = {{"LANG", "en_US.UTF-8"}, {"LC_ALL", "en_US.UTF-8"}};
  auto env = taskEnvironment({}, {}, {}, job);
  EXPECT_EQ(env.unset, (std::vector<std::string>{"LANG", "LC_ALL"}));
  auto kept = taskEnvironment({}, {"LANG"}, {}, job);
  EXPECT_EQ(kept.unset, (std::vector<std::string>{"LC_ALL"}));
  auto image = taskEnvironment({"LANG=C.UTF-8"}, {}, {}, job);
  EXPECT_EQ(image.set.at("LANG"), "C.UTF-8");
  EXPECT_EQ(image.unset, (std::vector<std::string>{"LC_ALL"}));
}

TEST(PyxisOptions, PmixStepsGetTheServersDirectoryAndSelections) {
  std::map<std::string, std::string> job = {{"SLURM_MPI_TYPE", "pmix"},
                                            {"PMIX_SERVER_TMPDIR", "/var/spool/slurmd/pmix.7.0/"},
                                            {"PMIX_SECURITY_MODE", "munge,native"},
                                            {"PMIX_GDS_MODULE", "hash"},
                                            {"PMIX_MCA_ptl", "tcp"},
                                            {"PMIX_PTL_MODULE", "usock"}};
  EXPECT_EQ(pmixMounts(job, 7, 0),
            (std::vector<std::string>{
                "/var/spool/slurmd/pmix.7.0/:/var/spool/slurmd/pmix.7.0/:rw+nosuid+nodev+noexec",
                "/run/munge:/run/munge:rw+nosuid+nodev+noexec"}));
  // Before the tasks exist the variable is not set yet: Slurm's own place.
  auto early = pmixMounts({{"SLURM_MPI_TYPE", "pmix_v5"}}, 9, 2, "/spool");
  ASSERT_EQ(early.size(), 2u);
  EXPECT_EQ(early[0], "/spool/pmix.9.2/:/spool/pmix.9.2/:rw+nosuid+nodev+noexec");
  auto env = taskEnvironment({}, {}, {}, job);
  EXPECT_EQ(env.set.at("PMIX_MCA_psec"), "munge,native");
  EXPECT_EQ(env.set.at("PMIX_MCA_gds"), "hash");
  EXPECT_EQ(env.set.count("PMIX_MCA_ptl"), 0u) << "a selection the job made stays";
  job["SLURM_MPI_TYPE"] = "pmi2";
  EXPECT_TRUE(pmixMounts(job, 7, 0).empty());
  EXPECT_TRUE(pmixMounts({}, 7, 0).empty()) << "not an MPI step";
  EXPECT_EQ(taskEnvironment({}, {}, {}, job).set.count("PMIX_MCA_psec"), 0u);
  EXPECT_EQ(pmixMounts({{"PMIX_SERVER_TMPDIR", "relative"}}, 7, 0).size(), 1u) << "only munge's";
}

TEST(PyxisOptions, PytorchImagesGetTorchDistributedVariables) {
  std::map<std::string, std::string> job = {{"SLURM_JOB_ID", "100"},  {"SLURM_NTASKS", "8"},
                                            {"SLURM_PROCID", "5"},     {"SLURM_LOCALID", "1"},
                                            {"SLURM_STEP_NUM_TASKS", "8"},
                                            {"SLURM_STEP_NUM_NODES", "2"}};
  auto none = taskEnvironment({"PATH=/bin"}, {}, {}, job, "slinky-0");
  EXPECT_EQ(none.set.count("MASTER_ADDR"), 0u) << "only images with PYTORCH_VERSION";
  auto env = taskEnvironment({"PYTORCH_VERSION=2.5.0"}, {}, {}, job, "slinky-0");
  EXPECT_EQ(env.set.at("MASTER_ADDR"), "slinky-0");
  EXPECT_EQ(env.set.at("MASTER_PORT"), std::to_string(100 % 4536 + 61000));
  EXPECT_EQ(env.set.at("WORLD_SIZE"), "8");
  EXPECT_EQ(env.set.at("RANK"), "5");
  EXPECT_EQ(env.set.at("LOCAL_RANK"), "1");
  EXPECT_EQ(env.set.at("OMP_NUM_THREADS"), "1");
  job["MASTER_PORT"] = "29500";
  EXPECT_EQ(taskEnvironment({"PYTORCH_VERSION=2.5.0"}, {}, {}, job).set.count("MASTER_PORT"), 0u);
}

}  // namespace
}  // namespace corral::spank
