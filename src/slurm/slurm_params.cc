#include "slurm/slurm_params.h"

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <string_view>

#include "common/text.h"

namespace corral {
namespace {

// The longest value of any type. Scheduler options and TRES weights, the
// longest kinds, fit comfortably; the bound keeps requests and messages small.
constexpr size_t kMaxValueLength = 1024;

// The longest kPath value; any real script path fits, and a line of
// slurm.conf stays readable.
constexpr size_t kMaxPathLength = 255;

// The longest time Slurm 22.05 reads correctly: `time_str2mins` counts
// seconds in an `int` and rounds up to minutes, so anything longer wraps
// around to a negative or tiny time without an error.
constexpr int64_t kMaxTimeMinutes = 35791393;

// A time field of more digits than this cannot be within kMaxTimeMinutes;
// the bound also keeps the arithmetic far from overflowing.
constexpr size_t kMaxTimeFieldDigits = 9;

// Slurm keeps priority weights in 32 bits; TRES weights get the same bound.
constexpr int64_t kMaxPriorityWeight = 4294967295;

// Memory sizes are in megabytes; 2^30 MB is 1 PiB.
constexpr int64_t kMaxMemoryMb = 1073741824;

// The largest value of Slurm's 16-bit settings (seconds, counts): 65534 and
// 65535 stand for NO_VAL and INFINITE.
constexpr int64_t kMax16 = 65533;

constexpr size_t kMaxSuggestions = 5;

// A key shares at least this long a prefix with a name to be suggested for it
// ("SchedulerParams" for SchedulerParameters).
constexpr size_t kSuggestionPrefix = 6;

std::string quote(std::string_view s) { return quoteForMessage(s, 64); }

// ---- ASCII helpers (independent of the locale) ----

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isAlnum(char c) { return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char upperChar(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }
char lowerChar(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), upperChar);
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), lowerChar);
  return out;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return lowerChar(x) == lowerChar(y);
         });
}

// Whether `s` is non-empty and made only of characters `pred` accepts.
bool consistsOf(std::string_view s, bool (*pred)(char)) {
  return !s.empty() && std::all_of(s.begin(), s.end(), pred);
}

bool isOptionNameChar(char c) { return isAlnum(c) || c == '_'; }
bool isOptionValueChar(char c) {
  return isAlnum(c) || c == '_' || c == '.' || c == ':' || c == '/' || c == '+' || c == '-';
}
bool isTresChar(char c) { return isAlnum(c) || c == '/' || c == ':' || c == '_' || c == '-'; }
bool isIdentifierChar(char c) { return isAlnum(c) || c == '_' || c == '.' || c == '-'; }
bool isPathChar(char c) {
  return isAlnum(c) || c == '/' || c == '.' || c == '_' || c == '+' || c == '-';
}

// Splits at every `sep`, keeping empty pieces so that callers can refuse them.
std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

// Reads an optional '-' and then decimal digits, leading zeros included, as a
// decimal number (Slurm's `strtol(..., 0)` would read "0300" as octal, which
// is why values are rewritten in plain decimal). nullopt for anything else
// and for numbers outside int64_t.
std::optional<int64_t> parseDecimal(std::string_view s) {
  bool negative = !s.empty() && s[0] == '-';
  if (negative) s.remove_prefix(1);
  if (!consistsOf(s, isDigit)) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    int64_t d = c - '0';
    if (v > (std::numeric_limits<int64_t>::max() - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return negative ? -v : v;
}

bool isUnlimitedWord(std::string_view s) {
  return equalsIgnoreCase(s, "UNLIMITED") || equalsIgnoreCase(s, "INFINITE");
}

// ---- Per-type checks ----
//
// Each returns the normalised value, or InvalidArgument whose message is only
// a detail (possibly empty) that `checkParamValue` appends to its sentence
// naming the parameter and what it accepts.

using Checked = StatusOr<std::string>;

Status detail(std::string why) { return invalidArgument(std::move(why)); }
Status notAccepted() { return invalidArgument(""); }

// Refuses what could end the line or the parameter in slurm.conf, whatever
// the type: Slurm splits parameters at blanks and lines at newlines, and
// reads '#' as the start of a comment.
Status checkCharacters(std::string_view value) {
  if (value.empty()) return detail("the value is empty");
  if (value.size() > kMaxValueLength)
    return detail("longer than " + std::to_string(kMaxValueLength) + " characters");
  for (char ch : value) {
    auto c = static_cast<unsigned char>(ch);
    if (c <= ' ' || c >= 0x7f || c == '#')
      return detail("newlines, control characters, blanks, '#' and non-ASCII are not allowed");
  }
  return Status::ok();
}

Checked checkInt(const ParamDef& def, std::string_view value) {
  // Every parameter with allowUnlimited reads INFINITE as unlimited, while
  // SuspendTime reads UNLIMITED as 0 (suspend at once); hence one spelling.
  if (def.allowUnlimited && isUnlimitedWord(value)) return std::string("INFINITE");
  std::optional<int64_t> n = parseDecimal(value);
  if (!n || *n < def.min || *n > def.max) return notAccepted();
  return std::to_string(*n);
}

Checked checkBool(std::string_view value) {
  if (equalsIgnoreCase(value, "YES") || equalsIgnoreCase(value, "NO")) return upper(value);
  return notAccepted();
}

std::optional<std::string> matchValue(const ParamDef& def, std::string_view value) {
  for (const auto& v : def.values) {
    if (equalsIgnoreCase(v, value)) return v;
  }
  return std::nullopt;
}

Checked checkEnum(const ParamDef& def, std::string_view value) {
  std::optional<std::string> match = matchValue(def, value);
  if (!match) return notAccepted();
  return *match;
}

// Checks a comma-separated list: every entry non-empty and accepted by
// `checkItem`, which returns it normalised, and no two entries with the same
// `keyOf(normalised entry)`. Returns the normalised entries joined by ','.
Checked checkList(std::string_view value, const std::function<Checked(std::string_view)>& checkItem,
                  const std::function<std::string(const std::string&)>& keyOf) {
  std::vector<std::string> items;
  std::set<std::string> keys;
  for (std::string_view item : split(value, ',')) {
    if (item.empty()) return detail("the list has an empty entry");
    ASSIGN_OR_RETURN(std::string normal, checkItem(item));
    if (!keys.insert(keyOf(normal)).second) return detail(quote(item) + " is given twice");
    items.push_back(std::move(normal));
  }
  return join(items, ",");
}

std::string lowerKey(const std::string& item) { return lower(item); }

Checked checkEnumList(const ParamDef& def, std::string_view value) {
  auto item = [&](std::string_view v) -> Checked {
    std::optional<std::string> match = matchValue(def, v);
    if (!match) return detail(quote(v) + " is not one of them");
    return *match;
  };
  return checkList(value, item, lowerKey);
}

// One numeric field of a time: digits only, few enough to stay in range.
std::optional<int64_t> parseTimeField(std::string_view field) {
  if (field.size() > kMaxTimeFieldDigits || !consistsOf(field, isDigit)) return std::nullopt;
  return parseDecimal(field);
}

Checked checkTime(std::string_view value) {
  if (isUnlimitedWord(value)) return upper(value);
  std::optional<int64_t> days;
  std::string_view clock = value;
  size_t dash = value.find('-');
  if (dash != std::string_view::npos) {
    days = parseTimeField(value.substr(0, dash));
    if (!days) return notAccepted();
    clock = value.substr(dash + 1);
  }
  std::vector<int64_t> fields;
  for (std::string_view f : split(clock, ':')) {
    std::optional<int64_t> n = parseTimeField(f);
    if (!n) return notAccepted();
    fields.push_back(*n);
  }
  if (fields.size() > 3) return notAccepted();
  // Without days the fields are M, M:S or H:M:S; after "D-" they are H, H:M
  // or H:M:S. The leading field is unbounded, except hours after days.
  bool hoursFirst = days.has_value() || fields.size() == 3;
  int64_t hours = hoursFirst ? fields[0] : 0;
  size_t minuteAt = hoursFirst ? 1 : 0;
  int64_t minutes = minuteAt < fields.size() ? fields[minuteAt] : 0;
  int64_t seconds = minuteAt + 1 < fields.size() ? fields[minuteAt + 1] : 0;
  if (days && hours >= 24) return detail("hours must be below 24 after a day count");
  if (hoursFirst && minutes >= 60) return detail("minutes must be below 60");
  if (seconds >= 60) return detail("seconds must be below 60");
  int64_t total = ((days.value_or(0) * 24 + hours) * 60 + minutes) * 60 + seconds;
  if (total > kMaxTimeMinutes * 60)
    return detail("longer than " + std::to_string(kMaxTimeMinutes) + " minutes");
  return std::string(value);
}

Checked checkPath(std::string_view value) {
  if (value.size() > kMaxPathLength)
    return detail("longer than " + std::to_string(kMaxPathLength) + " characters");
  if (value[0] != '/' || !consistsOf(value, isPathChar)) return notAccepted();
  if (value.find("..") != std::string_view::npos) return detail("\"..\" is not allowed");
  return std::string(value);
}

// "NAME" or "NAME=VALUE" (split at the first '='); `value` is nullopt without '='.
struct Pair {
  std::string_view name;
  std::optional<std::string_view> value;
};

Pair splitPair(std::string_view item) {
  size_t eq = item.find('=');
  if (eq == std::string_view::npos) return {item, std::nullopt};
  return {item.substr(0, eq), item.substr(eq + 1)};
}

// Options are case-insensitive in Slurm, so "a" and "A" repeat one option.
std::string optionKey(const std::string& item) { return lower(splitPair(item).name); }

Checked checkOptions(std::string_view value) {
  auto item = [](std::string_view v) -> Checked {
    Pair p = splitPair(v);
    if (!consistsOf(p.name, isOptionNameChar) ||
        (p.value && !consistsOf(*p.value, isOptionValueChar)))
      return detail(quote(v) + " is not of that form");
    return std::string(v);
  };
  return checkList(value, item, optionKey);
}

// A weight: an optional '-' (Slurm allows negative weights), digits, and an
// optional fraction; at most kMaxPriorityWeight in size.
bool isWeight(std::string_view w) {
  std::string_view whole = w.substr(0, w.find('.'));
  if (whole.size() < w.size() && !consistsOf(w.substr(whole.size() + 1), isDigit)) return false;
  std::optional<int64_t> n = parseDecimal(whole);
  return n && *n >= -kMaxPriorityWeight && *n <= kMaxPriorityWeight;
}

Checked checkTresWeights(std::string_view value) {
  auto item = [](std::string_view v) -> Checked {
    Pair p = splitPair(v);
    if (!consistsOf(p.name, isTresChar) || !p.value || !isWeight(*p.value))
      return detail(quote(v) + " is not of that form");
    return std::string(v);
  };
  return checkList(value, item, optionKey);
}

Checked checkNameList(std::string_view value) {
  auto item = [](std::string_view v) -> Checked {
    if (equalsIgnoreCase(v, "ALL")) return std::string("ALL");
    if (!consistsOf(v, isIdentifierChar)) return detail(quote(v) + " is not a valid name");
    return std::string(v);
  };
  // Account, QOS and group names are compared as given.
  return checkList(value, item, [](const std::string& s) { return s; });
}

Checked checkByType(const ParamDef& def, std::string_view value) {
  switch (def.type) {
    case ParamType::kInt:
      return checkInt(def, value);
    case ParamType::kBool:
      return checkBool(value);
    case ParamType::kEnum:
      return checkEnum(def, value);
    case ParamType::kEnumList:
      return checkEnumList(def, value);
    case ParamType::kTime:
      return checkTime(value);
    case ParamType::kPath:
      return checkPath(value);
    case ParamType::kOptions:
      return checkOptions(value);
    case ParamType::kTresWeights:
      return checkTresWeights(value);
    case ParamType::kNameList:
      return checkNameList(value);
  }
  return internalError("unknown parameter type");
}

// ---- Rules on single values beyond their type ----

bool contains(const std::vector<std::string_view>& items, std::string_view item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

// `words` (upper case, as normalised) may only be the whole value.
Status standAlone(const std::vector<std::string_view>& items,
                  std::initializer_list<std::string_view> words) {
  if (items.size() < 2) return Status::ok();
  for (std::string_view word : words) {
    if (contains(items, word))
      return detail(std::string(word) + " cannot be combined with other entries");
  }
  return Status::ok();
}

// Slurm's `preempt_mode_num` counts OFF, CANCEL, REQUEUE and SUSPEND as modes
// of which at most one may be given, GANG and WITHIN as modifiers that
// exclude each other.
Status checkPreemptMode(const std::vector<std::string_view>& items) {
  int modes = 0;
  for (std::string_view mode : {"OFF", "CANCEL", "REQUEUE", "SUSPEND"})
    modes += contains(items, mode);
  if (modes > 1) return detail("at most one of OFF, CANCEL, REQUEUE and SUSPEND can be given");
  if (contains(items, "GANG") && contains(items, "WITHIN"))
    return detail("GANG and WITHIN cannot be combined");
  return Status::ok();
}

// Slurm 22.05 refuses to start on a value that breaks one of these.
Status checkValueRules(const ParamDef& def, std::string_view normal) {
  std::vector<std::string_view> items = split(normal, ',');
  if (def.type == ParamType::kNameList) return standAlone(items, {"ALL"});
  // Slurm compares the whole value with ALL and NONE, and looks each entry of
  // a list up among the limit names, where ALL and NONE are not.
  if (def.name == "PropagateResourceLimits" || def.name == "PropagateResourceLimitsExcept")
    return standAlone(items, {"ALL", "NONE"});
  if (def.name == "PreemptMode") return checkPreemptMode(items);
  return Status::ok();
}

// What `def` accepts, to follow "<name> must be ".
std::string acceptedForm(const ParamDef& def) {
  switch (def.type) {
    case ParamType::kInt:
      return "an integer from " + std::to_string(def.min) + " to " + std::to_string(def.max) +
             (def.allowUnlimited ? ", or UNLIMITED" : "");
    case ParamType::kBool:
      return "YES or NO";
    case ParamType::kEnum:
      return "one of " + join(def.values, ", ");
    case ParamType::kEnumList:
      return "a comma-separated list of distinct values from " + join(def.values, ", ");
    case ParamType::kTime:
      return "a time as M, M:S, H:M:S, D-H, D-H:M or D-H:M:S (e.g. 90, 1-00:00:00), or UNLIMITED";
    case ParamType::kPath:
      return "an absolute path of at most " + std::to_string(kMaxPathLength) +
             " characters from A-Z a-z 0-9 / . _ + -";
    case ParamType::kOptions:
      return "a comma-separated list of NAME or NAME=VALUE, NAME from A-Z a-z 0-9 _ and VALUE "
             "from A-Z a-z 0-9 _ . : / + -";
    case ParamType::kTresWeights:
      return "a comma-separated list of TRES=WEIGHT such as CPU=1000,Mem=2000,GRES/gpu=3000";
    case ParamType::kNameList:
      return "ALL or a comma-separated list of distinct names from A-Z a-z 0-9 _ . -";
  }
  return "a valid value";
}

// ---- Lookup ----

const ParamDef* findIn(const std::vector<ParamDef>& defs, std::string_view name) {
  for (const auto& def : defs) {
    if (equalsIgnoreCase(def.name, name)) return &def;
  }
  return nullptr;
}

size_t commonPrefix(std::string_view a, std::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

// Allowlisted names that resemble `key`: first those that contain it or that
// it contains (an abbreviation, a stray suffix), then those that share a long
// prefix with it (a different ending); each group in table order.
std::vector<std::string> similarNames(const std::vector<ParamDef>& defs, std::string_view key) {
  std::string k = lower(key);
  auto contained = [&](const std::string& name) {
    return (k.size() >= 3 && name.find(k) != std::string::npos) ||
           k.find(name) != std::string::npos;
  };
  auto sharesPrefix = [&](const std::string& name) {
    return commonPrefix(k, name) >= kSuggestionPrefix;
  };
  std::vector<std::string> out;
  for (bool closest : {true, false}) {
    for (const auto& def : defs) {
      std::string name = lower(def.name);
      bool similar = closest ? contained(name) : sharesPrefix(name) && !contained(name);
      if (similar && out.size() < kMaxSuggestions) out.push_back(def.name);
    }
  }
  return out;
}

// ---- Combinations ----

std::optional<std::string> valueIn(const std::map<std::string, std::string>& values,
                                   const std::string& name) {
  auto it = values.find(name);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

using NamePair = std::pair<const char*, const char*>;

Status checkExclusive(const std::map<std::string, std::string>& values,
                      std::initializer_list<NamePair> pairs) {
  for (const auto& [a, b] : pairs) {
    if (values.count(a) && values.count(b))
      return invalidArgument(std::string(a) + " and " + b +
                             " cannot both be set: Slurm uses only one of them; unset one");
  }
  return Status::ok();
}

// slurmctld's checks of PreemptType against PreemptMode, as Slurm 22.05's
// `slurm_conf_init` makes them.
Status checkPreemption(const std::map<std::string, std::string>& conf) {
  std::string type = valueIn(conf, "PreemptType").value_or("preempt/none");
  std::string mode = valueIn(conf, "PreemptMode").value_or("OFF");
  std::vector<std::string_view> items = split(mode, ',');
  if (items == std::vector<std::string_view>{"SUSPEND"})
    return invalidArgument(
        "PreemptMode=SUSPEND needs GANG too, to resume suspended jobs: "
        "set PreemptMode=SUSPEND,GANG");
  bool preempts =
      contains(items, "CANCEL") || contains(items, "REQUEUE") || contains(items, "SUSPEND");
  if (type == "preempt/none" && (preempts || contains(items, "WITHIN")))
    return invalidArgument("PreemptMode=" + mode +
                           " preempts jobs, which needs PreemptType=preempt/partition_prio or "
                           "preempt/qos (PreemptType is preempt/none)");
  if (type != "preempt/none" && !preempts)
    return invalidArgument("PreemptType=" + type +
                           " needs a PreemptMode that says how to preempt: CANCEL, REQUEUE or "
                           "SUSPEND,GANG (PreemptMode is " +
                           mode + ")");
  return Status::ok();
}

// ---- The tables ----

std::vector<std::string> debugLevels() {
  return {"quiet", "fatal",  "error",  "info",   "verbose",
          "debug", "debug2", "debug3", "debug4", "debug5"};
}

// The resource limits Slurm can propagate (`rlimits_info` in Slurm).
std::vector<std::string> resourceLimits() {
  return {"ALL",   "NONE",    "AS",     "CORE",  "CPU", "DATA",
          "FSIZE", "MEMLOCK", "NOFILE", "NPROC", "RSS", "STACK"};
}

// DebugFlags as Slurm 22.05's `debug_str2flags` accepts them, without its
// aliases. (JobComp is a 23.02 name; 22.05 calls it Elasticsearch and stops
// with "DebugFlags invalid" on JobComp.)
std::vector<std::string> debugFlags() {
  return {"Accrue",       "Agent",        "Backfill",      "BackfillMap",
          "BurstBuffer",  "Cgroup",       "CPU_Bind",      "CpuFrequency",
          "Data",         "DB_Archive",   "DB_Assoc",      "DB_Event",
          "DB_Job",       "DB_QOS",       "DB_Query",      "DB_Reservation",
          "DB_Resource",  "DB_Step",      "DB_TRES",       "DB_Usage",
          "DB_WCKey",     "Dependency",   "Elasticsearch", "Energy",
          "ExtSensors",   "Federation",   "FrontEnd",      "Gang",
          "Gres",         "Hetjob",       "Interconnect",  "JobAccountGather",
          "JobContainer", "License",      "Network",       "NetworkRaw",
          "NodeFeatures", "NO_CONF_HASH", "Power",         "Priority",
          "Profile",      "Protocol",     "Reservation",   "Route",
          "Script",       "SelectType",   "Steps",         "Switch",
          "TimeCray",     "TraceJobs",    "Triggers",      "WorkQueue"};
}

// A parameter of a type that needs no more than its name and help.
ParamDef typedParam(std::string name, ParamType type, std::string help) {
  ParamDef def{};
  def.name = std::move(name);
  def.type = type;
  def.help = std::move(help);
  return def;
}

ParamDef intParam(std::string name, int64_t min, int64_t max, std::string help) {
  ParamDef def = typedParam(std::move(name), ParamType::kInt, std::move(help));
  def.min = min;
  def.max = max;
  return def;
}

// A kEnum or kEnumList parameter.
ParamDef enumParam(std::string name, ParamType type, std::vector<std::string> values,
                   std::string help) {
  ParamDef def = typedParam(std::move(name), type, std::move(help));
  def.values = std::move(values);
  return def;
}

ParamDef restart(ParamDef def) {
  def.needsRestart = true;
  return def;
}

ParamDef unlimited(ParamDef def) {
  def.allowUnlimited = true;
  return def;
}

// Parameters that slurm.conf and partitions share.

ParamDef defCpuPerGpu() {
  return intParam("DefCpuPerGPU", 1, 4096, "Default CPUs per allocated GPU.");
}

std::vector<ParamDef> memoryParams() {
  return {
      intParam("DefMemPerCPU", 1, kMaxMemoryMb, "Default memory per allocated CPU, in MB."),
      intParam("DefMemPerNode", 1, kMaxMemoryMb, "Default memory per allocated node, in MB."),
      unlimited(intParam("MaxMemPerCPU", 1, kMaxMemoryMb,
                         "Most memory a job may have per allocated CPU, in MB.")),
      unlimited(intParam("MaxMemPerNode", 1, kMaxMemoryMb,
                         "Most memory a job may have per allocated node, in MB.")),
  };
}

// long: a flat table, one row per slurm.conf parameter users may set; split
// up, it would be harder to scan, not easier.
std::vector<ParamDef> buildSlurmConfParams() {
  using T = ParamType;
  std::vector<ParamDef> defs = {
      restart(enumParam("SchedulerType", T::kEnum, {"sched/backfill", "sched/builtin"},
                        "Scheduler: backfill starts lower-priority jobs early when that delays "
                        "none of higher priority; builtin runs jobs strictly in priority order.")),
      typedParam("SchedulerParameters", T::kOptions,
                 "Scheduler tuning options, e.g. bf_continue,bf_max_job_test=500,"
                 "default_queue_depth=100."),
      restart(intParam("MaxJobCount", 1, 10000000,
                       "Most jobs slurmctld holds at once (pending, running and recently "
                       "finished); further submissions fail.")),
      intParam("MaxArraySize", 0, 4000001,
               "One more than the largest job array index; 0 disables job arrays."),
      intParam("MaxStepCount", 1, 100000000, "Most steps a single job may start."),
      intParam("MinJobAge", 2, 86400,
               "Seconds a finished job stays visible to squeue and scontrol before slurmctld "
               "forgets it."),
      intParam("KillWait", 0, kMax16,
               "Seconds between SIGTERM and SIGKILL when a job reaches its time limit."),
      unlimited(intParam("OverTimeLimit", 0, kMax16,
                         "Minutes a job may run past its time limit before it is cancelled.")),
      intParam("InactiveLimit", 0, kMax16,
               "Seconds an unresponsive srun or salloc keeps its job alive; 0 means for ever."),
      intParam("MessageTimeout", 1, 100,
               "Seconds allowed for a round-trip message between Slurm daemons."),
      intParam("TCPTimeout", 1, 100, "Seconds allowed to establish a TCP connection."),
      intParam("BatchStartTimeout", 1, kMax16,
               "Seconds a batch job may take to launch, prolog included, before it counts as "
               "lost."),
      intParam("CompleteWait", 0, kMax16,
               "Seconds to hold back new jobs while any job is completing."),
      intParam("UnkillableStepTimeout", 1, kMax16,
               "Seconds a step's processes may outlive SIGKILL before their node is drained."),
      intParam("SlurmdTimeout", 10, kMax16,
               "Seconds slurmctld waits for a silent slurmd before marking its node DOWN."),
      intParam("ReturnToService", 0, 2,
               "When a DOWN node returns to service: 0 only by hand, 1 if it was DOWN for not "
               "responding, 2 whenever it registers with a valid configuration."),
  };
  for (auto& def : memoryParams()) defs.push_back(std::move(def));
  std::vector<ParamDef> rest = {
      defCpuPerGpu(),
      intParam("DefMemPerGPU", 1, kMaxMemoryMb, "Default memory per allocated GPU, in MB."),
      enumParam("EnforcePartLimits", T::kEnum, {"ALL", "ANY", "NO"},
                "Refuse at submission a job that exceeds the limits of all (ALL) or of every "
                "(ANY) partition it names; NO leaves it pending."),
      intParam("JobRequeue", 0, 1, "Whether batch jobs may be requeued by default (1) or not (0)."),
      restart(enumParam("PreemptType", T::kEnum,
                        {"preempt/none", "preempt/partition_prio", "preempt/qos"},
                        "What decides which jobs may preempt others: nothing, partition "
                        "PriorityTier, or QOS.")),
      enumParam("PreemptMode", T::kEnumList,
                {"OFF", "CANCEL", "GANG", "REQUEUE", "SUSPEND", "WITHIN"},
                "How preempted jobs are stopped (OFF, CANCEL, REQUEUE or SUSPEND), plus GANG for "
                "time-slicing or WITHIN for preemption within a QOS."),
      typedParam("PreemptExemptTime", T::kTime,
                 "Least run time before a job may be preempted (REQUEUE and CANCEL only)."),
      restart(enumParam("PriorityType", T::kEnum, {"priority/basic", "priority/multifactor"},
                        "Job priority: basic is first come, first served; multifactor weighs "
                        "age, fair share, size, partition, QOS and TRES.")),
      typedParam("PriorityDecayHalfLife", T::kTime,
                 "Half-life of past usage in fair-share priority; 0 disables decay."),
      typedParam("PriorityMaxAge", T::kTime,
                 "Queue time at which a job's age priority factor reaches its maximum."),
      typedParam("PriorityFavorSmall", T::kBool,
                 "Whether smaller jobs get a larger job-size priority factor."),
      intParam("PriorityWeightAge", 0, kMaxPriorityWeight,
               "Weight of the age factor in job priority."),
      intParam("PriorityWeightFairshare", 0, kMaxPriorityWeight,
               "Weight of the fair-share factor in job priority."),
      intParam("PriorityWeightJobSize", 0, kMaxPriorityWeight,
               "Weight of the job-size factor in job priority."),
      intParam("PriorityWeightPartition", 0, kMaxPriorityWeight,
               "Weight of the partition factor in job priority."),
      intParam("PriorityWeightQOS", 0, kMaxPriorityWeight,
               "Weight of the QOS factor in job priority."),
      typedParam("PriorityWeightTRES", T::kTresWeights,
                 "Weight of each TRES in job priority, e.g. CPU=1000,Mem=2000,GRES/gpu=3000."),
      enumParam("SlurmctldDebug", T::kEnum, debugLevels(), "Log level of slurmctld."),
      enumParam("SlurmdDebug", T::kEnum, debugLevels(), "Log level of slurmd."),
      enumParam("DebugFlags", T::kEnumList, debugFlags(),
                "Subsystems that log in more detail, e.g. Backfill,Gres."),
      typedParam("Prolog", T::kPath, "Program each node runs as root before a job starts there."),
      typedParam("Epilog", T::kPath, "Program each node runs as root after a job ends there."),
      typedParam("TaskProlog", T::kPath,
                 "Program run as the user before each task; its output can set the task's "
                 "environment."),
      typedParam("TaskEpilog", T::kPath, "Program run as the user after each task."),
      typedParam("PrologSlurmctld", T::kPath, "Program slurmctld runs before it starts each job."),
      typedParam("EpilogSlurmctld", T::kPath, "Program slurmctld runs after each job ends."),
      enumParam("PropagateResourceLimits", T::kEnumList, resourceLimits(),
                "Resource limits (ulimit) of the submitting shell that jobs inherit; ALL or NONE "
                "alone, or a list such as CORE,NOFILE."),
      enumParam("PropagateResourceLimitsExcept", T::kEnumList, resourceLimits(),
                "Resource limits that jobs do not inherit from the submitting shell; all others "
                "propagate."),
      enumParam("MpiDefault", T::kEnum, {"none", "pmi2"},
                "MPI plugin srun uses unless told otherwise."),
      intParam("MaxTasksPerNode", 1, kMax16, "Most tasks a job step may start on one node."),
      intParam("HealthCheckInterval", 0, kMax16,
               "Seconds between runs of the node health check; 0 disables it."),
      unlimited(intParam("SuspendTime", 0, kMax16,
                         "Seconds a node stays idle before power saving suspends it; UNLIMITED "
                         "(the default) never suspends.")),
  };
  for (auto& def : rest) defs.push_back(std::move(def));
  return defs;
}

std::vector<ParamDef> buildPartitionParams() {
  using T = ParamType;
  std::vector<ParamDef> defs = {
      typedParam("MaxTime", T::kTime, "Longest time limit a job in the partition may have."),
      typedParam("DefaultTime", T::kTime, "Time limit of a job that does not ask for one."),
      typedParam("Default", T::kBool,
                 "Whether jobs that name no partition go here; one partition at most."),
      unlimited(intParam("MaxNodes", 1, 100000, "Most nodes a job in the partition may use.")),
      intParam("MinNodes", 0, 100000, "Fewest nodes a job in the partition may use."),
      intParam("PriorityTier", 0, kMax16,
               "Scheduling tier: jobs of a higher tier go first, and may preempt with "
               "preempt/partition_prio."),
      intParam("PriorityJobFactor", 0, kMax16,
               "Partition factor of job priority under priority/multifactor."),
      enumParam("State", T::kEnum, {"UP", "DOWN", "DRAIN", "INACTIVE"},
                "UP runs and accepts jobs; DOWN accepts but does not start them; DRAIN starts "
                "but does not accept them; INACTIVE does neither."),
      enumParam("OverSubscribe", T::kEnum, {"NO", "YES", "EXCLUSIVE", "FORCE"},
                "Whether jobs share nodes: NO, YES if they ask, EXCLUSIVE never, FORCE always."),
      typedParam("ExclusiveUser", T::kBool, "Whether a node runs jobs of only one user at a time."),
      typedParam("Hidden", T::kBool, "Whether sinfo and squeue hide the partition by default."),
      typedParam("RootOnly", T::kBool,
                 "Whether only root may allocate resources in the partition."),
      typedParam("ReqResv", T::kBool, "Whether jobs in the partition must run in a reservation."),
      typedParam("LLN", T::kBool, "Whether jobs go to the least loaded nodes first."),
      intParam("GraceTime", 0, kMax16, "Seconds a preempted job has to end before it is stopped."),
  };
  for (auto& def : memoryParams()) defs.push_back(std::move(def));
  std::vector<ParamDef> rest = {
      unlimited(intParam("MaxCPUsPerNode", 1, kMax16,
                         "Most CPUs of a node that jobs in the partition may use.")),
      defCpuPerGpu(),
      enumParam("PreemptMode", T::kEnumList, {"OFF", "CANCEL", "GANG", "REQUEUE", "SUSPEND"},
                "How jobs of this partition are preempted, overriding the cluster's PreemptMode "
                "under preempt/partition_prio."),
      typedParam("AllowAccounts", T::kNameList, "Accounts that may use the partition, or ALL."),
      typedParam("DenyAccounts", T::kNameList, "Accounts that may not use the partition."),
      typedParam("AllowQos", T::kNameList, "QOS that may use the partition, or ALL."),
      typedParam("DenyQos", T::kNameList, "QOS that may not use the partition."),
      typedParam("AllowGroups", T::kNameList,
                 "Unix groups whose users may use the partition, or ALL."),
  };
  for (auto& def : rest) defs.push_back(std::move(def));
  return defs;
}

}  // namespace

const std::vector<ParamDef>& slurmConfParams() {
  static const auto* defs = new std::vector<ParamDef>(buildSlurmConfParams());
  return *defs;
}

const std::vector<ParamDef>& partitionParams() {
  static const auto* defs = new std::vector<ParamDef>(buildPartitionParams());
  return *defs;
}

const ParamDef* findSlurmConfParam(const std::string& name) {
  return findIn(slurmConfParams(), name);
}

const ParamDef* findPartitionParam(const std::string& name) {
  return findIn(partitionParams(), name);
}

StatusOr<std::string> checkParamValue(const ParamDef& def, const std::string& value) {
  auto check = [&]() -> Checked {
    RETURN_IF_ERROR(checkCharacters(value));
    ASSIGN_OR_RETURN(std::string normal, checkByType(def, value));
    RETURN_IF_ERROR(checkValueRules(def, normal));
    return normal;
  };
  Checked checked = check();
  if (checked.isOk()) return checked;
  const std::string& why = checked.status().message();
  return invalidArgument(def.name + " must be " + acceptedForm(def) + ", got " + quote(value) +
                         (why.empty() ? "" : " (" + why + ")"));
}

StatusOr<std::pair<std::string, std::string>> parseAssignment(const std::vector<ParamDef>& defs,
                                                              const std::string& assignment) {
  size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    return invalidArgument("expected Key=Value, got " + quote(assignment));
  std::string key = assignment.substr(0, eq);
  const ParamDef* def = findIn(defs, key);
  if (def == nullptr) {
    std::vector<std::string> similar = similarNames(defs, key);
    return invalidArgument(quote(key) + " is not a parameter corral lets users set" +
                           (similar.empty() ? "" : "; did you mean " + join(similar, ", ") + "?") +
                           "; `corral config params` lists those it does");
  }
  ASSIGN_OR_RETURN(std::string value, checkParamValue(*def, assignment.substr(eq + 1)));
  return std::make_pair(def->name, std::move(value));
}

bool slurmConfNeedsRestart(const std::string& name) {
  const ParamDef* def = findSlurmConfParam(name);
  return def == nullptr || def->needsRestart;
}

Status checkSlurmConfCombination(const std::map<std::string, std::string>& conf) {
  RETURN_IF_ERROR(checkPreemption(conf));
  return checkExclusive(conf, {{"DefMemPerCPU", "DefMemPerNode"},
                               {"MaxMemPerCPU", "MaxMemPerNode"},
                               {"PropagateResourceLimits", "PropagateResourceLimitsExcept"}});
}

Status checkPartitionCombination(const std::map<std::string, std::string>& options) {
  return checkExclusive(options, {{"AllowAccounts", "DenyAccounts"},
                                  {"AllowQos", "DenyQos"},
                                  {"DefMemPerCPU", "DefMemPerNode"},
                                  {"MaxMemPerCPU", "MaxMemPerNode"}});
}

}  // namespace corral
