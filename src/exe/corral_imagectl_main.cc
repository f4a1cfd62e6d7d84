// corral-imagectl: fills a registry from local directories and pulls images
// into a cache, for tests, benchmarks and demos.
//
//   corral-imagectl push [--http] [--env K=V]... [--workdir D]
//                        [--entrypoint ARG]... [--cmd ARG]... [--compression gzip|zstd]
//                        [--index-platform OS/ARCH]... REF DIR [DIR...]
//     prints "pushed REF" and "digest sha256:…" (what REF names: the image
//     manifest, or the manifest list with --index-platform).
//   corral-imagectl pull [--http] --cache DIR REF

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "image/image.h"

namespace {

using corral::image::ImageConfig;
using corral::image::RegistryOptions;

int fail(const corral::Status& st) {
  std::cerr << "corral-imagectl: " << st.message() << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"corral-imagectl: push local directories to a registry as an image, or pull one"};
  app.require_subcommand(1);

  bool http = false;
  std::string credentials;
  int parallel = 4;
  auto addCommon = [&](CLI::App* cmd) {
    cmd->add_flag("--http", http, "Speak plain http to the registry");
    cmd->add_option("--credentials", credentials, "netrc-format credentials file");
    cmd->add_option("--parallel", parallel, "Layers transferred at once")->check(CLI::Range(1, 64));
  };

  std::string ref;
  std::vector<std::string> dirs;
  ImageConfig config;
  corral::image::PushOptions how;
  std::string compression = "gzip";
  CLI::App* push =
      app.add_subcommand("push", "Push directories (one layer each, bottom first) as REF");
  addCommon(push);
  push->add_option("--env", config.env, "KEY=VALUE for the image's environment (repeat for more)")
      ->allow_extra_args(false);
  push->add_option("--workdir", config.workdir, "The image's working directory");
  push->add_option("--entrypoint", config.entrypoint,
                   "An entrypoint argument (repeat for more; --entrypoint=-c for a dash)")
      ->allow_extra_args(false);
  push->add_option("--cmd", config.cmd, "A command argument (repeat for more)")
      ->allow_extra_args(false);
  push->add_option("--compression", compression,
                   "Layer compression: gzip (Docker v2 manifest) or zstd (OCI manifest)")
      ->check(CLI::IsMember({"gzip", "zstd"}));
  push->add_option("--index-platform", how.extraPlatforms,
                   "Push a multi-platform list: this OS/ARCH entry (same layers, its own config) "
                   "besides linux/amd64; repeat for more")
      ->allow_extra_args(false);
  push->add_option("REF", ref, "Image reference, e.g. localhost:5000/test/busybox:latest")
      ->required();
  push->add_option("DIR", dirs, "Layer directories, bottom first")
      ->required()
      ->check(CLI::ExistingDirectory);

  std::string cache;
  CLI::App* pull =
      app.add_subcommand("pull", "Pull REF into a cache and print its digest and rootfs");
  addCommon(pull);
  pull->add_option("--cache", cache, "Cache directory (blobs/ and rootfs/)")->required();
  pull->add_option("REF", ref, "Image reference")->required();

  CLI11_PARSE(app, argc, argv);

  auto parsed = corral::image::parseReference(ref);
  if (!parsed.isOk()) return fail(parsed.status());
  RegistryOptions options;
  if (http) options.httpRegistries.push_back(parsed->registry);
  options.credentialsFile = credentials;
  options.parallelDownloads = parallel;

  if (push->parsed()) {
    for (const auto& kv : config.env) {
      if (kv.find('=') == std::string::npos) {
        return fail(corral::invalidArgument("--env wants KEY=VALUE, got '" + kv + "'"));
      }
    }
    if (compression == "zstd") how.compression = corral::image::PushOptions::Compression::kZstd;
    auto pushed = corral::image::push(*parsed, dirs, config, options, how);
    if (!pushed.isOk()) return fail(pushed.status());
    std::cout << "pushed " << parsed->toString() << "\n"
              << "digest " << pushed->digest << "\n";
    if (pushed->amd64Digest != pushed->digest)
      std::cout << "linux/amd64 " << pushed->amd64Digest << "\n";
    return 0;
  }
  auto pulled = corral::image::pull(*parsed, cache, options,
                                    [](const std::string& line) { std::cerr << line << "\n"; });
  if (!pulled.isOk()) return fail(pulled.status());
  std::cout << "digest " << pulled->manifestDigest << "\n"
            << "rootfs " << pulled->rootfs << "\n"
            << "cached " << (pulled->cached ? "yes" : "no") << "\n";
  return 0;
}
