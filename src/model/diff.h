#pragma once

// A unified diff of two texts, line by line, as `diff -u` prints it. Used by
// `corral config diff` to show what a change would do to the rendered files.

#include <string>

namespace corral {

// Empty when the texts are equal. `context` lines surround each change.
std::string unifiedDiff(const std::string& before, const std::string& after,
                        const std::string& beforeName, const std::string& afterName,
                        int context = 3);

}  // namespace corral
