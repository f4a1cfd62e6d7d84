#pragma once

#include <string>
#include <string_view>

namespace corral {

// Lowercase hex of the SHA-256 of `data` (OpenSSL's).
std::string sha256Hex(std::string_view data);

}  // namespace corral
