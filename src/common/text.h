#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace corral {

// Renders user input `s` in double quotes for an error message: escapes what
// a terminal would not show faithfully and cuts it to `maxLength` characters
// so that an error about a huge value stays readable.
std::string quoteForMessage(std::string_view s, size_t maxLength = 64);

}  // namespace corral
