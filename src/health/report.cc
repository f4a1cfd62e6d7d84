#include "health/report.h"

#include <nlohmann/json.hpp>

namespace corral {
namespace {

using nlohmann::json;

std::string text(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

int64_t number(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

}  // namespace

std::string HealthReport::summary() const {
  if (!slurmdOk) return "slurmd not running";
  if (!gpuOk) return "GPU XID";
  return "ok";
}

std::string healthReportJson(const HealthReport& r, int indent) {
  json xids = json::array();
  for (const auto& x : r.xids) {
    xids.push_back({{"time", x.time},
                    {"code", x.code},
                    {"pci", x.pci},
                    {"class", x.cls},
                    {"description", x.description},
                    {"action", x.action},
                    {"line", x.line}});
  }
  json j = {{"node", r.node},
            {"slurmd", r.slurmdOk ? "ok" : "not running"},
            {"gpu", r.gpuOk ? "ok" : "xid"},
            {"xids", std::move(xids)}};
  if (r.time != 0) j["time"] = r.time;
  // Log lines are not necessarily UTF-8; replace what is not rather than throw.
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

std::optional<HealthReport> parseHealthReport(const std::string& input) {
  json j = json::parse(input, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  HealthReport r;
  r.node = text(j, "node");
  r.slurmdOk = text(j, "slurmd") == "ok";
  std::string gpu = text(j, "gpu");
  r.gpuOk = gpu.empty() || gpu == "ok";
  r.time = number(j, "time");
  if (auto xs = j.find("xids"); xs != j.end() && xs->is_array()) {
    for (const json& e : *xs) {
      if (!e.is_object()) continue;
      ReportedXid x;
      x.time = number(e, "time");
      x.code = static_cast<int>(number(e, "code"));
      x.pci = text(e, "pci");
      x.cls = text(e, "class");
      if (x.cls != "application" && x.cls != "hardware") x.cls = "unknown";
      x.description = text(e, "description");
      x.action = text(e, "action");
      x.line = text(e, "line");
      r.xids.push_back(std::move(x));
    }
  }
  return r;
}

}  // namespace corral
