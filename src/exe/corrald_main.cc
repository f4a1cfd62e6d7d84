// corrald: the corral control plane. See docs/operations.md.

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <thread>

#include "api/server.h"
#include "common/ipv4.h"
#include "common/log.h"
#include "corral/process.h"
#include "reconcile/reconciler.h"
#include "runtime/local/host_routes.h"
#include "runtime/local/local_runtime.h"
#include "slurm/settings.h"

namespace {
std::atomic<bool> gStop{false};
}

int main(int argc, char** argv) {
  using namespace corral;
  CLI::App app{"corrald: the corral control plane (REST API, store, reconciler)"};
  std::string dataDir = "/var/lib/corral";
  std::string listen = "127.0.0.1:8470";
  std::string pool = "172.29.0.0/16";
  std::string podBinary;
  std::vector<std::string> platformPartitions;
  bool verbose = false;
  app.add_option("--data-dir", dataDir, "where corral keeps its database and clusters")
      ->capture_default_str();
  app.add_option("--listen", listen, "HOST:PORT of the REST API")->capture_default_str();
  app.add_option("--subnet-pool", pool, "IPv4 block that cluster subnets (/24 each) come from")
      ->capture_default_str();
  app.add_option("--pod-binary", podBinary, "path of corral-pod (default: beside corrald)");
  app.add_option("--platform-partition", platformPartitions,
                 "an extra platform partition every new cluster gets, over all nodes (e.g. llm); "
                 "repeatable");
  app.add_flag("-v,--verbose", verbose, "log debug messages");
  CLI11_PARSE(app, argc, argv);
  if (verbose) setLogLevel(LogLevel::kDebug);

  if (geteuid() != 0) {
    LOG_ERROR("corrald must run as root: it creates namespaces, bridges and mounts");
    return 1;
  }
  for (const auto& p : platformPartitions) {
    ClusterSpec probe;
    probe.gpuNodes = 1;
    probe.partitions = {{p, "slinky-0", {}}};
    if (Status s = normalizeSlurmSettings(probe, {}); !s.isOk()) {
      LOG_ERROR("--platform-partition " << p << ": " << s.message());
      return 2;
    }
  }
  auto colon = listen.rfind(':');
  if (colon == std::string::npos) {
    LOG_ERROR("--listen must be HOST:PORT, not \"" << listen << "\"");
    return 2;
  }
  std::string host = listen.substr(0, colon);
  int port = std::atoi(listen.c_str() + colon + 1);
  auto cidr = parseCidr(pool);
  if (!cidr.isOk() || cidr->prefix > 24) {
    LOG_ERROR("--subnet-pool: " << (cidr.isOk() ? "must be /24 or larger" : cidr.status().message()));
    return 2;
  }
  if (Status s = checkPoolAgainstHostRoutes(*cidr); !s.isOk()) {
    LOG_ERROR(s.message());
    return 2;
  }
  if (podBinary.empty()) {
    std::error_code ec;
    podBinary = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "corral-pod";
  }
  std::error_code ec;
  std::filesystem::create_directories(dataDir, ec);
  if (ec) {
    LOG_ERROR("cannot create --data-dir " << dataDir << ": " << ec.message());
    return 1;
  }
  // Pod launchers detach from corrald; as a subreaper corrald inherits them
  // when they exit, and reaps them so that no zombie is left behind.
  prctl(PR_SET_CHILD_SUBREAPER, 1);

  auto store = openSqliteStore(dataDir + "/corral.db");
  if (!store.isOk()) {
    LOG_ERROR(store.status().message());
    return 1;
  }
  LocalRuntime runtime({dataDir, podBinary, nullptr});
  if (Status s = runtime.initialize(); !s.isOk()) {
    LOG_ERROR(s.message());
    return 1;
  }
  ReconcilerOptions ro;
  ro.subnetPool = pool;
  Reconciler reconciler(**store, runtime, realClock(), ro);
  if (Status s = reconciler.collectOrphans(); !s.isOk()) LOG_WARN("orphan cleanup: " << s.message());

  ApiOptions apiOptions;
  apiOptions.platformPartitions = platformPartitions;
  apiOptions.dataDir = std::filesystem::canonical(dataDir).string();
  ApiServer api(**store, reconciler, realClock(), apiOptions);
  if (Status s = api.bind(host, port); !s.isOk()) {
    LOG_ERROR(s.message());
    return 1;
  }
  // Re-adopt every cluster: the first pass over each finds its pods running
  // and changes nothing, or finishes what a previous corrald left half done.
  if (auto all = (*store)->listClusters(); all.isOk())
    for (const auto& r : *all) reconciler.enqueue(r.spec.name);
  reconciler.start();

  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  std::thread server([&] { api.serve(); });
  std::thread reaper([&] {
    while (!gStop) {
      reapOrphanedChildren();
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });
  LOG_INFO("corrald listening on http://" << host << ":" << api.port() << " (data in " << dataDir
                                          << ")");
  int sig = 0;
  sigwait(&set, &sig);
  LOG_INFO("stopping on signal " << sig << "; clusters keep running");
  gStop = true;
  api.stop();
  server.join();
  reconciler.stop();
  reaper.join();
  return 0;
}
