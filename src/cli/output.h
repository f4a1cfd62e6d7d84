#pragma once

// How `corral` shows corrald's answers: tables for people, JSON for scripts.
// Pure functions from JSON to text, so that every layout is unit-tested. They
// tolerate missing or mistyped fields (shown as "-") and never throw.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cli/client.h"

namespace corral {

enum class OutputFormat { kTable, kJson };

// Field accessors that never throw: a missing field, a non-object `j` or a
// value of another type yields the fallback.
std::string jsonString(const Json& j, const char* key, const std::string& fallback = "");
int64_t jsonInt(const Json& j, const char* key, int64_t fallback = 0);
bool jsonBool(const Json& j, const char* key, bool fallback = false);
const Json& jsonChild(const Json& j, const char* key);

// `s`, or "-" when it is empty: how a table shows a missing value.
std::string orNone(const std::string& s);

// The integer at `key` as text, or "-" when it is missing or not an integer.
std::string jsonIntText(const Json& j, const char* key);

// "5s", "3m", "2h", "4d": the age of something `seconds` old, truncated to
// its largest unit as kubectl does. Negative ages (clock skew) read "0s".
std::string formatAge(int64_t seconds);

// Unix milliseconds as local time in ISO 8601 to the second with the UTC
// offset, like `date -Iseconds`: "2025-11-30T01:00:05+01:00".
std::string formatLocalTime(int64_t unixMillis);

// Lays out `rows` (the first is the header) in columns separated by three
// spaces. Control characters in cells become spaces, so a server-supplied
// message can neither break the layout nor send terminal escapes.
std::string renderTable(const std::vector<std::vector<std::string>>& rows);

// An answer as corrald sent it, indented by two spaces, with a final newline.
std::string renderJson(const Json& j);

// "Label:" and value pairs, one a line, the values lined up in the 13th
// column as in `corral cluster get`. Values are sanitized like table cells.
std::string renderFields(const std::vector<std::pair<std::string, std::string>>& fields);

// `corral cluster list`: NAME STATUS GPU-NODES CPU-NODES LOGIN AGE.
std::string clusterListTable(const Json& body, int64_t nowUnixSeconds);

// `corral cluster get`: the cluster's fields, then one row per node.
std::string clusterDetail(const Json& cluster, int64_t nowUnixSeconds);

// `corral events`: TIME TYPE REASON MESSAGE.
std::string eventsTable(const Json& body);

// "Creating: starting workers (3/4 ready)", or just the status when the
// cluster has no phase: one line of `--wait` progress.
std::string progressLine(const Json& cluster);

// How a node is named in the console: "corral_node_1 (slinky-0)".
std::string nodeDisplayName(const Json& node);

// "revision 3: scale to 4 GPU nodes and 0 CPU nodes\n": what a change
// answer's "change" object says was requested.
std::string changeHeadline(const Json& change);

// What a scale answer's "change" says will happen, one line each: the nodes
// it removes, a warning for each partition left without nodes, and the jobs
// on the removed nodes that `--force` cancels or that the change waits for.
// Empty when there is nothing to say.
std::string scaleSummary(const Json& change);

// A warning naming the jobs that a forced partition delete leaves without
// their partition ("jobsInPartition"); empty when there are none.
std::string partitionDeleteSummary(const Json& change, const std::string& partition);

// `corral cluster history`: REVISION STATE AUTHOR AGE MESSAGE, oldest first,
// the applied revision marked "(current)" and a Failed one's error on the
// line below it.
std::string historyTable(const Json& body, int64_t nowUnixSeconds);

// `corral partition list`: NAME NODES DEFAULT MANAGED-BY OPTIONS, then "k of
// N user partitions".
std::string partitionTable(const Json& body);

// `corral config get`: the user's slurm.conf settings as Key=Value lines, or
// a line saying there are none.
std::string configLines(const Json& body);

// `corral config params`: NAME TYPE RANGE/VALUES RESTART HELP for the
// slurm.conf parameters, then for the partition options.
std::string slurmParamsTable(const Json& body);

}  // namespace corral
