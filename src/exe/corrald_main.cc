// corrald: the corral control plane. See docs/operations.md.

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "api/auth.h"
#include "clusterimage/local_catalog.h"
#include "api/server.h"
#include "model/spec_json.h"
#include "common/ipv4.h"
#include "common/log.h"
#include "common/signals.h"
#include "corral/process.h"
#include "reconcile/reconciler.h"
#include "runtime/local/host_routes.h"
#include "runtime/local/local_runtime.h"
#include "kube/client.h"
#include "kube/config.h"
#include "runtime/kubernetes/kubernetes_runtime.h"
#include "slurm/settings.h"

namespace {
std::atomic<bool> gStop{false};

// `corrald admin …`: accounts and tokens, written straight into corrald's
// database (a running corrald sees them at its next request).
struct AdminArgs {
  std::string user;
  bool admin = false;
  std::vector<std::string> projects;
  std::string description;
  int64_t tokenId = 0;
};

int runAdmin(CLI::App& admin, const std::string& dataDir, const AdminArgs& a) {
  using namespace corral;
  auto store = openSqliteStore(dataDir + "/corral.db");
  if (!store.isOk()) {
    std::cerr << "corrald admin: " << store.status().message() << "\n";
    return 1;
  }
  Store& st = **store;
  auto fail = [](const Status& s) {
    std::cerr << "corrald admin: " << s.message() << "\n";
    return s.code() == Code::kInvalidArgument ? 2 : 1;
  };
  auto* user = admin.get_subcommand("user");
  auto* token = admin.get_subcommand("token");
  if (user->got_subcommand("add")) {
    if (Status s = validateAccountName(a.user); !s.isOk()) return fail(s);
    if (a.projects.size() > static_cast<size_t>(kMaxProjectsPerAccount))
      return fail(invalidArgument("at most " + std::to_string(kMaxProjectsPerAccount) + " projects"));
    for (const auto& p : a.projects)
      if (Status s = validateProjectName(p); !s.isOk()) return fail(s);
    if (!a.admin && a.projects.empty())
      return fail(invalidArgument("give the user a --project (or make it an --admin)"));
    Account acc{a.user, a.admin, a.projects, realClock().unixMillis() / 1000};
    if (auto r = st.createAccount(acc); !r.isOk()) return fail(r.status());
    std::cout << "user " << a.user << " added" << (a.admin ? " (admin)" : "") << "\n";
    return 0;
  }
  if (user->got_subcommand("list")) {
    auto all = st.listAccounts();
    if (!all.isOk()) return fail(all.status());
    std::cout << "NAME                 ADMIN  PROJECTS\n";
    for (const auto& acc : *all) {
      std::string projects;
      for (const auto& p : acc.projects) projects += (projects.empty() ? "" : ",") + p;
      std::cout << std::left << std::setw(21) << acc.name << std::setw(7)
                << (acc.admin ? "yes" : "no") << projects << "\n";
    }
    return 0;
  }
  if (user->got_subcommand("remove")) {
    if (Status s = st.deleteAccount(a.user); !s.isOk()) return fail(s);
    std::cout << "user " << a.user << " and its tokens removed\n";
    return 0;
  }
  if (token->got_subcommand("create")) {
    auto t = issueToken(st, realClock(), a.user, a.description);
    if (!t.isOk()) return fail(t.status());
    // The only place the token is ever shown.
    std::cout << *t << "\n";
    return 0;
  }
  if (token->got_subcommand("list")) {
    auto all = st.listTokens();
    if (!all.isOk()) return fail(all.status());
    std::cout << "ID     USER                 CREATED     DESCRIPTION\n";
    for (const auto& t : *all)
      std::cout << std::left << std::setw(7) << t.id << std::setw(21) << t.user << std::setw(12)
                << t.createdAt << t.description << "\n";
    return 0;
  }
  if (token->got_subcommand("revoke")) {
    if (Status s = st.deleteToken(a.tokenId); !s.isOk()) return fail(s);
    std::cout << "token " << a.tokenId << " revoked\n";
    return 0;
  }
  std::cerr << admin.help();
  return 2;
}
// `corrald image …`: cluster images, built on this host (they are shared by
// every corrald on it); a running corrald sees a new one at once.
struct ImageArgs {
  std::string file;
  std::string name;
  bool withBuild = false;
};

int runImage(CLI::App& image, corral::LocalImageCatalog& catalog, const std::string& dataDir,
             const ImageArgs& a) {
  using namespace corral;
  auto fail = [](const Status& s) {
    std::cerr << "corrald image: " << s.message() << "\n";
    return s.code() == Code::kInvalidArgument ? 2 : 1;
  };
  auto progress = [](const std::string& line) { std::cerr << line << "\n"; };
  if (image.got_subcommand("list")) {
    auto all = catalog.list();
    if (!all.isOk()) return fail(all.status());
    std::cout << std::left << std::setw(32) << "NAME" << std::setw(8) << "SLURM" << std::setw(24)
              << "OS" << std::setw(8) << "BUILT" << "ID\n";
    for (const auto& i : *all)
      std::cout << std::left << std::setw(32) << i.ref.name << std::setw(8) << i.ref.slurmVersion
                << std::setw(24) << i.os << std::setw(8) << (i.built ? "yes" : "no")
                << i.ref.id.substr(0, 12) << "\n";
    return 0;
  }
  if (image.got_subcommand("build")) {
    std::string name = a.name;
    if (!a.file.empty()) {
      std::ifstream in(a.file);
      if (!in) return fail(notFound("cannot read " + a.file));
      std::stringstream text;
      text << in.rdbuf();
      auto added = catalog.addRecipe(text.str());
      if (!added.isOk()) return fail(added.status().withContext(a.file));
      name = added->ref.name;
    }
    if (name.empty()) return fail(invalidArgument("name an image, or give its recipe with -f FILE"));
    auto info = catalog.find(name);
    if (!info.isOk()) return fail(info.status());
    if (info->built) {
      std::cout << "image " << name << " (" << info->ref.id.substr(0, 12) << ") is built\n";
      return 0;
    }
    if (Status s = catalog.ensureBuilt(info->ref, progress); !s.isOk()) return fail(s);
    std::cout << "image " << name << " (" << info->ref.id.substr(0, 12) << ") is built\n";
    return 0;
  }
  if (image.got_subcommand("remove")) {
    if (a.withBuild) {
      // Never the build a cluster of this corrald runs.
      auto info = catalog.find(a.name);
      auto store = openSqliteStore(dataDir + "/corral.db");
      if (!store.isOk()) return fail(store.status());
      auto all = (*store)->listClusters();
      if (!all.isOk()) return fail(all.status());
      for (const auto& c : *all)
        if (info.isOk() && c.spec.image.id == info->ref.id)
          return fail(failedPrecondition("cluster " + c.spec.name + " runs image " + a.name +
                                         "; remove it without --build, or move the cluster first"));
    }
    if (Status s = catalog.removeRecipe(a.name, a.withBuild); !s.isOk()) return fail(s);
    std::cout << "image " << a.name << " removed"
              << (a.withBuild ? ", and its build" : "; clusters that run it keep its build") << "\n";
    return 0;
  }
  std::cerr << image.help();
  return 2;
}

// What `corrald` (serving) is told on its command line.
struct ServerArgs {
  std::string dataDir = "/var/lib/corral";
  std::string listen = "127.0.0.1:8470";
  std::string pool = "172.29.0.0/16";
  std::string podBinary;
  std::vector<std::string> platformPartitions;
  bool verbose = false;
  std::string defaultImage = corral::kDefaultClusterImage;
  std::string egress;
  std::vector<std::string> volumeRoots;
  std::string consoleDir;
  corral::LocalImageCatalogOptions images;
  // --runtime kubernetes: clusters through Slinky (docs/kubernetes.md).
  std::string runtime = "local";
  std::string kubeconfig;  // "" = in-cluster service account.
  std::string kubeContext;
  corral::KubernetesRuntimeOptions kube;
  // From listen, once checked.
  std::string host;
  int port = 0;
};

void addServerOptions(CLI::App& app, ServerArgs& a) {
  app.add_option("--data-dir", a.dataDir, "where corral keeps its database and clusters")
      ->capture_default_str();
  app.add_option("--listen", a.listen, "HOST:PORT of the REST API")->capture_default_str();
  app.add_option("--subnet-pool", a.pool, "IPv4 block that cluster subnets (/24 each) come from")
      ->capture_default_str();
  app.add_option("--pod-binary", a.podBinary, "path of corral-pod (default: beside corrald)");
  app.add_option("--platform-partition", a.platformPartitions,
                 "an extra platform partition every new cluster gets, over all nodes (e.g. llm); "
                 "repeatable");
  app.add_flag("-v,--verbose", a.verbose, "log debug messages");
  app.add_option("--image-cache", a.images.cacheDir,
                 "where cluster images are built and kept (shared by every corrald on the host)")
      ->capture_default_str();
  app.add_option("--debian-mirror", a.images.mirror, "the Debian archive images are built from")
      ->capture_default_str();
  app.add_option("--default-image", a.defaultImage, "the image of a cluster created without --image")
      ->capture_default_str();
  app.add_option("--login-egress", a.egress,
                 "a host interface through which login nodes (only) reach the outside, "
                 "masqueraded; default: no pod reaches anything beyond its cluster");
  app.add_option("--volume-source-root", a.volumeRoots,
                 "a host directory under which admins may back volumes with existing data "
                 "(volume create --source); repeatable; default: none");
  app.add_option("--console-dir", a.consoleDir,
                 "serve the web console from this directory instead of the built-in copy");
  app.add_option("--runtime", a.runtime,
                 "where clusters run: local (Linux-namespace pods on this host) or kubernetes "
                 "(through the Slinky operator; docs/kubernetes.md)")
      ->check(CLI::IsMember({"local", "kubernetes"}))
      ->capture_default_str();
  app.add_option("--kubeconfig", a.kubeconfig,
                 "kubernetes: the kubeconfig to use (default: the pod's service account)");
  app.add_option("--kube-context", a.kubeContext, "kubernetes: the kubeconfig's context to use");
  app.add_option("--namespace", a.kube.namespaceTemplate,
                 "kubernetes: the namespace of the clusters; {cluster} in it is replaced by a "
                 "cluster's name (one namespace per cluster; without it, one cluster at a time)")
      ->capture_default_str();
  app.add_option("--kube-image-prefix", a.kube.imagePrefix,
                 "kubernetes: where the cluster images are: <prefix>/<role>:<image> "
                 "(scripts/kube-images.sh pushes them)")
      ->capture_default_str();
  app.add_option("--kube-rwx-storage-class", a.kube.rwxStorageClass,
                 "kubernetes: storage class of /shared and volumes (ReadWriteMany); default: "
                 "the namespace's default");
  app.add_option("--kube-rwo-storage-class", a.kube.rwoStorageClass,
                 "kubernetes: storage class of slurmctld's state and the accounting database");
  app.add_option("--kube-gpu-resource", a.kube.gpuResource,
                 "kubernetes: the extended resource a GPU worker requests per GPU, e.g. "
                 "nvidia.com/gpu; default: none (GPUs simulated)");
  app.add_option("--kube-login-service-type", a.kube.loginServiceType,
                 "kubernetes: the login node's SSH Service type")
      ->check(CLI::IsMember({"ClusterIP", "NodePort", "LoadBalancer"}))
      ->capture_default_str();
}

CLI::App* addAdminCommands(CLI::App& app, AdminArgs& a) {
  auto* admin = app.add_subcommand("admin", "manage API users and tokens (in --data-dir's database)");
  admin->require_subcommand(1);
  // `corrald admin --data-dir D …` as well as `corrald --data-dir D admin …`.
  admin->fallthrough();
  auto* user = admin->add_subcommand("user", "API users")->require_subcommand(1)->fallthrough();
  auto* userAdd = user->add_subcommand("add", "add a user");
  userAdd->add_option("name", a.user, "user name")->required();
  userAdd->add_flag("--admin", a.admin, "sees and changes every project");
  userAdd->add_option("--project", a.projects, "a project the user belongs to; repeatable");
  user->add_subcommand("list", "list users");
  user->add_subcommand("remove", "remove a user and its tokens")
      ->add_option("name", a.user, "user name")
      ->required();
  auto* token = admin->add_subcommand("token", "API tokens")->require_subcommand(1)->fallthrough();
  auto* tokenCreate = token->add_subcommand("create", "make a token and print it (shown only once)");
  tokenCreate->add_option("user", a.user, "whose token")->required();
  tokenCreate->add_option("--description", a.description, "what the token is for");
  token->add_subcommand("list", "list tokens (never their values)");
  token->add_subcommand("revoke", "revoke a token")
      ->add_option("id", a.tokenId, "the token's id (see `token list`)")
      ->required();
  for (auto* group : {user, token})
    for (auto* leaf : group->get_subcommands({})) leaf->fallthrough();
  return admin;
}

CLI::App* addImageCommands(CLI::App& app, ImageArgs& a) {
  auto* image = app.add_subcommand("image", "cluster images: list, build, remove")->require_subcommand(1);
  image->fallthrough();
  image->add_subcommand("list", "the images there are, built or not")->fallthrough();
  auto* build = image->add_subcommand("build", "build an image (from a recipe of yours with -f)");
  build->fallthrough();
  build->add_option("name", a.name, "an image's name (corral's own, or one added before)");
  build->add_option("-f,--file", a.file, "a recipe (YAML, see docs/images.md) to add and build");
  auto* remove = image->add_subcommand("remove", "forget an image you added (its build stays)");
  remove->fallthrough();
  remove->add_option("name", a.name, "the image")->required();
  remove->add_flag("--build", a.withBuild,
                   "remove its build from the cache too (refused while a cluster of this "
                   "corrald runs it)");
  return image;
}

// Checks what needs no state; 0, or the exit status (2: bad usage).
int checkServerArgs(ServerArgs& a) {
  using namespace corral;
  for (const auto& p : a.platformPartitions) {
    ClusterSpec probe;
    probe.gpuNodes = 1;
    probe.partitions = {{p, "slinky-0", {}}};
    if (Status s = normalizeSlurmSettings(probe, {}); !s.isOk()) {
      LOG_ERROR("--platform-partition " << p << ": " << s.message());
      return 2;
    }
  }
  // Every pod has private /tmp and /var/tmp, so a cluster's files kept there
  // could not be mounted into its pods.
  for (const char* dir : {"/tmp", "/var/tmp"}) {
    std::error_code ec;
    auto abs = std::filesystem::weakly_canonical(std::filesystem::absolute(a.dataDir), ec).string();
    if (abs == dir || abs.rfind(std::string(dir) + "/", 0) == 0) {
      LOG_ERROR("--data-dir " << a.dataDir << " is under " << dir
                              << ", which every pod has a private copy of; use another (e.g. "
                                 "/var/lib/corral)");
      return 2;
    }
  }
  auto colon = a.listen.rfind(':');
  if (colon == std::string::npos) {
    LOG_ERROR("--listen must be HOST:PORT, not \"" << a.listen << "\"");
    return 2;
  }
  a.host = a.listen.substr(0, colon);
  a.port = std::atoi(a.listen.c_str() + colon + 1);
  auto cidr = parseCidr(a.pool);
  if (!cidr.isOk() || cidr->prefix > 24) {
    LOG_ERROR("--subnet-pool: " << (cidr.isOk() ? "must be /24 or larger" : cidr.status().message()));
    return 2;
  }
  if (Status s = checkPoolAgainstHostRoutes(*cidr); !s.isOk()) {
    LOG_ERROR(s.message());
    return 2;
  }
  if (!a.egress.empty() && !std::filesystem::exists("/sys/class/net/" + a.egress)) {
    LOG_ERROR("--login-egress " << a.egress << ": no such network interface");
    return 2;
  }
  if (a.runtime == "kubernetes") {
    // A namespace is a DNS label; cluster names are (validation.h), so the
    // template must be one with {cluster} in it replaced by any of them.
    std::string probe = clusterNamespace(a.kube.namespaceTemplate, "c");
    bool label = !probe.empty() && probe.size() <= 63 && probe.front() != '-' && probe.back() != '-' &&
                 probe.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos;
    if (!label) {
      LOG_ERROR("--namespace " << a.kube.namespaceTemplate
                               << ": not a namespace name (lower-case letters, digits and '-', "
                                  "optionally with {cluster})");
      return 2;
    }
  }
  if (a.podBinary.empty()) {
    std::error_code ec;
    a.podBinary = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "corral-pod";
  }
  return 0;
}

// Makes the data directory, private to root. 0 or the exit status.
int prepareDataDir(const std::string& dataDir) {
  std::error_code ec;
  std::filesystem::create_directories(dataDir, ec);
  if (ec) {
    LOG_ERROR("cannot create --data-dir " << dataDir << ": " << ec.message());
    return 1;
  }
  // Files in pods' volumes and shared storage keep the ids they have inside
  // (a setuid-root file a pod makes is root's here too): no one but root
  // may reach into the data directory.
  if (chmod(dataDir.c_str(), 0700) != 0) {
    LOG_ERROR("cannot make --data-dir " << dataDir << " private: " << std::strerror(errno));
    return 1;
  }
  return 0;
}

// Clusters made before cluster images existed ran the host's Slurm 22.05:
// they continue on the image that holds it, recorded as a revision of its
// own (applied: it is what runs), so that a later rollback restores it.
void recordLegacyImages(corral::Store& store, corral::ImageCatalog& catalog) {
  using namespace corral;
  auto all = store.listClusters();
  if (!all.isOk()) return;
  for (auto r : *all) {
    if (!r.spec.image.name.empty()) continue;
    auto legacy = catalog.find("debian12-slurm22.05");
    if (!legacy.isOk()) return;
    bool wasCurrent = r.appliedRevision == r.revision;
    r.spec.image = legacy->ref;
    r.revision += 1;
    if (wasCurrent) r.appliedRevision = r.revision;
    r.changeAuthor = "corral";
    r.changeMessage = "record image " + legacy->ref.name + " (what the cluster ran before images)";
    if (!store.updateCluster(r).isOk()) continue;
    if (wasCurrent) (void)store.setRevisionState(r.spec.name, r.revision, RevisionState::kApplied, "");
    LOG_INFO("cluster " << r.spec.name << " runs on image " << legacy->ref.name << " from now on");
  }
}

// The API's options; the volume source roots are checked here. 0 or the
// exit status.
int apiOptionsFor(const ServerArgs& a, corral::Store& store, corral::ImageCatalog& catalog,
                  corral::ApiOptions* out) {
  using namespace corral;
  ApiOptions& o = *out;
  o.platformPartitions = a.platformPartitions;
  o.dataDir = std::filesystem::canonical(a.dataDir).string();
  o.consoleDir = a.consoleDir;
  o.images = &catalog;
  o.defaultImage = a.defaultImage;
  for (const auto& root : a.volumeRoots) {
    if (Status s = checkVolumeSourceRoot(root, o.dataDir); !s.isOk()) {
      LOG_ERROR("--volume-source-root " << root << ": " << s.message());
      return 2;
    }
    o.volumeSourceRoots.push_back(std::filesystem::canonical(root).string());
  }
  // Volumes an admin made from host directories that are no longer allowed:
  // said now, refused at their next attach.
  if (auto vols = store.listVolumes(); vols.isOk())
    for (const auto& v : *vols)
      if (!v.managed && !underVolumeSourceRoot(v.hostPath, o.volumeSourceRoots))
        LOG_WARN("volume " << v.name << " is backed by " << v.hostPath
                           << ", which is not under any --volume-source-root; it will not be "
                              "attached again until an administrator allows it");
  return 0;
}

// The runtime clusters run on, as --runtime says; null (said in the log) if
// it cannot be made. `kubeClient` keeps the Kubernetes client it uses.
std::unique_ptr<corral::Runtime> makeRuntime(const ServerArgs& a, corral::LocalImageCatalog& catalog,
                                             std::unique_ptr<corral::kube::KubeClient>* kubeClient,
                                             corral::ReconcilerOptions* ro) {
  using namespace corral;
  if (a.runtime == "kubernetes") {
    auto config = a.kubeconfig.empty() ? kube::inClusterConfig()
                                       : kube::loadKubeConfig(a.kubeconfig, a.kubeContext);
    if (!config.isOk()) {
      LOG_ERROR("--runtime kubernetes: " << config.status().message());
      return nullptr;
    }
    LOG_INFO("kubernetes runtime: " << config->source << ", server " << config->server
                                    << ", namespace " << a.kube.namespaceTemplate);
    *kubeClient = std::make_unique<kube::KubeClient>(*config);
    return std::make_unique<KubernetesRuntime>(**kubeClient, realProcessRunner(), a.kube);
  }
  LocalRuntimeOptions runtimeOptions;
  runtimeOptions.dataDir = a.dataDir;
  runtimeOptions.podBinary = a.podBinary;
  runtimeOptions.subnetPool = a.pool;
  runtimeOptions.imageRootfs = [&catalog](const ImageRef& ref) { return catalog.rootfsOf(ref.id); };
  runtimeOptions.loginEgressInterface = a.egress;
  auto local = std::make_unique<LocalRuntime>(runtimeOptions);
  if (Status s = local->initialize(); !s.isOk()) {
    LOG_ERROR(s.message());
    return nullptr;
  }
  ro->images = &catalog;
  return local;
}

// Serves until SIGTERM or SIGINT; clusters keep running after.
int serve(ServerArgs& a, corral::LocalImageCatalog& catalog) {
  // Before any thread starts (the reconciler's workers, the metrics
  // sampler), so that every thread inherits the mask and SIGTERM reaches
  // only the sigwait below, never a worker whose default action would kill
  // corrald mid-write.
  sigset_t set = corral::blockStopSignals();
  using namespace corral;
  if (int rc = checkServerArgs(a); rc != 0) return rc;
  if (auto def = catalog.find(a.defaultImage); !def.isOk()) {
    LOG_ERROR("--default-image: " << def.status().message());
    return 2;
  }
  if (int rc = prepareDataDir(a.dataDir); rc != 0) return rc;
  // Pod launchers detach from corrald; as a subreaper corrald inherits them
  // when they exit, and reaps them so that no zombie is left behind.
  prctl(PR_SET_CHILD_SUBREAPER, 1);

  auto store = openSqliteStore(a.dataDir + "/corral.db");
  if (!store.isOk()) {
    LOG_ERROR(store.status().message());
    return 1;
  }
  recordLegacyImages(**store, catalog);
  std::unique_ptr<kube::KubeClient> kubeClient;
  ReconcilerOptions ro;
  std::unique_ptr<Runtime> runtime = makeRuntime(a, catalog, &kubeClient, &ro);
  if (!runtime) return 1;
  Reconciler reconciler(**store, *runtime, realClock(), ro);
  if (ClusterRuntime* whole = runtime->wholeClusters())
    whole->onChange([&reconciler](const std::string& cluster) { reconciler.enqueue(cluster); });
  if (Status s = reconciler.collectOrphans(); !s.isOk()) LOG_WARN("orphan cleanup: " << s.message());

  ApiOptions apiOptions;
  if (int rc = apiOptionsFor(a, **store, catalog, &apiOptions); rc != 0) return rc;
  ApiServer api(**store, reconciler, realClock(), apiOptions);
  if (Status s = api.bind(a.host, a.port); !s.isOk()) {
    LOG_ERROR(s.message());
    return 1;
  }
  // Re-adopt every cluster: the first pass over each finds its pods running
  // and changes nothing, or finishes what a previous corrald left half done.
  if (auto all = (*store)->listClusters(); all.isOk())
    for (const auto& r : *all) reconciler.enqueue(r.spec.name);
  reconciler.start();

  std::thread server([&] { api.serve(); });
  std::thread reaper([&] {
    // With the kubernetes runtime, what it costs the API server, once a
    // minute (docs/kubernetes.md: a steady cluster costs none per pass).
    uint64_t lastRequests = 0;
    for (int tick = 1; !gStop; ++tick) {
      reapOrphanedChildren();
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (kubeClient && tick % 120 == 0) {
        uint64_t n = kubeClient->requestCount();
        LOG_INFO("kubernetes API: " << n << " requests so far, " << (n - lastRequests)
                                    << " in the last minute");
        lastRequests = n;
      }
    }
  });
  LOG_INFO("corrald listening on http://" << a.host << ":" << api.port() << " (data in "
                                          << a.dataDir << ")");
  int sig = 0;
  sigwait(&set, &sig);
  LOG_INFO("stopping on signal " << sig << "; clusters keep running");
  if (kubeClient) LOG_INFO("kubernetes API: " << kubeClient->requestCount() << " requests in all");
  gStop = true;
  api.stop();
  server.join();
  reconciler.stop();
  reaper.join();
  if (ClusterRuntime* whole = runtime->wholeClusters()) whole->onChange(nullptr);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace corral;
  CLI::App app{"corrald: the corral control plane (REST API, store, reconciler)"};
  ServerArgs serverArgs;
  serverArgs.images.builtInRecipes = builtInRecipes();
  addServerOptions(app, serverArgs);
  AdminArgs adminArgs;
  auto* admin = addAdminCommands(app, adminArgs);
  ImageArgs imageArgs;
  auto* image = addImageCommands(app, imageArgs);
  CLI11_PARSE(app, argc, argv);
  if (admin->parsed()) return runAdmin(*admin, serverArgs.dataDir, adminArgs);
  LocalImageCatalog catalog(serverArgs.images);
  if (image->parsed()) return runImage(*image, catalog, serverArgs.dataDir, imageArgs);
  if (serverArgs.verbose) setLogLevel(LogLevel::kDebug);
  if (geteuid() != 0 && serverArgs.runtime == "local") {
    LOG_ERROR("corrald must run as root: it creates namespaces, bridges and mounts "
              "(--runtime kubernetes need not)");
    return 1;
  }
  return serve(serverArgs, catalog);
}
