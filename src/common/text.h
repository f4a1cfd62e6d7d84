#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace corral {

// Renders user input `s` in double quotes for an error message: escapes what
// a terminal would not show faithfully and cuts it to `maxLength` characters
// so that an error about a huge value stays readable.
std::string quoteForMessage(std::string_view s, size_t maxLength = 64);

// The last `lines` lines of `text` (all of it when it has fewer): the end of
// a log, for a message.
std::string lastLines(const std::string& text, size_t lines);

// RFC 3986 percent-encoding of everything but unreserved characters
// (A-Z a-z 0-9 - _ . ~): safe as a URL path segment or query value.
std::string percentEncode(std::string_view s);

}  // namespace corral
