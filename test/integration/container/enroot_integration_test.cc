// Runs the built `enroot` binary as an unprivileged user (nobody) against a
// busybox root file system: create, start, mounts, --root, list, export,
// remove, overlays and the --hold-fd holder. Needs root (to switch to
// nobody and prepare files) and /bin/busybox; skipped otherwise.

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "common/files.h"
#include "image/sha256.h"
#include "container/container.h"
#include "common/fs.h"

namespace corral::container {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr uid_t kNobody = 65534;

struct Result {
  int rc = -1;
  std::string out;
  std::string err;
};

std::string enrootBinary() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string self(buf, static_cast<size_t>(n));
  return self.substr(0, self.rfind('/')) + "/enroot";
}

std::string shell(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

void dropToNobody() {
  if (setgroups(0, nullptr) != 0 || setresgid(kNobody, kNobody, kNobody) != 0 ||
      setresuid(kNobody, kNobody, kNobody) != 0) {
    _exit(126);
  }
}

std::set<std::string> lines(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) {
    if (!l.empty()) out.insert(l);
  }
  return out;
}

class EnrootIntegrationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    enroot_ = enrootBinary();
    if (geteuid() != 0 || access("/bin/busybox", X_OK) != 0 || access(enroot_.c_str(), X_OK) != 0 ||
        access("/usr/bin/mksquashfs", X_OK) != 0 || access("/usr/bin/unsquashfs", X_OK) != 0) {
      return;
    }
    char tmpl[] = "/var/tmp/corral-enroot-it-XXXXXX";
    if (!mkdtemp(tmpl)) return;
    dir_ = tmpl;
    chmod(dir_.c_str(), 0755);
    std::string r = dir_ + "/rootfs";
    std::string setup =
        "set -e; mkdir -p " + r + "/bin " + r + "/etc " + r + "/tmp " + r + "/proc " + r + "/sys " +
        r + "/dev " + r + "/root " + r + "/.corral " + r + "/work; cp /bin/busybox " + r +
        "/bin/; for c in sh ls cat hostname id echo touch rm stat env pwd true sleep; do ln -s "
        "busybox " + r + "/bin/$c; done; echo 'NAME=\"corral busybox\"' > " + r +
        "/etc/os-release; echo 'root:x:0:0:root:/root:/bin/sh' > " + r + "/etc/passwd; " +
        "echo '{\"env\":[\"PATH=/bin\",\"FROM_IMAGE=yes\",\"KEEP=image\"],\"workdir\":\"/work\","
        "\"entrypoint\":[\"/bin/echo\"],\"cmd\":[\"from-entrypoint\"]}' > " + r +
        "/.corral/config.json; mksquashfs " + r + " " + dir_ +
        "/bb.sqsh -noappend -quiet -no-progress >/dev/null; mkdir -p " + dir_ + "/home " + dir_ +
        "/share; echo shared > " + dir_ + "/share/f; cp -a " + r + " " + dir_ +
        "/lower; chown -R 65534:65534 " + dir_ + "/home " + dir_ + "/share " + dir_ + "/lower";
    if (std::system(setup.c_str()) != 0) {
      Status st = removeTree(dir_);
      (void)st;
      dir_.clear();
    }
  }

  static void TearDownTestSuite() {
    if (!dir_.empty()) {
      EXPECT_TRUE(removeTree(dir_).isOk());
      dir_.clear();
    }
  }

  void SetUp() override {
    if (dir_.empty()) {
      // An integration test runs where it can (root, scripts/install-deps.sh):
      // a missing prerequisite is a failure, never a silent skip.
      FAIL() << "needs root, /bin/busybox, squashfs-tools and the enroot binary next to "
                "the test";
    }
  }

  static std::string home() { return dir_ + "/home"; }
  static std::string data() { return home() + "/.local/share/enroot"; }

  // Runs enroot as nobody in `home()`.
  static Result run(const std::vector<std::string>& args,
                    const std::map<std::string, std::string>& extraEnv = {}) {
    std::string outPath = dir_ + "/stdout", errPath = dir_ + "/stderr";
    pid_t pid = fork();
    if (pid == 0) {
      int out = open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int err = open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int in = open("/dev/null", O_RDONLY);
      if (out < 0 || err < 0 || in < 0) _exit(125);
      dup2(in, 0);
      dup2(out, 1);
      dup2(err, 2);
      if (chdir(home().c_str()) != 0) _exit(125);
      dropToNobody();
      std::map<std::string, std::string> env = {{"HOME", home()}, {"PATH", "/usr/bin:/bin"},
                                                {"KEEP", "caller"}};
      for (const auto& [k, v] : extraEnv) env[k] = v;
      std::vector<std::string> store;
      for (const auto& [k, v] : env) store.push_back(k + "=" + v);
      std::vector<char*> envp, argv;
      for (auto& s : store) envp.push_back(s.data());
      envp.push_back(nullptr);
      std::vector<std::string> a = {enroot_};
      a.insert(a.end(), args.begin(), args.end());
      for (auto& s : a) argv.push_back(s.data());
      argv.push_back(nullptr);
      execve(enroot_.c_str(), argv.data(), envp.data());
      _exit(127);
    }
    Result r;
    int status = 0;
    waitpid(pid, &status, 0);
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = readFile(outPath).isOk() ? *readFile(outPath) : "";
    r.err = readFile(errPath).isOk() ? *readFile(errPath) : "";
    return r;
  }

  static void createCopy(const std::string& name) {
    Result r = run({"create", "--force", "-n", name, dir_ + "/bb.sqsh"});
    ASSERT_EQ(r.rc, 0) << r.err;
  }

  // An overlay container on `dir_/lower`, as `create docker://…` makes one.
  static void createOverlay(const std::string& name) {
    std::string d = data() + "/" + name;
    std::string cmd = "set -e; rm -rf " + d + "; mkdir -p " + d + "/upper " + d + "/work; echo " +
                      dir_ + "/lower > " + d + "/lower; cp " + dir_ + "/rootfs/.corral/config.json " +
                      d + "/config.json; chown -R 65534:65534 " + data();
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  static std::string enroot_;
  static std::string dir_;
};

std::string EnrootIntegrationTest::enroot_;
std::string EnrootIntegrationTest::dir_;

TEST_F(EnrootIntegrationTest, StartSeesOnlyItsRootfs) {
  createCopy("bb");
  Result r = run({"start", "bb", "sh", "-c", "cat /etc/os-release; ls /; id -u"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("NAME=\"corral busybox\""));
  std::set<std::string> got = lines(r.out);
  got.erase("NAME=\"corral busybox\"");
  // /etc/hosts & co. are bound in, nothing else of the node's.
  EXPECT_EQ(got, (std::set<std::string>{"bin", "dev", "etc", "proc", "root", "sys", "tmp", "work",
                                        "65534"}));
}

TEST_F(EnrootIntegrationTest, EnvironmentWorkdirAndDefaultCommand) {
  createCopy("bb");
  Result r = run({"start", "-e", "KEEP", "-e", "SET=1", "bb", "sh", "-c",
                  "pwd; echo $FROM_IMAGE $KEEP $SET $PATH"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "/work\nyes caller 1 /bin\n");
  r = run({"start", "bb", "sh", "-c", "echo $KEEP"});
  EXPECT_EQ(r.out, "image\n");
  r = run({"start", "--workdir", "/tmp", "bb", "pwd"});
  EXPECT_EQ(r.out, "/tmp\n");
  r = run({"start", "bb"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "from-entrypoint\n");
  r = run({"start", "--gpus", "3", "bb", "sh", "-c",
           "echo $NVIDIA_VISIBLE_DEVICES $CUDA_VISIBLE_DEVICES"});
  EXPECT_EQ(r.out, "3 0\n");
}

TEST_F(EnrootIntegrationTest, ExitCodesAndErrors) {
  createCopy("bb");
  Result r = run({"start", "bb", "sh", "-c", "exit 42"});
  EXPECT_EQ(r.rc, 42);
  r = run({"start", "bb", "no-such-command"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("enroot: error: cannot run \"no-such-command\""));
  r = run({"start", "no-such-container", "true"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("no such container"));
  r = run({"start", "-m", "/nonexistent:/x", "bb", "true"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("mount source path does not exist: /nonexistent"));
  r = run({"start", "-m", "relative:/x", "bb", "true"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("absolute path"));
}

TEST_F(EnrootIntegrationTest, MountsReadOnlyAndRoot) {
  createCopy("bb");
  Result r = run({"start", "-m", dir_ + "/share:/data:ro", "-m", dir_ + "/share:/mnt/rw", "bb",
                  "sh", "-c",
                  "cat /data/f; touch /data/x && echo data-writable; touch /mnt/rw/y && echo "
                  "rw-writable; touch /z && echo root-writable"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "shared\nrw-writable\nroot-writable\n");
  EXPECT_THAT(r.err, HasSubstr("Read-only file system"));
  EXPECT_TRUE(pathExists(dir_ + "/share/y"));
  EXPECT_FALSE(pathExists(dir_ + "/share/x"));

  r = run({"start", "bb", "sh", "-c", "touch /z2 && echo root-writable"},
          {{"ENROOT_ROOTFS_WRITABLE", "no"}});
  EXPECT_EQ(r.out, "");
  r = run({"start", "--rw", "bb", "sh", "-c", "touch /z2 && echo root-writable"},
          {{"ENROOT_ROOTFS_WRITABLE", "no"}});
  EXPECT_EQ(r.out, "root-writable\n");

  r = run({"start", "--root", "bb", "id", "-u"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "0\n");
}

TEST_F(EnrootIntegrationTest, CreateListExportRemove) {
  Result r = run({"create", "-n", "c1", dir_ + "/bb.sqsh"});
  ASSERT_EQ(r.rc, 0) << r.err;
  r = run({"create", "-n", "c1", dir_ + "/bb.sqsh"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("already exists"));
  r = run({"create", "-f", "-n", "c1", dir_ + "/bb.sqsh"});
  EXPECT_EQ(r.rc, 0) << r.err;
  ASSERT_EQ(std::system(("cp " + dir_ + "/bb.sqsh " + dir_ + "/fromfile.sqsh").c_str()), 0);
  r = run({"create", dir_ + "/fromfile.sqsh"});  // Named after the file.
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(pathExists(data() + "/fromfile/rootfs/bin/busybox"));
  r = run({"create", "-n", "bad", dir_ + "/missing.sqsh"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_FALSE(pathExists(data() + "/bad"));

  r = run({"list"});
  EXPECT_THAT(lines(r.out), ::testing::IsSupersetOf({"c1", "fromfile"}));
  r = run({"list", "--fancy"});
  EXPECT_THAT(r.out, HasSubstr("copy"));

  r = run({"export", "-o", home() + "/c1.sqsh", "c1"});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string listing = shell("unsquashfs -l " + home() + "/c1.sqsh");
  EXPECT_THAT(listing, HasSubstr("squashfs-root/bin/busybox"));
  EXPECT_THAT(listing, HasSubstr("squashfs-root/.corral/config.json"));
  r = run({"export", "-o", home() + "/c1.sqsh", "c1"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("already exists"));

  // What export wrote makes a container again, config included.
  r = run({"create", "-n", "c2", home() + "/c1.sqsh"});
  ASSERT_EQ(r.rc, 0) << r.err;
  r = run({"start", "c2", "pwd"});
  EXPECT_EQ(r.out, "/work\n");

  r = run({"remove", "-f", "c1", "c2", "fromfile"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_FALSE(pathExists(data() + "/c1"));
  r = run({"remove", "-f", "c1"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("no such container"));
  r = run({"remove", "-f", "../home"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(pathExists(home()));
  // Nothing temporary is left behind.
  std::string leftovers = shell("ls -A " + data() + " | grep '^\\.' || true");
  EXPECT_EQ(leftovers, "");
}

TEST_F(EnrootIntegrationTest, OverlayContainer) {
  createOverlay("ov");
  Result r = run({"list", "-f"});
  EXPECT_THAT(r.out, HasSubstr("overlay"));
  r = run({"start", "ov", "sh", "-c", "rm /etc/os-release && touch /new && ls /"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("new"));
  EXPECT_TRUE(pathExists(dir_ + "/lower/etc/os-release"));  // The image is untouched.
  r = run({"start", "ov", "sh", "-c", "ls /etc; ls /new"});
  EXPECT_THAT(r.out, Not(HasSubstr("os-release")));
  EXPECT_THAT(r.out, HasSubstr("/new"));

  r = run({"export", "-o", home() + "/ov.sqsh", "ov"});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string listing = shell("unsquashfs -l " + home() + "/ov.sqsh");
  EXPECT_THAT(listing, HasSubstr("squashfs-root/new"));
  EXPECT_THAT(listing, HasSubstr("squashfs-root/.corral/config.json"));
  EXPECT_THAT(listing, Not(HasSubstr("os-release")));

  r = run({"remove", "-f", "ov"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_FALSE(pathExists(data() + "/ov"));
}

TEST_F(EnrootIntegrationTest, StartFromSquashfsFileCleansUp) {
  Result r = run({"create", "-f", "-n", "bb", dir_ + "/bb.sqsh"});  // Makes the data dir.
  ASSERT_EQ(r.rc, 0) << r.err;
  r = run({"start", dir_ + "/bb.sqsh", "cat", "/etc/os-release"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("corral busybox"));
  std::string left;
  for (int i = 0; i < 100; ++i) {
    left = shell("ls -A " + data() + " | grep '^\\.start' || true");
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(left, "");
}

TEST_F(EnrootIntegrationTest, HoldFdHolderCanBeJoined) {
  createCopy("bb");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t holder = fork();
  if (holder == 0) {
    close(ready[0]);
    if (ready[1] != 3) {
      dup2(ready[1], 3);
      close(ready[1]);
    }
    int devnull = open("/dev/null", O_RDWR);
    dup2(devnull, 0);
    dup2(devnull, 1);
    if (chdir(home().c_str()) != 0) _exit(125);
    dropToNobody();
    std::string h = "HOME=" + home();
    char* envp[] = {h.data(), nullptr};
    std::string mount = dir_ + "/share:/data";
    std::vector<std::string> a = {enroot_, "start", "--hold-fd", "3", "-m", mount, "bb"};
    std::vector<char*> argv;
    for (auto& s : a) argv.push_back(s.data());
    argv.push_back(nullptr);
    execve(enroot_.c_str(), argv.data(), envp);
    _exit(127);
  }
  close(ready[1]);
  std::string got;
  char buf[256];
  ssize_t n;
  while ((n = read(ready[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  close(ready[0]);
  ASSERT_EQ(got, "ready\n");

  // A task joins as the plugin's do: user namespace, then mount namespace.
  pid_t task = fork();
  if (task == 0) {
    dropToNobody();
    std::string ns = "/proc/" + std::to_string(holder) + "/ns/";
    int userNs = open((ns + "user").c_str(), O_RDONLY);
    int mntNs = open((ns + "mnt").c_str(), O_RDONLY);
    if (userNs < 0 || mntNs < 0) _exit(10);
    if (setns(userNs, CLONE_NEWUSER) != 0) _exit(11);
    if (setns(mntNs, CLONE_NEWNS) != 0) _exit(12);
    if (chdir("/work") != 0) _exit(13);
    if (access("/bin/busybox", X_OK) != 0) _exit(14);
    if (access("/data/f", R_OK) != 0) _exit(15);
    // The node's own paths are not there.
    if (access("/etc/debian_version", F_OK) == 0 || access("/usr", F_OK) == 0 ||
        access("/var/tmp", F_OK) == 0) {
      _exit(16);
    }
    _exit(0);
  }
  int status = 0;
  waitpid(task, &status, 0);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the joining task failed at step " << WEXITSTATUS(status);

  EXPECT_EQ(kill(holder, 0), 0) << "the holder should still be waiting";
  char cwd[256] = {0};
  ssize_t len = readlink(("/proc/" + std::to_string(holder) + "/cwd").c_str(), cwd, sizeof cwd - 1);
  EXPECT_GT(len, 0);
  EXPECT_STREQ(cwd, "/work");
  kill(holder, SIGKILL);
  waitpid(holder, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
}

// Pyxis-parity options of `start` (issue 13), run for real in user
// namespaces as nobody.
TEST_F(EnrootIntegrationTest, ReadOnlyUnshareTmpfsUmountAndEscapes) {
  createCopy("bb");
  // --ro wins over the settings' writable default.
  Result r = run({"start", "--ro", "bb", "sh", "-c", "touch /z3 && echo root-writable"});
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("Read-only file system"));

  // Namespaces of its own: a network with only lo, and its own hostname.
  char mine[64] = {0};
  ASSERT_GT(readlink("/proc/self/ns/net", mine, sizeof mine - 1), 0);
  r = run({"start", "--root", "--unshare", "net,uts", "bb", "sh", "-c",
           "ls -l /proc/self/ns/net; while read l; do case $l in *:*) echo dev ${l%%:*};; esac; "
           "done < /proc/net/dev; hostname in-container && hostname"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr(mine)));
  EXPECT_THAT(r.out, HasSubstr("dev lo\nin-container\n"));
  EXPECT_EQ(r.out.find("dev eth"), std::string::npos) << r.out;
  r = run({"start", "--unshare", "pid", "bb", "true"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("unknown namespace"));

  // tmpfs with options, then umount of a bind, in order; a relative source
  // is the caller's working directory's (home()).
  std::ofstream(home() + "/here.txt") << "relative\n";
  ASSERT_EQ(chown((home() + "/here.txt").c_str(), 65534, 65534), 0);
  r = run({"start", "-m", "tmpfs:/scratch:size=1m+mode=1777", "-m", dir_ + "/share:/gone",
           "-m", "umount:/gone", "-m", "./here.txt:/rel.txt:ro", "bb", "sh", "-c",
           "while read d m t o; do case $m in /scratch) echo $t $o;; /gone) echo still-mounted;; "
           "esac; done < /proc/self/mounts; cat /rel.txt; ls /gone"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("tmpfs rw,nosuid,nodev"));
  EXPECT_THAT(r.out, HasSubstr("size=1024k"));
  EXPECT_THAT(r.out, Not(HasSubstr("still-mounted")));
  EXPECT_THAT(r.out, HasSubstr("relative\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("f\n"))) << "the unmounted bind's file is gone";

  // A destination that climbs out of the root is refused, not kept inside.
  r = run({"start", "-m", dir_ + "/share:../../x", "bb", "true"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("leaves the container's root"));
  r = run({"start", "-m", "tmpfs:/bad:size=lots", "bb", "true"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot mount a tmpfs at /bad"));
}

TEST_F(EnrootIntegrationTest, RemappedRootFakesChownAndAptStaysRoot) {
  createOverlay("deb");
  std::string etc = data() + "/deb/upper/etc";
  ASSERT_EQ(std::system(("mkdir -p " + etc + " && echo 12.0 > " + etc + "/debian_version && "
                         "echo 'root:*:19000:0:99999:7:::' > " + etc + "/shadow && chown -R 65534:65534 " +
                         data() + "/deb")
                            .c_str()),
            0);
  // Without the filter a remapped root's chown to another uid is EINVAL.
  Result r = run({"start", "--root", "--rw", "deb", "sh", "-c",
                  "touch /t && chown 5:5 /t && echo chown-ok; "
                  "while read k v; do case $k in Seccomp:) echo seccomp=$v;; esac; done < /proc/self/status; "
                  "cat /etc/apt/apt.conf.d/enroot"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("chown-ok\nseccomp=2\n"));
  EXPECT_THAT(r.out, HasSubstr("APT::Sandbox::User \"root\";"));
  // A user who is themselves inside gets a passwd and a shadow entry.
  r = run({"start", "--rw", "deb", "sh", "-c", "cat /etc/shadow"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\nnobody:*:"));
}

TEST_F(EnrootIntegrationTest, HoldersRunTheEntrypointRecordThemselvesAndCanBeExeced) {
  createOverlay("ep");
  // An entrypoint that exports a variable and hands over, as images' do.
  std::string cfg = data() + "/ep/config.json";
  std::ofstream(cfg) << R"({"env":["PATH=/bin","FROM_IMAGE=yes"],"workdir":"/work",)"
                     << R"("entrypoint":["/bin/sh","-c","echo entrypoint says hi; export FROM_EP=$KEEP; exec \"$@\"","ep"]})";
  ASSERT_EQ(chown(cfg.c_str(), 65534, 65534), 0);
  auto hold = [&](const std::vector<std::string>& extra, std::string& answer) -> pid_t {
    int ready[2];
    if (pipe(ready) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
      close(ready[0]);
      dup2(ready[1], 3);
      int devnull = open("/dev/null", O_RDWR);
      dup2(devnull, 0);
      dup2(devnull, 1);
      dup2(devnull, 2);
      if (chdir(home().c_str()) != 0) _exit(125);
      dropToNobody();
      std::string h = "HOME=" + home(), k = "KEEP=caller", rt = "ENROOT_RUNTIME_PATH=" + home() + "/run";
      char* envp[] = {h.data(), k.data(), rt.data(), nullptr};
      std::vector<std::string> a = {enroot_, "start", "--hold-fd", "3"};
      a.insert(a.end(), extra.begin(), extra.end());
      std::vector<char*> argv;
      for (auto& s : a) argv.push_back(s.data());
      argv.push_back(nullptr);
      execve(enroot_.c_str(), argv.data(), envp);
      _exit(127);
    }
    close(ready[1]);
    char buf[4096];
    ssize_t n;
    while ((n = read(ready[0], buf, sizeof buf)) > 0) {
      answer.append(buf, static_cast<size_t>(n));
      if (answer.find('\n') != std::string::npos) break;
    }
    close(ready[0]);
    return pid;
  };
  std::string answer;
  pid_t holder = hold({"--entrypoint", "-e", "KEEP", "ep"}, answer);
  ASSERT_GT(holder, 0);
  auto report = parseHolderAnswer(answer);
  ASSERT_TRUE(report.isOk()) << answer;
  EXPECT_THAT(report->entrypointLog, HasSubstr("entrypoint says hi"));
  std::set<std::string> env(report->env.begin(), report->env.end());
  EXPECT_TRUE(env.count("FROM_EP=caller")) << "--env names reach the entrypoint: " << answer;
  EXPECT_TRUE(env.count("FROM_IMAGE=yes")) << answer;

  // It recorded itself: `list -f` shows its pid, `exec` runs in it.
  std::map<std::string, std::string> rt = {{"ENROOT_RUNTIME_PATH", home() + "/run"}};
  Result r = run({"list", "-f"}, rt);
  EXPECT_THAT(r.out, HasSubstr(std::to_string(holder))) << r.out;
  r = run({"exec", std::to_string(holder), "sh", "-c", "pwd; cat /etc/os-release"}, rt);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("/work\nNAME=\"corral busybox\""));
  kill(holder, SIGKILL);
  int status = 0;
  waitpid(holder, &status, 0);
  r = run({"list", "-f"}, rt);
  EXPECT_THAT(r.out, Not(HasSubstr(std::to_string(holder)))) << "a dead holder's record is stale";
  EXPECT_FALSE(pathExists(home() + "/run/holders/" + std::to_string(holder)));

  // An entrypoint that never hands over is the step's error, with its output.
  std::ofstream(cfg) << R"({"env":["PATH=/bin"],"entrypoint":["/bin/sh","-c","echo broken >&2; exit 3"]})";
  std::string failed;
  pid_t bad = hold({"--entrypoint", "ep"}, failed);
  ASSERT_GT(bad, 0);
  waitpid(bad, &status, 0);
  EXPECT_THAT(failed, HasSubstr("error: the image's entrypoint exited with status 3"));
  EXPECT_THAT(failed, HasSubstr("broken"));
}

TEST_F(EnrootIntegrationTest, HoldFdReportsSetupErrors) {
  createCopy("bb");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t holder = fork();
  if (holder == 0) {
    close(ready[0]);
    dup2(ready[1], 3);
    int devnull = open("/dev/null", O_RDWR);
    dup2(devnull, 2);
    dropToNobody();
    std::string h = "HOME=" + home();
    char* envp[] = {h.data(), nullptr};
    std::vector<std::string> a = {enroot_, "start", "--hold-fd", "3", "-m", "/nonexistent:/x",
                                  "bb"};
    std::vector<char*> argv;
    for (auto& s : a) argv.push_back(s.data());
    argv.push_back(nullptr);
    execve(enroot_.c_str(), argv.data(), envp);
    _exit(127);
  }
  close(ready[1]);
  std::string got;
  char buf[256];
  ssize_t n;
  while ((n = read(ready[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  close(ready[0]);
  int status = 0;
  waitpid(holder, &status, 0);
  EXPECT_EQ(got, "error: mount source path does not exist: /nonexistent\n");
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

// A registry that serves one image, test/busybox:latest, made of the test
// rootfs as one gzip layer.
class FakeRegistry {
 public:
  explicit FakeRegistry(const std::string& dir) {
    std::string tgz = dir + "/layer.tgz";
    if (std::system(("tar -C " + dir + "/rootfs -czf " + tgz + " .").c_str()) != 0) return;
    layer_ = readFile(tgz).isOk() ? *readFile(tgz) : "";
    std::string diffId = "sha256:" + shell("gzip -dc " + tgz + " | sha256sum | cut -d' ' -f1");
    while (!diffId.empty() && diffId.back() == '\n') diffId.pop_back();
    config_ =
        "{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{\"Env\":[\"PATH=/bin\","
        "\"FROM_IMAGE=registry\"],\"WorkingDir\":\"/work\",\"Cmd\":[\"/bin/echo\","
        "\"from-registry\"]},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"" + diffId + "\"]}}";
    layerDigest_ = image::sha256Digest(layer_);
    configDigest_ = image::sha256Digest(config_);
    manifest_ =
        "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
        "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"size\":" +
        std::to_string(config_.size()) + ",\"digest\":\"" + configDigest_ +
        "\"},\"layers\":[{\"mediaType\":\"application/vnd.docker.image.rootfs.diff.tar.gzip\","
        "\"size\":" + std::to_string(layer_.size()) + ",\"digest\":\"" + layerDigest_ + "\"}]}";
    manifestDigest_ = image::sha256Digest(manifest_);
    auto manifest = [this](const httplib::Request& req, httplib::Response& res) {
      std::string ref = req.matches[1];
      if (ref != "latest" && ref != manifestDigest_) {
        res.status = 404;
        res.set_content("{\"errors\":[{\"code\":\"MANIFEST_UNKNOWN\"}]}", "application/json");
        return;
      }
      res.set_header("Docker-Content-Digest", manifestDigest_);
      res.set_content(manifest_, "application/vnd.docker.distribution.manifest.v2+json");
    };
    auto blob = [this](const httplib::Request& req, httplib::Response& res) {
      std::string d = req.matches[1];
      if (d == layerDigest_) {
        res.set_content(layer_, "application/octet-stream");
      } else if (d == configDigest_) {
        res.set_content(config_, "application/octet-stream");
      } else {
        res.status = 404;
        res.set_content("{\"errors\":[{\"code\":\"BLOB_UNKNOWN\"}]}", "application/json");
      }
    };
    server_.Get("/v2/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{}", "application/json");
    });
    server_.Get(R"(/v2/test/busybox/manifests/([^/]+))", manifest);
    server_.Get(R"(/v2/test/busybox/blobs/([^/]+))", blob);
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ > 0) thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeRegistry() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  int port() const { return port_; }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = -1;
  std::string layer_, config_, manifest_, layerDigest_, configDigest_, manifestDigest_;
};

TEST_F(EnrootIntegrationTest, RegistryCreateAndImport) {
  FakeRegistry registry(dir_);
  ASSERT_GT(registry.port(), 0);
  std::string host = "127.0.0.1:" + std::to_string(registry.port());
  std::map<std::string, std::string> env = {{"CORRAL_HTTP_REGISTRIES", host}};
  std::string uri = "docker://" + host + "#test/busybox:latest";

  Result r = run({"create", "-n", "reg", uri}, env);
  ASSERT_EQ(r.rc, 0) << r.err;
  r = run({"list", "-f"}, env);
  EXPECT_THAT(r.out, HasSubstr("overlay"));
  r = run({"start", "reg"}, env);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "from-registry\n");
  r = run({"start", "reg", "sh", "-c", "pwd; echo $FROM_IMAGE; touch /mine; ls /mine"}, env);
  EXPECT_EQ(r.out, "/work\nregistry\n/mine\n") << r.err;

  // The default name, from the reference.
  r = run({"create", uri}, env);
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string defaultName = "127.0.0.1_" + std::to_string(registry.port()) + "+test+busybox+latest";
  EXPECT_TRUE(pathExists(data() + "/" + defaultName + "/lower")) << defaultName;

  r = run({"import", "-o", home() + "/imported.sqsh", uri}, env);
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string listing = shell("unsquashfs -l " + home() + "/imported.sqsh");
  EXPECT_THAT(listing, HasSubstr("squashfs-root/.corral/config.json"));
  EXPECT_THAT(listing, HasSubstr("squashfs-root/etc/environment"));
  EXPECT_THAT(listing, HasSubstr("squashfs-root/bin/busybox"));
  r = run({"create", "-n", "imported", home() + "/imported.sqsh"}, env);
  ASSERT_EQ(r.rc, 0) << r.err;
  r = run({"start", "imported", "sh", "-c", "pwd; cat /etc/environment"}, env);
  EXPECT_EQ(r.out, "/work\nPATH=/bin\nFROM_IMAGE=registry\n") << r.err;
  r = run({"start", "imported"}, env);
  EXPECT_EQ(r.out, "from-registry\n") << r.err;

  r = run({"create", "-n", "nope", "docker://" + host + "#test/missing:1"}, env);
  EXPECT_EQ(r.rc, 1);
  EXPECT_FALSE(pathExists(data() + "/nope"));

  r = run({"remove", "-f", "reg", defaultName, "imported"}, env);
  EXPECT_EQ(r.rc, 0) << r.err;
}

}  // namespace
}  // namespace corral::container
