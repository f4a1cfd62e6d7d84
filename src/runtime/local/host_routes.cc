#include "runtime/local/host_routes.h"

#include <arpa/inet.h>

#include <fstream>
#include <sstream>

namespace corral {

Status checkPoolAgainstHostRoutes(const Cidr& pool) {
  std::ifstream in("/proc/net/route");
  std::string line;
  std::getline(in, line);  // Header.
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string iface, dest, gw, flags, refcnt, use, metric, mask;
    if (!(f >> iface >> dest >> gw >> flags >> refcnt >> use >> metric >> mask)) continue;
    // corral's own bridges inside the pool are clusters of a previous run of
    // this corrald, which it re-adopts.
    bool ours = iface.rfind("crl-", 0) == 0;
    uint32_t d = ntohl(static_cast<uint32_t>(std::stoul(dest, nullptr, 16)));
    uint32_t m = ntohl(static_cast<uint32_t>(std::stoul(mask, nullptr, 16)));
    if (m == 0) continue;  // The default route overlaps everything by design.
    int prefix = __builtin_popcount(m);
    Cidr route{d & m, prefix};
    if (ours && pool.contains(route.base) && route.prefix >= pool.prefix) continue;
    if (route.overlaps(pool))
      return invalidArgument("the pod subnet pool " + pool.toString() + " overlaps the host route " +
                             route.toString() + " on " + iface +
                             "; pick another pool with --subnet-pool");
  }
  return Status::ok();
}

}  // namespace corral
