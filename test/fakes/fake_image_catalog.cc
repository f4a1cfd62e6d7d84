#include "fakes/fake_image_catalog.h"

#include <cstdio>
#include <cstdlib>

namespace corral {
namespace {

ImageInfo image(const std::string& name, const std::string& slurm, char idFill, bool builtIn) {
  ImageInfo i;
  i.ref = {name, std::string(64, idFill), slurm};
  i.os = slurm == "22.05" ? "Debian 12 (bookworm)" : "Debian 13 (trixie)";
  i.suite = slurm == "22.05" ? "bookworm" : "trixie";
  i.builtIn = builtIn;
  i.packages = {"slurm-wlm"};
  return i;
}

}  // namespace

FakeImageCatalog::FakeImageCatalog() {
  add(image("debian13-slurm24.11", "24.11", 'a', true));
  add(image("debian12-slurm22.05", "22.05", 'b', true));
  ImageInfo extra = image("debian13-extra", "24.11", 'c', false);
  extra.base = "debian13-slurm24.11";
  add(extra);
}

void FakeImageCatalog::add(ImageInfo info) {
  std::lock_guard<std::mutex> l(mu_);
  images_[info.ref.name] = std::move(info);
}

StatusOr<std::vector<ImageInfo>> FakeImageCatalog::list() {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<ImageInfo> out;
  for (const auto& [_, i] : images_) out.push_back(i);
  return out;
}

StatusOr<ImageInfo> FakeImageCatalog::find(const std::string& name) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = images_.find(name);
  if (it == images_.end()) return notFound("no image called \"" + name + "\"");
  return it->second;
}

Status FakeImageCatalog::ensureBuilt(const ImageRef& ref, const BuildProgress& progress) {
  std::lock_guard<std::mutex> l(mu_);
  if (fault_) {
    Status s = *fault_;
    fault_.reset();
    return s;
  }
  for (auto& [_, i] : images_) {
    if (i.ref.id != ref.id) continue;
    if (!i.built) {
      ++builds_;
      if (progress) progress("I: building " + i.ref.name);
      i.built = true;
      i.sizeBytes = 800 << 20;
    }
    return Status::ok();
  }
  return failedPrecondition("no build " + ref.id.substr(0, 12) + " of image " + ref.name);
}

void FakeImageCatalog::failNextBuild(Status why) {
  std::lock_guard<std::mutex> l(mu_);
  fault_ = std::move(why);
}

int FakeImageCatalog::builds() const {
  std::lock_guard<std::mutex> l(mu_);
  return builds_;
}

ImageRef FakeImageCatalog::ref(const std::string& name) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = images_.find(name);
  if (it == images_.end()) {
    std::fprintf(stderr, "FakeImageCatalog: no image %s\n", name.c_str());
    std::abort();
  }
  return it->second.ref;
}

}  // namespace corral
