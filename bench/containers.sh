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
for t in sh true cat; do ln -sf busybox "$img/busybox/bin/$t"; done
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
echo "| big image: size on disk, layers | ${big_mb} MB, ${#layers[@]} |"
echo "| push to the cluster registry | ${push_s} s |"
echo "| enroot import, cold cache (1 node) | ${cold} s ($(echo "$big_mb / $cold" | bc) MB/s) |"
echo "| enroot create, warm cache (1 node) | ${warm} s |"
echo "| srun -N4 --container-image, cold shared cache | ${many} s |"
echo "| blobs in the shared cache after it (layers + config) | ${blobs} |"
