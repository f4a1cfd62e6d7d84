#pragma once

// The slurm.conf parameters and partition parameters that users may set
// through corral (`corral config set`, `corral partition create|update`),
// with the type and range of each, and the checks that turn what a user typed
// into a value corral can write into slurm.conf.
//
// Values reach slurm.conf verbatim, so the checks are what stops a user from
// adding lines or parameters of their own: a newline, carriage return, NUL or
// other control character, any blank, '#' and any non-ASCII byte are refused
// in every value, and every type accepts only a tight character set on top of
// that. The ranges and spellings are those of Slurm 22.05, checked against its
// own `slurm_conf_init`; where Slurm would refuse to start, or would silently
// misread a value (it reads "0300" as octal, and `SuspendTime=UNLIMITED` as 0),
// these checks refuse or normalise first.
//
// Everything here is pure and thread-safe. The tables are built once, on
// first use, and live until the process exits.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "corral/status.h"

namespace corral {

// The kinds of values a parameter takes. The order is part of the REST API's
// `corral config params` answer, which names the types by position; add new
// kinds at the end.
enum class ParamType {
  kInt,          // Decimal integer within [min, max]; also UNLIMITED/INFINITE if allowUnlimited.
  kBool,         // YES/NO, in any case; normalised to upper case.
  kEnum,         // One of `values`, in any case; normalised to the spelling in `values`.
  kEnumList,     // Comma-separated distinct `values`, in any case; normalised spelling.
  kTime,         // Slurm time: UNLIMITED/INFINITE, M, M:S, H:M:S, D-H, D-H:M or D-H:M:S.
  kPath,         // Absolute path of [A-Za-z0-9/._+-], without "..", at most 255 characters.
  kOptions,      // Comma-separated NAME or NAME=VALUE; NAME [A-Za-z0-9_], VALUE [A-Za-z0-9_.:/+-].
  kTresWeights,  // Comma-separated TRES=WEIGHT; TRES [A-Za-z0-9/:_-], WEIGHT a decimal number.
  kNameList,     // ALL, or comma-separated distinct names [A-Za-z0-9_.-]: accounts, QOS, groups.
};

struct ParamDef {
  std::string name;  // Canonical spelling, e.g. "MinJobAge".
  ParamType type;
  int64_t min = 0, max = 0;         // For kInt.
  bool allowUnlimited = false;      // For kInt.
  std::vector<std::string> values;  // For kEnum and kEnumList.
  bool needsRestart = false;        // slurmctld must restart; `scontrol reconfigure` is not enough.
  std::string help;                 // One line for docs and the CLI.
};

// The slurm.conf parameters users may set, and the parameters users may set
// on partitions of their own (corral sets `PartitionName` and `Nodes`
// itself). Both belong to this module and must never be deleted.
const std::vector<ParamDef>& slurmConfParams();
const std::vector<ParamDef>& partitionParams();

// Looks `name` up case-insensitively; nullptr if users may not set it. The
// result points into the table above.
const ParamDef* findSlurmConfParam(const std::string& name);
const ParamDef* findPartitionParam(const std::string& name);

// Checks `value` against `def` and returns it normalised, ready to be written
// after `def.name=`. Normalisation: integers in plain decimal ("0300" ->
// "300"); UNLIMITED/INFINITE as "INFINITE" for integers (the one spelling
// every such parameter reads as unlimited) and upper-cased for times; YES/NO
// upper case; enum values in the table's spelling. Lists must not have empty
// or repeated entries.
//
// Beyond its type, a value must also pass the rules Slurm applies to it alone:
// ALL and NONE stand alone in PropagateResourceLimits(Except), ALL stands
// alone in a name list, and PreemptMode names at most one of OFF, CANCEL,
// REQUEUE and SUSPEND and not both GANG and WITHIN. Rules that involve several
// parameters are `checkSlurmConfCombination`'s and
// `checkPartitionCombination`'s.
//
// Fails with InvalidArgument naming the parameter, what it accepts and the
// value as given, shown by `quoteForMessage` (src/common/text.h) so that
// control characters are visible: `MinJobAge must be an integer from 2 to
// 86400, got "abc"`.
StatusOr<std::string> checkParamValue(const ParamDef& def, const std::string& value);

// Splits "Key=Value" at its first '=', looks Key up in `defs`
// case-insensitively and checks Value with `checkParamValue`. Returns the
// canonical key and the normalised value. An unknown key fails with
// InvalidArgument that says users may not set it, suggests up to five
// allowlisted names that resemble it, and points to `corral config params`.
StatusOr<std::pair<std::string, std::string>> parseAssignment(const std::vector<ParamDef>& defs,
                                                              const std::string& assignment);

// Whether changing slurm.conf parameter `name` needs slurmctld to restart.
// True for a name that is not in `slurmConfParams()`: restarting is never
// wrong, while a reconfigure can miss a change.
bool slurmConfNeedsRestart(const std::string& name);

// Checks the rules that tie a cluster's slurm.conf parameters together, which
// `checkParamValue` cannot see. Slurm 22.05's slurmctld refuses to start when
// PreemptType and PreemptMode disagree (preempt/none with a mode that
// preempts, another PreemptType with a mode that does not) or when
// PreemptMode is SUSPEND without GANG. Of DefMemPerCPU and DefMemPerNode, and
// of MaxMemPerCPU and MaxMemPerNode, Slurm uses the per-node setting and
// ignores the other; of PropagateResourceLimits and
// PropagateResourceLimitsExcept only one may be given. Such pairs are refused
// rather than half applied. `conf` maps canonical names to normalised values,
// as `parseAssignment` returns them; a parameter it lacks has Slurm's default.
// Returns the first problem as InvalidArgument.
Status checkSlurmConfCombination(const std::map<std::string, std::string>& conf);

// The same for one partition's `options`: Slurm ignores DenyAccounts next to
// AllowAccounts, DenyQos next to AllowQos, and a per-CPU memory setting next
// to the per-node one.
Status checkPartitionCombination(const std::map<std::string, std::string>& options);

}  // namespace corral
