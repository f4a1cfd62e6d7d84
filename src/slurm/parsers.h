#pragma once

// Parsers for the output of Slurm's own commands, as corral invokes them.

#include <map>
#include <string>

namespace corral {

struct SinfoNode {
  std::string state;   // %T: idle, allocated, mixed, down*, drained, …
  std::string reason;  // %E
};

// The format corral asks sinfo for: one line per node and partition.
inline constexpr const char* kSinfoNodeFormat = "%N|%T|%E";

// Parses `sinfo -h -N -o "%N|%T|%E"`; a node listed in several partitions
// appears once. Lines that do not have three fields are ignored.
std::map<std::string, SinfoNode> parseSinfoNodes(const std::string& text);

}  // namespace corral
