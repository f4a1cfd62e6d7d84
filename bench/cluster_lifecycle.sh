#!/usr/bin/env bash
# Measures cluster create-to-Running and delete times, memory per idle
# worker pod, and where creation time goes, against a corrald of its own.
#   sudo bench/cluster_lifecycle.sh [ROUNDS] [SIZES...]   (default: 3 rounds, sizes 4 32)
# Needs a build in ./build. Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
shift || true
sizes=("${@:-4 32}")
read -r -a sizes <<< "${sizes[*]}"
# shellcheck source=bench/lib.sh
source bench/lib.sh
cleanup() {
  for c in $(ls "$data/clusters" 2>/dev/null); do
    corral cluster delete "$c" --wait >/dev/null 2>&1 || true
  done
  stop_corrald "$data".events-*
}
start_corrald "/var/lib/corral-bench-$$" $((18000 + $$ % 1000)) 172.28.0.0/16
trap cleanup EXIT
wait_for_corrald

pod_rss_kb() {  # Sum of RSS of every process in one pod's PID namespace.
  local p=$1 ns total=0
  ns=$(readlink "/proc/$p/ns/pid_for_children" 2>/dev/null || readlink "/proc/$p/ns/pid")
  for d in /proc/[0-9]*; do
    [[ $(readlink "$d/ns/pid" 2>/dev/null) == "$ns" ]] || continue
    total=$((total + $(awk '/^VmRSS/ {print $2}' "$d/status" 2>/dev/null || echo 0)))
  done
  echo "$total"
}

echo "| nodes | round | create→Running (s) | delete (s) |"
echo "|---|---|---|---|"
for n in "${sizes[@]}"; do
  for r in $(seq "$rounds"); do
    t0=$(now)
    corral cluster create "b$n" --gpu-nodes "$n" --wait >/dev/null 2>&1
    t1=$(now)
    if [[ $r == 1 ]]; then
      corral events "b$n" -o json > "$data.events-$n.json" || true
      w=$(cat "$data/clusters/b$n/pods/slinky-0/supervisor/pid")
      c=$(cat "$data/clusters/b$n/pods/controller/supervisor/pid")
      mem_worker=$(pod_rss_kb "$w")
      mem_ctl=$(pod_rss_kb "$c")
    fi
    corral cluster delete "b$n" --wait >/dev/null 2>&1
    t2=$(now)
    printf "| %s | %s | %.2f | %.2f |\n" "$n" "$r" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)"
  done
  echo "phases of the last $n-node create (seconds after the request):" >&2
  grep -E "cluster b$n: (phase|Running)" "$data.log" | tail -n 40 |
    awk '{ split($1, t, "T"); split(t[2], hms, ":");
           s = hms[1]*3600 + hms[2]*60 + substr(hms[3], 1, length(hms[3])-1);
           if ($0 ~ /phase: queued/ || first == "") first = s;
           $1=""; $2=""; sub(/^ +cluster [^ ]+ /, ""); lines[++n] = sprintf("  +%5.2f  %s", s - first, $0) }
         END { for (i = 1; i <= n; i++) print lines[i] }' | sed -n '/+ 0.00/,$p' | tail -n 12 >&2
  echo "memory (RSS) of an idle worker pod with $n nodes: ${mem_worker} KiB; controller pod: ${mem_ctl} KiB" >&2
done
