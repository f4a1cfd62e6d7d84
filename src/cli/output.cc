#include "cli/output.h"

#include <time.h>

#include <algorithm>
#include <cstdio>

namespace corral {
namespace {

constexpr const char* kNone = "-";

std::string orNone(const std::string& s) { return s.empty() ? kNone : s; }

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

std::string jsonIntText(const Json& j, const char* key) {
  const Json& v = jsonChild(j, key);
  if (v.is_number_integer() || v.is_number_unsigned()) return std::to_string(v.get<int64_t>());
  return kNone;
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

std::string jsonString(const Json& j, const char* key, const std::string& fallback) {
  const Json& v = jsonChild(j, key);
  return v.is_string() ? v.get<std::string>() : fallback;
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

std::string clusterListTable(const Json& body, int64_t nowUnixSeconds) {
  const Json& clusters = jsonChild(body, "clusters");
  if (!clusters.is_array() || clusters.empty()) {
    return "No clusters yet; create one with: corral cluster create NAME\n";
  }
  std::vector<std::vector<std::string>> rows = {
      {"NAME", "STATUS", "GPU-NODES", "CPU-NODES", "LOGIN", "AGE"}};
  for (const Json& c : clusters) {
    const Json& spec = jsonChild(c, "spec");
    int64_t created = jsonInt(c, "createdAt");
    rows.push_back({orNone(jsonString(c, "name")), orNone(jsonString(c, "status")),
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
    fields.emplace_back("Size", jsonIntText(spec, "gpuNodes") + " GPU nodes x " +
                                    jsonIntText(spec, "gpusPerNode") + " GPUs, " +
                                    jsonIntText(spec, "cpuNodes") + " CPU nodes");
  }
  if (std::string s = jsonString(cluster, "subnet"); !s.empty()) fields.emplace_back("Subnet", s);
  if (std::string login = loginCommand(cluster); !login.empty()) {
    fields.emplace_back("Login", login + "   (or: corral ssh " + name + ")");
  } else {
    fields.emplace_back("Login", "not yet known");
  }
  if (int64_t created = jsonInt(cluster, "createdAt"); created > 0) {
    fields.emplace_back("Age", formatAge(nowUnixSeconds - created));
  }

  std::string out;
  for (const auto& [key, value] : fields) {
    std::string label = key + ":";
    out += label + std::string(12 - std::min<size_t>(label.size(), 11), ' ') + sanitizeCell(value) +
           "\n";
  }
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
