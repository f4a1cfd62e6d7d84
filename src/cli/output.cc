#include "cli/output.h"

#include <time.h>

#include <algorithm>
#include <cstdio>

namespace corral {
namespace {

constexpr const char* kNone = "-";

std::string sanitizeCell(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  return out;
}

// Terminal columns of UTF-8 text, counting each code point as one column;
// good enough for the names and messages corral shows.
size_t displayWidth(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string loginCommand(const Json& cluster) {
  const Json& login = jsonChild(cluster, "login");
  std::string address = jsonString(login, "address");
  if (address.empty()) return "";
  int64_t port = jsonInt(login, "port", 22);
  std::string cmd = "ssh ";
  if (port != 22 && port > 0) cmd += "-p " + std::to_string(port) + " ";
  return cmd + "root@" + address;
}

}  // namespace

std::string orNone(const std::string& s) { return s.empty() ? kNone : s; }

std::string jsonIntText(const Json& j, const char* key) {
  const Json& v = jsonChild(j, key);
  if (v.is_number_integer() || v.is_number_unsigned()) return std::to_string(v.get<int64_t>());
  return kNone;
}

std::string jsonString(const Json& j, const char* key, const std::string& fallback) {
  const Json& v = jsonChild(j, key);
  return v.is_string() ? v.get<std::string>() : fallback;
}

bool jsonBool(const Json& j, const char* key, bool fallback) {
  const Json& v = jsonChild(j, key);
  return v.is_boolean() ? v.get<bool>() : fallback;
}

int64_t jsonInt(const Json& j, const char* key, int64_t fallback) {
  const Json& v = jsonChild(j, key);
  if (v.is_number_integer() || v.is_number_unsigned()) return v.get<int64_t>();
  return fallback;
}

const Json& jsonChild(const Json& j, const char* key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string formatAge(int64_t seconds) {
  if (seconds < 60) return std::to_string(std::max<int64_t>(seconds, 0)) + "s";
  if (seconds < 3600) return std::to_string(seconds / 60) + "m";
  if (seconds < 86400) return std::to_string(seconds / 3600) + "h";
  return std::to_string(seconds / 86400) + "d";
}

std::string formatLocalTime(int64_t unixMillis) {
  // Floor division, so that times before 1970 still round down.
  time_t secs = static_cast<time_t>(unixMillis / 1000 - (unixMillis % 1000 < 0 ? 1 : 0));
  struct tm tm {};
  if (localtime_r(&secs, &tm) == nullptr) return kNone;
  char base[64];
  if (strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm) == 0) return kNone;
  long off = tm.tm_gmtoff;
  char sign = off < 0 ? '-' : '+';
  if (off < 0) off = -off;
  char zone[32];
  std::snprintf(zone, sizeof zone, "%c%02ld:%02ld", sign, off / 3600, (off % 3600) / 60);
  return std::string(base) + zone;
}

std::string renderTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], displayWidth(sanitizeCell(row[i])));
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      std::string cell = sanitizeCell(row[i]);
      line += cell;
      if (i + 1 < row.size()) line += std::string(widths[i] - displayWidth(cell) + 3, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string renderJson(const Json& j) {
  // `replace` keeps a stray invalid UTF-8 byte from turning into an exception.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string renderFields(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [key, value] : fields) {
    std::string label = key + ":";
    out += label + std::string(12 - std::min<size_t>(label.size(), 11), ' ') + sanitizeCell(value) +
           "\n";
  }
  return out;
}

std::string clusterListTable(const Json& body, int64_t nowUnixSeconds) {
  const Json& clusters = jsonChild(body, "clusters");
  if (!clusters.is_array() || clusters.empty()) {
    return "No clusters yet; create one with: corral cluster create NAME\n";
  }
  std::vector<std::vector<std::string>> rows = {
      {"NAME", "STATUS", "IMAGE", "GPU-NODES", "CPU-NODES", "LOGIN", "AGE"}};
  for (const Json& c : clusters) {
    const Json& spec = jsonChild(c, "spec");
    int64_t created = jsonInt(c, "createdAt");
    rows.push_back({orNone(jsonString(c, "name")), orNone(jsonString(c, "status")),
                    orNone(jsonString(jsonChild(spec, "image"), "name")),
                    jsonIntText(spec, "gpuNodes"), jsonIntText(spec, "cpuNodes"),
                    orNone(jsonString(jsonChild(c, "login"), "address")),
                    created > 0 ? formatAge(nowUnixSeconds - created) : kNone});
  }
  return renderTable(rows);
}

std::string nodeDisplayName(const Json& node) {
  std::string physical = jsonString(node, "physicalId");
  std::string name = jsonString(node, "name");
  if (physical.empty()) return orNone(name);
  if (name.empty()) return physical;
  return physical + " (" + name + ")";
}

std::string clusterDetail(const Json& cluster, int64_t nowUnixSeconds) {
  std::vector<std::pair<std::string, std::string>> fields;
  std::string name = jsonString(cluster, "name");
  fields.emplace_back("Name", orNone(name));
  fields.emplace_back("Status", orNone(jsonString(cluster, "status")));
  if (std::string p = jsonString(cluster, "phase"); !p.empty()) fields.emplace_back("Phase", p);
  if (std::string r = jsonString(cluster, "reason"); !r.empty()) fields.emplace_back("Reason", r);
  std::string revision = jsonIntText(cluster, "revision");
  std::string applied = jsonIntText(cluster, "appliedRevision");
  if (applied == "0" && revision != kNone) {
    revision += " (not applied yet)";
  } else if (applied != kNone && applied != revision) {
    revision += " (applied " + applied + ")";
  }
  fields.emplace_back("Revision", revision);
  const Json& spec = jsonChild(cluster, "spec");
  if (spec.is_object()) {
    const Json& image = jsonChild(spec, "image");
    if (image.is_object() && !jsonString(image, "name").empty())
      fields.emplace_back("Image", jsonString(image, "name") + " (Slurm " +
                                       jsonString(image, "slurmVersion") + ", build " +
                                       jsonString(image, "id").substr(0, 12) + ")");
    fields.emplace_back("Size", jsonIntText(spec, "gpuNodes") + " GPU nodes x " +
                                    jsonIntText(spec, "gpusPerNode") + " GPUs, " +
                                    jsonIntText(spec, "cpuNodes") + " CPU nodes");
  }
  if (std::string s = jsonString(cluster, "subnet"); !s.empty()) fields.emplace_back("Subnet", s);
  std::string status = jsonString(cluster, "status");
  if (status == "Terminating" || status == "Terminated" || status == "Failed") {
    fields.emplace_back("Login", "none: the cluster is " + status + " (no pods run)");
  } else if (std::string login = loginCommand(cluster); !login.empty()) {
    fields.emplace_back("Login", login + "   (or: corral ssh " + name + ")");
  } else {
    fields.emplace_back("Login", "not yet known");
  }
  if (int64_t created = jsonInt(cluster, "createdAt"); created > 0) {
    fields.emplace_back("Age", formatAge(nowUnixSeconds - created));
  }

  std::string out = renderFields(fields);
  const Json& nodes = jsonChild(cluster, "nodes");
  if (!nodes.is_array() || nodes.empty()) {
    out += "Nodes:      none yet\n";
    return out;
  }
  std::vector<std::vector<std::string>> rows = {
      {"NODE", "PHYSICAL-ID", "GROUP", "GPUS", "STATE", "ADDRESS"}};
  for (const Json& n : nodes) {
    rows.push_back({orNone(jsonString(n, "name")), nodeDisplayName(n),
                    orNone(jsonString(n, "group")), jsonIntText(n, "gpus"),
                    orNone(jsonString(n, "state")), orNone(jsonString(n, "address"))});
  }
  out += "\n" + renderTable(rows);
  return out;
}

std::string eventsTable(const Json& body) {
  const Json& events = jsonChild(body, "events");
  if (!events.is_array() || events.empty()) return "No events.\n";
  std::vector<std::vector<std::string>> rows = {{"TIME", "TYPE", "REASON", "MESSAGE"}};
  for (const Json& e : events) {
    const Json& t = jsonChild(e, "time");
    bool hasTime = t.is_number_integer() || t.is_number_unsigned();
    rows.push_back({hasTime ? formatLocalTime(t.get<int64_t>()) : kNone,
                    orNone(jsonString(e, "type")), orNone(jsonString(e, "reason")),
                    jsonString(e, "message")});
  }
  return renderTable(rows);
}

std::string progressLine(const Json& cluster) {
  std::string status = orNone(jsonString(cluster, "status"));
  std::string phase = jsonString(cluster, "phase");
  return sanitizeCell(phase.empty() ? status : status + ": " + phase);
}

}  // namespace corral

namespace corral {
namespace {

// The strings of a JSON array joined by `sep`; other values are skipped.
std::string joinStrings(const Json& list, const std::string& sep) {
  std::string out;
  if (!list.is_array()) return out;
  for (const Json& v : list) {
    if (!v.is_string()) continue;
    out += (out.empty() ? "" : sep) + v.get<std::string>();
  }
  return out;
}

std::string quotedName(const std::string& s) { return "\"" + sanitizeCell(s) + "\""; }

// "Key=Value Key=Value" of a JSON object of strings, in the order sent.
std::string optionsText(const Json& options) {
  std::string out;
  if (!options.is_object()) return out;
  for (auto it = options.begin(); it != options.end(); ++it) {
    std::string value = it->is_string() ? it->get<std::string>() : it->dump();
    out += (out.empty() ? "" : " ") + it.key() + "=" + value;
  }
  return out;
}

std::string paramRange(const Json& p) {
  std::string type = jsonString(p, "type");
  if (type == "int") {
    std::string range = jsonIntText(p, "min") + ".." + jsonIntText(p, "max");
    const Json& unlimited = jsonChild(p, "allowUnlimited");
    if (unlimited.is_boolean() && unlimited.get<bool>()) range += ", INFINITE";
    return range;
  }
  if (std::string values = joinStrings(jsonChild(p, "values"), ","); !values.empty()) return values;
  if (type == "bool") return "YES,NO";
  if (type == "time") return "minutes, [D-]H:M:S or INFINITE";
  return kNone;
}

std::string paramsSection(const Json& params) {
  if (!params.is_array() || params.empty()) return "none\n";
  std::vector<std::vector<std::string>> rows = {
      {"NAME", "TYPE", "RANGE/VALUES", "RESTART", "HELP"}};
  for (const Json& p : params) {
    const Json& restart = jsonChild(p, "needsRestart");
    rows.push_back({orNone(jsonString(p, "name")), orNone(jsonString(p, "type")), paramRange(p),
                    restart.is_boolean() && restart.get<bool>() ? "yes" : "no",
                    jsonString(p, "help")});
  }
  return renderTable(rows);
}

}  // namespace

std::string changeHeadline(const Json& change) {
  std::string message = jsonString(change, "message");
  return "revision " + jsonIntText(change, "revision") +
         (message.empty() ? "" : ": " + sanitizeCell(message)) + "\n";
}

std::string scaleSummary(const Json& change) {
  std::string out;
  std::string removed = sanitizeCell(jsonString(change, "removedNodes"));
  if (!removed.empty()) out += "removes nodes " + removed + "\n";
  const Json& emptied = jsonChild(change, "emptiedPartitions");
  if (emptied.is_array()) {
    for (const Json& p : emptied) {
      if (!p.is_string()) continue;
      out += "warning: partition " + quotedName(p.get<std::string>()) +
             " has no nodes left after this change\n";
    }
  }
  std::string jobs = sanitizeCell(joinStrings(jsonChild(change, "jobsOnRemovedNodes"), ", "));
  if (!jobs.empty()) {
    std::string fate = jsonString(change, "jobsWillBe");
    if (fate == "cancelled") {
      out += "--force cancels these jobs on " + orNone(removed) + ": " + jobs + "\n";
    } else {
      out += "waiting for jobs " + jobs +
             " to finish on the removed nodes (use --force to cancel them)\n";
    }
  }
  return out;
}

std::string partitionDeleteSummary(const Json& change, const std::string& partition) {
  std::string jobs = sanitizeCell(joinStrings(jsonChild(change, "jobsInPartition"), ", "));
  if (jobs.empty()) return "";
  return "warning: these jobs lose partition " + quotedName(partition) +
         " (running ones keep running, pending ones fail): " + jobs + "\n";
}

std::string historyTable(const Json& body, int64_t nowUnixSeconds) {
  const Json& revisions = jsonChild(body, "revisions");
  if (!revisions.is_array() || revisions.empty()) return "No revisions.\n";
  int64_t applied = jsonInt(body, "appliedRevision");
  std::vector<std::vector<std::string>> rows = {{"REVISION", "STATE", "AUTHOR", "AGE", "MESSAGE"}};
  std::vector<std::string> errors = {""};
  for (const Json& r : revisions) {
    std::string state = orNone(jsonString(r, "state"));
    if (state == "Applied" && applied > 0 && jsonInt(r, "revision") == applied) {
      state += " (current)";
    }
    int64_t created = jsonInt(r, "createdAt");
    rows.push_back({jsonIntText(r, "revision"), state, orNone(jsonString(r, "author")),
                    created > 0 ? formatAge(nowUnixSeconds - created) : kNone,
                    jsonString(r, "message")});
    std::string error = jsonString(r, "error");
    errors.push_back(jsonString(r, "state") == "Failed" && !error.empty() ? error : "");
  }
  std::string table = renderTable(rows);
  // The error goes under the STATE column, so that it reads as part of the row.
  size_t indent = table.find("STATE");
  std::string out;
  size_t row = 0;
  size_t begin = 0;
  while (begin < table.size()) {
    size_t end = table.find('\n', begin);
    out += table.substr(begin, end - begin + 1);
    if (row < errors.size() && !errors[row].empty()) {
      out += std::string(indent, ' ') + "error: " + sanitizeCell(errors[row]) + "\n";
    }
    ++row;
    begin = end + 1;
  }
  return out;
}

std::string partitionTable(const Json& body) {
  std::vector<std::vector<std::string>> rows = {
      {"NAME", "NODES", "DEFAULT", "MANAGED-BY", "OPTIONS"}};
  const Json& partitions = jsonChild(body, "partitions");
  if (partitions.is_array()) {
    for (const Json& p : partitions) {
      const Json& isDefault = jsonChild(p, "default");
      rows.push_back({orNone(jsonString(p, "name")), orNone(jsonString(p, "nodes")),
                      isDefault.is_boolean() && isDefault.get<bool>() ? "yes" : "no",
                      orNone(jsonString(p, "managedBy")),
                      orNone(optionsText(jsonChild(p, "options")))});
    }
  }
  return renderTable(rows) + jsonIntText(body, "userPartitions") + " of " +
         std::to_string(jsonInt(body, "limit", 20)) + " user partitions\n";
}

std::string configLines(const Json& body) {
  const Json& conf = jsonChild(body, "slurmConf");
  if (!conf.is_object() || conf.empty()) return "no settings; corral's defaults apply\n";
  std::string out;
  for (auto it = conf.begin(); it != conf.end(); ++it) {
    std::string value = it->is_string() ? it->get<std::string>() : it->dump();
    out += sanitizeCell(it.key() + "=" + value) + "\n";
  }
  return out;
}

std::string slurmParamsTable(const Json& body) {
  return "slurm.conf parameters (corral config set CLUSTER Key=Value):\n" +
         paramsSection(jsonChild(body, "slurmConf")) +
         "\npartition options (corral partition create|update CLUSTER NAME Key=Value):\n" +
         paramsSection(jsonChild(body, "partition"));
}

}  // namespace corral
