#include "common/base64.h"

#include <cstdint>

#include "common/text.h"

namespace corral {

StatusOr<std::string> decodeBase64(std::string_view text) {
  std::string clean;
  clean.reserve(text.size());
  for (char c : text) {
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') clean += c;
  }
  if (clean.size() % 4 != 0)
    return invalidArgument("its length (" + std::to_string(clean.size()) +
                           " characters without whitespace) is not a multiple of 4");
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(clean.size() / 4 * 3);
  for (size_t i = 0; i < clean.size(); i += 4) {
    bool last = i + 4 == clean.size();
    int pad = 0;
    if (last && clean[i + 3] == '=') pad = clean[i + 2] == '=' ? 2 : 1;
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      char c = clean[i + k];
      int d = k >= 4 - static_cast<size_t>(pad) ? 0 : value(c);
      if (d < 0)
        return invalidArgument("character " + quoteForMessage(std::string(1, c)) + " at " +
                               std::to_string(i + k) + " is not base64");
      v = (v << 6) | static_cast<uint32_t>(d);
    }
    out += static_cast<char>(v >> 16);
    if (pad < 2) out += static_cast<char>((v >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(v & 0xff);
  }
  return out;
}

}  // namespace corral
