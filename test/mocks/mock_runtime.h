#pragma once

// `MockRuntime`: a gMock `Runtime`, for tests that check which runtime calls
// code makes and how often. Tests that need a runtime which behaves should use
// `FakeRuntime` (test/fakes) instead, or delegate to one with
// `ON_CALL(...).WillByDefault(...)`.

#include <gmock/gmock.h>

#include <string>
#include <vector>

#include "corral/runtime.h"

namespace corral {

class MockRuntime : public Runtime {
 public:
  MOCK_METHOD(StatusOr<std::string>, allocateNetwork, (const std::string& cluster), (override));
  MOCK_METHOD(Status, prepareCluster, (const ClusterNetwork& net), (override));
  MOCK_METHOD(StatusOr<std::string>, createVolume, (const std::string& name), (override));
  MOCK_METHOD(Status, deleteVolume, (const std::string& name), (override));
  MOCK_METHOD(Status, writeFiles, (const std::string& cluster, const RenderedFiles& files),
              (override));
  MOCK_METHOD(StatusOr<std::string>, readFile,
              (const std::string& cluster, const std::string& path), (override));
  MOCK_METHOD(Status, startPod, (const PodSpec& spec), (override));
  MOCK_METHOD(StatusOr<PodStatus>, podStatus, (const std::string& cluster, const std::string& pod),
              (override));
  MOCK_METHOD(StatusOr<std::vector<std::string>>, listPods, (const std::string& cluster),
              (override));
  MOCK_METHOD(Status, stopPod, (const std::string& cluster, const std::string& pod), (override));
  MOCK_METHOD(StatusOr<ProcessResult>, exec,
              (const std::string& cluster, const std::string& pod,
               const std::vector<std::string>& argv, const ProcessOptions& options),
              (override));
  MOCK_METHOD(Status, updateMounts, (const PodSpec& desired), (override));
  MOCK_METHOD(Status, appendKernelLog,
              (const std::string& cluster, const std::string& pod, const std::string& line),
              (override));
  MOCK_METHOD(StatusOr<std::string>, healthReport, (const std::string& cluster, const std::string& pod),
              (override));
  MOCK_METHOD(StatusOr<std::string>, podLogTail,
              (const std::string& cluster, const std::string& pod, const std::string& path,
               size_t maxBytes),
              (override));
  MOCK_METHOD(Status, prepareSharedDirectory,
              (const std::string& cluster, const std::string& path, int uid, int gid, int mode),
              (override));
  MOCK_METHOD(StatusOr<std::string>, loginHostKey, (const std::string& cluster), (override));
  MOCK_METHOD(Status, restartDaemon,
              (const std::string& cluster, const std::string& pod, const std::string& daemon,
               std::chrono::milliseconds timeout),
              (override));
  MOCK_METHOD(Status, stopCluster, (const ClusterNetwork& net), (override));
  MOCK_METHOD(Status, destroyCluster, (const ClusterNetwork& net), (override));
  MOCK_METHOD(StatusOr<std::vector<std::string>>, listClusters, (), (override));
};

}  // namespace corral
