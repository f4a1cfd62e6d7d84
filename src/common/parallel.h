#pragma once

// `runInParallel`: a fixed number of threads working through numbered tasks,
// as the image library's pulls and pushes move blobs.

#include <cstddef>
#include <functional>

#include "corral/status.h"

namespace corral {

// Runs `task(0)` … `task(count - 1)`, each once, on at most `parallel`
// threads (at least one; on the calling thread when one is all it takes).
// Returns the first error a task returned; once a task has failed no other
// task starts, while those already running finish. Tasks run concurrently:
// what they share they guard themselves.
Status runInParallel(size_t count, int parallel, const std::function<Status(size_t)>& task);

}  // namespace corral
