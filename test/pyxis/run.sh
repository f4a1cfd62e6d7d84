#!/usr/bin/env bash
# Runs corral's Pyxis-behaviour suite (test/pyxis/*.bats, an independent
# re-expression of Pyxis 0.24's integration tests) on a real cluster of the
# default image, as an ordinary cluster user, and always cleans up.
#
#   test/pyxis/run.sh BUILD_DIR
#
# BUILD_DIR holds the built corrald, corral and corral-imagectl. Needs root,
# bats, mmdebstrap, dpkg-dev, rpm and createrepo-c (scripts/install-deps.sh).
#
# It starts corrald on a data dir, port and subnet pool of its own, makes an
# admin and a token with `corrald admin`, creates a cluster (2 GPU nodes,
# --registry, --image-cache /shared/enroot-cache), adds a user, builds the
# fixture images (test/pyxis/images.sh; cached in
# /var/cache/corral/test-images) and pushes them into the cluster's
# registry, copies bats and the suite into /shared, runs it in the login pod
# as that user inside `salloc -N1 --exclusive`, prints a table per file and
# in total, and fails unless passed/(passed+failed) >= CORRAL_PYXIS_MIN_PASS
# percent (default 95; skipped cases are the ones that cannot apply here).
# Then it deletes the cluster, stops that corrald (by its PID) and removes
# its data dir.
#
# Environment (all optional):
#   CORRAL_PYXIS_PORT      corrald's port (default 8573)
#   CORRAL_PYXIS_FILES     the .bats files to run, by name without .bats
#                          (default: all of them)
#   CORRAL_PYXIS_MIN_PASS  the pass rate required, in percent (default 95)
#   CORRAL_PYXIS_LOG       where the TAP output goes
#                          (default BUILD_DIR/pyxis.tap)
#   CORRAL_PYXIS_KEEP=1    keep the cluster and corrald running (for
#                          debugging; prints how to reach them, cleans up
#                          nothing)
set -uo pipefail

if [[ $# -ne 1 || ! -x "$1/corrald" ]]; then
  echo "usage: $0 BUILD_DIR   (BUILD_DIR holds corrald)" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
PORT=${CORRAL_PYXIS_PORT:-8573}
URL="http://127.0.0.1:$PORT"
DATA=/var/lib/corral-pyxis-$$
WORK=/var/tmp/corral-pyxis-$$
POOL=172.31.0.0/20
CLUSTER=pyxis
USER_NAME=pyxis-user
MIN_PASS=${CORRAL_PYXIS_MIN_PASS:-95}
TAP=${CORRAL_PYXIS_LOG:-$BUILD/pyxis.tap}
CORRALD_PID=
SUITE_PID=
TOKEN=

# log, kill_tree, admin_token, start_corrald, stop_corrald_and_clean_up.
source "$HERE/../support/private_corrald.sh" || exit 1

corral() { HOME=$WORK/home CORRAL_TOKEN=$TOKEN "$BUILD/corral" --server "$URL" "$@"; }

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [[ -n "$SUITE_PID" ]] && kill -0 "$SUITE_PID" 2>/dev/null; then
    kill_tree "$SUITE_PID"
    wait "$SUITE_PID" 2>/dev/null
  fi
  if [[ ${CORRAL_PYXIS_KEEP:-0} == 1 && -n "$CORRALD_PID" ]]; then
    log "kept: corrald pid $CORRALD_PID on $URL (data $DATA); CORRAL_TOKEN=$TOKEN HOME=$WORK/home"
    exit "$status"
  fi
  local clean=1
  if [[ -n "$CORRALD_PID" ]] && kill -0 "$CORRALD_PID" 2>/dev/null && [[ -n "$TOKEN" ]]; then
    for c in $(corral cluster list -o json 2>/dev/null | jq -r '.clusters[]?.name'); do
      log "deleting cluster $c"
      corral cluster delete "$c" --wait >/dev/null 2>&1 || { log "could not delete $c"; clean=0; }
    done
    for v in $(corral volume list -o json 2>/dev/null | jq -r '.volumes[]?.name'); do
      corral volume delete "$v" >/dev/null 2>&1
    done
  fi
  stop_corrald_and_clean_up "$status" "$clean" "logs in $WORK"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for tool in bats mmdebstrap dpkg-scanpackages jq ssh ssh-keygen; do
  command -v "$tool" >/dev/null || { log "$tool is missing (scripts/install-deps.sh)"; exit 1; }
done
mkdir -p "$WORK/home" "$DATA" || exit 1
T0=$SECONDS

TOKEN=$(admin_token pyxis-admin "pyxis suite") || exit 1
[[ -n "$TOKEN" ]] || { log "corrald admin token create printed no token"; exit 1; }

start_corrald --listen "127.0.0.1:$PORT" --subnet-pool "$POOL" || exit 1

log "creating cluster $CLUSTER"
corral cluster create "$CLUSTER" --gpu-nodes 2 --gpus-per-node 2 --registry \
  --image-cache /shared/enroot-cache --wait >"$WORK/create.log" 2>&1 || {
  cat "$WORK/create.log" >&2
  corral events "$CLUSTER" >&2
  exit 1
}
INFO=$(corral cluster get "$CLUSTER" -o json) || exit 1
SUBNET=$(jq -r .subnet <<<"$INFO")
BASE=${SUBNET%.*}
LOGIN=$(jq -r '.loginAddress // .login.address // empty' <<<"$INFO")
[[ -n $LOGIN ]] || LOGIN=$BASE.10
SHARED=$DATA/clusters/$CLUSTER/shared
[[ -d $SHARED ]] || SHARED=$(find "$DATA/clusters/$CLUSTER" -maxdepth 2 -type d -name shared | head -n 1)
[[ -d $SHARED ]] || { log "no shared directory under $DATA/clusters/$CLUSTER"; exit 1; }
log "cluster up in $((SECONDS - T0)) s: subnet $SUBNET, login $LOGIN"

ssh-keygen -q -t ed25519 -N '' -C pyxis-user -f "$WORK/user_key" || exit 1
corral user add "$CLUSTER" "$USER_NAME" --ssh-key "$WORK/user_key.pub" >"$WORK/user.log" 2>&1 || {
  cat "$WORK/user.log" >&2
  exit 1
}

# The images, into the registry pod (.4 of the cluster network).
t=$SECONDS
"$HERE/images.sh" "$BUILD/corral-imagectl" "$BASE.4:5000" "$WORK/fixtures.env" \
  2> >(tee "$WORK/images.log" >&2) || { log "images.sh failed"; exit 1; }
log "images ready in $((SECONDS - t)) s"

user_ssh() {
  ssh -i "$WORK/user_key" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
    -o LogLevel=ERROR -o BatchMode=yes "$USER_NAME@$LOGIN" "$@"
}
# bats (pure bash) and the suite, in /shared/pyxis, owned by the user.
USER_UID=$(user_ssh id -u) || { log "cannot ssh to $USER_NAME@$LOGIN"; exit 1; }
USER_GID=$(user_ssh id -g)
SUITE=$SHARED/pyxis
rm -rf "$SUITE"
mkdir -p "$SUITE/bats/bin" "$SUITE/bats/lib" "$SUITE/bats/libexec" "$SUITE/results" "$SUITE/work"
cp -a /usr/lib/bats-core "$SUITE/bats/lib/"
cp -a /usr/libexec/bats-core "$SUITE/bats/libexec/"
cp -a /usr/bin/bats "$SUITE/bats/bin/"
cp "$HERE"/*.bats "$HERE"/common.bash "$HERE"/mpi_check.py "$SUITE/"
cp "$WORK/fixtures.env" "$SUITE/fixtures.env"
chown -R "$USER_UID:$USER_GID" "$SUITE"

FILES=()
if [[ -n ${CORRAL_PYXIS_FILES:-} ]]; then
  for f in $CORRAL_PYXIS_FILES; do FILES+=("$f.bats"); done
else
  for f in "$HERE"/*.bats; do FILES+=("$(basename "$f")"); done
fi
log "running ${#FILES[@]} files as $USER_NAME in salloc -N1 --exclusive"
t=$SECONDS
(
  user_ssh "cd /shared/pyxis/work && salloc -N1 --exclusive -t 60 -J pyxis-suite bash -c '
      for f in ${FILES[*]}; do
        echo \"# file \$f\" >&2
        PATH=/shared/pyxis/bats/bin:\$PATH bats --tap ../\$f > ../results/\$f.tap 2> ../results/\$f.err
      done'" >"$WORK/suite.log" 2>&1
) &
SUITE_PID=$!
wait "$SUITE_PID"
SUITE_PID=
log "suite ran in $((SECONDS - t)) s"

# The table.
: >"$TAP"
printf '%-22s %5s %5s %5s\n' FILE PASS SKIP FAIL
tp=0 ts=0 tf=0
for f in "${FILES[@]}"; do
  r=$SUITE/results/$f.tap
  {
    echo "# ===== $f"
    cat "$r" 2>/dev/null
  } >>"$TAP"
  p=$(grep -E '^ok ' "$r" 2>/dev/null | grep -vc '# skip')
  s=$(grep -E '^ok .* # skip' "$r" 2>/dev/null | wc -l)
  n=$(grep -cE '^not ok ' "$r" 2>/dev/null)
  plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$r" 2>/dev/null | head -n 1)
  # A file that stopped short (or never ran) fails its missing cases.
  missing=$(( ${plan:-0} - p - s - n ))
  ((missing > 0)) && n=$((n + missing))
  [[ -s $r ]] || { n=$((n + 1)); echo "not ok - $f produced no TAP output" >>"$TAP"; }
  printf '%-22s %5d %5d %5d\n' "${f%.bats}" "$p" "$s" "$n"
  tp=$((tp + p)) ts=$((ts + s)) tf=$((tf + n))
done
printf '%-22s %5d %5d %5d\n' TOTAL "$tp" "$ts" "$tf"
applicable=$((tp + tf))
rate=0
((applicable > 0)) && rate=$((100 * tp / applicable))
log "passed $tp of $applicable applicable cases ($rate%), skipped $ts; TAP in $TAP; total $((SECONDS - T0)) s"
if ((tf > 0)); then
  echo "Failing cases:"
  grep -h '^not ok' "$SUITE"/results/*.tap 2>/dev/null | sed 's/^/  /'
fi
if ((applicable == 0 || 100 * tp < MIN_PASS * applicable)); then
  log "below the required $MIN_PASS%"
  tail -n 20 "$WORK/suite.log" >&2
  exit 1
fi
exit 0
