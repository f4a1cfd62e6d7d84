#!/usr/bin/env bash
# Issue 15's speed figures through corrald itself: `corrald --runtime
# kubernetes` against test/k8s's real API server, controller manager and
# Slinky operator, driven over corral's REST API as the CLI drives it.
#
#   K8S_ENV_CONTROLLER_MANAGER=1 test/k8s/env.sh build && ninja -C build   # once
#   bench/kube-corrald.sh [CLUSTERS]      # default 10 clusters of 4 GPU workers
#
# For each cluster: create → its objects all applied and accepted (corrald's
# ObjectsApplied event, timed from the create request's CreateRequested
# event, both stamped by corrald in milliseconds) and → Running (pods made
# ready by test/k8s/kubelet-standin.py, the stand-in for the missing
# kubelet); then a scale 4 → 6 and a config change on each, request → its
# objects accepted. Then every cluster is left steady for 120 s and the
# Kubernetes API requests corrald made meanwhile are read from its own count
# (the line it logs each minute). Medians and maxima; stops everything on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
N=${1:-10}
BUILD=$ROOT/build
NAME=kube-bench
source test/k8s/corrald-env.sh
start_kube_env
namespaces=()
for i in $(seq 1 "$N"); do
  kube_namespace "corral-b$i"
  namespaces+=("corral-b$i")
done
mkdir -p "$DATA"
TOKEN=$(admin_token bench "kube bench")
export CORRAL_SERVER=$URL CORRAL_TOKEN=$TOKEN
start_kube_corrald
python3 test/k8s/kubelet-standin.py "$ENVDIR" "${namespaces[@]}" --loop >"$WORK/standin.log" 2>&1 &
STANDIN_PID=$!
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

api() { curl -sS -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
# ms FROM TO [AFTER]: milliseconds from cluster $1's event FROM to the next
# event TO after it (events stamped by corrald), waiting for TO.
ms_between() {
  local c=$1 from=$2 to=$3 skip=${4:-0}
  for _ in $(seq 1 600); do
    out=$(api "$URL/api/v1/clusters/$c/events?limit=1000" | python3 -c "
import json,sys
ev=json.load(sys.stdin)
ev=ev.get('events', ev) if isinstance(ev, dict) else ev
ev=sorted(ev, key=lambda e: e['id'])
starts=[e for e in ev if e['reason']=='$from']
if len(starts) <= $skip: sys.exit(1)
s=starts[$skip]
ends=[e for e in ev if e['reason']=='$to' and e['id']>s['id']]
if not ends: sys.exit(1)
print(ends[0]['time']-s['time'])" 2>/dev/null) && { echo "$out"; return 0; }
    sleep 0.2
  done
  echo "timeout waiting for $to of $c" >&2
  return 1
}
stats() { python3 -c "
import statistics,sys
v=sorted(int(x) for x in sys.argv[1:])
print(f'median {statistics.median(v):.0f} ms, max {v[-1]} ms (n={len(v)})')" "$@"; }

C="$BUILD/corral"
applied=() running=()
for i in $(seq 1 "$N"); do
  "$C" cluster create "b$i" --gpu-nodes 4 >/dev/null
  applied+=("$(ms_between "b$i" CreateRequested ObjectsApplied)")
done
for i in $(seq 1 "$N"); do running+=("$(ms_between "b$i" CreateRequested Running)"); done
echo "create → all objects applied and accepted: $(stats "${applied[@]}")"
echo "create → Running (stand-in kubelet marks pods ready every 0.5 s): $(stats "${running[@]}")"

scale=() config=()
for i in $(seq 1 "$N"); do
  "$C" cluster scale "b$i" --gpu-nodes 6 --no-wait >/dev/null
  scale+=("$(ms_between "b$i" ChangeRequested ObjectsApplied 0)")
done
for i in $(seq 1 "$N"); do
  ms_between "b$i" ChangeRequested Applied 0 >/dev/null
  "$C" config set "b$i" MinJobAge=300 >/dev/null
  config+=("$(ms_between "b$i" ChangeRequested ObjectsApplied 1)")
done
echo "scale 4 → 6, request → objects accepted: $(stats "${scale[@]}")"
echo "config change, request → objects accepted: $(stats "${config[@]}")"
for i in $(seq 1 "$N"); do ms_between "b$i" ChangeRequested Applied 1 >/dev/null; done

# Steady: everything applied; count what corrald asks of the API server.
kill "$STANDIN_PID"; wait "$STANDIN_PID" 2>/dev/null || true; STANDIN_PID=
# corrald logs its request count each minute: the minutes wholly steady.
sleep 190
grep -a "kubernetes API: " "$WORK/corrald.log" | tail -2 | sed 's/^\([^ ]*\) .*in the last minute$/&/' >"$WORK/minutes"
python3 - "$WORK/minutes" "$N" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
per = [int(re.search(r"(\d+) in the last minute", l).group(1)) for l in lines]
print(f"steady: {per} requests in each of the last {len(per)} whole minutes for {sys.argv[2]} clusters "
      f"({sum(per) / (60 * len(per)):.3f}/s; a reconciler pass over each every 5 s meanwhile)")
PY
