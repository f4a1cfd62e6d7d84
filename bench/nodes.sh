#!/usr/bin/env bash
# Measures node failure and recovery on a 3-node cluster of its own:
# - node reboot to the node idle again (a reboot recreates the node's pod);
# - a worker's death (its pod's PID 1 killed) to Slurm marking it down, and to
#   idle again;
# - an injected hardware XID (79) to the node drained, and a reboot of the
#   drained node to idle (corral resumes the drain it set).
#   sudo bench/nodes.sh [ROUNDS]          (default: 3)
# Slurm's view is polled every 20 ms inside the controller pod (nsenter), so
# the figures do not include an ssh round trip. Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
# shellcheck source=bench/lib.sh
source bench/lib.sh
cleanup() {
  corral cluster delete bench --wait >/dev/null 2>&1 || true
  cp "$data.log" /var/tmp/bench-nodes-corrald.log 2>/dev/null || true  # For "where the time goes".
  stop_corrald
}
start_corrald "/var/lib/corral-bench-nodes-$$" $((20000 + $$ % 1000)) 172.25.0.0/16
trap cleanup EXIT
wait_for_corrald
corral cluster create bench --gpu-nodes 3 --wait >/dev/null

pods=$data/clusters/bench/pods
slurm() {  # Runs a Slurm command in the controller pod, as corrald does.
  nsenter -t "$(cat "$pods/controller/supervisor/pid")" -U -n -m -u -i -p -C -r -w -- \
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
state() { slurm sinfo -h -N -n "$1" -o %T 2>/dev/null | head -1; }
# Seconds from T0 until `state NODE` matches PATTERN (a bash glob), at most 60 s.
until_state() {
  local t0=$1 node=$2 pattern=$3
  for _ in $(seq 3000); do
    # shellcheck disable=SC2053
    [[ $(state "$node") == $pattern ]] && { echo "$(now) - $t0" | bc; return; }
    sleep 0.02
  done
  echo "bench: $node never reached $pattern" >&2
  exit 1
}

declare -A times
for r in $(seq "$rounds"); do
  old=$(cat "$pods/slinky-1/supervisor/pid")
  t0=$(now)
  corral node reboot bench slinky-1 --no-wait >/dev/null
  until [[ -e $pods/slinky-1/supervisor/pid && $(cat "$pods/slinky-1/supervisor/pid" 2>/dev/null) != "$old" ]]; do sleep 0.01; done
  times[reboot]+="$(until_state "$t0" slinky-1 idle) "

  t0=$(now)
  kill -KILL "$(cat "$pods/slinky-2/supervisor/pid")"
  times[down]+="$(until_state "$t0" slinky-2 'down*') "
  times[back]+="$(until_state "$t0" slinky-2 idle) "

  t0=$(now)
  corral node inject-xid bench slinky-0 79 >/dev/null
  times[xid]+="$(until_state "$t0" slinky-0 'drain*') "
  old=$(cat "$pods/slinky-0/supervisor/pid")
  t0=$(now)
  corral node reboot bench slinky-0 --no-wait >/dev/null
  until [[ -e $pods/slinky-0/supervisor/pid && $(cat "$pods/slinky-0/supervisor/pid" 2>/dev/null) != "$old" ]]; do sleep 0.01; done
  times[xidreboot]+="$(until_state "$t0" slinky-0 idle) "
  sleep 1
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "| measurement | median (s) | each round (s) | aim |"
echo "|---|---|---|---|"
row() { echo "| $1 | $(echo "${times[$2]}" | median) | ${times[$2]} | $3 |"; }
row "node reboot → idle" reboot "< 3 s"
row "worker death → Slurm marks it down" down "—"
row "worker death → idle again (pod recreated, slurmd registered)" back "—"
row "XID 79 → node drained" xid "< 2 s"
row "reboot of the XID-drained node → idle (drain lifted)" xidreboot "—"
