# shellcheck shell=bash
# What the benchmarks share: a corrald of their own, so that a benchmark
# never touches the host's corrald or its clusters. Sourced by bench/*.sh
# after `set -euo pipefail` and a cd to the repository root (./build holds
# the binaries). A benchmark defines `cleanup` (delete the clusters it made,
# then `stop_corrald`) and starts its corrald with:
#   start_corrald DATA-DIR PORT SUBNET-POOL
#   trap cleanup EXIT
#   wait_for_corrald

bin=$(pwd)/build

# Starts corrald in the background with its state in DATA-DIR, listening on
# 127.0.0.1:PORT and taking cluster subnets from SUBNET-POOL, which must not
# overlap another benchmark's. Sets `data`, `server` (corrald's URL) and
# `pid` (the one process `stop_corrald` kills), exports CORRAL_TOKEN (an admin
# token made in DATA-DIR's database) and exports HOME as
# DATA-DIR-home so that the SSH key `corral` creates stays out of the
# caller's home.
start_corrald() {
  data=$1
  local port=$2 pool=$3
  server=http://127.0.0.1:$port
  export HOME=$data-home
  mkdir -p "$HOME" "$data"
  # An admin and its token for this benchmark's `corral` and curl calls.
  "$bin/corrald" --data-dir "$data" admin user add bench --admin >/dev/null
  CORRAL_TOKEN=$("$bin/corrald" --data-dir "$data" admin token create bench)
  export CORRAL_TOKEN
  "$bin/corrald" --data-dir "$data" --listen "127.0.0.1:$port" --subnet-pool "$pool" \
    > "$data.log" 2>&1 &
  pid=$!
}

# Gives corrald up to 30 s to answer /healthz.
wait_for_corrald() {
  for _ in $(seq 300); do curl -fsS "$server/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
}

# Stops this benchmark's corrald, then removes its data dir, HOME, log and
# FILES... — unless clusters are left in the data dir: their namespaces and
# pods are still on the host and only a corrald on that data dir can delete
# them, so it stays and the benchmark says so.
stop_corrald() {
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  if [[ -n $(ls "$data/clusters" 2>/dev/null) ]]; then
    echo "bench: clusters left in $data; start corrald --data-dir $data and delete them" >&2
  else
    rm -rf "$data" "$HOME" "$data.log" "$@"
  fi
}

corral() { "$bin/corral" --server "$server" "$@"; }
now() { date +%s.%N; }
