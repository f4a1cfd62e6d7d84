#include "runtime/local/firewall.h"

#include <sstream>

namespace corral {

std::string firewallTable(const std::string& key) { return "corral-" + key; }

std::string renderFirewallRemoval(const std::string& key) {
  // Creating the table first makes the delete succeed when it is absent.
  std::string t = "inet " + firewallTable(key);
  return "table " + t + "\ndelete table " + t + "\n";
}

std::string renderFirewall(const ClusterFirewall& fw) {
  const std::string br = "\"" + fw.bridge + "\"";
  const bool egress = !fw.egressInterface.empty() && !fw.loginAddress.empty();
  const std::string out = "\"" + fw.egressInterface + "\"";
  std::ostringstream o;
  o << renderFirewallRemoval(fw.key) << "table inet " << firewallTable(fw.key) << " {\n"
    << "  # Nothing on this host answers the pods, whatever it listens on;\n"
    << "  # what the host itself opened (ssh to the login node) gets its replies.\n"
    << "  chain input {\n"
    << "    type filter hook input priority filter - 10; policy accept;\n"
    << "    iifname " << br << " ct state established,related accept\n"
    << "    iifname " << br << " drop\n"
    << "  }\n"
    << "  # The cluster's own traffic is bridged (seen here only with\n"
    << "  # br_netfilter) and allowed; nothing is routed to or from other networks.\n"
    << "  chain forward {\n"
    << "    type filter hook forward priority filter - 10; policy accept;\n"
    << "    iifname " << br << " oifname " << br << " accept\n";
  if (egress) {
    o << "    iifname " << br << " ip saddr " << fw.loginAddress << " oifname " << out << " accept\n"
      << "    iifname " << out << " oifname " << br << " ip daddr " << fw.loginAddress
      << " ct state established,related accept\n";
  }
  o << "    iifname " << br << " drop\n"
    << "    oifname " << br << " drop\n"
    << "  }\n";
  if (egress) {
    o << "  # The login node's egress, masqueraded behind " << fw.egressInterface << ".\n"
      << "  chain postrouting {\n"
      << "    type nat hook postrouting priority srcnat; policy accept;\n"
      << "    ip saddr " << fw.loginAddress << " oifname " << out << " masquerade\n"
      << "  }\n";
  }
  o << "}\n";
  return o.str();
}

}  // namespace corral
