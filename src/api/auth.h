#pragma once

// Who may do what (docs/api.md): API tokens, the accounts they belong to,
// and which projects an account may see. Pure functions over `Store`, shared
// by corrald's request handling and `corrald admin`.

#include <string>
#include <vector>

#include "corral/clock.h"
#include "corral/spec.h"
#include "corral/status.h"
#include "corral/store.h"

namespace corral {

// The account a request acts for.
struct Caller {
  std::string user;
  bool admin = false;
  std::vector<std::string> projects;

  // Whether the caller may see and change things of `project`.
  bool sees(const std::string& project) const;
  // The project a new cluster or volume gets when the request names none:
  // the caller's first, or the default one for an admin without any.
  // NotFound for a non-admin without projects.
  StatusOr<std::string> defaultProject() const;
};

// Lowercase hex SHA-256 of a token: all the store keeps of it.
std::string hashToken(const std::string& token);

// Makes a new token for `user` (which must exist) and returns it in the
// clear; the store keeps only its hash. The token is "corral_" and 43
// characters of URL-safe base64 (256 random bits).
StatusOr<std::string> issueToken(Store& store, Clock& clock, const std::string& user,
                                 const std::string& description);

// The caller behind an `Authorization` header ("Bearer <token>").
// Unauthenticated for a missing header, another scheme, a malformed, unknown
// or revoked token, or a token whose account is gone; the message never
// quotes the token.
StatusOr<Caller> authenticate(Store& store, const std::string& authorization);

// Account and project names: 1–40 lowercase letters, digits, '-', '_' or
// '.', starting with a letter or digit. "corral" is no account's name: it
// is the author of the reconciler's rollbacks. Revisions a request makes
// carry its account's name as their author.
Status validateAccountName(const std::string& name);
Status validateProjectName(const std::string& name);

}  // namespace corral
