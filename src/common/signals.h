#pragma once

// How a daemon's main() takes its stop signals: synchronously, at a point of
// its choosing, rather than in a handler that may cut anything short.

#include <signal.h>

namespace corral {

// Blocks SIGTERM and SIGINT in the calling thread, and so in every thread it
// starts afterwards (not in threads already running, which could still be
// handed one), and ignores SIGPIPE: a closed peer is an error return, not a
// death. Returns the blocked set, for sigwait(3) or sigtimedwait(2).
// Children started through `ProcessRunner` get a clean mask.
sigset_t blockStopSignals();

}  // namespace corral
