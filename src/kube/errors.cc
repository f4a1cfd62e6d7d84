#include "kube/errors.h"

#include "common/text.h"

namespace corral::kube {
namespace {

std::string stringMember(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string describe(Code code, long httpStatus, const std::string& message,
                     const std::string& reason, const std::string& what) {
  std::string out = "Kubernetes API: " + what + ": " +
                    (message.empty() ? std::string("no message") : message) + " (HTTP " +
                    std::to_string(httpStatus) + (reason.empty() ? "" : " " + reason) + ")";
  if (code == Code::kUnauthenticated)
    out += "; the API server did not accept corral's client certificate or token";
  return out;
}

}  // namespace

Code codeForHttpStatus(long httpStatus) {
  switch (httpStatus) {
    case 400:
    case 422: return Code::kInvalidArgument;
    case 401: return Code::kUnauthenticated;
    case 403: return Code::kPermissionDenied;
    case 404: return Code::kNotFound;
    case 409: return Code::kConflict;
    case 410: return Code::kFailedPrecondition;
    case 429: return Code::kUnavailable;
    default: break;
  }
  return httpStatus >= 500 && httpStatus < 600 ? Code::kUnavailable : Code::kInternal;
}

Status apiError(const std::string& method, const std::string& path, long httpStatus,
                const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  Code code = codeForHttpStatus(httpStatus);
  std::string what = method + " " + path;
  if (j.is_object() && stringMember(j, "kind") == "Status") {
    return Status(code, describe(code, httpStatus, stringMember(j, "message"),
                                 stringMember(j, "reason"), what));
  }
  std::string firstLine = body.substr(0, body.find('\n'));
  std::string message = firstLine.empty() ? "" : quoteForMessage(firstLine, 200);
  return Status(code, describe(code, httpStatus, message, "", what));
}

Status statusFromApiStatus(const nlohmann::json& status, const std::string& what) {
  long httpStatus = 500;
  std::string message, reason;
  if (status.is_object()) {
    auto c = status.find("code");
    if (c != status.end() && c->is_number_integer()) httpStatus = c->get<long>();
    message = stringMember(status, "message");
    reason = stringMember(status, "reason");
  }
  Code code = codeForHttpStatus(httpStatus);
  return Status(code, describe(code, httpStatus, message, reason, what));
}

}  // namespace corral::kube
