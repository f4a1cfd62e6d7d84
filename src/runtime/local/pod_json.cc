#include "runtime/local/pod_json.h"

namespace corral {

nlohmann::json launchSpecToJson(const LaunchSpec& s) {
  nlohmann::json mounts = nlohmann::json::array();
  for (const auto& m : s.pod.mounts)
    mounts.push_back({{"source", m.source}, {"target", m.target}, {"readOnly", m.readOnly}});
  nlohmann::json daemons = nlohmann::json::array();
  for (const auto& d : s.pod.daemons) {
    daemons.push_back({{"name", d.name},
                       {"argv", d.argv},
                       {"env", d.env},
                       {"tcpPort", d.ready.tcpPort},
                       {"unixSocket", d.ready.unixSocket},
                       {"timeoutMs", d.ready.timeout.count()},
                       {"startAfterHost", d.startAfter.host},
                       {"startAfterPort", d.startAfter.port}});
  }
  return {{"cluster", s.pod.cluster},
          {"name", s.pod.name},
          {"role", s.pod.role},
          {"address", s.pod.address},
          {"prefixLength", s.pod.prefixLength},
          {"gpus", s.pod.gpus},
          {"generation", s.pod.generation},
          {"rollGeneration", s.pod.rollGeneration},
          {"image",
           {{"name", s.pod.image.name}, {"id", s.pod.image.id}, {"slurmVersion", s.pod.image.slurmVersion}}},
          {"mounts", mounts},
          {"scratchDirs", s.pod.scratchDirs},
          {"setupDirs", s.pod.setupDirs},
          {"daemons", daemons},
          {"netnsPath", s.netnsPath},
          {"podDir", s.podDir},
          {"imageRootfs", s.imageRootfs},
          {"idBase", s.ids.base},
          {"idCount", s.ids.count}};
}

StatusOr<LaunchSpec> launchSpecFromJson(const nlohmann::json& j) {
  try {
    LaunchSpec s;
    s.pod.cluster = j.at("cluster").get<std::string>();
    s.pod.name = j.at("name").get<std::string>();
    s.pod.role = j.at("role").get<std::string>();
    s.pod.address = j.at("address").get<std::string>();
    s.pod.prefixLength = j.at("prefixLength").get<int>();
    s.pod.gpus = j.at("gpus").get<int>();
    s.pod.generation = j.value("generation", 0);
    s.pod.rollGeneration = j.value("rollGeneration", 0);
    if (j.contains("image")) {
      s.pod.image.name = j["image"].value("name", "");
      s.pod.image.id = j["image"].value("id", "");
      s.pod.image.slurmVersion = j["image"].value("slurmVersion", "");
    }
    for (const auto& m : j.at("mounts"))
      s.pod.mounts.push_back({m.at("source").get<std::string>(), m.at("target").get<std::string>(),
                              m.at("readOnly").get<bool>()});
    s.pod.setupDirs = j.at("setupDirs").get<std::vector<std::string>>();
    s.pod.scratchDirs = j.value("scratchDirs", std::vector<std::string>{});
    for (const auto& d : j.at("daemons")) {
      DaemonSpec ds;
      ds.name = d.at("name").get<std::string>();
      ds.argv = d.at("argv").get<std::vector<std::string>>();
      ds.env = d.at("env").get<std::map<std::string, std::string>>();
      ds.ready.tcpPort = d.at("tcpPort").get<int>();
      ds.ready.unixSocket = d.at("unixSocket").get<std::string>();
      ds.ready.timeout = std::chrono::milliseconds(d.at("timeoutMs").get<int64_t>());
      ds.startAfter.host = d.value("startAfterHost", "");
      ds.startAfter.port = d.value("startAfterPort", 0);
      s.pod.daemons.push_back(std::move(ds));
    }
    s.netnsPath = j.at("netnsPath").get<std::string>();
    s.podDir = j.at("podDir").get<std::string>();
    s.imageRootfs = j.at("imageRootfs").get<std::string>();
    s.ids.base = j.at("idBase").get<uint32_t>();
    s.ids.count = j.at("idCount").get<uint32_t>();
    if (s.ids.base == 0 || s.ids.count == 0)
      return invalidArgument("malformed pod launch spec: a pod needs an id range other than the host's");
    return s;
  } catch (const nlohmann::json::exception& e) {
    return invalidArgument(std::string("malformed pod launch spec: ") + e.what());
  }
}

}  // namespace corral
