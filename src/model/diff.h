#pragma once

// A unified diff of two texts, line by line, as `diff -u` prints it. Used by
// `corral config diff` to show what a change would do to the rendered files.

#include <string>

#include "corral/runtime.h"

namespace corral {

// Empty when the texts are equal. `context` lines surround each change.
std::string unifiedDiff(const std::string& before, const std::string& after,
                        const std::string& beforeName, const std::string& afterName,
                        int context = 3);

// The diffs of every file in `after` against the file of the same path in
// `before` (an empty one when `before` has none), as "a/PATH" and "b/PATH",
// in path order: what a change does to a cluster's rendered files. A file
// only `before` has is not shown.
std::string unifiedDiff(const RenderedFiles& before, const RenderedFiles& after);

}  // namespace corral
