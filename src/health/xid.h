#pragma once

// NVIDIA XID errors as the driver logs them to the kernel ring buffer, and
// what corral does about each. Pure functions: no I/O, never throw.

#include <optional>
#include <string>
#include <string_view>

namespace corral {

// One "NVRM: Xid" kernel log line, taken apart.
struct XidEvent {
  std::string pci;      // "0000:3b:00": the GPU's PCI address as the driver prints it.
  int code = 0;         // The XID number, e.g. 79.
  std::string pid;      // "1234" from "pid=1234"; empty in the older format.
  std::string process;  // "python" from "name=python"; empty in the older format.
  std::string text;     // The driver's own explanation, after the fields above.
  std::string line;     // The whole line as read, without its trailing newline.
};

// Parses one kernel log line in the NVIDIA driver's format, e.g.
//   "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus."
// and the older format without `pid=` and `name=`:
//   "NVRM: Xid (PCI:0000:3b:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): ..."
// A leading dmesg timestamp ("[12345.678901] ", possibly space-padded inside
// the brackets) or a /dev/kmsg record prefix ("6,1234,5678,-;") is skipped.
// Returns nullopt for every other line, including other NVRM messages.
std::optional<XidEvent> parseXidLine(std::string_view line);

enum class XidClass {
  kApplication,  // Caused by the program on the GPU; the node is fine.
  kHardware,     // The GPU or its link is failing: the node is drained.
  kUnknown,      // Not in corral's table: reported like an application XID, not drained.
};

// Application: 13, 31, 43, 45, 68, 69. Hardware: 48, 63, 64, 74, 79, 92, 94,
// 95, 119, 120, 121, 140. Everything else is unknown.
XidClass classifyXid(int code);

// "application", "hardware" or "unknown", as the health report spells them.
const char* xidClassName(XidClass c);

// A short lower-case description of a known code ("GPU has fallen off the
// bus" for 79), or "unknown XID". The result is a string literal.
const char* xidDescription(int code);

// Every reason corral sets on a Slurm node starts with this, so that corral
// can tell its own drains from an administrator's.
inline constexpr const char* kCorralReasonPrefix = "corral:";

// Slurm keeps a node's reason on one line and shows it in every `sinfo -R`;
// corral's reasons stay shorter than this.
inline constexpr size_t kMaxDrainReasonLength = 120;

// The drain reason corral sets for `e`, e.g.
//   "corral: GPU XID 79 on 0000:3b:00 (GPU has fallen off the bus)".
// Always starts with `kCorralReasonPrefix`, holds only printable ASCII and is
// shorter than `kMaxDrainReasonLength`.
std::string xidDrainReason(const XidEvent& e);

}  // namespace corral
