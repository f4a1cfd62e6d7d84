#include "e2e/harness.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/files.h"
#include "common/ipv4.h"

namespace fs = std::filesystem;

namespace corral::e2e {
namespace {

int freePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  close(fd);
  return port;
}

std::string readAll(const std::string& path) {
  auto r = readFile(path);
  return r.isOk() ? *r : "";
}

}  // namespace

std::string binary(const std::string& name) { return std::string(CORRAL_BUILD_DIR) + "/" + name; }

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string Leftovers::describe() const {
  std::string out;
  for (const auto& i : items) out += "  " + i + "\n";
  return out;
}

Harness::Harness() {
  // Never under /tmp: pods mount a private /tmp and could not see it.
  dataDir_ = "/var/lib/corral-e2e-" + std::to_string(getpid());
  home_ = dataDir_ + "-home";
  fs::remove_all(dataDir_);
  fs::create_directories(home_);
  // A pool of its own, apart from a developer's corrald on 172.29.0.0/16.
  pool_ = "172.30." + std::to_string((getpid() % 15) * 16) + ".0/20";
  port_ = freePort();
}

Harness::~Harness() {
  if (!running()) return;
  // Whatever a failed test left: delete it, so no pod outlives the suite.
  auto list = corral({"cluster", "list", "-o", "json"});
  auto j = nlohmann::json::parse(list.out, nullptr, false);
  bool clean = true;
  if (j.is_object() && j.contains("clusters")) {
    for (const auto& c : j["clusters"]) {
      auto r = corral({"cluster", "delete", c.value("name", ""), "--wait"});
      clean = clean && r.exitCode == 0;
    }
  }
  stop(SIGTERM);
  if (clean) {
    std::error_code ec;
    fs::remove_all(dataDir_, ec);
    fs::remove_all(home_, ec);
    // The log is evidence when a test failed; otherwise it goes too.
    if (::testing::UnitTest::GetInstance()->failed_test_count() == 0)
      fs::remove(dataDir_ + "-corrald.log", ec);
    else
      std::fprintf(stderr, "corrald's log: %s-corrald.log\n", dataDir_.c_str());
  }
}

std::string Harness::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

ProcessResult Harness::admin(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {binary("corrald"), "--data-dir", dataDir_, "admin"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = realProcessRunner().run(argv);
  if (!r.isOk()) throw std::runtime_error(r.status().message());
  return *r;
}

void Harness::start() {
  // The image is built once per host (scripts/test.sh does it first, with
  // its progress shown); this only checks.
  auto built = realProcessRunner().run({binary("corrald"), "image", "build", image()},
                                       {"", std::chrono::seconds(1800), {}, {}});
  if (!built.isOk() || built->exitCode != 0)
    throw std::runtime_error("cannot build image " + image() + ": " + (built.isOk() ? built->err : ""));
  if (token_.empty()) {
    fs::create_directories(dataDir_);
    auto user = admin({"user", "add", "e2e-admin", "--admin"});
    if (user.exitCode != 0) throw std::runtime_error("corrald admin user add: " + user.err);
    auto token = admin({"token", "create", "e2e-admin", "--description", "e2e harness"});
    if (token.exitCode != 0) throw std::runtime_error("corrald admin token create: " + token.err);
    token_ = token.out.substr(0, token.out.find('\n'));
  }
  pid_t pid = fork();
  if (pid == 0) {
    std::string log = dataDir_ + "-corrald.log";
    FILE* f = fopen(log.c_str(), "a");
    if (f) {
      dup2(fileno(f), 1);
      dup2(fileno(f), 2);
    }
    setsid();
    std::string listen = "127.0.0.1:" + std::to_string(port_);
    std::vector<std::string> args = {"corrald",      "--data-dir",    dataDir_, "--listen",
                                     listen,         "--subnet-pool", pool_,    "--default-image",
                                     image()};
    args.insert(args.end(), extraArgs_.begin(), extraArgs_.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(binary("corrald").c_str(), argv.data());
    _exit(127);
  }
  pid_ = pid;
  for (int i = 0; i < 600; ++i) {
    auto r = realProcessRunner().run({"curl", "-fsS", url() + "/healthz"});
    if (r.isOk() && r->exitCode == 0) return;
    int st;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = 0;
      throw std::runtime_error("corrald exited at start; see " + dataDir_ + "-corrald.log");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw std::runtime_error("corrald did not answer /healthz within 60 s");
}

void Harness::stop(int signal) {
  if (pid_ <= 0) return;
  kill(pid_, signal);
  int st;
  waitpid(pid_, &st, 0);
  pid_ = 0;
}

ProcessResult Harness::corral(const std::vector<std::string>& args, int timeoutSeconds) {
  std::vector<std::string> argv = {binary("corral"), "--server", url()};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions o;
  o.timeout = std::chrono::seconds(timeoutSeconds);
  o.env["HOME"] = home_;
  o.env["CORRAL_TOKEN"] = token_;
  auto r = realProcessRunner().run(argv, o);
  if (!r.isOk()) throw std::runtime_error(r.status().message());
  return *r;
}

ProcessResult Harness::ssh(const std::string& cluster, const std::string& command,
                           int timeoutSeconds) {
  return corral({"ssh", cluster, "--", command}, timeoutSeconds);
}

int Harness::podPid(const std::string& cluster, const std::string& pod) const {
  return std::atoi(readAll(dataDir_ + "/clusters/" + cluster + "/pods/" + pod + "/supervisor/pid").c_str());
}

std::string Harness::image() {
  const char* env = std::getenv("CORRAL_E2E_IMAGE");
  return env && *env ? env : "debian13-slurm24.11";
}

ProcessResult Harness::podExec(const std::string& cluster, const std::string& pod,
                               const std::string& command) {
  int pid = podPid(cluster, pod);
  if (pid <= 0) throw std::runtime_error("pod " + pod + " has no pid");
  auto r = realProcessRunner().run({"nsenter", "-t", std::to_string(pid), "-U", "-n", "-m", "-u",
                                    "-i", "-p", "-C", "-r", "-w", "--", "sh", "-c", command});
  if (!r.isOk()) throw std::runtime_error(r.status().message());
  return *r;
}

Leftovers Harness::leftoversOf(const std::string& cluster, const std::string& subnet) const {
  Leftovers out;
  std::string clusterDir = dataDir_ + "/clusters/" + cluster;
  if (fs::exists(clusterDir)) out.items.push_back("directory " + clusterDir);
  std::error_code ec;
  std::string nsPrefix = "-" + cluster + ".";
  if (auto c = parseCidr(subnet); c.isOk()) {
    char key[9];
    std::snprintf(key, sizeof key, "%08x", c->base);
    nsPrefix = "crl-" + std::string(key) + "-" + cluster + ".";
    if (fs::exists("/run/netns"))
      for (const auto& e : fs::directory_iterator("/run/netns", ec))
        if (e.path().filename().string().rfind(nsPrefix, 0) == 0)
          out.items.push_back("network namespace " + e.path().filename().string());
    for (const auto& e : fs::directory_iterator("/sys/class/net", ec)) {
      std::string n = e.path().filename();
      if (n.find(key) != std::string::npos) out.items.push_back("network interface " + n);
    }
  }
  // Processes whose command line or working directory refers to the cluster.
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    std::string pid = e.path().filename();
    if (pid.empty() || !std::isdigit(static_cast<unsigned char>(pid[0]))) continue;
    std::string cmd = readAll("/proc/" + pid + "/cmdline");
    if (cmd.find(clusterDir + "/") != std::string::npos)
      out.items.push_back("process " + pid + ": " + cmd.substr(0, 120));
  }
  std::string mounts = readAll("/proc/self/mountinfo");
  std::istringstream in(mounts);
  std::string line;
  while (std::getline(in, line))
    if (line.find(clusterDir) != std::string::npos || line.find(nsPrefix) != std::string::npos)
      out.items.push_back("mount " + line);
  return out;
}

}  // namespace corral::e2e
