#pragma once

// The host's side of a cluster network's isolation (nftables, one table per
// cluster network, replaced atomically). Pods reach their own cluster
// (bridged traffic is never filtered) and nothing else: no service of the
// host, whatever address it listens on, and no other cluster. The host still
// reaches the pods (ssh, the cluster registry), since replies to what the
// host opened are let back in. Optionally the login pod, and only it, gets
// egress through one interface the operator names, masqueraded: the seed's
// "the only place with both your storage and outbound network".

#include <string>

namespace corral {

struct ClusterFirewall {
  std::string key;     // The network's key (see LocalRuntime): names the table.
  std::string bridge;  // crl-<key>
  // Egress for `loginAddress` through this host interface; empty: none.
  std::string egressInterface;
  std::string loginAddress;
};

// The nftables table's name for a network key.
std::string firewallTable(const std::string& key);

// An `nft -f` script that creates or replaces the network's table.
std::string renderFirewall(const ClusterFirewall& fw);

// An `nft -f` script that removes it (nothing if it is not there).
std::string renderFirewallRemoval(const std::string& key);

}  // namespace corral
