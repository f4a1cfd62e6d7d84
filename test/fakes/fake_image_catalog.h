#pragma once

// `FakeImageCatalog`: the `ImageCatalog` contract in memory. It knows the
// images a test adds (by default corral's two, unbuilt, and an operator's
// "debian13-extra" on 24.11), builds instantly (marking them built, once),
// and fails the next build when told to. Thread-safe.

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "corral/image.h"

namespace corral {

class FakeImageCatalog : public ImageCatalog {
 public:
  FakeImageCatalog();

  StatusOr<std::vector<ImageInfo>> list() override;
  StatusOr<ImageInfo> find(const std::string& name) override;
  Status ensureBuilt(const ImageRef& ref, const BuildProgress& progress) override;

  void add(ImageInfo info);
  void failNextBuild(Status why);
  // How many builds ran (builds of a built image do not count).
  int builds() const;
  // The ref of a known image (aborts on an unknown name: a test's typo).
  ImageRef ref(const std::string& name) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, ImageInfo> images_;
  std::optional<Status> fault_;
  int builds_ = 0;
};

}  // namespace corral
