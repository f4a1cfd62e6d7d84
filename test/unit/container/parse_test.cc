#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "container/container.h"

namespace corral::container {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(ParseMountList, SourceOnlyMeansSamePath) {
  auto m = parseMountList("/data");
  ASSERT_TRUE(m.isOk()) << m.status().message();
  ASSERT_EQ(m->size(), 1u);
  EXPECT_EQ((*m)[0].source, "/data");
  EXPECT_EQ((*m)[0].target, "/data");
  EXPECT_FALSE((*m)[0].readOnly);
  EXPECT_TRUE((*m)[0].recursive);
}

TEST(ParseMountList, SeveralWithFlags) {
  auto m = parseMountList("/a:/b:ro,/c:/d,/e:/f:bind+rw+rprivate,/g:/h:ro+nosuid+nodev+noexec");
  ASSERT_TRUE(m.isOk()) << m.status().message();
  ASSERT_EQ(m->size(), 4u);
  EXPECT_TRUE((*m)[0].readOnly);
  EXPECT_EQ((*m)[0].target, "/b");
  EXPECT_FALSE((*m)[1].readOnly);
  EXPECT_EQ((*m)[1].source, "/c");
  EXPECT_FALSE((*m)[2].recursive);
  EXPECT_FALSE((*m)[2].readOnly);
  EXPECT_TRUE((*m)[3].readOnly);
  EXPECT_TRUE((*m)[3].noSuid);
  EXPECT_TRUE((*m)[3].noDev);
  EXPECT_TRUE((*m)[3].noExec);
}

TEST(ParseMountList, AnEmptyListIsAMistake) {
  // Pyxis refuses `--container-mounts=`: an empty list is a typo, not "none".
  auto m = parseMountList("");
  ASSERT_FALSE(m.isOk());
  EXPECT_THAT(m.status().message(), HasSubstr("empty"));
}

TEST(ParseMountList, RelativeSourcesAndTargetsArePathsNamesAreNot) {
  auto m = parseMountList("./:/test-mnt,./file.txt:/f,/home:../home");
  ASSERT_TRUE(m.isOk()) << m.status().message();
  EXPECT_EQ((*m)[0].source, "./");
  EXPECT_EQ((*m)[1].source, "./file.txt");
  EXPECT_EQ((*m)[2].target, "../home") << "start() refuses it: it leaves the root";
  m = parseMountList("data:/data");
  ASSERT_FALSE(m.isOk());
  EXPECT_EQ(m.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("mount source must be a relative path, an absolute path"));
  m = parseMountList("/data:data");
  ASSERT_FALSE(m.isOk());
  EXPECT_THAT(m.status().message(), HasSubstr("mount destination must be a relative or an absolute path"));
  EXPECT_FALSE(parseMountList("devpts:/mydevpts:ro").isOk());
}

TEST(ParseMountList, TmpfsWithItsOptionsAndUmount) {
  auto m = parseMountList("tmpfs:/scratch:size=1G+huge=within_size+ro,umount:/root,/tmp:/mnt:unbindable+ro");
  ASSERT_TRUE(m.isOk()) << m.status().message();
  ASSERT_EQ(m->size(), 3u);
  EXPECT_EQ((*m)[0].kind, MountKind::kTmpfs);
  EXPECT_EQ((*m)[0].target, "/scratch");
  EXPECT_EQ((*m)[0].data, "size=1G,huge=within_size");
  EXPECT_TRUE((*m)[0].readOnly);
  EXPECT_EQ((*m)[1].kind, MountKind::kUmount);
  EXPECT_EQ((*m)[1].target, "/root");
  EXPECT_EQ((*m)[2].kind, MountKind::kBind);
  EXPECT_TRUE((*m)[2].unbindable);
  EXPECT_TRUE((*m)[2].readOnly);
  // tmpfs and umount need a destination; a bind does not take tmpfs options.
  EXPECT_FALSE(parseMountList("tmpfs").isOk());
  EXPECT_FALSE(parseMountList("umount").isOk());
  EXPECT_FALSE(parseMountList("/a:/b:size=1G").isOk());
}

TEST(ParseUnshare, KnownNamespacesOnly) {
  auto u = parseUnshare("net,uts");
  ASSERT_TRUE(u.isOk());
  EXPECT_TRUE(u->net);
  EXPECT_TRUE(u->uts);
  EXPECT_FALSE(u->ipc);
  for (const char* bad : {"", "foo", "net,foo", "net,", "pid"}) {
    auto b = parseUnshare(bad);
    ASSERT_FALSE(b.isOk()) << bad;
    EXPECT_THAT(b.status().message(), ::testing::AnyOf(HasSubstr("unknown namespace"), HasSubstr("no namespace")));
  }
}

TEST(HolderReport, RoundTripsAndCarriesErrors) {
  HolderReport r;
  r.env = {"DOCKER_HOST=tcp://docker:2375", "PATH=/usr/bin"};
  r.entrypointLog = "== CUDA ==\nline two\n";
  std::string line = holderReportLine(r);
  EXPECT_EQ(line.rfind("ready ", 0), 0u);
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line, whatever the log holds";
  auto back = parseHolderAnswer(line);
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(back->env, r.env);
  EXPECT_EQ(back->entrypointLog, r.entrypointLog);
  auto plain = parseHolderAnswer("ready\n");
  ASSERT_TRUE(plain.isOk());
  EXPECT_TRUE(plain->env.empty());
  auto err = parseHolderAnswer("error: mount source path does not exist: /x\n");
  ASSERT_FALSE(err.isOk());
  EXPECT_EQ(err.status().message(), "mount source path does not exist: /x");
  auto gone = parseHolderAnswer("");
  ASSERT_FALSE(gone.isOk());
  EXPECT_THAT(gone.status().message(), HasSubstr("exited before it was ready"));
  EXPECT_FALSE(parseHolderAnswer("ready {not json\n").isOk());
}

TEST(ParseMountList, RejectsEmptyEntriesAndUnknownFlags) {
  EXPECT_FALSE(parseMountList("/a,,/b").isOk());
  EXPECT_FALSE(parseMountList("/a,").isOk());
  EXPECT_FALSE(parseMountList(",/a").isOk());
  EXPECT_FALSE(parseMountList("/a:/b:").isOk());
  EXPECT_FALSE(parseMountList("/a::ro").isOk());
  EXPECT_FALSE(parseMountList("/a:/b:ro:x").isOk());
  auto m = parseMountList("/a:/b:ro+frobnicate");
  ASSERT_FALSE(m.isOk());
  EXPECT_THAT(m.status().message(), HasSubstr("unknown mount flag \"frobnicate\""));
}

TEST(ParseGpuList, ListsAndRanges) {
  auto g = parseGpuList("2,5-6");
  ASSERT_TRUE(g.isOk());
  EXPECT_THAT(*g, ElementsAre(2, 5, 6));
  g = parseGpuList("0-3");
  ASSERT_TRUE(g.isOk());
  EXPECT_THAT(*g, ElementsAre(0, 1, 2, 3));
  g = parseGpuList("3,1,1");
  ASSERT_TRUE(g.isOk());
  EXPECT_THAT(*g, ElementsAre(1, 3));
  g = parseGpuList("");
  ASSERT_TRUE(g.isOk());
  EXPECT_THAT(*g, IsEmpty());
}

TEST(ParseGpuList, RejectsGarbage) {
  for (const char* bad : {"a", "1,", "-1", "3-1", "1-", "0x1", "1;2", "99999"}) {
    auto g = parseGpuList(bad);
    EXPECT_FALSE(g.isOk()) << bad;
    if (!g.isOk()) {
      EXPECT_THAT(g.status().message(), HasSubstr("invalid GPU list"));
    }
  }
}

TEST(GpuEnvironment, RenumbersCudaDevices) {
  auto env = gpuEnvironment({3, 2});
  EXPECT_EQ(env["NVIDIA_VISIBLE_DEVICES"], "2,3");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,1");
}

TEST(GpuEnvironment, NoGpusIsVoid) {
  auto env = gpuEnvironment({});
  EXPECT_EQ(env["NVIDIA_VISIBLE_DEVICES"], "void");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "");
}

TEST(SelectGpuDevices, OnlyTheAllocatedOnesPlusShared) {
  std::vector<std::string> dev = {"null",       "nvidia0",          "nvidia1",        "nvidia2",
                                  "nvidia10",   "nvidiactl",        "nvidia-uvm",     "nvidia-uvm-tools",
                                  "nvidia-caps", "nvidia-modeset", "tty"};
  EXPECT_THAT(selectGpuDevices(dev, {1}),
              ElementsAre("nvidia1", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools",
                          "nvidia-modeset", "nvidia-caps"));
  EXPECT_THAT(selectGpuDevices(dev, {0, 10, 7}),
              ElementsAre("nvidia0", "nvidia10", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools",
                          "nvidia-modeset", "nvidia-caps"));
  EXPECT_THAT(selectGpuDevices(dev, {}), IsEmpty());
  EXPECT_THAT(selectGpuDevices({"nvidia0"}, {0}), ElementsAre("nvidia0"));
}

TEST(ContainerEnvironment, ImageOverridesCallerExceptKeptNames) {
  std::map<std::string, std::string> caller = {
      {"PATH", "/host/bin"}, {"HOME", "/home/u"}, {"KEEP", "caller"}, {"SLURM_JOB_ID", "7"}};
  std::vector<std::string> image = {"PATH=/usr/bin:/bin", "KEEP=image", "LANG=C.UTF-8",
                                    "GONE=image"};
  std::vector<int> gpus = {4};
  auto env = containerEnvironment(caller, image, {"KEEP", "SET=x=y", "GONE"}, &gpus);
  EXPECT_THAT(env, ElementsAre("CUDA_VISIBLE_DEVICES=0", "HOME=/home/u", "KEEP=caller",
                               "LANG=C.UTF-8", "NVIDIA_VISIBLE_DEVICES=4", "PATH=/usr/bin:/bin",
                               "SET=x=y", "SLURM_JOB_ID=7"));
}

TEST(ContainerEnvironment, DefaultPathAndNoGpuEnvWithoutGpus) {
  auto env = containerEnvironment({{"A", "1"}}, {}, {}, nullptr);
  EXPECT_THAT(env, ElementsAre("A=1",
                               "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
}

TEST(ValidateName, AcceptsEnrootNames) {
  for (const char* ok : {"ubuntu", "pyxis_123_0", "a.b+c-d", "nvcr.io+nvidia+pytorch+23.10-py3"}) {
    EXPECT_TRUE(validateName(ok).isOk()) << ok;
  }
  EXPECT_TRUE(validateName(std::string(128, 'a')).isOk());
}

TEST(ValidateName, RejectsPathsAndOddCharacters) {
  for (const char* bad : {"", "..", ".", "a/b", "../x", "/abs", ".hidden", "-opt", "a b", "a:b",
                          "a\nb", "é"}) {
    EXPECT_FALSE(validateName(bad).isOk()) << bad;
  }
  EXPECT_FALSE(validateName(std::string(129, 'a')).isOk());
}

TEST(DefaultNames, LikeEnroot) {
  EXPECT_EQ(defaultImportFile("docker://ubuntu"), "ubuntu.sqsh");
  EXPECT_EQ(defaultImportFile("docker://ubuntu:22.04"), "ubuntu+22.04.sqsh");
  EXPECT_EQ(defaultImportFile("docker://nvcr.io#nvidia/pytorch:23.10-py3"),
            "nvcr.io+nvidia+pytorch+23.10-py3.sqsh");
  EXPECT_EQ(defaultImportFile("docker://joe@registry.local#team/app:v1"),
            "joe+registry.local+team+app+v1.sqsh");
  EXPECT_EQ(defaultImportFile("localhost:5000/test/busybox:latest"),
            "localhost_5000+test+busybox+latest.sqsh");
  EXPECT_EQ(defaultImportFile("docker://alpine@sha256:abcd"), "alpine+sha256+abcd.sqsh");
  EXPECT_EQ(defaultContainerName("/images/ubuntu+22.04.sqsh"), "ubuntu+22.04");
  EXPECT_EQ(defaultContainerName("./x.squashfs"), "x");
  EXPECT_EQ(defaultContainerName("docker://ubuntu:22.04"), "ubuntu+22.04");
  EXPECT_TRUE(validateName(defaultContainerName("docker://joe@r:5000#a/b@sha256:ff")).isOk());
}

TEST(ParseBool, EnrootSpellings) {
  for (const char* t : {"y", "yes", "1", "true", "TRUE", "Yes"}) {
    auto b = parseBool("K", t);
    ASSERT_TRUE(b.isOk()) << t;
    EXPECT_TRUE(*b) << t;
  }
  for (const char* f : {"n", "no", "0", "false", ""}) {
    auto b = parseBool("K", f);
    ASSERT_TRUE(b.isOk()) << f;
    EXPECT_FALSE(*b) << f;
  }
  auto b = parseBool("ENROOT_MOUNT_HOME", "maybe");
  ASSERT_FALSE(b.isOk());
  EXPECT_THAT(b.status().message(), HasSubstr("ENROOT_MOUNT_HOME"));
}

}  // namespace
}  // namespace corral::container
