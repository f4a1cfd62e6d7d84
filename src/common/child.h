#pragma once

// What a forked child does to its descriptors before it execs or gets on
// with its own work. Only async-signal-safe calls: the parent may have had
// other threads.

namespace corral {

// Points stdin, stdout and stderr at /dev/null, so that the child keeps no
// pipe of the caller's open (a caller reading one to its end would wait for
// the child) and writes nowhere anyone would see. Leaves them as they are if
// /dev/null cannot be opened.
void stdioToDevNull();

}  // namespace corral
