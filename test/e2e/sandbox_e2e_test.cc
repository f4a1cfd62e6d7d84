// End-to-end tests of the pod sandbox (issue 12): root in one cluster, on
// its login node or in a root job on a worker, reaches nothing of the host
// or of another cluster; local files go with their pod; host directories
// are the operator's.
//
// Every probe is one that cannot harm the machine if the sandbox were
// missing: it reads, writes files of its own, creates a dummy interface in
// the pod's own network namespace, or asks for what it must not get. It
// never reboots, never sets the clock and never writes a host file it did
// not create.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/files.h"
#include "e2e/harness.h"

namespace fs = std::filesystem;

namespace corral::e2e {
namespace {

using nlohmann::json;

// A TCP listener on the host's 0.0.0.0, accepting (and closing) connections
// until destroyed: a stand-in for any service the host offers.
class HostListener {
 public:
  HostListener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    listen(fd_, 16);
    thread_ = std::thread([this] {
      while (!stop_) {
        int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0) {
          ++accepted_;
          close(c);
        }
      }
    });
  }
  ~HostListener() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  int port() const { return port_; }
  int accepted() const { return accepted_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

class SandboxE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    sourceRoot_ = "/var/lib/corral-e2e-sources-" + std::to_string(getpid());
    fs::create_directories(sourceRoot_ + "/allowed");
    std::ofstream(sourceRoot_ + "/allowed/data.txt") << "operator data\n";
    harness_ = new Harness();
    harness_->setExtraArgs({"--volume-source-root", sourceRoot_});
    harness_->start();
    for (const char* c : {"vault", "other"}) {
      auto r = harness_->corral({"cluster", "create", c, "--gpu-nodes", "2", "--wait"});
      ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    }
  }
  static void TearDownTestSuite() {
    if (harness_ && harness_->running()) {
      for (const char* c : {"vault", "other"}) {
        auto j = json::parse(harness_->corral({"cluster", "get", c, "-o", "json"}).out, nullptr, false);
        std::string subnet = j.is_object() ? j.value("subnet", "") : "";
        EXPECT_EQ(harness_->corral({"cluster", "delete", c, "--wait"}).exitCode, 0);
        Leftovers left = harness_->leftoversOf(c, subnet);
        EXPECT_TRUE(left.empty()) << left.describe();
      }
      for (const char* v : {"opdata", "mine"}) harness_->corral({"volume", "delete", v});
    }
    delete harness_;
    harness_ = nullptr;
    fs::remove_all(sourceRoot_);
  }
  void SetUp() override { ASSERT_NE(harness_, nullptr); }
  Harness& h() { return *harness_; }
  json cluster(const std::string& c) {
    return json::parse(h().corral({"cluster", "get", c, "-o", "json"}).out, nullptr, false);
  }
  // The same shell line as root on the login node and as root in a job on
  // a worker; both outputs.
  std::vector<std::pair<std::string, std::string>> everywhere(const std::string& line) {
    std::string quoted = "'";
    for (char ch : line) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    quoted += "'";
    return {{"login", h().ssh("vault", line).out},
            {"worker", h().ssh("vault", "srun -w slinky-1 sh -c " + quoted).out}};
  }

  static Harness* harness_;
  static std::string sourceRoot_;
};
Harness* SandboxE2E::harness_ = nullptr;
std::string SandboxE2E::sourceRoot_;

TEST_F(SandboxE2E, PodRootIsNobodyOnTheHostAndHasNoCapabilityOverIt) {
  for (const auto& [where, out] : everywhere(
           "id -u; head -1 /proc/self/uid_map; "
           "ip link add corral-probe type dummy 2>/dev/null && echo made-link || echo no-link; "
           "ip link del corral-probe 2>/dev/null; "
           "echo 3 2>/dev/null > /proc/sys/vm/drop_caches && echo wrote-sysctl || echo no-sysctl")) {
    std::istringstream lines(out);
    std::string uid, map, link, sysctl;
    std::getline(lines, uid);
    std::getline(lines, map);
    std::getline(lines, link);
    std::getline(lines, sysctl);
    EXPECT_EQ(uid, "0") << where;
    std::istringstream m(map);
    long inside = -1, outside = -1, count = -1;
    m >> inside >> outside >> count;
    EXPECT_EQ(inside, 0) << where << ": " << map;
    EXPECT_GE(outside, 65536) << where << ": the uid map is the identity: " << map;
    EXPECT_EQ(count, 65536) << where;
    EXPECT_EQ(link, "no-link") << where << ": pod root configured its network";
    EXPECT_EQ(sysctl, "no-sysctl") << where << ": pod root wrote a host sysctl";
  }
}

TEST_F(SandboxE2E, NothingOfTheHostOrAnotherClusterIsThere) {
  std::string marker = h().dataDir() + "-marker";
  std::ofstream(marker) << "host only\n";
  std::string otherKey = h().dataDir() + "/clusters/other/secrets/munge/munge.key";
  auto hostShadow = readFile("/etc/shadow");
  ASSERT_TRUE(hostShadow.isOk());
  std::string cmd = "ls -d " + h().dataDir() + " 2>&1 | grep -c 'No such'; " + "cat " + otherKey +
                    " 2>/dev/null | wc -c; cat " + marker + " 2>/dev/null | wc -c; " +
                    "grep -c '^root:' /etc/shadow; md5sum < /etc/shadow";
  for (const auto& [where, out] : everywhere(cmd)) {
    std::istringstream lines(out);
    std::string noDataDir, keyBytes, markerBytes, rootLine, shadowSum;
    std::getline(lines, noDataDir);
    std::getline(lines, keyBytes);
    std::getline(lines, markerBytes);
    std::getline(lines, rootLine);
    std::getline(lines, shadowSum);
    EXPECT_EQ(noDataDir, "1") << where << ": corrald's data directory is visible";
    EXPECT_EQ(keyBytes, "0") << where << ": cluster other's munge key is readable";
    EXPECT_EQ(markerBytes, "0") << where << ": a host file is readable";
    EXPECT_EQ(rootLine, "1") << where;  // The image's own /etc/shadow …
    auto host = realProcessRunner().run({"sh", "-c", "md5sum < /etc/shadow"});
    ASSERT_TRUE(host.isOk());
    EXPECT_NE(shadowSum + "\n", host->out) << where << ": the host's /etc/shadow is the pod's";
  }
  fs::remove(marker);
}

TEST_F(SandboxE2E, NoHostProcessIsVisible) {
  std::string self = std::to_string(getpid());
  for (const auto& [where, out] : everywhere("ps -e -o comm= | sort -u | tr '\\n' ' '; echo; "
                                             "cat /proc/" + self + "/cmdline 2>/dev/null | wc -c")) {
    EXPECT_EQ(out.find("corrald"), std::string::npos) << where << ": " << out;
    EXPECT_EQ(out.find("corral_e2e"), std::string::npos) << where << ": " << out;
    EXPECT_EQ(out.find("systemd"), std::string::npos) << where << ": " << out;
  }
}

TEST_F(SandboxE2E, NoDeviceOfTheHostCanBeMadeOrMounted) {
  struct stat st;
  ASSERT_EQ(stat("/", &st), 0);
  std::string dev = std::to_string(major(st.st_dev)) + " " + std::to_string(minor(st.st_dev));
  for (const auto& [where, out] : everywhere(
           "mknod /tmp/corral-disk b " + dev + " 2>/dev/null && echo made || echo refused; "
           "mkdir -p /tmp/corral-mnt; mount /tmp/corral-disk /tmp/corral-mnt 2>/dev/null && "
           "echo mounted || echo not-mounted; rm -f /tmp/corral-disk; ls /dev | grep -c '^vd\\|^sd\\|^nvme'")) {
    EXPECT_NE(out.find("refused"), std::string::npos) << where << ": " << out;
    EXPECT_NE(out.find("not-mounted"), std::string::npos) << where << ": " << out;
    EXPECT_EQ(out.substr(out.rfind('\n', out.size() - 2) + 1), "0\n") << where << ": " << out;
  }
}

TEST_F(SandboxE2E, WritesStayInThePodAndGoWithIt) {
  std::string tag = "corral-probe-" + std::to_string(getpid());
  for (const char* dir : {"/usr/local/bin", "/opt", "/etc", "/"}) {
    auto w = h().ssh("vault", std::string("echo x > ") + dir + "/" + tag + " && echo ok");
    EXPECT_EQ(w.out, "ok\n") << dir << w.err;
    EXPECT_FALSE(fs::exists(std::string(dir) + "/" + tag)) << dir << ": the host got the file";
    EXPECT_EQ(h().ssh("other", std::string("ls ") + dir + "/" + tag + " 2>/dev/null | wc -l").out, "0\n");
  }
  // A pip install of a wheel kept on /shared: there until the pod is
  // recreated (the seed: "anything you pip installed interactively").
  auto wheel = h().ssh("vault", R"(python3 - <<'EOF'
import zipfile, os
os.makedirs('/shared/wheels', exist_ok=True)
w = '/shared/wheels/corralprobe-1.0-py3-none-any.whl'
with zipfile.ZipFile(w, 'w') as z:
    z.writestr('corralprobe.py', 'MESSAGE = "installed"\n')
    z.writestr('corralprobe-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\nName: corralprobe\nVersion: 1.0\n')
    z.writestr('corralprobe-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\nGenerator: corral\nRoot-Is-Purelib: true\nTag: py3-none-any\n')
    z.writestr('corralprobe-1.0.dist-info/RECORD', '')
print(w)
EOF)");
  ASSERT_EQ(wheel.exitCode, 0) << wheel.err;
  std::string pip = "pip install -q --no-index --break-system-packages --root-user-action=ignore " +
                    trim(wheel.out) + " && python3 -c 'import corralprobe; print(corralprobe.MESSAGE)'";
  EXPECT_EQ(h().ssh("vault", pip).out, "installed\n");
  auto onWorker = h().ssh("vault", "srun -w slinky-0 sh -c \"" + pip + "\"");
  EXPECT_EQ(onWorker.out, "installed\n") << onWorker.err;
  const std::string check = "python3 -c 'import corralprobe' 2>/dev/null && echo still || echo gone";
  ASSERT_EQ(h().ssh("vault", "echo kept > /shared/" + tag).exitCode, 0);

  // A node reboot recreates the worker; a login restart the login node.
  ASSERT_EQ(h().corral({"node", "reboot", "vault", "slinky-0"}).exitCode, 0);
  EXPECT_EQ(h().ssh("vault", "srun -w slinky-0 sh -c \"" + check + "\"").out, "gone\n");
  ASSERT_EQ(h().corral({"login", "restart", "vault"}).exitCode, 0);
  EXPECT_EQ(h().ssh("vault", check).out, "gone\n");
  EXPECT_EQ(h().ssh("vault", "ls /usr/local/bin/" + tag + " 2>/dev/null | wc -l").out, "0\n");
  EXPECT_EQ(h().ssh("vault", "cat /shared/" + tag + "; ls /shared/wheels").out,
            "kept\ncorralprobe-1.0-py3-none-any.whl\n");
}

TEST_F(SandboxE2E, AnotherClusterAndTheHostsServicesAreOutOfReach) {
  HostListener listener;
  json vault = cluster("vault"), other = cluster("other");
  std::string gateway = vault["subnet"].get<std::string>();
  gateway = gateway.substr(0, gateway.rfind('.')) + ".1";
  std::string otherLogin = other["login"]["address"];
  // The host itself reaches its listener (the probe works).
  auto self = realProcessRunner().run(
      {"bash", "-c", "timeout 2 bash -c '</dev/tcp/127.0.0.1/" + std::to_string(listener.port()) +
                         "' && echo open"});
  ASSERT_TRUE(self.isOk());
  ASSERT_EQ(self->out, "open\n");
  int before = listener.accepted();
  auto probe = [&](const std::string& host, int port) {
    return "timeout 2 bash -c '</dev/tcp/" + host + "/" + std::to_string(port) +
           "' 2>/dev/null && echo open || echo closed";
  };
  for (const auto& [where, out] :
       everywhere(probe(gateway, listener.port()) + "; " + probe(otherLogin, 22))) {
    EXPECT_EQ(out, "closed\nclosed\n") << where;
  }
  EXPECT_EQ(listener.accepted(), before) << "a pod reached the host's listener";
  // Inside the cluster everything still talks.
  EXPECT_EQ(h().ssh("vault", probe(vault["nodes"][0]["address"], 6818)).out, "open\n");
}

TEST_F(SandboxE2E, HostDirectoriesAreTheOperatorsAlone) {
  // A user of a project, not an admin.
  ASSERT_EQ(h().admin({"user", "add", "tenant", "--project", "ml"}).exitCode, 0);
  auto token = h().admin({"token", "create", "tenant"});
  ASSERT_EQ(token.exitCode, 0);
  std::string tenant = trim(token.out);
  auto asTenant = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {binary("corral"), "--server", h().url(), "--token", tenant};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = realProcessRunner().run(argv);
    return r.isOk() ? *r : ProcessResult{};
  };
  std::vector<std::string> sources = {"/work", "/home", "/srv", "/opt", "/var/log",
                                     sourceRoot_ + "/allowed"};
  for (const auto& source : sources) {
    auto r = asTenant({"volume", "create", "stolen", "--source", source});
    EXPECT_NE(r.exitCode, 0) << source;
    EXPECT_NE(r.err.find("only an administrator may back a volume"), std::string::npos) << r.err;
  }
  // An admin: only under the allowed root.
  auto outside = h().corral({"volume", "create", "opdata", "--source", "/srv"});
  EXPECT_NE(outside.exitCode, 0);
  EXPECT_NE(outside.err.find("not under a directory this corrald lets volumes use"), std::string::npos)
      << outside.err;
  auto inside = h().corral({"volume", "create", "opdata", "--source", sourceRoot_ + "/allowed"});
  ASSERT_EQ(inside.exitCode, 0) << inside.err;
  ASSERT_EQ(h().corral({"volume", "attach", "vault", "opdata", "--path", "/opdata"}).exitCode, 0);
  EXPECT_EQ(h().ssh("vault", "cat /opdata/data.txt").out, "operator data\n");
  ASSERT_EQ(h().corral({"volume", "detach", "vault", "opdata"}).exitCode, 0);
  // Managed volumes are everyone's.
  EXPECT_EQ(asTenant({"volume", "create", "mine"}).exitCode, 0);
  // Refused requests made nothing.
  auto list = h().corral({"volume", "list", "-o", "json"});
  EXPECT_EQ(list.out.find("stolen"), std::string::npos) << list.out;
}

// The seed's login node is "the only place with both your storage and
// outbound network": with --login-egress, the login node (only) reaches a
// stand-in "outside" host in a network namespace of the test's own, through
// NAT. Never the machine's uplink.
TEST(EgressE2E, OnlyTheLoginNodeReachesTheOutsideAndOnlyWhenTheOperatorSaysSo) {
  const std::string key = std::to_string(getpid() % 100000);
  const std::string ns = "crlt-out-" + key, hostIf = "crlto" + key, outIf = "crlti" + key;
  auto sh = [](const std::string& line) {
    auto r = realProcessRunner().run({"sh", "-c", line}, {"", std::chrono::seconds(30), {}, {}});
    return r.isOk() ? *r : ProcessResult{};
  };
  std::string www = "/var/lib/corral-e2e-www-" + key;
  // Whatever happens below, the outside host goes: its httpd (by PID), its
  // namespace and the host's end of its link.
  struct Cleanup {
    std::function<void()> fn;
    ~Cleanup() { fn(); }
  } cleanup{[&] {
    sh("for p in $(ip netns pids " + ns + " 2>/dev/null); do kill $p; done; ip netns del " + ns +
       " 2>/dev/null; ip link del " + hostIf + " 2>/dev/null");
    fs::remove_all(www);
  }};
  ASSERT_EQ(sh("ip -o route show 198.51.100.0/24").out, "")
      << "198.51.100.0/24 is routed on this host already (a test's leftover?); the stand-in outside "
         "host needs it";
  ASSERT_EQ(sh("ip netns add " + ns + " && ip link add " + hostIf + " type veth peer name " + outIf +
               " && ip link set " + outIf + " netns " + ns + " && ip addr add 198.51.100.1/24 dev " +
               hostIf + " && ip link set " + hostIf + " up && ip -n " + ns +
               " addr add 198.51.100.2/24 dev " + outIf + " && ip -n " + ns + " link set " + outIf +
               " up && ip -n " + ns + " link set lo up")
                .exitCode,
            0);
  // The outside host answers HTTP with busybox's httpd.
  fs::create_directories(www);
  std::ofstream(www + "/index.html") << "outside\n";
  ASSERT_EQ(sh("nsenter --net=/run/netns/" + ns + " busybox httpd -p 8080 -h " + www).exitCode, 0);
  {
    Harness h;
    h.setExtraArgs({"--login-egress", hostIf});
    h.start();
    auto c = h.corral({"cluster", "create", "edge", "--gpu-nodes", "1", "--wait"});
    ASSERT_EQ(c.exitCode, 0) << c.err;
    const std::string get = "curl -s -m 3 http://198.51.100.2:8080/ || echo unreachable";
    EXPECT_EQ(h.ssh("edge", get).out, "outside\n");
    EXPECT_EQ(h.ssh("edge", "srun sh -c '" + get + "'").out, "unreachable\n");
    EXPECT_EQ(h.podExec("edge", "controller", get).out, "unreachable\n");
    auto j = json::parse(h.corral({"cluster", "get", "edge", "-o", "json"}).out, nullptr, false);
    EXPECT_EQ(h.corral({"cluster", "delete", "edge", "--wait"}).exitCode, 0);
    Leftovers left = h.leftoversOf("edge", j.value("subnet", ""));
    EXPECT_TRUE(left.empty()) << left.describe();
  }
  {
    // Without --login-egress, the login node has no way out either.
    Harness h;
    h.start();
    ASSERT_EQ(h.corral({"cluster", "create", "shut", "--gpu-nodes", "1", "--wait"}).exitCode, 0);
    EXPECT_EQ(h.ssh("shut", "curl -s -m 3 http://198.51.100.2:8080/ || echo unreachable").out,
              "unreachable\n");
    EXPECT_EQ(h.corral({"cluster", "delete", "shut", "--wait"}).exitCode, 0);
  }
}

}  // namespace
}  // namespace corral::e2e
