#include "slurm/release.h"

#include <algorithm>

namespace corral {

const std::vector<std::string>& supportedSlurmReleases() {
  // 26.05: Debian unstable's, for Kubernetes (Slinky's operator speaks
  // slurmrestd v0.0.44 and probes slurmctld's /livez and /readyz).
  static const std::vector<std::string> releases = {"22.05", "24.11", "26.05"};
  return releases;
}

const std::vector<std::string>& slurmReleaseHistory() {
  static const std::vector<std::string> releases = {"20.11", "21.08", "22.05", "23.02", "23.11",
                                                    "24.05", "24.11", "25.05", "25.11", "26.05"};
  return releases;
}

Status checkSupportedSlurmRelease(const std::string& release) {
  const auto& all = supportedSlurmReleases();
  if (std::find(all.begin(), all.end(), release) != all.end()) return Status::ok();
  std::string list;
  for (const auto& r : all) list += (list.empty() ? "" : ", ") + r;
  return invalidArgument("corral does not support Slurm " + release + " (it supports " + list + ")");
}

int compareSlurmReleases(const std::string& a, const std::string& b) { return a.compare(b); }

Status checkSlurmUpgrade(const std::string& from, const std::string& to) {
  if (from == to) return Status::ok();
  if (compareSlurmReleases(to, from) < 0)
    return failedPrecondition("Slurm cannot go back from " + from + " to " + to +
                              ": its state and accounting database are not downgraded; "
                              "`corral cluster clone` makes a new cluster on the older image");
  const auto& h = slurmReleaseHistory();
  auto f = std::find(h.begin(), h.end(), from), t = std::find(h.begin(), h.end(), to);
  if (f == h.end() || t == h.end())
    return failedPrecondition("corral does not know how to upgrade Slurm " + from + " to " + to);
  long steps = t - f;
  // Slurm 24.11 and later accept state from the three releases before them;
  // earlier releases from two.
  long window = compareSlurmReleases(to, "24.11") >= 0 ? 3 : 2;
  if (steps > window)
    return failedPrecondition("Slurm " + to + " upgrades in place only from the " +
                              std::to_string(window) + " releases before it (" + *(t - window) +
                              " or later), and this cluster runs " + from + " (" +
                              std::to_string(steps) + " releases older); `corral cluster clone` "
                              "makes a new cluster on the newer image instead");
  return Status::ok();
}

}  // namespace corral
