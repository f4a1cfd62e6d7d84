#!/usr/bin/env bash
# What the pod sandbox costs (issue 12), measured side by side in one run:
# create -> Running of 4 and 32 nodes on this build (each image) and on a
# build of the commit before the sandbox (pods over the host's root, the
# host's Slurm 22.05), interleaved round by round; idle pod memory; a
# 200-node cluster; and, with --images, building both images from nothing.
#   sudo bench/sandbox.sh [--base COMMIT] [--rounds N] [--images] [--no-200]
# The base build is kept in /var/tmp/corral-bench-base-<commit> (a git
# worktree; a few minutes the first time). Prints Markdown tables.
set -euo pipefail
cd "$(dirname "$0")/.."
base=10fa562
rounds=3
images=0
big=1
while (($#)); do
  case $1 in
    --base) base=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --images) images=1; shift ;;
    --no-200) big=0; shift ;;
    *) echo "usage: $0 [--base COMMIT] [--rounds N] [--images] [--no-200]" >&2; exit 2 ;;
  esac
done
root=$(pwd)
new_bin=$root/build
base_dir=/var/tmp/corral-bench-base-$base
if [[ ! -x $base_dir/build/corrald || ! -e $base_dir/build/spank_pyxis.so ]]; then
  echo "building $base into $base_dir (once)" >&2
  git worktree add --force "$base_dir" "$base" >/dev/null 2>&1 || true
  (cd "$base_dir" && cmake --preset default >/dev/null && cmake --build --preset default -j"$(nproc)" \
     --target corrald corral corral-pod corral-health enroot corral-imagectl spank_pyxis >/dev/null)
fi
base_bin=$base_dir/build

now() { date +%s.%N; }
# One corrald per variant, each with its own data dir, port and pool.
declare -A srv tok dat pids
start() {  # NAME BIN PORT POOL [ARGS...]
  local name=$1 bin=$2 port=$3 pool=$4
  shift 4
  local d=/var/lib/corral-bench-sandbox-$name-$$
  mkdir -p "$d" "$d-home"
  "$bin/corrald" --data-dir "$d" admin user add bench --admin >/dev/null
  tok[$name]=$("$bin/corrald" --data-dir "$d" admin token create bench)
  "$bin/corrald" --data-dir "$d" --listen "127.0.0.1:$port" --subnet-pool "$pool" "$@" > "$d.log" 2>&1 &
  pids[$name]=$!
  srv[$name]=http://127.0.0.1:$port
  dat[$name]=$d
  for _ in $(seq 300); do curl -fsS "${srv[$name]}/healthz" >/dev/null 2>&1 && return; sleep 0.1; done
  echo "corrald $name did not start; see $d.log" >&2
  exit 1
}
cli() {  # NAME ARGS...
  local name=$1
  shift
  local bin=$new_bin
  [[ $name == base ]] && bin=$base_bin
  HOME=${dat[$name]}-home CORRAL_TOKEN=${tok[$name]} "$bin/corral" --server "${srv[$name]}" "$@"
}
cleanup() {
  for name in "${!pids[@]}"; do
    for c in $(ls "${dat[$name]}/clusters" 2>/dev/null); do cli "$name" cluster delete "$c" --wait >/dev/null 2>&1 || true; done
    kill "${pids[$name]}" 2>/dev/null || true
    wait "${pids[$name]}" 2>/dev/null || true
    [[ -z $(ls "${dat[$name]}/clusters" 2>/dev/null) ]] && rm -rf "${dat[$name]}" "${dat[$name]}-home" "${dat[$name]}.log"
  done
}
trap cleanup EXIT

"$new_bin/corrald" image build debian13-slurm24.11 >/dev/null 2>&1
"$new_bin/corrald" image build debian12-slurm22.05 >/dev/null 2>&1
start base "$base_bin" $((18500 + $$ % 100)) 172.27.0.0/20
start new24 "$new_bin" $((18600 + $$ % 100)) 172.27.16.0/20 --default-image debian13-slurm24.11
start new22 "$new_bin" $((18700 + $$ % 100)) 172.27.32.0/20 --default-image debian12-slurm22.05

pod_pid() {  # DATA CLUSTER POD: PID 1 of a pod, wherever this build keeps it.
  cat "$1/clusters/$2/pods/$3/supervisor/pid" 2>/dev/null || cat "$1/clusters/$2/pods/$3/pid"
}
# Memory of every process in one pod's PID namespace, in KiB: RSS counts the
# libraries each process maps in full; PSS shares them out among everything
# that maps them (pods of one image share their pages), which is what a pod
# costs the host.
pod_mem_kb() {  # PID1 rss|pss
  local ns total=0 field
  [[ $2 == pss ]] && field='^Pss:' || field='^Rss:'
  ns=$(readlink "/proc/$1/ns/pid_for_children" 2>/dev/null || readlink "/proc/$1/ns/pid")
  for d in /proc/[0-9]*; do
    [[ $(readlink "$d/ns/pid" 2>/dev/null) == "$ns" ]] || continue
    total=$((total + $(awk -v f="$field" '$0 ~ f {print $2}' "$d/smaps_rollup" 2>/dev/null || echo 0)))
  done
  echo "$total"
}

declare -A sum mem pss
echo "| nodes | round | before (host root, 22.05) | sandboxed, debian13-slurm24.11 | sandboxed, debian12-slurm22.05 |"
echo "|---|---|---|---|---|"
for n in 4 32; do
  for r in $(seq "$rounds"); do
    row="| $n | $r"
    for v in base new24 new22; do
      t0=$(now)
      cli "$v" cluster create "s$n" --gpu-nodes "$n" --wait >/dev/null
      t=$(echo "$(now) - $t0" | bc)
      sum[$v-$n]=$(echo "${sum[$v-$n]:-0} + $t" | bc)
      if [[ $r == 1 ]]; then
        w=$(pod_pid "${dat[$v]}" "s$n" slinky-0)
        mem[$v-$n]=$(pod_mem_kb "$w" rss)
        pss[$v-$n]=$(pod_mem_kb "$w" pss)
      fi
      cli "$v" cluster delete "s$n" --wait >/dev/null
      row+=$(printf " | %.2f" "$t")
    done
    echo "$row |"
  done
done
echo
echo "| nodes | mean before (s) | mean 24.11 (s) | ratio | mean 22.05 (s) | ratio | idle worker pod RSS before / 24.11 / 22.05 (MiB) | PSS (MiB) |"
echo "|---|---|---|---|---|---|---|---|"
for n in 4 32; do
  b=$(echo "${sum[base-$n]} / $rounds" | bc -l)
  a=$(echo "${sum[new24-$n]} / $rounds" | bc -l)
  c=$(echo "${sum[new22-$n]} / $rounds" | bc -l)
  printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f / %.1f / %.1f | %.1f / %.1f / %.1f |\n" "$n" "$b" "$a" \
    "$(echo "$a / $b" | bc -l)" "$c" "$(echo "$c / $b" | bc -l)" "$(echo "${mem[base-$n]} / 1024" | bc -l)" \
    "$(echo "${mem[new24-$n]} / 1024" | bc -l)" "$(echo "${mem[new22-$n]} / 1024" | bc -l)" \
    "$(echo "${pss[base-$n]} / 1024" | bc -l)" "$(echo "${pss[new24-$n]} / 1024" | bc -l)" \
    "$(echo "${pss[new22-$n]} / 1024" | bc -l)"
done

if ((big)); then
  echo
  free_before=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
  t0=$(now)
  cli new24 cluster create s200 --gpu-nodes 200 --wait --timeout 900 >/dev/null
  t=$(echo "$(now) - $t0" | bc)
  free_after=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
  idle=$(cli new24 ssh s200 -- "sinfo -h -t idle -o %D" | head -1)
  w=$(pod_pid "${dat[new24]}" s200 slinky-100)
  printf "200 nodes on debian13-slurm24.11: Running in %.1f s, %s idle, host memory used %.0f MiB (%.1f MiB a node), one idle worker pod %.1f MiB RSS, %.1f MiB PSS\n" \
    "$t" "$idle" "$(echo "($free_before - $free_after) / 1024" | bc -l)" \
    "$(echo "($free_before - $free_after) / 1024 / 200" | bc -l)" "$(echo "$(pod_mem_kb "$w" rss) / 1024" | bc -l)" \
    "$(echo "$(pod_mem_kb "$w" pss) / 1024" | bc -l)"
  cli new24 cluster delete s200 --wait >/dev/null
fi

if ((images)); then
  echo
  echo "| image | build from nothing (s) | size |"
  echo "|---|---|---|"
  cache=/var/lib/corral-bench-sandbox-images-$$
  for img in debian13-slurm24.11 debian12-slurm22.05; do
    t0=$(now)
    "$new_bin/corrald" --image-cache "$cache" image build "$img" >/dev/null 2>&1
    printf "| %s | %.1f | %s |\n" "$img" "$(echo "$(now) - $t0" | bc)" "$(du -sh "$cache"/*/rootfs 2>/dev/null | tail -1 | cut -f1)"
    rm -rf "$cache"
  done
fi
