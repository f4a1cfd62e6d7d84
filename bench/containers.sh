#!/usr/bin/env bash
# Measures container jobs on a 4-node cluster of its own, with the cluster's
# registry filled from local content (corral-imagectl push; nothing from the
# internet):
# - per-step overhead with a cached image: `srun --container-image=X true`
#   against `srun true`, on the login node (what a user types), ROUNDS each;
# - import of a multi-layer image of a few hundred MB (built from the host's
#   /usr): cold (empty cache) and warm (cached), on one node through
#   `enroot import`, and cold on four nodes at once sharing one cache
#   (`srun -N4 --container-image`), which must download it once.
# - inside one allocation on one node (steps timed on the login node, so
#   that ssh and salloc are not counted): a plain step, a cached-image step,
#   the same with --container-unshare=net,ipc,uts, attaching to a running
#   named container (srun --overlap --container-name=X), 50 steps reusing one
#   named container, and 8 containers created at once against one alone.
#   sudo bench/containers.sh [ROUNDS]      (default: 20)
# Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-20}
# shellcheck source=bench/lib.sh
source bench/lib.sh
cleanup() {
  corral cluster delete bench --wait >/dev/null 2>&1 || true
  stop_corrald
}
start_corrald "/var/lib/corral-bench-containers-$$" $((21000 + $$ % 1000)) 172.26.0.0/16
trap cleanup EXIT
wait_for_corrald
corral cluster create bench --gpu-nodes 4 --gpus-per-node 2 --registry \
  --image-cache /shared/enroot-cache --wait >/dev/null

pods=$data/clusters/bench/pods
subnet=$(corral cluster get bench -o json | jq -r .subnet)
registry=${subnet%.*}.4:5000
inpod() {  # Runs a shell line in a pod, as root, like corrald's exec.
  local pod=$1; shift
  nsenter -t "$(cat "$pods/$pod/supervisor/pid")" -U -n -m -u -i -p -C -r -w -- \
    env -i PATH=/.corral-bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root sh -c "$*"
}
ms() { echo "($2 - $1) * 1000" | bc -l | xargs printf '%.1f'; }

# Images: busybox for the per-step overhead; "big" from /usr in four layers.
img=$data/images
mkdir -p "$img/busybox/bin" "$img/busybox/etc"
cp /bin/busybox "$img/busybox/bin/"
for t in sh true cat sleep; do ln -sf busybox "$img/busybox/bin/$t"; done
echo 'NAME="bench"' > "$img/busybox/etc/os-release"
"$bin/corral-imagectl" push --http "$registry/bench/busybox:1" "$img/busybox" >/dev/null
# busybox, then four layers of about 80 MB each, from the host's shared
# libraries and data (mixed, partly compressible content, like a real image's).
layers=("$img/busybox")
find /usr/lib/x86_64-linux-gnu /usr/share -type f -size +64k -printf '%s %p\n' 2>/dev/null |
  sort -k2 | awk -v dir="$img/big" '{ n = int(total / (80 * 1048576)); total += $1;
    if (n <= 3) print dir n "\t" $2 }' > "$img/files"
for n in 0 1 2 3; do
  l=$img/big$n
  mkdir -p "$l"
  grep -P "^${l}\t" "$img/files" | cut -f2 | while read -r f; do
    mkdir -p "$l$(dirname "$f")"; cp "$f" "$l$f"; done
  layers+=("$l")
done
big_mb=$(du -scm "${layers[@]}" | tail -1 | cut -f1)
t0=$(now)
"$bin/corral-imagectl" push --http "$registry/bench/big:1" "${layers[@]}" >/dev/null
push_s=$(echo "$(now) - $t0" | bc)

# Per-step overhead, as a user types it on the login node (each srun its
# own job). One warm-up of each, then ROUNDS timed runs of each.
on_login() { inpod login "$*"; }
on_login "srun -w slinky-0 true; srun -w slinky-0 --container-image=registry:5000/bench/busybox:1 true"
t0=$(now)
for _ in $(seq "$rounds"); do on_login "srun -w slinky-0 true"; done
plain=$(echo "($(now) - $t0) / $rounds" | bc -l)
t0=$(now)
for _ in $(seq "$rounds"); do
  on_login "srun -w slinky-0 --container-image=registry:5000/bench/busybox:1 true"
done
contained=$(echo "($(now) - $t0) / $rounds" | bc -l)

# Steps inside one allocation on slinky-1, timed where srun runs (the login
# pod), each the mean of ROUNDS runs: what the container adds to a step,
# what --container-unshare adds to that, and attaching to a running one.
steps_script=$(cat <<'EOF'
set -eu
export SLURM_NTASKS=1  # one task per step, though the allocation has eight CPUs
img=registry:5000/bench/busybox:1
rounds=$1
now() { date +%s.%N; }
mean() {  # mean seconds of ROUNDS runs of "$@"
  local t0; t0=$(now)
  for _ in $(seq "$rounds"); do "$@" >/dev/null; done
  awk -v a="$t0" -v b="$(now)" -v n="$rounds" 'BEGIN { print (b - a) / n }'
}
since() { awk -v a="$1" -v b="$(now)" -v n="${2:-1}" 'BEGIN { print (b - a) / n }'; }
srun --container-image=$img true   # warm: the image is in the shared cache
plain=$(mean srun true)
contained=$(mean srun --container-image=$img true)
unshared=$(mean srun --container-image=$img --container-unshare=net,ipc,uts true)
srun --container-image=$img --container-name=held sleep 600 &
held=$!
until srun --overlap enroot list -f | grep -q "_held  *[0-9]"; do
  kill -0 $held || { echo "the held step ended" >&2; exit 1; }
  sleep 0.2
done
overlap_plain=$(mean srun --overlap true)
attach=$(mean srun --overlap --container-name=held true)
kill $held; wait $held 2>/dev/null || true
srun --container-image=$img --container-name=reuse true
one_reuse=$(mean srun --container-name=reuse:no_exec true)
t0=$(now); for _ in $(seq 50); do srun --container-name=reuse:no_exec true >/dev/null; done
fifty=$(since "$t0" 50)
t0=$(now); srun --overlap -n1 --container-image=$img --container-name=solo true; one_create=$(since "$t0")
t0=$(now); srun --overlap -n1 true; one_plain=$(since "$t0")
t0=$(now)
for i in $(seq 8); do srun --overlap -n1 --container-image=$img --container-name=c$i true & done
wait
eight=$(since "$t0")
t0=$(now)
for i in $(seq 8); do srun --overlap -n1 true & done
wait
eight_plain=$(since "$t0")
echo "$plain $contained $unshared $overlap_plain $attach $one_reuse $fifty $one_create $eight $one_plain $eight_plain"
EOF
)
on_login "cat > /shared/bench-steps.sh" <<< "$steps_script"
read -r s_plain s_contained s_unshared s_overlap s_attach s_reuse1 s_reuse50 s_create1 s_create8 \
  s_plain1 s_plain8 < <(
  on_login "salloc -N1 -n8 --overcommit -w slinky-1 bash /shared/bench-steps.sh $rounds 2>/dev/null" | tail -1)

# Import: cold and warm on one node (node-local cache: ENROOT_CACHE_PATH
# pointed at a fresh directory), then cold on four nodes sharing one.
cold_cache=/var/tmp/bench-cold-cache
t0=$(now)
inpod slinky-0 "rm -rf $cold_cache; ENROOT_CACHE_PATH=$cold_cache enroot import -o /var/tmp/big.sqsh docker://registry:5000/bench/big:1 >/dev/null"
cold=$(echo "$(now) - $t0" | bc)
t0=$(now)
inpod slinky-0 "ENROOT_CACHE_PATH=$cold_cache enroot create -n warm docker://registry:5000/bench/big:1 >/dev/null && enroot remove -f warm"
warm=$(echo "$(now) - $t0" | bc)
inpod slinky-0 "rm -rf $cold_cache /var/tmp/big.sqsh"
t0=$(now)
on_login "srun -N4 --container-image=registry:5000/bench/big:1 true"
many=$(echo "$(now) - $t0" | bc)
blobs=$(inpod login "ls /shared/enroot-cache/user-0/blobs/sha256 | grep -vc lock")

echo "| measure | value |"
echo "|---|---|"
echo "| srun true (mean of $rounds) | $(ms 0 "$plain") ms |"
echo "| srun --container-image=busybox true (cached, mean of $rounds) | $(ms 0 "$contained") ms |"
echo "| added per step | $(ms "$plain" "$contained") ms |"
echo "| ratio | $(echo "$contained / $plain" | bc -l | xargs printf '%.2f') |"
echo "| in an allocation: srun true (mean of $rounds) | $(ms 0 "$s_plain") ms |"
echo "| in an allocation: srun --container-image (cached) | $(ms 0 "$s_contained") ms (+$(ms "$s_plain" "$s_contained") ms) |"
echo "| ... with --container-unshare=net,ipc,uts | $(ms 0 "$s_unshared") ms (+$(ms "$s_contained" "$s_unshared") ms) |"
echo "| srun --overlap true, beside a running step | $(ms 0 "$s_overlap") ms |"
echo "| srun --overlap --container-name=X (attach to running X) | $(ms 0 "$s_attach") ms (+$(ms "$s_overlap" "$s_attach") ms) |"
echo "| step reusing a named container, one (mean of $rounds) | $(ms 0 "$s_reuse1") ms |"
echo "| ... mean of 50 steps reusing it | $(ms 0 "$s_reuse50") ms ($(echo "$s_reuse50 / $s_reuse1" | bc -l | xargs printf '%.2f')x) |"
echo "| one container created on a node | $(ms 0 "$s_create1") ms |"
echo "| 8 containers created at once on that node (all done) | $(ms 0 "$s_create8") ms ($(echo "$s_create8 / $s_create1" | bc -l | xargs printf '%.2f')x one) |"
echo "| 8 plain steps at once (Slurm's own concurrency), against one | $(ms 0 "$s_plain8") ms against $(ms 0 "$s_plain1") ms ($(echo "$s_plain8 / $s_plain1" | bc -l | xargs printf '%.2f')x) |"
echo "| 8 containers at once against 8 plain steps at once | $(echo "$s_create8 / $s_plain8" | bc -l | xargs printf '%.2f')x |"
echo "| big image: size on disk, layers | ${big_mb} MB, ${#layers[@]} |"
echo "| push to the cluster registry | ${push_s} s |"
echo "| enroot import, cold cache (1 node) | ${cold} s ($(echo "$big_mb / $cold" | bc) MB/s) |"
echo "| enroot create, warm cache (1 node) | ${warm} s |"
echo "| srun -N4 --container-image, cold shared cache | ${many} s |"
echo "| blobs in the shared cache after it (layers + config) | ${blobs} |"
