#include "corral/process.h"

#include "common/files.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>

extern char** environ;

namespace corral {
namespace {

// Children that `run` is waiting for; `reapOrphanedChildren` leaves them be.
std::mutex gSpawnMu;
std::set<pid_t> gOwned;

void closeAll(std::initializer_list<int> fds) {
  for (int fd : fds)
    if (fd >= 0) close(fd);
}

// corrald's environment with `options.env` over it.
std::vector<std::string> environmentFor(const ProcessOptions& options) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos && options.env.count(kv.substr(0, eq))) continue;
    env.push_back(kv);
  }
  for (const auto& [k, v] : options.env) env.push_back(k + "=" + v);
  return env;
}

// Starts argv with stdin, stdout and stderr on the given descriptors, in a
// process group of its own (so that a timeout can end the whole tree), with
// no signal blocked or ignored; the child is in gOwned from its first moment.
StatusOr<pid_t> spawn(const std::vector<std::string>& argv, const ProcessOptions& options, int in,
                      int out, int err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in, 0);
  posix_spawn_file_actions_adddup2(&actions, out, 1);
  posix_spawn_file_actions_adddup2(&actions, err, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  std::vector<std::string> envStore = environmentFor(options);
  std::vector<char*> envp;
  for (auto& s : envStore) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argStore = argv;
  std::vector<char*> args;
  for (auto& s : argStore) args.push_back(s.data());
  args.push_back(nullptr);

  pid_t pid = 0;
  int rc;
  {
    std::lock_guard<std::mutex> l(gSpawnMu);
    rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp.data());
    if (rc == 0) gOwned.insert(pid);
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return internalError("cannot run " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

// Feeds `options.input` to inFd and collects outFd and errFd into result
// (each line to `options.onLine` as it comes) until both close or the
// timeout, which kills the child's process group. Closes the descriptors.
void pump(pid_t pid, int inFd, int outFd, int errFd, const ProcessOptions& options,
          ProcessResult& result) {
  std::string_view input = options.input;
  if (input.empty()) {
    close(inFd);
    inFd = -1;
  } else {
    fcntl(inFd, F_SETFL, O_NONBLOCK);
  }
  size_t outReported = 0, errReported = 0;  // How much `onLine` has seen.
  auto deadline = std::chrono::steady_clock::now() + options.timeout;
  char buf[65536];
  while (outFd >= 0 || errFd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      result.timedOut = true;
      kill(-pid, SIGKILL);
      break;
    }
    pollfd fds[3];
    int n = 0;
    int outIdx = -1, errIdx = -1, inIdx = -1;
    if (outFd >= 0) { outIdx = n; fds[n++] = {outFd, POLLIN, 0}; }
    if (errFd >= 0) { errIdx = n; fds[n++] = {errFd, POLLIN, 0}; }
    if (inFd >= 0) { inIdx = n; fds[n++] = {inFd, POLLOUT, 0}; }
    int pr = poll(fds, n, static_cast<int>(left));
    if (pr < 0 && errno == EINTR) continue;
    if (pr < 0) break;
    auto drain = [&](int idx, int& fd, std::string& into, size_t& reported) {
      if (idx < 0 || !(fds[idx].revents & (POLLIN | POLLHUP | POLLERR))) return;
      ssize_t got = read(fd, buf, sizeof buf);
      if (got > 0) {
        into.append(buf, static_cast<size_t>(got));
        if (options.onLine) {
          for (size_t nl; (nl = into.find('\n', reported)) != std::string::npos; reported = nl + 1)
            options.onLine(into.substr(reported, nl - reported));
        }
      } else if (got == 0 || errno != EINTR) {
        close(fd);
        fd = -1;
      }
    };
    drain(outIdx, outFd, result.out, outReported);
    drain(errIdx, errFd, result.err, errReported);
    if (inIdx >= 0 && (fds[inIdx].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t put = write(inFd, input.data(), input.size());
      if (put > 0) input.remove_prefix(static_cast<size_t>(put));
      if (put < 0 && errno != EAGAIN && errno != EINTR) input = {};
      if (input.empty()) {
        close(inFd);
        inFd = -1;
      }
    }
  }
  closeAll({inFd, outFd, errFd});
}

class RealProcessRunner : public ProcessRunner {
 public:
  StatusOr<ProcessResult> run(const std::vector<std::string>& argv,
                              const ProcessOptions& options) override {
    if (argv.empty()) return invalidArgument("empty command");
    int inPipe[2], outPipe[2], errPipe[2];
    if (pipe2(inPipe, O_CLOEXEC) != 0) return internalError("pipe failed");
    if (pipe2(outPipe, O_CLOEXEC) != 0) {
      closeAll({inPipe[0], inPipe[1]});
      return internalError("pipe failed");
    }
    if (pipe2(errPipe, O_CLOEXEC) != 0) {
      closeAll({inPipe[0], inPipe[1], outPipe[0], outPipe[1]});
      return internalError("pipe failed");
    }
    auto pid = spawn(argv, options, inPipe[0], outPipe[1], errPipe[1]);
    closeAll({inPipe[0], outPipe[1], errPipe[1]});
    if (!pid.isOk()) {
      closeAll({inPipe[1], outPipe[0], errPipe[0]});
      return pid.status();
    }
    ProcessResult result;
    pump(*pid, inPipe[1], outPipe[0], errPipe[0], options, result);
    int wstatus = 0;
    while (waitpid(*pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    {
      std::lock_guard<std::mutex> l(gSpawnMu);
      gOwned.erase(*pid);
    }
    if (!result.timedOut && WIFEXITED(wstatus)) result.exitCode = WEXITSTATUS(wstatus);
    return result;
  }
};

}  // namespace

ProcessRunner& realProcessRunner() {
  static RealProcessRunner* runner = new RealProcessRunner();
  return *runner;
}

int reapOrphanedChildren() {
  std::lock_guard<std::mutex> l(gSpawnMu);
  pid_t self = getpid();
  int reaped = 0;
  DIR* d = opendir("/proc");
  if (!d) return 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    auto stat = readFile(std::string("/proc/") + e->d_name + "/stat");
    if (!stat.isOk()) continue;
    const std::string& line = *stat;
    auto rp = line.rfind(')');
    if (rp == std::string::npos || rp + 4 >= line.size()) continue;
    char state = line[rp + 2];
    pid_t ppid = static_cast<pid_t>(std::atoi(line.c_str() + rp + 4));
    pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (ppid != self || state != 'Z' || gOwned.count(pid)) continue;
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid) ++reaped;
  }
  closedir(d);
  return reaped;
}

StatusOr<std::string> runChecked(ProcessRunner& runner, const std::vector<std::string>& argv,
                                 const ProcessOptions& options) {
  ASSIGN_OR_RETURN(ProcessResult r, runner.run(argv, options));
  if (r.exitCode != 0) {
    std::string cmd;
    for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    std::string why = r.timedOut ? "timed out" : "exited " + std::to_string(r.exitCode);
    std::string err = r.err.size() > 2000 ? r.err.substr(r.err.size() - 2000) : r.err;
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
    return internalError("`" + cmd + "` " + why + (err.empty() ? "" : ": " + err));
  }
  return std::move(r.out);
}

}  // namespace corral
