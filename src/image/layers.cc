// Applying image layers to a directory with libarchive: whiteouts, opaque
// directories, and a root that no entry can escape.

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_set>
#include <vector>

#include "common/file_lock.h"
#include "common/fs.h"
#include "common/unique_fd.h"
#include "image/image.h"

namespace corral::image {
namespace {

constexpr const char* kWhiteoutPrefix = ".wh.";
constexpr const char* kOpaqueMarker = ".wh..wh..opq";

// `path` relative to the image root: leading '/' and "./" dropped, empty and
// "." components removed. Fails on "..": an entry must not leave the root.
bool sanitize(const std::string& path, std::string& out) {
  out.clear();
  size_t i = 0;
  while (i <= path.size()) {
    size_t slash = path.find('/', i);
    if (slash == std::string::npos) slash = path.size();
    std::string c = path.substr(i, slash - i);
    i = slash + 1;
    if (c.empty() || c == ".") continue;
    if (c == "..") return false;
    if (!out.empty()) out += '/';
    out += c;
  }
  return true;
}

std::string parentOf(const std::string& rel) {
  size_t slash = rel.rfind('/');
  return slash == std::string::npos ? std::string() : rel.substr(0, slash);
}

std::string baseOf(const std::string& rel) {
  size_t slash = rel.rfind('/');
  return slash == std::string::npos ? rel : rel.substr(slash + 1);
}

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

// The names in the directory open as `dirFd` (which stays open).
Status listDir(int dirFd, const std::string& shown, std::vector<std::string>& names) {
  int listFd = dup(dirFd);
  DIR* d = listFd < 0 ? nullptr : fdopendir(listFd);
  if (d == nullptr) {
    int e = errno;
    if (listFd >= 0) close(listFd);
    return fileError("listing " + shown, e);
  }
  rewinddir(d);
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(d);
  return Status::ok();
}

class LayerApplier {
 public:
  LayerApplier(std::string root, int rootFd, std::string name)
      : root_(std::move(root)), rootFd_(rootFd), name_(std::move(name)) {}

  Status apply(const std::string& file);

 private:
  Status entryError(const std::string& path, const std::string& why) const {
    return internalError(name_ + ": cannot extract '" + path + "': " + why);
  }
  Status archiveError(archive* a, const std::string& what) const {
    int e = archive_errno(a);
    if (e == ENOSPC || e == EDQUOT) return fileError("unpacking " + name_, e);
    const char* msg = archive_error_string(a);
    return internalError(name_ + ": " + what + ": " + (msg ? msg : "unknown libarchive error"));
  }
  // The directory `rel` under the root, opened without following any
  // symbolic link; -1 when it is missing or not a plain directory.
  int openDir(const std::string& rel) const;
  void markTouched(const std::string& rel);
  // Removes what lower layers put at `rel` (inside the directory `dirFd`
  // as `name`), keeping anything this layer wrote.
  Status removeLower(int dirFd, const std::string& name, const std::string& rel);
  Status whiteout(const std::string& rel);
  // Clears the way for a new entry at `rel` the way Docker does: anything
  // there goes unless both are directories.
  Status replaceExisting(const std::string& rel, bool newIsDir);
  Status copyData(archive* in, archive* out, const std::string& rel);

  std::string root_;
  int rootFd_;
  std::string name_;
  std::unordered_set<std::string> touched_;  // Paths this layer wrote, and their parents.
};

int LayerApplier::openDir(const std::string& rel) const {
  int fd = dup(rootFd_);
  if (fd < 0) return -1;
  size_t i = 0;
  while (i < rel.size()) {
    size_t slash = rel.find('/', i);
    if (slash == std::string::npos) slash = rel.size();
    std::string c = rel.substr(i, slash - i);
    i = slash + 1;
    int next = openat(fd, c.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    close(fd);
    if (next < 0) return -1;
    fd = next;
  }
  return fd;
}

void LayerApplier::markTouched(const std::string& rel) {
  std::string p = rel;
  while (!p.empty() && touched_.insert(p).second) p = parentOf(p);
}

Status LayerApplier::removeLower(int dirFd, const std::string& name, const std::string& rel) {
  struct stat st;
  if (fstatat(dirFd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Status::ok();
  if (!touched_.count(rel)) return removeTreeAt(dirFd, name, root_ + "/" + rel);
  if (!S_ISDIR(st.st_mode)) return Status::ok();
  // This layer wrote into the directory: keep its part, drop the rest.
  UniqueFd sub(openat(dirFd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (sub.get() < 0) return Status::ok();
  std::vector<std::string> children;
  RETURN_IF_ERROR(listDir(sub.get(), root_ + "/" + rel, children));
  for (const auto& c : children) RETURN_IF_ERROR(removeLower(sub.get(), c, join(rel, c)));
  return Status::ok();
}

Status LayerApplier::whiteout(const std::string& rel) {
  std::string parent = parentOf(rel);
  std::string base = baseOf(rel);
  UniqueFd dir(openDir(parent));
  if (dir.get() < 0) return Status::ok();  // Nothing below to hide.
  if (base == kOpaqueMarker) {
    // The directory itself stays; what lower layers put in it goes.
    std::vector<std::string> children;
    RETURN_IF_ERROR(listDir(dir.get(), root_ + "/" + parent, children));
    for (const auto& c : children) RETURN_IF_ERROR(removeLower(dir.get(), c, join(parent, c)));
    return Status::ok();
  }
  std::string target = base.substr(std::strlen(kWhiteoutPrefix));
  if (target.empty() || target == "." || target == "..") return Status::ok();
  return removeLower(dir.get(), target, join(parent, target));
}

Status LayerApplier::replaceExisting(const std::string& rel, bool newIsDir) {
  UniqueFd dir(openDir(parentOf(rel)));
  if (dir.get() < 0) return Status::ok();  // libarchive creates (or refuses) the parents.
  std::string base = baseOf(rel);
  struct stat st;
  if (fstatat(dir.get(), base.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Status::ok();
  if (newIsDir && S_ISDIR(st.st_mode)) return Status::ok();
  return removeTreeAt(dir.get(), base, root_ + "/" + rel);
}

Status LayerApplier::copyData(archive* in, archive* out, const std::string& rel) {
  const void* buf;
  size_t size;
  la_int64_t offset;
  while (true) {
    int r = archive_read_data_block(in, &buf, &size, &offset);
    if (r == ARCHIVE_EOF) return Status::ok();
    if (r < ARCHIVE_WARN) return archiveError(in, "reading '" + rel + "'");
    if (archive_write_data_block(out, buf, size, offset) < ARCHIVE_WARN) {
      return archiveError(out, "writing '" + rel + "'");
    }
  }
}

Status LayerApplier::apply(const std::string& file) {
  archive* in = archive_read_new();
  archive_read_support_filter_all(in);
  archive_read_support_format_tar(in);
  archive_read_support_format_empty(in);
  archive* out = archive_write_disk_new();
  // No ARCHIVE_EXTRACT_OWNER (unprivileged), no xattrs/ACLs/flags; never
  // through a symbolic link, never "..".
  archive_write_disk_set_options(out, ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
                                          ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                          ARCHIVE_EXTRACT_SECURE_SYMLINKS);
  auto finish = [&](Status st) {
    if (archive_write_close(out) != ARCHIVE_OK && st.isOk()) st = archiveError(out, "finishing");
    archive_write_free(out);
    archive_read_free(in);
    return st;
  };
  if (archive_read_open_filename(in, file.c_str(), 1 << 20) != ARCHIVE_OK) {
    return finish(archiveError(in, "cannot open " + file));
  }
  archive_entry* entry;
  while (true) {
    int r = archive_read_next_header(in, &entry);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) return finish(archiveError(in, "not a valid tar archive"));
    const char* rawName = archive_entry_pathname(entry);
    if (rawName == nullptr) continue;
    std::string raw = rawName;
    std::string rel;
    if (!sanitize(raw, rel)) {
      return finish(entryError(raw, "the path leaves the image root ('..'); refusing the layer"));
    }
    if (rel.empty()) continue;  // The root itself keeps its mode.
    std::string base = baseOf(rel);
    if (base.starts_with(kWhiteoutPrefix)) {
      Status st = whiteout(rel);
      if (!st.isOk()) return finish(st);
      continue;
    }
    mode_t type = archive_entry_filetype(entry);
    if (type == AE_IFCHR || type == AE_IFBLK || type == AE_IFIFO || type == AE_IFSOCK) {
      continue;  // Device nodes and FIFOs cannot be made unprivileged.
    }
    const char* link = archive_entry_hardlink(entry);
    if (link != nullptr) {
      std::string target;
      if (!sanitize(link, target) || target.empty()) {
        return finish(entryError(raw, "the hard link target '" + std::string(link) +
                                          "' leaves the image root; refusing the layer"));
      }
      archive_entry_set_hardlink(entry, (root_ + "/" + target).c_str());
    } else if (type == AE_IFDIR) {
      // Later entries and layers must be able to write here.
      archive_entry_set_perm(entry, archive_entry_perm(entry) | 0700);
    } else if (type == AE_IFREG) {
      archive_entry_set_perm(entry, archive_entry_perm(entry) | 0400);
    }
    Status st = replaceExisting(rel, type == AE_IFDIR && link == nullptr);
    if (!st.isOk()) return finish(st);
    markTouched(rel);
    archive_entry_set_pathname(entry, (root_ + "/" + rel).c_str());
    r = archive_write_header(out, entry);
    if (r < ARCHIVE_WARN) {
      const char* msg = archive_error_string(out);
      if (archive_errno(out) == ENOSPC) return finish(fileError("unpacking " + name_, ENOSPC));
      return finish(entryError(rel, msg ? msg : "unknown libarchive error"));
    }
    if (archive_entry_size(entry) > 0) {
      st = copyData(in, out, rel);
      if (!st.isOk()) return finish(st);
    }
    if (archive_write_finish_entry(out) < ARCHIVE_WARN) {
      return finish(archiveError(out, "finishing '" + rel + "'"));
    }
  }
  return finish(Status::ok());
}

}  // namespace

Status unpackLayers(const std::vector<std::string>& layerFiles, const std::string& dest) {
  RETURN_IF_ERROR(makeDirs(dest));
  // libarchive refuses to write through any symbolic link on the path, so
  // the root is resolved once; inside it, links are never followed.
  char resolved[PATH_MAX];
  if (realpath(dest.c_str(), resolved) == nullptr) return fileError("resolving " + dest, errno);
  std::string root = resolved;
  if (root == "/") return invalidArgument("refusing to unpack an image over /");
  UniqueFd rootFd(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (rootFd.get() < 0) return fileError("opening " + root, errno);
  for (size_t i = 0; i < layerFiles.size(); ++i) {
    LayerApplier layer(root, rootFd.get(),
                       "layer " + std::to_string(i + 1) + " (" + layerFiles[i] + ")");
    RETURN_IF_ERROR(layer.apply(layerFiles[i]));
  }
  return Status::ok();
}

}  // namespace corral::image
