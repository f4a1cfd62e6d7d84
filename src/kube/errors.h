#pragma once

// The API server's refusals as corral Statuses, with the server's own
// message (from the `Status` object it answers errors with).

#include <string>

#include <nlohmann/json.hpp>

#include "corral/status.h"

namespace corral::kube {

// The nearest corral code for an HTTP status from the API server: 400 and
// 422 InvalidArgument, 401 Unauthenticated, 403 PermissionDenied, 404
// NotFound, 409 Conflict (a write raced another, or the object already
// exists), 410 FailedPrecondition (a version expired), 429 and 5xx
// Unavailable, anything else Internal.
Code codeForHttpStatus(long httpStatus);

// The Status for an unsuccessful response to `method path`:
// "Kubernetes API: PATCH /apis/…: <the server's message> (HTTP 422 Invalid)",
// the body's first line when it is not a `Status` object.
Status apiError(const std::string& method, const std::string& path, long httpStatus,
                const std::string& body);

// The same for a `Status` object met elsewhere (a watch's ERROR event).
Status statusFromApiStatus(const nlohmann::json& status, const std::string& what);

}  // namespace corral::kube
