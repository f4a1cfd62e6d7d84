// Squashfs images through squashfs-tools, as Enroot makes and reads them.

#include <mutex>

#include "corral/process.h"
#include "common/fs.h"
#include "image/image.h"

namespace corral::image {
namespace {

// Packing a large image takes minutes; only a hung tool should time out.
constexpr std::chrono::milliseconds kSquashTimeout{std::chrono::hours(2)};

// lz4 packs several times faster than the default gzip at a modest cost in
// size, and the kernel and squashfuse both read it.
const std::vector<std::string>& compressionArgs() {
  static std::vector<std::string> args;
  static std::once_flag once;
  std::call_once(once, [] {
    auto help = realProcessRunner().run({"mksquashfs", "-help"});
    if (help.isOk() && (help->out + help->err).find("lz4") != std::string::npos) {
      args = {"-comp", "lz4"};
    }
  });
  return args;
}

std::string lastLines(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  if (t.size() > 2000) t = "..." + t.substr(t.size() - 2000);
  return t;
}

// Runs `argv`, one of squashfs-tools' commands, with their timeout. A
// failure is `what` ("mksquashfs DIR OUT") that failed, with the last of what
// it wrote; a full disk says so, while `doing` ("writing OUT").
Status runSquashfsTool(const std::vector<std::string>& argv, const std::string& what,
                       const std::string& doing) {
  ProcessOptions opts;
  opts.timeout = kSquashTimeout;
  auto r = realProcessRunner().run(argv, opts);
  if (!r.isOk()) {
    return internalError("cannot run " + argv[0] + " (is squashfs-tools installed?): " +
                         r.status().message());
  }
  if (r->exitCode != 0) {
    std::string err = lastLines(r->err.empty() ? r->out : r->err);
    if (err.find("No space left") != std::string::npos) {
      return internalError("no space left on device while " + doing + ": " + err);
    }
    return internalError(what + " failed" + (r->timedOut ? " (timed out)" : "") + ": " + err);
  }
  return Status::ok();
}

}  // namespace

Status makeSquashfs(const std::string& dir, const std::string& output) {
  if (!isDirectory(dir))
    return invalidArgument("cannot make a squashfs image: " + dir + " is not a directory");
  std::vector<std::string> argv = {"mksquashfs",   dir,         output, "-noappend", "-quiet",
                                   "-no-progress", "-no-xattrs"};
  for (const auto& a : compressionArgs()) argv.push_back(a);
  return runSquashfsTool(argv, "mksquashfs " + dir + " " + output, "writing " + output);
}

Status unsquash(const std::string& squashfs, const std::string& dest) {
  if (!pathExists(squashfs)) return notFound("squashfs image not found: " + squashfs);
  // -no-xattrs: unprivileged users cannot set security.* attributes; owners
  // are only restored when running as root.
  std::vector<std::string> argv = {"unsquashfs",   "-f",         "-d",    dest,
                                   "-no-progress", "-no-xattrs", squashfs};
  return runSquashfsTool(argv, "unsquashfs " + squashfs + " into " + dest,
                         "unpacking " + squashfs);
}

}  // namespace corral::image
