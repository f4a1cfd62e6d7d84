#!/usr/bin/env bash
# Measures how long changes to a Running cluster take to apply, with a job
# running on it throughout: scale-up by 2 nodes to idle, a partition change,
# an accepted `config set`, and a refused one including its rollback. Runs
# against a corrald of its own.
#   sudo bench/changes.sh [ROUNDS]          (default: 3 rounds)
# Needs a build in ./build and jq. Prints Markdown tables:
# - "server": from the ChangeRequested event to the Applied/RolledBack event
#   (corrald's own timestamps; what the change costs);
# - "CLI": the wall time of the `corral` command, which polls every 250 ms;
# - where scale-up's time goes, from corrald's phase log.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
# shellcheck source=bench/lib.sh
source bench/lib.sh
cleanup() {
  corral cluster delete bench --wait >/dev/null 2>&1 || true
  stop_corrald
}
start_corrald "/var/lib/corral-bench-changes-$$" $((19000 + $$ % 1000)) 172.26.0.0/16
trap cleanup EXIT
wait_for_corrald

corral cluster create bench --gpu-nodes 4 --wait >/dev/null
# A job that runs through every change; it must still be running at the end.
job=$(corral ssh bench -- "sbatch --parsable -w slinky-0 -o /dev/null --wrap 'sleep 100000'")
for _ in $(seq 40); do
  [[ $(corral ssh bench -- "squeue -h -j $job -o %T") == RUNNING ]] && break
  sleep 0.25
done

# Seconds between the newest ChangeRequested event and the newest
# Applied/RolledBack event after it.
server_seconds() {
  corral events bench -o json | jq -r '
    .events as $e
    | ([$e[] | select(.reason == "ChangeRequested")] | last | .time) as $t0
    | ([$e[] | select((.reason == "Applied" or .reason == "RolledBack") and .time >= $t0)]
       | last | .time) as $t1
    | (($t1 - $t0) / 1000)'
}

declare -A server_times cli_times
measure() {  # NAME EXPECTED-EXIT COMMAND...
  local name=$1 expect=$2
  shift 2
  local t0 t1 rc=0
  t0=$(now)
  "$@" >/dev/null 2>&1 || rc=$?
  t1=$(now)
  if [[ $rc != "$expect" ]]; then
    echo "bench: $name exited $rc, expected $expect" >&2
    exit 1
  fi
  server_times[$name]+="$(server_seconds) "
  cli_times[$name]+="$(echo "$t1 - $t0" | bc) "
}

for r in $(seq "$rounds"); do
  measure "scale-up 4→6" 0 corral cluster scale bench --gpu-nodes 6
  measure "scale-down 6→4" 0 corral cluster scale bench --gpu-nodes 4
  measure "partition create" 0 corral partition create bench "short$r" --nodes 'slinky-[0-1]' MaxTime=30
  measure "partition delete" 0 corral partition delete bench "short$r"
  measure "config set (accepted)" 0 corral config set bench "MinJobAge=$((200 + r))"
  measure "config set (refused + rollback)" 1 corral config set bench \
    PriorityType=priority/multifactor PriorityWeightTRES=GRES/foo=5
done

state=$(corral ssh bench -- "squeue -h -j $job -o %T")
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "| change | server median (s) | server, each round (s) | CLI median (s) |"
echo "|---|---|---|---|"
for name in "scale-up 4→6" "scale-down 6→4" "partition create" "partition delete" \
            "config set (accepted)" "config set (refused + rollback)"; do
  echo "| $name | $(echo "${server_times[$name]}" | median) | ${server_times[$name]} | $(echo "${cli_times[$name]}" | median) |"
done
echo
echo "The job submitted before the first change is $state after all of them."
echo
echo "Where scale-up's time goes (last round, from corrald's phase log):"
awk '/phase: applying revision .*scale to 6/ {block = ""; on = 1}
     on && /phase:|Applied:/ {block = block $0 "\n"}
     on && /Applied: / {on = 0; last = block}
     END {printf "%s", last}' "$data.log" | sed 's/^/    /'
corral ssh bench -- "scancel $job" >/dev/null
