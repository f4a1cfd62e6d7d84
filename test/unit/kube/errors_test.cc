#include "kube/errors.h"

#include <gtest/gtest.h>

namespace corral::kube {
namespace {

std::string statusBody(long code, const std::string& reason, const std::string& message) {
  nlohmann::json status = {{"kind", "Status"},   {"apiVersion", "v1"}, {"status", "Failure"},
                           {"message", message}, {"reason", reason},   {"code", code}};
  return status.dump();
}

TEST(KubeErrorsTest, MapsHttpStatusesToTheNearestCode) {
  std::pair<long, Code> cases[] = {
      {400, Code::kInvalidArgument},    {401, Code::kUnauthenticated},
      {403, Code::kPermissionDenied},   {404, Code::kNotFound},
      {409, Code::kConflict},           {410, Code::kFailedPrecondition},
      {422, Code::kInvalidArgument},    {429, Code::kUnavailable},
      {500, Code::kUnavailable},        {503, Code::kUnavailable},
      {504, Code::kUnavailable},        {405, Code::kInternal},
      {302, Code::kInternal},
  };
  for (const auto& [http, code] : cases) EXPECT_EQ(codeForHttpStatus(http), code) << http;
}

TEST(KubeErrorsTest, CarriesTheServersOwnMessageAndReason) {
  Status st = apiError("PATCH", "/apis/slinky.slurm.net/v1beta1/namespaces/ns/nodesets/slinky",
                       422,
                       statusBody(422, "Invalid",
                                  "NodeSet.slinky.slurm.net \"slinky\" is invalid: "
                                  "spec.controllerRef: Required value"));
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "Kubernetes API: PATCH /apis/slinky.slurm.net/v1beta1/namespaces/ns/nodesets/slinky: "
            "NodeSet.slinky.slurm.net \"slinky\" is invalid: spec.controllerRef: Required value "
            "(HTTP 422 Invalid)");

  Status denied = apiError("GET", "/api/v1/namespaces/ns/secrets", 403,
                           statusBody(403, "Forbidden",
                                      "secrets is forbidden: User \"corral\" cannot list resource "
                                      "\"secrets\" in API group \"\" in the namespace \"ns\""));
  EXPECT_EQ(denied.code(), Code::kPermissionDenied);
  EXPECT_EQ(denied.message(),
            "Kubernetes API: GET /api/v1/namespaces/ns/secrets: secrets is forbidden: User "
            "\"corral\" cannot list resource \"secrets\" in API group \"\" in the namespace \"ns\" "
            "(HTTP 403 Forbidden)");

  Status exists = apiError("POST", "/api/v1/namespaces", 409,
                           statusBody(409, "AlreadyExists", "namespaces \"ns\" already exists"));
  EXPECT_EQ(exists.code(), Code::kConflict);
  EXPECT_EQ(exists.message(), "Kubernetes API: POST /api/v1/namespaces: namespaces \"ns\" already "
                              "exists (HTTP 409 AlreadyExists)");
}

TEST(KubeErrorsTest, SaysWhichCredentialsWereRefusedOn401) {
  Status st = apiError("GET", "/api", 401, statusBody(401, "Unauthorized", "Unauthorized"));
  EXPECT_EQ(st.code(), Code::kUnauthenticated);
  EXPECT_EQ(st.message(),
            "Kubernetes API: GET /api: Unauthorized (HTTP 401 Unauthorized); the API server did "
            "not accept corral's client certificate or token");
}

TEST(KubeErrorsTest, ABodyThatIsNotAStatusIsQuotedByItsFirstLine) {
  Status st = apiError("GET", "/healthz", 503, "etcd not ready\nmore detail\n");
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_EQ(st.message(), "Kubernetes API: GET /healthz: \"etcd not ready\" (HTTP 503)");
  Status empty = apiError("DELETE", "/x", 500, "");
  EXPECT_EQ(empty.message(), "Kubernetes API: DELETE /x: no message (HTTP 500)");
}

TEST(KubeErrorsTest, StatusObjectsFromAWatchMapTheSameWay) {
  Status st = statusFromApiStatus(
      nlohmann::json::parse(statusBody(500, "InternalError", "etcd is unhappy")),
      "watch /api/v1/pods");
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_EQ(st.message(),
            "Kubernetes API: watch /api/v1/pods: etcd is unhappy (HTTP 500 InternalError)");
  EXPECT_EQ(statusFromApiStatus(nlohmann::json("junk"), "watch /x").message(),
            "Kubernetes API: watch /x: no message (HTTP 500)");
}

}  // namespace
}  // namespace corral::kube
