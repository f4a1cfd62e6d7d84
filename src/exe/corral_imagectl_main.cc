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
using corral::image::Reference;
using corral::image::RegistryOptions;

int fail(const corral::Status& st) {
  std::cerr << "corral-imagectl: " << st.message() << "\n";
  return 1;
}

// The options both commands take.
struct CommonOptions {
  bool http = false;
  std::string credentials;
  int parallel = 4;
};

struct PushArgs {
  std::string ref;
  std::vector<std::string> dirs;
  ImageConfig config;
  corral::image::PushOptions how;
  std::string compression = "gzip";
};

struct PullArgs {
  std::string ref;
  std::string cache;
};

void addCommonOptions(CLI::App* cmd, CommonOptions& common) {
  cmd->add_flag("--http", common.http, "Speak plain http to the registry");
  cmd->add_option("--credentials", common.credentials, "netrc-format credentials file");
  cmd->add_option("--parallel", common.parallel, "Layers transferred at once")
      ->check(CLI::Range(1, 64));
}

CLI::App* addPush(CLI::App& app, CommonOptions& common, PushArgs& a) {
  CLI::App* push =
      app.add_subcommand("push", "Push directories (one layer each, bottom first) as REF");
  addCommonOptions(push, common);
  push->add_option("--env", a.config.env, "KEY=VALUE for the image's environment (repeat for more)")
      ->allow_extra_args(false);
  push->add_option("--workdir", a.config.workdir, "The image's working directory");
  push->add_option("--entrypoint", a.config.entrypoint,
                   "An entrypoint argument (repeat for more; --entrypoint=-c for a dash)")
      ->allow_extra_args(false);
  push->add_option("--cmd", a.config.cmd, "A command argument (repeat for more)")
      ->allow_extra_args(false);
  push->add_option("--compression", a.compression,
                   "Layer compression: gzip (Docker v2 manifest) or zstd (OCI manifest)")
      ->check(CLI::IsMember({"gzip", "zstd"}));
  push->add_option("--index-platform", a.how.extraPlatforms,
                   "Push a multi-platform list: this OS/ARCH entry (same layers, its own config) "
                   "besides linux/amd64; repeat for more")
      ->allow_extra_args(false);
  push->add_option("REF", a.ref, "Image reference, e.g. localhost:5000/test/busybox:latest")
      ->required();
  push->add_option("DIR", a.dirs, "Layer directories, bottom first")
      ->required()
      ->check(CLI::ExistingDirectory);
  return push;
}

CLI::App* addPull(CLI::App& app, CommonOptions& common, PullArgs& a) {
  CLI::App* pull =
      app.add_subcommand("pull", "Pull REF into a cache and print its digest and rootfs");
  addCommonOptions(pull, common);
  pull->add_option("--cache", a.cache, "Cache directory (blobs/ and rootfs/)")->required();
  pull->add_option("REF", a.ref, "Image reference")->required();
  return pull;
}

int runPush(const Reference& ref, const RegistryOptions& options, PushArgs& a) {
  for (const auto& kv : a.config.env) {
    if (kv.find('=') == std::string::npos) {
      return fail(corral::invalidArgument("--env wants KEY=VALUE, got '" + kv + "'"));
    }
  }
  if (a.compression == "zstd") a.how.compression = corral::image::PushOptions::Compression::kZstd;
  auto pushed = corral::image::push(ref, a.dirs, a.config, options, a.how);
  if (!pushed.isOk()) return fail(pushed.status());
  std::cout << "pushed " << ref.toString() << "\n"
            << "digest " << pushed->digest << "\n";
  if (pushed->amd64Digest != pushed->digest)
    std::cout << "linux/amd64 " << pushed->amd64Digest << "\n";
  return 0;
}

int runPull(const Reference& ref, const RegistryOptions& options, const PullArgs& a) {
  auto pulled = corral::image::pull(ref, a.cache, options,
                                    [](const std::string& line) { std::cerr << line << "\n"; });
  if (!pulled.isOk()) return fail(pulled.status());
  std::cout << "digest " << pulled->manifestDigest << "\n"
            << "rootfs " << pulled->rootfs << "\n"
            << "cached " << (pulled->cached ? "yes" : "no") << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"corral-imagectl: push local directories to a registry as an image, or pull one"};
  app.require_subcommand(1);
  CommonOptions common;
  PushArgs pushArgs;
  PullArgs pullArgs;
  CLI::App* push = addPush(app, common, pushArgs);
  addPull(app, common, pullArgs);

  CLI11_PARSE(app, argc, argv);

  const std::string& refText = push->parsed() ? pushArgs.ref : pullArgs.ref;
  auto parsed = corral::image::parseReference(refText);
  if (!parsed.isOk()) return fail(parsed.status());
  RegistryOptions options;
  if (common.http) options.httpRegistries.push_back(parsed->registry);
  options.credentialsFile = common.credentials;
  options.parallelDownloads = common.parallel;
  if (push->parsed()) return runPush(*parsed, options, pushArgs);
  return runPull(*parsed, options, pullArgs);
}
