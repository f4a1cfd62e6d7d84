#!/usr/bin/env bash
# Issue 15's speed figures against the real local API server and the real
# Slinky operator (test/k8s/env.sh): create, scale, config change and a
# steady re-apply of a 4-GPU-node cluster, REPETITIONS times (default 10),
# median and max, with KubeClient's request counts; then ClusterWatcher's
# cost for a steady cluster. See bench/kube_apply.cc.
#
#   test/k8s/env.sh build && ninja -C build corral_kube_bench   # first, once
#   bench/kube.sh [REPETITIONS]
#
# Builds nothing. Starts the environment in a fresh directory, always stops
# it (trap), runs at nice 5.
set -euo pipefail
cd "$(dirname "$0")/.."

reps=${1:-10}
bench=${BENCH_BIN:-build/corral_kube_bench}
[[ -x $bench ]] || { echo "no $bench: build the corral_kube_bench target first" >&2; exit 1; }

dir=$(mktemp -d /tmp/corral-kube-bench-XXXXXX)
rmdir "$dir"  # env.sh start wants a directory of its own making.
started=0
cleanup() {
  if [[ $started == 1 ]]; then
    test/k8s/env.sh stop "$dir" >/dev/null 2>&1 || echo "env.sh stop $dir failed" >&2
    rm -f "$dir.start.log"
  fi
}
trap cleanup EXIT

started=1
nice -n 5 test/k8s/env.sh start "$dir" 2>"$dir.start.log" ||
  { cat "$dir.start.log" >&2; exit 1; }
rm -f "$dir.start.log"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
nice -n 5 "$bench" "$dir/kubeconfig" "$reps"
# What the operator complained of meanwhile (messages with the names cut).
echo "operator log, error lines by controller and message:"
jq -r 'select(.level == "error" and .msg == "Reconciler error")
       | "\(.controller): \(.error | gsub("corral-bench-[0-9-]+"; "<ns>") | gsub("bench-[0-9]+"; "<c>") | .[0:300])"' \
  "$dir/logs/slurm-operator.log" 2>/dev/null | sort | uniq -c | sort -rn | head -8 || true
