#pragma once

// A cluster record as the reconciler makes one, for tests of pure functions
// over records: cluster "demo" on debian13-slurm24.11 in 172.29.0.0/24, with
// its nodes planned by `planNodes`.

#include <gtest/gtest.h>

#include <string>

#include "corral/spec.h"
#include "slurm/renderer.h"

namespace corral::testing_support {

inline ClusterRecord plannedRecord(int gpuNodes, int cpuNodes) {
  ClusterRecord r;
  r.spec.name = "demo";
  r.spec.gpuNodes = gpuNodes;
  r.spec.cpuNodes = cpuNodes;
  r.spec.image = {"debian13-slurm24.11", std::string(64, 'a'), "24.11"};
  r.subnet = "172.29.0.0/24";
  auto nodes = planNodes(r.spec, r.subnet, {});
  EXPECT_TRUE(nodes.isOk()) << nodes.status().toString();
  if (nodes.isOk()) r.nodes = *nodes;
  return r;
}

}  // namespace corral::testing_support
