#pragma once

// Helpers for the image tests: scratch directories, tar layers built with
// libarchive, small file utilities.

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace corral::image::testing {

// A directory under /var/tmp, removed with everything in it at the end.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = "/var/tmp/corral-image-test-XXXXXX";
    char* p = mkdtemp(tmpl.data());
    EXPECT_NE(p, nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    // Directories without write permission would stop remove_all.
    for (auto it = std::filesystem::recursive_directory_iterator(path_, ec);
         it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) chmod(it->path().c_str(), 0755);
    }
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

inline void writeText(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

inline std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline bool exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// Builds a tar layer entry by entry.
class TarBuilder {
 public:
  TarBuilder& file(const std::string& path, const std::string& content, int mode = 0644) {
    entries_.push_back({AE_IFREG, path, content, "", "", mode});
    return *this;
  }
  TarBuilder& dir(const std::string& path, int mode = 0755) {
    entries_.push_back({AE_IFDIR, path, "", "", "", mode});
    return *this;
  }
  TarBuilder& symlink(const std::string& path, const std::string& target) {
    entries_.push_back({AE_IFLNK, path, "", target, "", 0777});
    return *this;
  }
  TarBuilder& hardlink(const std::string& path, const std::string& target) {
    entries_.push_back({AE_IFREG, path, "", "", target, 0644});
    return *this;
  }
  TarBuilder& fifo(const std::string& path) {
    entries_.push_back({AE_IFIFO, path, "", "", "", 0644});
    return *this;
  }
  TarBuilder& chardev(const std::string& path) {
    entries_.push_back({AE_IFCHR, path, "", "", "", 0666});
    return *this;
  }
  // Writes the archive to `out`, gzip-compressed when asked.
  void write(const std::string& out, bool gzip = true) const {
    archive* a = archive_write_new();
    if (gzip) archive_write_add_filter_gzip(a);
    archive_write_set_format_pax_restricted(a);
    ASSERT_EQ(archive_write_open_filename(a, out.c_str()), ARCHIVE_OK);
    for (const auto& e : entries_) {
      archive_entry* en = archive_entry_new();
      archive_entry_set_pathname(en, e.path.c_str());
      archive_entry_set_filetype(en, e.type);
      archive_entry_set_perm(en, e.mode);
      archive_entry_set_mtime(en, 1000, 0);
      if (!e.hardlink.empty()) {
        archive_entry_set_hardlink(en, e.hardlink.c_str());
        archive_entry_set_size(en, 0);
      } else {
        archive_entry_set_size(en, static_cast<la_int64_t>(e.content.size()));
      }
      if (e.type == AE_IFLNK) archive_entry_set_symlink(en, e.target.c_str());
      if (e.type == AE_IFCHR) archive_entry_set_rdev(en, makedev(1, 3));
      ASSERT_EQ(archive_write_header(a, en), ARCHIVE_OK) << archive_error_string(a);
      if (!e.content.empty()) archive_write_data(a, e.content.data(), e.content.size());
      archive_entry_free(en);
    }
    archive_write_close(a);
    archive_write_free(a);
  }

 private:
  struct Entry {
    mode_t type;
    std::string path, content, target, hardlink;
    int mode;
  };
  std::vector<Entry> entries_;
};

}  // namespace corral::image::testing
