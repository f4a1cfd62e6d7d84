// `push`: directories become deterministic gzip (or zstd) layers in a
// registry, under a Docker v2 (or OCI) manifest, optionally listed in a
// multi-platform manifest list (or OCI index).

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <locale.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <nlohmann/json.hpp>

#include "common/file_lock.h"
#include "common/fs.h"
#include "common/parallel.h"
#include "common/unique_fd.h"
#include "image/image.h"
#include "image/manifest.h"
#include "image/registry_client.h"
#include "image/sha256.h"

namespace corral::image {
namespace {

constexpr const char* kOciConfig = "application/vnd.oci.image.config.v1+json";
constexpr const char* kOciLayerZstd = "application/vnd.oci.image.layer.v1.tar+zstd";

struct BuiltLayer {
  std::string path;    // The compressed blob, a scratch file the caller removes.
  std::string digest;  // Of the compressed blob.
  std::string diffId;  // Of the uncompressed tar.
  int64_t size = 0;
};

// Feeds tar bytes through the diff_id hash into the gzip writer, whose
// output is hashed and written to the blob file.
struct Pipeline {
  archive* gz = nullptr;
  int fd = -1;
  Sha256 tarHash;
  Sha256 blobHash;
  int64_t blobSize = 0;
  int writeErrno = 0;
};

la_ssize_t writeBlob(archive*, void* user, const void* buf, size_t len) {
  auto* p = static_cast<Pipeline*>(user);
  p->blobHash.update(buf, len);
  p->blobSize += static_cast<int64_t>(len);
  int err = writeAll(p->fd, buf, len);
  if (err != 0) {
    p->writeErrno = err;
    return -1;
  }
  return static_cast<la_ssize_t>(len);
}

la_ssize_t writeTar(archive*, void* user, const void* buf, size_t len) {
  auto* p = static_cast<Pipeline*>(user);
  p->tarHash.update(buf, len);
  if (archive_write_data(p->gz, buf, len) < 0) return -1;
  return static_cast<la_ssize_t>(len);
}

// Every path below `dir`, relative, sorted so that the same content always
// makes the same tar.
Status listTree(const std::string& dir, const std::string& rel, std::vector<std::string>& out) {
  std::string full = rel.empty() ? dir : dir + "/" + rel;
  DIR* d = opendir(full.c_str());
  if (d == nullptr) return fileError("reading directory " + full, errno);
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    std::string child = rel.empty() ? n : rel + "/" + n;
    out.push_back(child);
    struct stat st;
    if (lstat((dir + "/" + child).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      RETURN_IF_ERROR(listTree(dir, child, out));
    }
  }
  return Status::ok();
}

Status addFile(archive* tar, const std::string& full, const std::string& rel) {
  UniqueFd fd(open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (fd.get() < 0) return fileError("reading " + full, errno);
  std::vector<char> buf(1 << 20);
  while (true) {
    ssize_t n = read(fd.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fileError("reading " + full, errno);
    if (n == 0) return Status::ok();
    if (archive_write_data(tar, buf.data(), static_cast<size_t>(n)) < 0) {
      return internalError("packing " + rel + ": " + archive_error_string(tar));
    }
  }
}

Status writeEntries(archive* tar, const std::string& dir, Pipeline& pipe) {
  std::vector<std::string> paths;
  RETURN_IF_ERROR(listTree(dir, "", paths));
  std::map<std::pair<dev_t, ino_t>, std::string> firstLink;
  archive_entry* e = archive_entry_new();
  for (const auto& rel : paths) {
    std::string full = dir + "/" + rel;
    struct stat st;
    if (lstat(full.c_str(), &st) != 0) return fileError("reading " + full, errno);
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) continue;
    archive_entry_clear(e);
    archive_entry_set_pathname(e, rel.c_str());
    archive_entry_set_mode(e, st.st_mode);
    archive_entry_set_uid(e, 0);
    archive_entry_set_gid(e, 0);
    archive_entry_set_mtime(e, 0, 0);
    archive_entry_set_size(e, 0);
    bool data = false;
    if (S_ISLNK(st.st_mode)) {
      std::string target(static_cast<size_t>(st.st_size) + 256, '\0');
      ssize_t n = readlink(full.c_str(), target.data(), target.size());
      if (n < 0) return fileError("reading link " + full, errno);
      target.resize(static_cast<size_t>(n));
      archive_entry_set_symlink(e, target.c_str());
    } else if (S_ISREG(st.st_mode)) {
      auto key = std::make_pair(st.st_dev, st.st_ino);
      auto it = st.st_nlink > 1 ? firstLink.find(key) : firstLink.end();
      if (it != firstLink.end()) {
        archive_entry_set_hardlink(e, it->second.c_str());
      } else {
        if (st.st_nlink > 1) firstLink[key] = rel;
        archive_entry_set_size(e, st.st_size);
        data = true;
      }
    }
    if (archive_write_header(tar, e) != ARCHIVE_OK) {
      Status st2 = pipe.writeErrno
                       ? fileError("writing a layer", pipe.writeErrno)
                       : internalError("packing " + rel + ": " + archive_error_string(tar));
      archive_entry_free(e);
      return st2;
    }
    if (data) {
      Status st2 = addFile(tar, full, rel);
      if (!st2.isOk()) {
        archive_entry_free(e);
        return pipe.writeErrno ? fileError("writing a layer", pipe.writeErrno) : st2;
      }
    }
  }
  archive_entry_free(e);
  return Status::ok();
}

// This thread's character set is UTF-8 while it lives. libarchive converts
// names from the locale's character set into a pax header's UTF-8, and in
// the "C" locale (a program that never calls setlocale) it cannot convert a
// non-ASCII name at all: every Debian root filesystem has some
// (ca-certificates' links). Names on disk are UTF-8, so with UTF-8 as the
// locale they go in as they are; ASCII names make the same tar as before.
class Utf8Names {
 public:
  Utf8Names() : utf8_(newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0))) {
    if (utf8_ != static_cast<locale_t>(0)) previous_ = uselocale(utf8_);
  }
  ~Utf8Names() {
    if (utf8_ == static_cast<locale_t>(0)) return;
    uselocale(previous_);
    freelocale(utf8_);
  }
  Utf8Names(const Utf8Names&) = delete;
  Utf8Names& operator=(const Utf8Names&) = delete;

 private:
  locale_t utf8_;
  locale_t previous_ = static_cast<locale_t>(0);
};

// Packs `dir` into a gzip (or zstd) tar at `path`.
StatusOr<BuiltLayer> buildLayer(const std::string& dir, const std::string& path,
                                PushOptions::Compression compression) {
  if (!isDirectory(dir)) return invalidArgument("layer directory " + dir + " does not exist");
  Utf8Names utf8;
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (fd.get() < 0) return fileError("creating " + path, errno);
  Pipeline pipe;
  pipe.fd = fd.get();
  pipe.gz = archive_write_new();
  const char* filter = "gzip";
  if (compression == PushOptions::Compression::kZstd) {
    filter = "zstd";
    if (archive_write_add_filter_zstd(pipe.gz) != ARCHIVE_OK) {
      Status st = internalError(std::string("this libarchive cannot write zstd: ") +
                                archive_error_string(pipe.gz));
      archive_write_free(pipe.gz);
      return st;
    }
  } else {
    archive_write_add_filter_gzip(pipe.gz);
    // No time stamp in the gzip header: the same content, the same digest.
    archive_write_set_filter_option(pipe.gz, "gzip", "timestamp", nullptr);
  }
  // Speed over size: these layers go to a local registry.
  archive_write_set_filter_option(pipe.gz, filter, "compression-level", "1");
  archive_write_set_format_raw(pipe.gz);
  archive_write_set_bytes_per_block(pipe.gz, 0);
  archive* tar = archive_write_new();
  archive_write_set_format_pax_restricted(tar);
  archive_write_set_bytes_in_last_block(tar, 1);
  Status st;
  if (archive_write_open2(pipe.gz, &pipe, nullptr, writeBlob, nullptr, nullptr) != ARCHIVE_OK) {
    st = internalError(std::string("starting ") + filter + ": " + archive_error_string(pipe.gz));
  }
  archive_entry* raw = archive_entry_new();
  archive_entry_set_pathname(raw, "layer.tar");
  archive_entry_set_filetype(raw, AE_IFREG);
  if (st.isOk() && archive_write_header(pipe.gz, raw) != ARCHIVE_OK) {
    st = internalError(std::string("starting ") + filter + ": " + archive_error_string(pipe.gz));
  }
  archive_entry_free(raw);
  if (st.isOk() &&
      archive_write_open2(tar, &pipe, nullptr, writeTar, nullptr, nullptr) != ARCHIVE_OK) {
    st = internalError(std::string("starting tar: ") + archive_error_string(tar));
  }
  if (st.isOk()) st = writeEntries(tar, dir, pipe);
  if (archive_write_close(tar) != ARCHIVE_OK && st.isOk()) {
    st = internalError(std::string("finishing tar: ") + archive_error_string(tar));
  }
  if (archive_write_close(pipe.gz) != ARCHIVE_OK && st.isOk()) {
    st = pipe.writeErrno
             ? fileError("writing " + path, pipe.writeErrno)
             : internalError(std::string("finishing ") + filter + ": " +
                             archive_error_string(pipe.gz));
  }
  archive_write_free(tar);
  archive_write_free(pipe.gz);
  if (st.isOk() && pipe.writeErrno != 0) st = fileError("writing " + path, pipe.writeErrno);
  if (!st.isOk()) return st;
  BuiltLayer out;
  out.path = path;
  out.diffId = "sha256:" + pipe.tarHash.hexDigest();
  out.digest = "sha256:" + pipe.blobHash.hexDigest();
  out.size = pipe.blobSize;
  return out;
}

struct Platform {
  std::string os, arch, variant;
};

StatusOr<Platform> parsePlatform(const std::string& text) {
  Platform p;
  size_t a = text.find('/');
  size_t b = a == std::string::npos ? a : text.find('/', a + 1);
  p.os = text.substr(0, a);
  if (a != std::string::npos) p.arch = text.substr(a + 1, b == std::string::npos ? b : b - a - 1);
  if (b != std::string::npos) p.variant = text.substr(b + 1);
  auto ok = [](const std::string& s) {
    return !s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") ==
                             std::string::npos;
  };
  if (!ok(p.os) || !ok(p.arch) || (b != std::string::npos && !ok(p.variant))) {
    return invalidArgument("platform '" + text + "' is not OS/ARCH[/VARIANT], e.g. linux/arm64");
  }
  return p;
}

// The config blob with another platform's os/architecture/variant.
std::string withPlatform(const std::string& configBlob, const Platform& p) {
  nlohmann::json j = nlohmann::json::parse(configBlob);
  j["os"] = p.os;
  j["architecture"] = p.arch;
  if (!p.variant.empty()) j["variant"] = p.variant;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A Docker v2 manifest made into the OCI one of the same content.
std::string asOciManifest(const std::string& docker) {
  nlohmann::json j = nlohmann::json::parse(docker);
  j["mediaType"] = kOciManifest;
  return j.dump(3, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status uploadIfMissing(RegistryClient& client, const BuiltLayer& layer) {
  ASSIGN_OR_RETURN(bool present, client.hasBlob(layer.digest));
  if (present) return Status::ok();
  UniqueFd fd(open(layer.path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return fileError("reading " + layer.path, errno);
  return client.uploadBlob(layer.digest, fd.get(), layer.size);
}

// The platforms of `--index-platform`, besides linux/amd64.
StatusOr<std::vector<Platform>> parseExtraPlatforms(const std::vector<std::string>& texts) {
  std::vector<Platform> extra;
  for (const auto& text : texts) {
    ASSIGN_OR_RETURN(Platform p, parsePlatform(text));
    if (p.os == "linux" && p.arch == "amd64" && p.variant.empty()) {
      return invalidArgument("linux/amd64 is always in the list; name only the others");
    }
    extra.push_back(std::move(p));
  }
  return extra;
}

// `count` empty files in the scratch directory, the caller's to remove.
StatusOr<std::vector<std::string>> makeScratchFiles(size_t count) {
  std::vector<std::string> scratch;
  for (size_t i = 0; i < count; ++i) {
    std::string tmpl = scratchDir() + "/corral-layer-XXXXXX";
    int fd = mkstemp(tmpl.data());
    if (fd < 0) {
      for (const auto& s : scratch) unlink(s.c_str());
      return fileError("creating a scratch file in " + scratchDir(), errno);
    }
    close(fd);
    scratch.push_back(tmpl);
  }
  return scratch;
}

// Packs each of `layerDirs` and uploads those the registry lacks, in
// parallel as pull downloads them.
StatusOr<std::vector<BuiltLayer>> buildAndUploadLayers(RegistryClient& client,
                                                       const std::vector<std::string>& layerDirs,
                                                       PushOptions::Compression compression,
                                                       int parallel) {
  ASSIGN_OR_RETURN(std::vector<std::string> scratch, makeScratchFiles(layerDirs.size()));
  std::vector<BuiltLayer> layers(layerDirs.size());
  Status st = runInParallel(layerDirs.size(), parallel, [&](size_t i) {
    auto built = buildLayer(layerDirs[i], scratch[i], compression);
    Status st = built.status();
    if (built.isOk()) {
      layers[i] = *built;
      st = uploadIfMissing(client, layers[i]);
    }
    unlink(scratch[i].c_str());
    return st.withContext("layer " + layerDirs[i]);
  });
  for (const auto& s : scratch) unlink(s.c_str());
  if (!st.isOk()) return st;
  return layers;
}

// What the image manifests of one push share: the layers and the config
// they are described by, and the format.
struct ImageParts {
  const ImageConfig& config;
  std::vector<std::string> diffIds;
  std::vector<Descriptor> layers;
  bool zstd = false;
};

ImageParts imageParts(const ImageConfig& config, const std::vector<BuiltLayer>& built, bool zstd) {
  ImageParts parts{config, {}, {}, zstd};
  for (const auto& l : built) {
    parts.diffIds.push_back(l.diffId);
    parts.layers.push_back({zstd ? kOciLayerZstd : kDockerLayerGzip, l.digest, l.size});
  }
  return parts;
}

// Uploads the config blob (for `platform`, or linux/amd64 when null) and
// puts the image manifest under `tag`, or under its digest when `tag` is
// empty. Each platform has a config blob of its own; the linux/amd64 image is
// what the layers really are.
StatusOr<Descriptor> pushImageManifest(RegistryClient& client, const ImageParts& parts,
                                       const Platform* platform, const std::string& tag) {
  std::string configBlob = makeConfigBlob(parts.config, parts.diffIds);
  if (platform != nullptr) configBlob = withPlatform(configBlob, *platform);
  Descriptor configDesc{parts.zstd ? kOciConfig : kDockerConfig, sha256Digest(configBlob),
                        static_cast<int64_t>(configBlob.size())};
  ASSIGN_OR_RETURN(bool present, client.hasBlob(configDesc.digest));
  if (!present)
    RETURN_IF_ERROR(client.uploadBlob(configDesc.digest, -1, configDesc.size, configBlob));
  std::string manifest = makeManifest(configDesc, parts.layers);
  if (parts.zstd) manifest = asOciManifest(manifest);
  const char* manifestType = parts.zstd ? kOciManifest : kDockerManifest;
  Descriptor out{manifestType, sha256Digest(manifest), static_cast<int64_t>(manifest.size())};
  RETURN_IF_ERROR(client.putManifest(tag.empty() ? out.digest : tag, manifest, manifestType));
  return out;
}

// An entry of a manifest list (or OCI index).
nlohmann::json listEntry(const Descriptor& d, const Platform& p) {
  nlohmann::json e{{"mediaType", d.mediaType}, {"size", d.size}, {"digest", d.digest}};
  e["platform"] = {{"os", p.os}, {"architecture", p.arch}};
  if (!p.variant.empty()) e["platform"]["variant"] = p.variant;
  return e;
}

// Pushes an image manifest for each of `extra` and for linux/amd64, then
// the list (or index) of them under `tag`.
StatusOr<PushResult> pushManifestList(RegistryClient& client, const ImageParts& parts,
                                      const std::vector<Platform>& extra, const std::string& tag) {
  const char* listType = parts.zstd ? kOciIndex : kDockerManifestList;
  nlohmann::json list;
  list["schemaVersion"] = 2;
  list["mediaType"] = listType;
  list["manifests"] = nlohmann::json::array();
  for (const auto& p : extra) {
    ASSIGN_OR_RETURN(Descriptor d, pushImageManifest(client, parts, &p, ""));
    list["manifests"].push_back(listEntry(d, p));
  }
  ASSIGN_OR_RETURN(Descriptor amd64, pushImageManifest(client, parts, nullptr, ""));
  list["manifests"].push_back(listEntry(amd64, Platform{"linux", "amd64", ""}));
  std::string body = list.dump(3);
  RETURN_IF_ERROR(client.putManifest(tag, body, listType));
  PushResult result;
  result.digest = sha256Digest(body);
  result.amd64Digest = amd64.digest;
  return result;
}

}  // namespace

StatusOr<PushResult> push(const Reference& ref, const std::vector<std::string>& layerDirs,
                          const ImageConfig& config, const RegistryOptions& options,
                          const PushOptions& how) {
  ASSIGN_OR_RETURN(std::vector<Platform> extra, parseExtraPlatforms(how.extraPlatforms));
  if (!ref.digest.empty()) {
    return invalidArgument("cannot push to " + ref.toString() + ": push to a tag, not a digest");
  }
  RegistryClient client(ref, options, "pull,push");
  ASSIGN_OR_RETURN(std::vector<BuiltLayer> layers,
                   buildAndUploadLayers(client, layerDirs, how.compression,
                                        options.parallelDownloads));
  const bool zstd = how.compression == PushOptions::Compression::kZstd;
  ImageParts parts = imageParts(config, layers, zstd);
  const std::string tag = ref.tag.empty() ? "latest" : ref.tag;
  if (!extra.empty()) return pushManifestList(client, parts, extra, tag);
  ASSIGN_OR_RETURN(Descriptor d, pushImageManifest(client, parts, nullptr, tag));
  PushResult result;
  result.digest = result.amd64Digest = d.digest;
  return result;
}

Status push(const Reference& ref, const std::vector<std::string>& layerDirs,
            const ImageConfig& config, const RegistryOptions& options) {
  auto r = push(ref, layerDirs, config, options, PushOptions{});
  return r.isOk() ? Status::ok() : r.status();
}

}  // namespace corral::image
