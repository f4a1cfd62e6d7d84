#include "kube/paths.h"

#include <gtest/gtest.h>

namespace corral::kube {
namespace {

TEST(KubePathsTest, CoreResourcesLiveUnderApiV1) {
  EXPECT_EQ(collectionPath(resources::kSecrets, "ns"), "/api/v1/namespaces/ns/secrets");
  EXPECT_EQ(objectPath(resources::kSecrets, "ns", "munge"), "/api/v1/namespaces/ns/secrets/munge");
  EXPECT_EQ(objectPath(resources::kPods, "ns", "slinky-0", "status"),
            "/api/v1/namespaces/ns/pods/slinky-0/status");
}

TEST(KubePathsTest, GroupResourcesLiveUnderApisGroupVersion) {
  EXPECT_EQ(objectPath(resources::kNodeSets, "ns", "slinky"),
            "/apis/slinky.slurm.net/v1beta1/namespaces/ns/nodesets/slinky");
  EXPECT_EQ(objectPath(resources::kNodeSets, "ns", "slinky", "scale"),
            "/apis/slinky.slurm.net/v1beta1/namespaces/ns/nodesets/slinky/scale");
  EXPECT_EQ(collectionPath(resources::kStatefulSets, "ns"),
            "/apis/apps/v1/namespaces/ns/statefulsets");
}

TEST(KubePathsTest, AnEmptyNamespaceOrAClusterScopedTypeHasNoNamespaceSegment) {
  EXPECT_EQ(collectionPath(resources::kPods, ""), "/api/v1/pods");
  EXPECT_EQ(collectionPath(resources::kNamespaces, "ignored"), "/api/v1/namespaces");
  EXPECT_EQ(objectPath(resources::kNamespaces, "", "corral"), "/api/v1/namespaces/corral");
  ResourceType crd{"apiextensions.k8s.io", "v1", "customresourcedefinitions", false};
  EXPECT_EQ(objectPath(crd, "", "nodesets.slinky.slurm.net"),
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/nodesets.slinky.slurm.net");
}

TEST(KubePathsTest, SegmentsAreEncodedSoANameCannotReachAnotherPath) {
  EXPECT_EQ(objectPath(resources::kSecrets, "a/b", "../x?y"),
            "/api/v1/namespaces/a%2Fb/secrets/..%2Fx%3Fy");
}

TEST(KubePathsTest, WithQueryEncodesValuesAndSkipsEmptyOnes) {
  EXPECT_EQ(withQuery("/api/v1/pods", {{"labelSelector", "app=x,tier!=y"}, {"limit", "500"}}),
            "/api/v1/pods?labelSelector=app%3Dx%2Ctier%21%3Dy&limit=500");
  EXPECT_EQ(withQuery("/api/v1/pods?watch=1", {{"continue", ""}, {"resourceVersion", "42"}}),
            "/api/v1/pods?watch=1&resourceVersion=42");
  EXPECT_EQ(withQuery("/api/v1/pods", {{"continue", ""}}), "/api/v1/pods");
}

}  // namespace
}  // namespace corral::kube
