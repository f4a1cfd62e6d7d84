#pragma once

// The node health report: what corral-health (agent.h) writes into its pod
// as JSON and what corrald reads back (the reconciler's XID events and
// liveness, the API's node view). Its one format, and its one parser: the
// file lives where a cluster's users could write it too, so the parser
// takes only what has the expected shape.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace corral {

// One GPU XID the agent saw.
struct ReportedXid {
  int64_t time = 0;  // Unix milliseconds.
  int code = 0;
  std::string pci;
  std::string cls;  // "application", "hardware", or "unknown" (anything else).
  std::string description;
  std::string action;  // "reported", "drain pending", "drained …".
  std::string line;    // The kernel log line, shortened.

  bool operator==(const ReportedXid&) const = default;
};

struct HealthReport {
  std::string node;
  bool slurmdOk = false;   // "slurmd": "ok" | "not running"
  bool gpuOk = true;       // "gpu": "ok" | "xid"
  int64_t time = 0;        // When it was written (Unix ms); changes every refresh.
  std::vector<ReportedXid> xids;

  // What the API shows: "ok", "slurmd not running" or "GPU XID".
  std::string summary() const;
};

// The report as the agent writes it (`time` included when non-zero).
std::string healthReportJson(const HealthReport& report, int indent = 2);

// Parses a report; nullopt when `text` is not a JSON object. Fields of the
// wrong type take their defaults ("" and 0; an unknown XID class "unknown").
std::optional<HealthReport> parseHealthReport(const std::string& text);

}  // namespace corral
