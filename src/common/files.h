#pragma once

// File reading without iostreams: libstdc++'s filebuf throws when read(2)
// fails, and reads of /proc/<pid>/… fail with ESRCH whenever the process
// exits mid-read. These never throw.

#include <string>

#include "corral/status.h"

namespace corral {

// The whole file; NotFound if it cannot be opened, Internal on a read error.
StatusOr<std::string> readFile(const std::string& path);

}  // namespace corral
