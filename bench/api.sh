#!/usr/bin/env bash
# API latency and the console's first load (issue 6): p50/p99 of the
# cluster list, a cluster's node list and its job list with JOBS queued jobs
# (default 10,000), and how long the console takes to show the cluster list.
#
#   sudo bench/api.sh [JOBS]
#
# It starts a corrald of its own, creates cluster "api" (4 GPU + 2 CPU
# nodes), raises MaxJobCount, submits JOBS held jobs with sbatch from the
# login node (≈40 ms each here: about 7 minutes for 10,000), then times
# REQUESTS (default 200) keep-alive requests per endpoint with curl. The
# first job-list request after the jobs were submitted is reported apart:
# it waits for squeue itself; later ones are served from the cache.
#
# To time an existing setup instead: BENCH_URL, CORRAL_TOKEN and
# BENCH_CLUSTER (no setup, nothing deleted).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

jobs=${1:-10000}
requests=${REQUESTS:-200}
cluster=${BENCH_CLUSTER:-api}

cleanup() {
  corral cluster delete "$cluster" --wait >/dev/null 2>&1 || true
  stop_corrald
}

if [[ -n ${BENCH_URL:-} ]]; then
  server=$BENCH_URL
else
  start_corrald /var/lib/corral-bench-api 8493 172.26.0.0/16
  trap cleanup EXIT
  wait_for_corrald
  corral cluster create "$cluster" --gpu-nodes 4 --gpus-per-node 2 --cpu-nodes 2 --wait >/dev/null
  corral config set "$cluster" MaxJobCount=$((jobs + 10000)) >/dev/null
  t0=$(now)
  corral ssh "$cluster" -- "for i in \$(seq $jobs); do sbatch -H -Q -o /dev/null -J bench-\$i --wrap true || exit 1; done"
  echo "submitted $jobs held jobs in $(echo "$(now) - $t0" | bc) s"
fi

auth=(-H "Authorization: Bearer $CORRAL_TOKEN")

# Times one request, for the cold job list.
once() { curl -sS -o /dev/null -w '%{time_total}\n' "${auth[@]}" "$server$1"; }

# p50 and p99 (ms) of N (default $requests) requests to PATH over one
# connection.
measure() {
  local path=$1 label=$2 count=${3:-$requests} config
  config=$(mktemp /var/tmp/corral-bench-api.XXXXXX)
  for _ in $(seq "$count"); do
    printf 'url = "%s"\noutput = "/dev/null"\nwrite-out = "%%{http_code} %%{time_total} %%{size_download}\\n"\n' \
      "$server$path" >> "$config"
  done
  curl -sS "${auth[@]}" --config "$config" > "$config.out"
  if grep -qv '^200 ' "$config.out"; then
    echo "bench: $path answered $(grep -v '^200 ' "$config.out" | head -1)" >&2
    exit 1
  fi
  awk '{print $2 * 1000}' "$config.out" | sort -n > "$config.sorted"
  local n p50 p99 size
  n=$(wc -l < "$config.sorted")
  p50=$(sed -n "$(( (n + 1) / 2 ))p" "$config.sorted")
  p99=$(sed -n "$(( (n * 99 + 99) / 100 ))p" "$config.sorted")
  size=$(awk 'NR == 1 {print $3}' "$config.out")
  printf '%-44s p50 %7.1f ms   p99 %7.1f ms   (%d requests, %d bytes each)\n' \
    "$label" "$p50" "$p99" "$n" "$size"
  rm -f "$config" "$config.out" "$config.sorted"
}

echo "first job list (squeue --json of the whole queue): $(echo "$(once "/api/v1/clusters/$cluster/jobs") * 1000" | bc) ms"
total=$(curl -sS "${auth[@]}" "$server/api/v1/clusters/$cluster/jobs?limit=1" | jq .total)
echo "queue holds $total jobs"
measure /api/v1/clusters "cluster list"
measure "/api/v1/clusters/$cluster/nodes" "node list"
measure "/api/v1/clusters/$cluster/jobs" "job list (first page, 500 jobs)"
measure "/api/v1/clusters/$cluster/jobs?state=PENDING&q=bench-99" "job list filtered (name ~ bench-99)"
measure "/api/v1/clusters/$cluster/jobs?limit=10000" "job list (all, limit=10000)" $((requests / 4))

if [[ -x /usr/bin/chromium && -d test/console/node_modules/playwright-core ]]; then
  loads=$(node bench/console_load.mjs "$server" "$CORRAL_TOKEN" "$cluster" 10 | sort -n)
  echo "console first load (to the cluster list), 10 cold loads: min $(echo "$loads" | head -1) ms, median $(echo "$loads" | sed -n 5p) ms, max $(echo "$loads" | tail -1) ms"
else
  echo "console first load: skipped (needs /usr/bin/chromium and test/console's npm ci)"
fi
