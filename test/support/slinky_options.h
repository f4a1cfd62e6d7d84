#pragma once

// Stand-in Slinky options for checks and benchmarks against the test
// environment's API server (test/k8s): images that are never pulled (there
// is no kubelet) and throwaway key material of the right shapes.

#include <string>

#include "kube/slinky.h"

namespace corral::kube {

inline SlinkyOptions standInSlinkyOptions(const std::string& ns) {
  SlinkyOptions o;
  o.ns = ns;
  const std::string img = "registry.corral.test/corral";
  o.images = {img + "/slurmctld:26.05", img + "/slurmd:26.05", img + "/login:26.05",
              img + "/slurmdbd:26.05", img + "/mariadb:11", img + "/logfile:1",
              img + "/initconf:1"};
  o.slurmKey = std::string(1024, '\x5a');
  o.jwtKey = std::string(32, '\x17');
  o.sshHostKeys = {"ed25519-private", "ssh-ed25519 AAAA host", "rsa-private",
                   "ssh-rsa AAAA host",  "ecdsa-private",       "ecdsa-sha2-nistp256 AAAA host"};
  o.mariadbPassword = "secret";
  return o;
}

}  // namespace corral::kube
