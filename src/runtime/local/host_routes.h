#pragma once

#include "common/ipv4.h"
#include "corral/status.h"

namespace corral {

// Refuses a pod subnet pool that overlaps a route this host already has
// (other than corral's own bridges), so clusters never shadow the host's
// networks. Reads /proc/net/route.
Status checkPoolAgainstHostRoutes(const Cidr& pool);

}  // namespace corral
