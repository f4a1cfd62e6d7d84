#include "spank/devices.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "common/unique_fd.h"
#include "container/container.h"
#include "common/file_lock.h"
#include "common/fs.h"
#include "common/unique_fd.h"

namespace corral::spank {
namespace {

Status sysError(const std::string& what) { return internalError(what + ": " + std::strerror(errno)); }

bool isGpu(const std::string& e) {
  if (e.rfind("nvidia", 0) != 0 || e.size() == 6) return false;
  return std::all_of(e.begin() + 6, e.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::vector<std::string> devicesToKeep(const std::vector<std::string>& entries,
                                       const std::vector<int>& gpus) {
  std::vector<std::string> gpuFiles = container::selectGpuDevices(entries, gpus);
  std::set<std::string> wanted(gpuFiles.begin(), gpuFiles.end());
  std::vector<std::string> out;
  for (const auto& e : entries) {
    bool gpuRelated = e.rfind("nvidia", 0) == 0;
    if (!gpuRelated || wanted.count(e)) out.push_back(e);
  }
  return out;
}

Status narrowGpuDevices(const std::vector<int>& gpus) {
  ASSIGN_OR_RETURN(std::vector<std::string> entries, listDirectory("/dev"));
  std::vector<std::string> keep = devicesToKeep(entries, gpus);
  bool hides = std::any_of(entries.begin(), entries.end(), [&](const std::string& e) {
    return isGpu(e) && std::find(keep.begin(), keep.end(), e) == keep.end();
  });
  if (!hides) return Status::ok();
  if (unshare(CLONE_NEWNS) != 0) return sysError("cannot give the task a mount namespace");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return sysError("cannot make the task's mounts private");
  // The node's /dev stays reachable through this descriptor once covered.
  UniqueFd old(open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!old.valid()) return sysError("cannot open /dev");
  const std::string from = "/proc/self/fd/" + std::to_string(old.get()) + "/";
  if (mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=64k") != 0)
    return sysError("cannot mount the task's /dev");
  for (const auto& e : keep) {
    struct stat st;
    if (fstatat(old.get(), e.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    std::string to = "/dev/" + e;
    if (S_ISLNK(st.st_mode)) {
      char target[4096];
      ssize_t n = readlinkat(old.get(), e.c_str(), target, sizeof target - 1);
      if (n < 0) return sysError("cannot read /dev/" + e);
      target[n] = '\0';
      if (symlink(target, to.c_str()) != 0) return sysError("cannot create " + to);
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      if (mkdir(to.c_str(), st.st_mode & 07777) != 0) return sysError("cannot create " + to);
    } else {
      UniqueFd f(open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
      if (!f.valid()) return sysError("cannot create " + to);
    }
    if (mount((from + e).c_str(), to.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
      return sysError("cannot bind " + to);
  }
  return Status::ok();
}

}  // namespace corral::spank
