#pragma once

// `Status` and `StatusOr<T>`: how corral reports failure across module
// boundaries. No exceptions cross a module boundary; every fallible function
// returns one of these. The codes map onto HTTP statuses (see `httpStatus`).

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace corral {

enum class Code {
  kOk = 0,
  kInvalidArgument,     // 400: the caller's input is wrong.
  kNotFound,            // 404: no such thing (or the caller may not see it).
  kConflict,            // 409: it already exists, or a revision moved on.
  kFailedPrecondition,  // 409: the thing is not in a state that allows this.
  kUnauthenticated,     // 401
  kPermissionDenied,    // 403: the caller may not do this (an admin may).
  kUnavailable,         // 503: try again later.
  kInternal,            // 500: a bug or an environment failure.
};

const char* codeName(Code code);
int httpStatus(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }

  bool isOk() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: message", for logs.
  std::string toString() const;

  // Returns a copy whose message is "context: message".
  Status withContext(const std::string& context) const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status invalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
inline Status notFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
inline Status conflict(std::string m) { return {Code::kConflict, std::move(m)}; }
inline Status failedPrecondition(std::string m) {
  return {Code::kFailedPrecondition, std::move(m)};
}
inline Status unauthenticated(std::string m) { return {Code::kUnauthenticated, std::move(m)}; }
inline Status permissionDenied(std::string m) { return {Code::kPermissionDenied, std::move(m)}; }
inline Status unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
inline Status internalError(std::string m) { return {Code::kInternal, std::move(m)}; }

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose.
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.isOk()) status_ = internalError("StatusOr built from an OK status");
  }

  bool isOk() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace corral

#define CORRAL_CONCAT_INNER(a, b) a##b
#define CORRAL_CONCAT(a, b) CORRAL_CONCAT_INNER(a, b)

// Returns early from the enclosing function when `expr` is not OK.
#define RETURN_IF_ERROR(expr)                       \
  do {                                              \
    ::corral::Status _st = (expr);                  \
    if (!_st.isOk()) return _st;                    \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.isOk()) return tmp.status();       \
  lhs = std::move(tmp).value()

// `ASSIGN_OR_RETURN(auto x, f());` declares `x` from an OK `StatusOr` or
// returns its status.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(CORRAL_CONCAT(_statusor_, __LINE__), lhs, expr)
