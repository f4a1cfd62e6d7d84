#include "slurm/config_check.h"

#include <sstream>

namespace corral {
namespace {

// $1: the candidate directory; $2: the controller's address. Prints
// "corral-check: ok" or "corral-check: failed" and, on failure, slurmctld's
// output.
constexpr const char* kScript = R"sh(
set -u
cand=$1
addr=$2
mkdir -p /tmp/.corral-check-munge
mount --bind /run/munge /tmp/.corral-check-munge
mount -t tmpfs tmpfs /run
mkdir -p /run/munge /run/check
mount --move /tmp/.corral-check-munge /run/munge
rmdir /tmp/.corral-check-munge
cp -a /var/spool/slurmctld/. /run/check-state 2>/dev/null || mkdir -p /run/check-state
mount --bind /run/check-state /var/spool/slurmctld
mount -t tmpfs tmpfs /var/log/slurm
cp "$cand"/*.conf /run/check/
sed -i -e 's#^AccountingStorageType=.*#AccountingStorageType=accounting_storage/none#' \
       -e '/^AccountingStorageTRES=/d' /run/check/slurm.conf
ip link set lo up
ip link add c0 type veth peer name c1
ip addr add "$addr/24" dev c0
ip link set c0 up
ip link set c1 up
slurmctld -D -f /run/check/slurm.conf >/run/check/out 2>&1 &
pid=$!
i=0
while [ $i -lt 300 ]; do
  if ! kill -0 $pid 2>/dev/null; then
    echo "corral-check: failed"
    cat /run/check/out
    exit 1
  fi
  # Fully started, not merely listening: 24.11 listens first and parses
  # some parameters (PriorityWeightTRES) only afterwards.
  if grep -q 'Running as primary controller' /run/check/out; then
    echo "corral-check: ok"
    exit 0
  fi
  sleep 0.02
  i=$((i+1))
done
echo "corral-check: failed"
echo "slurmctld did not finish starting within 6 s"
cat /run/check/out
exit 1
)sh";

// slurmctld lines worth showing a user: fatal ones, and errors that are not
// the noise every start of slurmctld in a pod prints.
bool interesting(const std::string& line) {
  if (line.find("fatal") != std::string::npos) return true;
  if (line.find("error") == std::string::npos) return false;
  for (const char* noise : {"pmix", "PMIx", "MPI", "pam_slurm_adopt", "state file",
                            "state save file", "accounting information", "Job accounting"})
    if (line.find(noise) != std::string::npos) return false;
  return true;
}

}  // namespace

std::vector<std::string> configCheckCommand(const std::string& candidateDir,
                                            const std::string& controllerAddress) {
  return {"unshare", "--mount", "--net", "--pid", "--fork", "sh",
          "-c",      kScript,   "corral-check", candidateDir, controllerAddress};
}

Status configCheckResult(const ProcessResult& result) {
  if (result.exitCode == 0 && result.out.find("corral-check: ok") != std::string::npos)
    return Status::ok();
  std::istringstream lines(result.out + "\n" + result.err);
  std::string line, said;
  while (std::getline(lines, line)) {
    if (!interesting(line) && line.find("did not finish starting") == std::string::npos) continue;
    if (!said.empty()) said += "; ";
    said += line;
  }
  if (said.empty()) said = "slurmctld exited without saying why (status " +
                           std::to_string(result.exitCode) + ")";
  return invalidArgument("slurmctld refused the new configuration: " + said);
}

}  // namespace corral
