#include "common/text.h"

#include <cctype>

#include <algorithm>
#include <cstdio>

namespace corral {

std::string quoteForMessage(std::string_view s, size_t maxLength) {
  std::string out = "\"";
  size_t shown = std::min(s.size(), maxLength);
  for (size_t i = 0; i < shown; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (shown < s.size()) out += "...";
  out += '"';
  return out;
}

std::string percentEncode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string lastLines(const std::string& text, size_t lines) {
  size_t pos = text.size();
  while (pos > 0 && lines > 0) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) return text;
    --lines;
  }
  return text.substr(pos + 1);
}

}  // namespace corral
