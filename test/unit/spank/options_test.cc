#include "spank/options.h"

#include <gtest/gtest.h>

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
        "container-readonly", "container-entrypoint", "no-container-entrypoint", "container-env"})
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
  EXPECT_FALSE(set(o, OptionId::kWorkdir, "relative").isOk());
  EXPECT_TRUE(set(o, OptionId::kWorkdir, "/workspace").isOk());
  EXPECT_TRUE(set(o, OptionId::kMounts, "/pfs:/pfs,/data:/data:ro").isOk());
  EXPECT_FALSE(set(o, OptionId::kMounts, "pfs:/pfs").isOk());
  EXPECT_EQ(o.mounts, "/pfs:/pfs,/data:/data:ro");
  EXPECT_TRUE(set(o, OptionId::kEnv, "HOME,NCCL_DEBUG").isOk());
  EXPECT_EQ(o.env, (std::vector<std::string>{"HOME", "NCCL_DEBUG"}));
  EXPECT_FALSE(set(o, OptionId::kEnv, "A,,B").isOk());
  EXPECT_FALSE(set(o, OptionId::kEnv, "1BAD").isOk());
  EXPECT_FALSE(set(o, OptionId::kSave, "/pfs/dir/").isOk());
  EXPECT_TRUE(set(o, OptionId::kSave, "/pfs/out.sqsh").isOk());
}

TEST(PyxisOptions, FlagsAndTheirNegations) {
  Options o;
  EXPECT_FALSE(o.any());
  ASSERT_TRUE(set(o, OptionId::kReadonly, "").isOk());
  EXPECT_EQ(o.writable, false);
  ASSERT_TRUE(set(o, OptionId::kWritable, "").isOk());
  EXPECT_EQ(o.writable, true);
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
  EXPECT_NE(std::find(s2.begin(), s2.end(), "/shared/home/bob:/shared/home/bob"), s2.end());
}

TEST(PyxisOptions, TaskEnvironmentImageWinsExceptKeptNames) {
  auto env = taskEnvironment({"PATH=/usr/local/bin:/usr/bin", "HOME=/root", "LANG=C.UTF-8", "BAD"},
                             {"HOME"}, {{"CUDA_VISIBLE_DEVICES", "0,1"}});
  EXPECT_EQ(env.at("PATH"), "/usr/local/bin:/usr/bin");
  EXPECT_EQ(env.count("HOME"), 0u);
  EXPECT_EQ(env.at("LANG"), "C.UTF-8");
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(env.count("BAD"), 0u);
}

}  // namespace
}  // namespace corral::spank
