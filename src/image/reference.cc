// Image references: Enroot's `docker://[USER@][REGISTRY#]IMAGE[:TAG]` and
// Docker's `[REGISTRY/]IMAGE[:TAG][@DIGEST]`, validated against the
// distribution project's reference grammar.

#include <cctype>
#include <cstdio>

#include "image/image.h"
#include "image/sha256.h"

namespace corral::image {
namespace {

constexpr const char* kDockerHub = "registry-1.docker.io";
constexpr size_t kMaxNameLength = 255;

bool isLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// The reference as the user wrote it, in quotes, with anything a terminal
// would not show faithfully escaped.
std::string shown(const std::string& text) {
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < 200; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > 200) out += "...";
  return out + "'";
}

Status malformed(const std::string& text, const std::string& why) {
  return invalidArgument("malformed image reference " + shown(text) + ": " + why);
}

// One path component: `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`. Returns why not,
// or "" when valid.
std::string checkComponent(const std::string& c) {
  if (c.empty()) return "empty path component in the repository name";
  for (char ch : c) {
    if (ch >= 'A' && ch <= 'Z') return "repository names must be lowercase ('" + c + "')";
  }
  if (!isLowerAlnum(c.front()) || !isLowerAlnum(c.back())) {
    return "repository path component '" + c + "' must start and end with a letter or digit";
  }
  size_t i = 0;
  while (i < c.size()) {
    if (isLowerAlnum(c[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < c.size() && !isLowerAlnum(c[j])) ++j;
    std::string sep = c.substr(i, j - i);
    bool dashes = sep.find_first_not_of('-') == std::string::npos;
    if (!(sep == "." || sep == "_" || sep == "__" || dashes)) {
      for (char ch : sep) {
        if (ch != '.' && ch != '_' && ch != '-') {
          return std::string("invalid character '") + ch + "' in repository name";
        }
      }
      return "invalid separator '" + sep + "' in repository path component '" + c + "'";
    }
    i = j;
  }
  return "";
}

std::string checkRepository(const std::string& repo) {
  if (repo.empty()) return "no image name";
  if (repo.size() > kMaxNameLength) return "repository name longer than 255 characters";
  size_t start = 0;
  while (true) {
    size_t slash = repo.find('/', start);
    std::string why = checkComponent(repo.substr(start, slash - start));
    if (!why.empty()) return why;
    if (slash == std::string::npos) return "";
    start = slash + 1;
  }
}

std::string checkTag(const std::string& tag) {
  if (tag.empty()) return "empty tag after ':'";
  if (tag.size() > 128) return "tag longer than 128 characters";
  for (size_t i = 0; i < tag.size(); ++i) {
    char c = tag[i];
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
              (i > 0 && (c == '.' || c == '-'));
    if (!ok) return "invalid tag '" + tag + "' (tags are letters, digits, '_', '.' and '-')";
  }
  return "";
}

// host[:port], where host is a DNS name, an IPv4 address or a bracketed IPv6
// address.
std::string checkRegistry(const std::string& reg) {
  if (reg.empty()) return "empty registry name";
  std::string host = reg;
  std::string port;
  if (reg.front() == '[') {
    size_t close = reg.find(']');
    if (close == std::string::npos) return "unterminated '[' in registry '" + reg + "'";
    host = reg.substr(1, close - 1);
    std::string rest = reg.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return "invalid registry '" + reg + "'";
      port = rest.substr(1);
      if (port.empty()) return "empty port in registry '" + reg + "'";
    }
    if (host.empty() || host.find_first_not_of("0123456789abcdefABCDEF:.") != std::string::npos) {
      return "invalid IPv6 address in registry '" + reg + "'";
    }
  } else {
    size_t colon = reg.find(':');
    if (colon != std::string::npos) {
      host = reg.substr(0, colon);
      port = reg.substr(colon + 1);
      if (port.empty()) return "empty port in registry '" + reg + "'";
    }
    if (host.empty()) return "empty host name in registry '" + reg + "'";
    size_t start = 0;
    while (true) {
      size_t dot = host.find('.', start);
      std::string label = host.substr(start, dot - start);
      if (label.empty() || label.front() == '-' || label.back() == '-') {
        return "invalid host name in registry '" + reg + "'";
      }
      for (char c : label) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') {
          return "invalid host name in registry '" + reg + "'";
        }
      }
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
  }
  if (!port.empty()) {
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(port) == 0 || std::stoi(port) > 65535) {
      return "invalid port '" + port + "' in registry '" + reg + "'";
    }
  }
  return "";
}

// Whether the text after an '@' is a digest rather than the rest of a
// `USER@IMAGE` reference: a known algorithm, or `alg:` and 32+ hex digits.
bool looksLikeDigest(const std::string& s) {
  size_t colon = s.find(':');
  if (colon == std::string::npos || colon == 0) return false;
  std::string alg = s.substr(0, colon);
  if (alg == "sha256" || alg == "sha384" || alg == "sha512") return true;
  for (char c : alg) {
    if (!(isLowerAlnum(c) || c == '+' || c == '.' || c == '_' || c == '-')) return false;
  }
  std::string hex = s.substr(colon + 1);
  return hex.size() >= 32 && hex.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
}

// The steps of `parseReference`, in order: each takes its part off the front
// or the back of `rest` into `ref`, and returns why the reference is
// malformed, or "" when it is not.

std::string takeScheme(std::string& rest, Reference&) {
  size_t scheme = rest.find("://");
  if (scheme != std::string::npos) {
    std::string name = rest.substr(0, scheme);
    if (name != "docker") {
      return "unsupported scheme '" + name + "://' (only docker:// is supported)";
    }
    rest = rest.substr(scheme + 3);
  }
  return rest.empty() ? "no image name" : "";
}

// A trailing `@<algorithm>:<hex>` is a digest; an `@` before that ends USER.
std::string takeDigest(std::string& rest, Reference& ref) {
  size_t lastAt = rest.rfind('@');
  if (lastAt == std::string::npos || !looksLikeDigest(rest.substr(lastAt + 1))) return "";
  ref.digest = rest.substr(lastAt + 1);
  rest = rest.substr(0, lastAt);
  if (!ref.digest.starts_with("sha256:")) {
    return "unsupported digest algorithm (only sha256 is supported)";
  }
  if (!isSha256Digest(ref.digest)) return "a sha256 digest is 64 lowercase hexadecimal digits";
  return "";
}

// Enroot's `USER@`.
std::string takeUser(std::string& rest, Reference& ref) {
  size_t at = rest.find('@');
  if (at != std::string::npos) {
    ref.user = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (ref.user.empty()) return "empty user name before '@'";
    if (ref.user.find_first_of("/#:") != std::string::npos) {
      return "'@' must be followed by a digest such as sha256:<64 hex digits>";
    }
    if (rest.find('@') != std::string::npos) return "more than one '@'";
  }
  return rest.empty() ? "no image name" : "";
}

// Enroot's `REGISTRY#`, or Docker's `REGISTRY/` (a first component with a
// '.' or a ':', or localhost).
std::string takeRegistry(std::string& rest, Reference& ref) {
  size_t hash = rest.find('#');
  if (hash != std::string::npos) {
    ref.registry = rest.substr(0, hash);
    rest = rest.substr(hash + 1);
    if (ref.registry.empty()) return "empty registry before '#'";
    if (rest.find('#') != std::string::npos) return "more than one '#'";
  } else {
    size_t slash = rest.find('/');
    if (slash != std::string::npos) {
      std::string first = rest.substr(0, slash);
      if (first.find_first_of(".:") != std::string::npos || first == "localhost") {
        ref.registry = first;
        rest = rest.substr(slash + 1);
      }
    }
  }
  return ref.registry.empty() ? "" : checkRegistry(ref.registry);
}

// IMAGE[:TAG]: the tag follows the last ':' after the last '/'.
std::string takeTag(std::string& rest, Reference& ref) {
  size_t lastSlash = rest.rfind('/');
  size_t colon = rest.rfind(':');
  if (colon == std::string::npos || (lastSlash != std::string::npos && colon < lastSlash)) {
    return "";
  }
  std::string tag = rest.substr(colon + 1);
  rest = rest.substr(0, colon);
  std::string why = checkTag(tag);
  if (!why.empty()) return why;
  if (ref.digest.empty()) ref.tag = tag;  // A digest pins the image; the tag is moot.
  return "";
}

std::string takeRepository(std::string& rest, Reference& ref) {
  if (rest.find(':') != std::string::npos) {
    return "unexpected ':' in the image name (a registry with a port goes first, "
           "as in host:5000/image or host:5000#image)";
  }
  std::string why = checkRepository(rest);
  if (!why.empty()) return why;
  ref.repository = rest;
  rest.clear();
  return "";
}

}  // namespace

std::string Reference::toString() const {
  std::string out = registry + "/" + repository;
  if (!digest.empty()) return out + "@" + digest;
  if (!tag.empty()) out += ":" + tag;
  return out;
}

bool isSquashfsPath(const std::string& text) {
  return text.starts_with("/") || text.starts_with("./");
}

StatusOr<Reference> parseReference(const std::string& text) {
  if (text.empty()) return malformed(text, "empty");
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)) || static_cast<unsigned char>(c) < 0x20) {
      return malformed(text, "it contains whitespace or control characters");
    }
  }
  Reference ref;
  std::string rest = text;
  using Step = std::string (*)(std::string& rest, Reference& ref);
  for (Step step : {takeScheme, takeDigest, takeUser, takeRegistry, takeTag, takeRepository}) {
    std::string why = step(rest, ref);
    if (!why.empty()) return malformed(text, why);
  }

  if (ref.registry.empty() || ref.registry == "docker.io" || ref.registry == "index.docker.io") {
    ref.registry = kDockerHub;
  }
  if (ref.registry == kDockerHub && ref.repository.find('/') == std::string::npos) {
    ref.repository = "library/" + ref.repository;
  }
  if (ref.registry.size() + 1 + ref.repository.size() > kMaxNameLength) {
    return malformed(text, "name longer than 255 characters");
  }
  if (ref.digest.empty() && ref.tag.empty()) ref.tag = "latest";
  return ref;
}

}  // namespace corral::image
