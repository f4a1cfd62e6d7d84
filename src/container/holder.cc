// Holders: the process that keeps a step's container (its namespaces) alive
// so that tasks, later steps and `enroot exec` can join it. What a holder
// reports, the records it leaves, joining one, and the seccomp filter that
// joined processes get.

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/files.h"
#include "container/container.h"
#include "common/fs.h"

namespace corral::container {
namespace {

using nlohmann::json;

std::string holdersDir(const Settings& s) { return s.runtimePath + "/holders"; }

// When process `pid` started (clock ticks since boot), "" if it is gone:
// with the pid, it names one process even across pid reuse.
std::string startTime(int pid) {
  auto stat = readFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat.isOk()) return "";
  size_t paren = stat->rfind(')');
  if (paren == std::string::npos) return "";
  // Fields after the command: state is 3rd, starttime the 22nd.
  std::string rest = stat->substr(paren + 2);
  size_t pos = 0;
  for (int field = 3; field < 22 && pos != std::string::npos; ++field) {
    pos = rest.find(' ', pos);
    if (pos != std::string::npos) ++pos;
  }
  if (pos == std::string::npos) return "";
  return rest.substr(pos, rest.find(' ', pos) - pos);
}

// Whether `pid` is the live holder a record names: an `enroot start
// --hold-fd` that started when the record says.
bool isHolder(int pid, const std::string& started) {
  auto cmd = readFile("/proc/" + std::to_string(pid) + "/cmdline");
  return cmd.isOk() && cmd->find(std::string("--hold-fd\0", 10)) != std::string::npos &&
         !started.empty() && startTime(pid) == started;
}


}  // namespace

bool hasOwnNamespace(int pid, const char* kind) {
  struct stat a, b;
  std::string mine = std::string("/proc/self/ns/") + kind;
  std::string theirs = "/proc/" + std::to_string(pid) + "/ns/" + kind;
  if (stat(mine.c_str(), &a) != 0 || stat(theirs.c_str(), &b) != 0) return false;
  return a.st_ino != b.st_ino || a.st_dev != b.st_dev;
}

std::string holderReportLine(const HolderReport& r) {
  if (r.env.empty() && r.entrypointLog.empty()) return "ready\n";
  json j = json::object();
  if (!r.env.empty()) j["env"] = r.env;
  if (!r.entrypointLog.empty()) j["entrypointLog"] = r.entrypointLog;
  return "ready " + j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

StatusOr<HolderReport> parseHolderAnswer(const std::string& answer) {
  std::string line = answer.substr(0, answer.find('\n'));
  if (line.rfind("error: ", 0) == 0) return failedPrecondition(line.substr(7));
  if (line != "ready" && line.rfind("ready ", 0) != 0) {
    return failedPrecondition(line.empty() ? "the container's holder exited before it was ready"
                                           : line);
  }
  HolderReport r;
  if (line.size() <= 6) return r;
  json j = json::parse(line.substr(6), nullptr, false);
  if (!j.is_object()) return internalError("the container's holder sent a malformed report");
  if (auto e = j.find("env"); e != j.end() && e->is_array()) {
    for (const auto& kv : *e) {
      if (kv.is_string()) r.env.push_back(kv.get<std::string>());
    }
  }
  if (auto l = j.find("entrypointLog"); l != j.end() && l->is_string()) r.entrypointLog = *l;
  return r;
}

Status recordHolder(const Settings& s, int runtimeDirFd, const std::string& name) {
  (void)s;
  if (runtimeDirFd < 0) return Status::ok();
  mkdirat(runtimeDirFd, "holders", 0700);
  std::string rel = "holders/" + std::to_string(getpid());
  int fd = openat(runtimeDirFd, rel.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return internalError(errnoText("cannot record the holder in " + s.runtimePath, errno));
  // "NAME\nSTARTTIME\n": a record outlives a pod's restart, and its pid may
  // then be another process's.
  std::string record = name + "\n" + startTime(getpid()) + "\n";
  ssize_t n = write(fd, record.data(), record.size());
  close(fd);
  if (n != static_cast<ssize_t>(record.size())) return internalError("cannot record the holder");
  return Status::ok();
}

void forgetHolder(const Settings& s, int pid) {
  unlink((holdersDir(s) + "/" + std::to_string(pid)).c_str());
}

std::map<std::string, std::vector<int>> allRunningHolders(const Settings& s) {
  std::map<std::string, std::vector<int>> out;
  auto entries = listDirectory(holdersDir(s));
  if (!entries.isOk()) return out;
  std::vector<int> pids;
  for (const auto& e : *entries) {
    char* end = nullptr;
    long pid = std::strtol(e.c_str(), &end, 10);
    if (e.empty() || *end || pid <= 1) continue;
    pids.push_back(static_cast<int>(pid));
  }
  std::sort(pids.begin(), pids.end());
  for (int pid : pids) {
    std::string record = holdersDir(s) + "/" + std::to_string(pid);
    auto text = readFile(record);
    std::string name, started;
    if (text.isOk()) {
      size_t nl = text->find('\n');
      name = text->substr(0, nl);
      if (nl != std::string::npos) started = text->substr(nl + 1, text->find('\n', nl + 1) - nl - 1);
    }
    if (name.empty() || !isHolder(pid, started)) {
      unlink(record.c_str());  // Its holder is gone: a stale record.
      continue;
    }
    out[name].push_back(pid);
  }
  return out;
}

std::vector<int> runningHolders(const Settings& s, const std::string& name) {
  auto all = allRunningHolders(s);
  auto it = all.find(name);
  return it == all.end() ? std::vector<int>{} : it->second;
}

Status execInContainer(int pid, const std::vector<std::string>& command) {
  if (command.empty()) return invalidArgument("exec needs a command");
  std::string base = "/proc/" + std::to_string(pid);
  struct stat st;
  if (stat(base.c_str(), &st) != 0) return notFound("no process " + std::to_string(pid));
  // The container's working directory, opened before its mounts hide ours.
  int cwd = open((base + "/cwd").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const struct {
    const char* name;
    int flag;
  } order[] = {{"user", CLONE_NEWUSER}, {"mnt", CLONE_NEWNS}, {"ipc", CLONE_NEWIPC},
               {"uts", CLONE_NEWUTS},   {"net", CLONE_NEWNET}};
  std::vector<std::pair<int, int>> fds;
  for (const auto& ns : order) {
    if (!hasOwnNamespace(pid, ns.name)) continue;
    int fd = open((base + "/ns/" + ns.name).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return internalError(errnoText("cannot open the container's " + std::string(ns.name) + " namespace", errno));
    fds.emplace_back(fd, ns.flag);
  }
  if (fds.empty()) return failedPrecondition("process " + std::to_string(pid) + " is not in a container");
  for (auto [fd, flag] : fds) {
    if (setns(fd, flag) != 0) return internalError(errnoText("cannot join the container", errno));
    close(fd);
  }
  if (cwd < 0 || fchdir(cwd) != 0) {
    if (chdir("/") != 0) return internalError(errnoText("cannot enter /", errno));
  }
  RETURN_IF_ERROR(installIdFakingFilter());
  std::vector<std::string> argv = command;
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  execvp(args[0], args.data());
  return notFound(errnoText("cannot run " + command[0] + " in the container", errno));
}

Status installIdFakingFilter() {
#if defined(__x86_64__)
  constexpr unsigned kArch = AUDIT_ARCH_X86_64;
  const int faked[] = {SYS_chown,    SYS_lchown,    SYS_fchown,   SYS_fchownat, SYS_setuid,
                       SYS_setgid,   SYS_setreuid,  SYS_setregid, SYS_setresuid,
                       SYS_setresgid, SYS_setgroups, SYS_setfsuid, SYS_setfsgid};
#elif defined(__aarch64__)
  constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
  const int faked[] = {SYS_fchown,   SYS_fchownat,  SYS_setuid,    SYS_setgid,
                       SYS_setreuid, SYS_setregid,  SYS_setresuid, SYS_setresgid,
                       SYS_setgroups, SYS_setfsuid, SYS_setfsgid};
#else
  return Status::ok();
#endif
  const unsigned n = sizeof faked / sizeof faked[0];
  std::vector<sock_filter> prog;
  // Another architecture's calls are let through untouched.
  prog.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  prog.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0));
  prog.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  prog.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
  for (unsigned i = 0; i < n; ++i) {
    // Matches jump to the "succeed" return after the last check.
    prog.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(faked[i]),
                            static_cast<unsigned char>(n - i), 0));
  }
  prog.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  prog.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 0));
  sock_fprog fprog{static_cast<unsigned short>(prog.size()), prog.data()};
  // In a user namespace of its own the caller holds CAP_SYS_ADMIN there;
  // elsewhere the filter needs no_new_privs.
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, &fprog) == 0 ||
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) == 0) {
    return Status::ok();
  }
  if (errno == EACCES && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) == 0) {
    return Status::ok();
  }
  return internalError(errnoText("cannot install the container's seccomp filter", errno));
}

}  // namespace corral::container
