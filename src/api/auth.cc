#include "api/auth.h"

#include "common/sha256.h"

#include <openssl/evp.h>
#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/text.h"

namespace corral {

namespace {

constexpr const char* kTokenPrefix = "corral_";
constexpr size_t kTokenBytes = 32;
constexpr size_t kMaxTokenLength = 256;

std::string base64Url(const unsigned char* data, size_t n) {
  static const char* kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (size_t i = 0; i < n; ++i) {
    buffer = (buffer << 8) | data[i];
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(buffer >> bits) & 0x3f]);
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(buffer << (6 - bits)) & 0x3f]);
  return out;
}

Status validateName(const std::string& what, const std::string& name) {
  auto ok = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  bool valid = !name.empty() && name.size() <= 40 && ok(name[0]) &&
               std::all_of(name.begin(), name.end(),
                           [&](char c) { return ok(c) || c == '-' || c == '_' || c == '.'; });
  if (!valid)
    return invalidArgument("invalid " + what + " name " + quoteForMessage(name) +
                           ": use 1-40 lowercase letters, digits, '-', '_' or '.', starting with a "
                           "letter or digit");
  return Status::ok();
}

}  // namespace

bool Caller::sees(const std::string& project) const {
  return admin || std::find(projects.begin(), projects.end(), project) != projects.end();
}

StatusOr<std::string> Caller::defaultProject() const {
  if (!projects.empty()) return projects.front();
  if (admin) return std::string(kDefaultProject);
  return notFound("account " + quoteForMessage(user) +
                  " belongs to no project; ask an admin to add it to one");
}

std::string hashToken(const std::string& token) { return sha256Hex(token); }

StatusOr<std::string> issueToken(Store& store, Clock& clock, const std::string& user,
                                 const std::string& description) {
  unsigned char random[kTokenBytes];
  size_t got = 0;
  while (got < sizeof random) {
    ssize_t n = getrandom(random + got, sizeof random - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return internalError(std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  std::string token = kTokenPrefix + base64Url(random, sizeof random);
  ApiToken t;
  t.user = user;
  t.hash = hashToken(token);
  t.description = description;
  t.createdAt = clock.unixMillis() / 1000;
  RETURN_IF_ERROR(store.createToken(t).status());
  return token;
}

StatusOr<Caller> authenticate(Store& store, const std::string& authorization) {
  const std::string scheme = "Bearer ";
  if (authorization.empty())
    return unauthenticated(
        "this request needs an API token: send \"Authorization: Bearer <token>\" (the CLI reads "
        "CORRAL_TOKEN or ~/.config/corral/config.json; an admin makes tokens with "
        "`corrald admin token create`)");
  if (authorization.size() > kMaxTokenLength + scheme.size() ||
      authorization.compare(0, scheme.size(), scheme) != 0)
    return unauthenticated("the Authorization header must be \"Bearer <token>\"");
  std::string token = authorization.substr(scheme.size());
  auto found = store.findToken(hashToken(token));
  if (!found.isOk()) {
    if (found.status().code() == Code::kNotFound)
      return unauthenticated("the API token is not valid (unknown or revoked)");
    return found.status();
  }
  auto account = store.getAccount(found->user);
  if (!account.isOk()) {
    if (account.status().code() == Code::kNotFound)
      return unauthenticated("the API token's account no longer exists");
    return account.status();
  }
  return Caller{account->name, account->admin, account->projects};
}

Status validateAccountName(const std::string& name) {
  // "corral" signs the reconciler's own revisions (rollbacks).
  if (name == "corral")
    return invalidArgument("\"corral\" is reserved for corral's own changes; choose another name");
  return validateName("account", name);
}
Status validateProjectName(const std::string& name) { return validateName("project", name); }

}  // namespace corral
