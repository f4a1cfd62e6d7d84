#!/usr/bin/env bash
# Runs the web console's end-to-end test (console.test.mjs) in Debian's
# headless Chromium against a private corrald, and always cleans up.
#
#   test/console/run.sh BUILD_DIR
#
# BUILD_DIR holds the built `corrald` (the test drives the console, not the
# `corral` CLI; sbatch runs in the login pod via nsenter, as test/e2e's
# Harness::podExec does). Needs root, node >= 18 and /usr/bin/chromium.
#
# It starts corrald on a data dir, port and subnet pool of its own, makes an
# admin user and an API token with `corrald admin`, runs the test, then
# deletes every cluster and volume it made, stops that corrald (by its PID)
# and removes its data dir.
#
# Environment (all optional):
#   CORRAL_CONSOLE_PORT   corrald's port (default 8572)
#   CORRAL_CONSOLE_DIR    serve the console from this directory (--console-dir)
#                         instead of the copy built into corrald
#   CORRAL_SCREENSHOTS    where screenshots go (default docs/console; empty: none)
#   CHROMIUM              the browser (default /usr/bin/chromium)
#
# The data dir is /var/lib/corral-console-<pid>, like test/e2e's
# /var/lib/corral-e2e-<pid>: not under /tmp or /var/tmp, which every pod gets
# a private copy of, so that corral-pod could not mount the cluster's files
# from there. Logs, the SSH key and the browser's temporary files go to
# /var/tmp/corral-console-<pid>, kept only when the test fails.
set -uo pipefail

if [[ $# -ne 1 || ! -x "$1/corrald" ]]; then
  echo "usage: $0 BUILD_DIR   (BUILD_DIR holds corrald)" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
PORT=${CORRAL_CONSOLE_PORT:-8572}
URL="http://127.0.0.1:$PORT"
DATA=/var/lib/corral-console-$$
WORK=/var/tmp/corral-console-$$
POOL=172.30.0.0/16
CORRALD_PID=
TEST_PID=
TOKEN=

# log, kill_tree, admin_token, start_corrald, stop_corrald_and_clean_up.
source "$HERE/../support/private_corrald.sh" || exit 1

# GET/DELETE on corrald's API as the test's admin.
api() { curl -sS -m 10 -X "$1" -H "Authorization: Bearer $TOKEN" "$URL$2"; }

# Prints the `name` of every item of the JSON list $1 read from stdin.
names() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{for(const x of JSON.parse(s)[process.argv[1]]||[])console.log(x.name)}catch(e){}})' "$1"; }

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  local clean=1
  # Stop the test (and its browser: node --test runs the file in a child
  # process, which runs Chromium) first if a signal cut it short.
  if [[ -n "$TEST_PID" ]] && kill -0 "$TEST_PID" 2>/dev/null; then
    kill_tree "$TEST_PID"
    wait "$TEST_PID" 2>/dev/null
  fi
  if [[ -n "$CORRALD_PID" ]] && kill -0 "$CORRALD_PID" 2>/dev/null && [[ -n "$TOKEN" ]]; then
    # Delete every cluster this corrald has (all of them are this run's).
    for c in $(api GET /api/v1/clusters | names clusters); do
      log "deleting cluster $c"
      api DELETE "/api/v1/clusters/$c" >/dev/null
    done
    local deadline=$((SECONDS + 300))
    while [[ -n "$(api GET /api/v1/clusters | names clusters)" ]]; do
      if ((SECONDS > deadline)); then
        log "clusters still there after 300 s: $(api GET /api/v1/clusters | names clusters | tr '\n' ' ')"
        clean=0
        break
      fi
      sleep 2
    done
    for v in $(api GET /api/v1/volumes | names volumes); do
      log "deleting volume $v"
      api DELETE "/api/v1/volumes/$v" >/dev/null
    done
  fi
  stop_corrald_and_clean_up "$status" "$clean" "logs and failure screenshots are in $WORK"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$WORK/tmp" "$DATA" || exit 1

# playwright-core, from package-lock.json.
if [[ ! -d "$HERE/node_modules/playwright-core" ]]; then
  log "npm ci"
  (cd "$HERE" && npm ci --no-audit --no-fund) >"$WORK/npm.log" 2>&1 || { cat "$WORK/npm.log" >&2; exit 1; }
fi

# An admin and a token, in the new data dir's database.
TOKEN=$(admin_token console-admin "console e2e test") || exit 1
[[ -n "$TOKEN" ]] || { log "corrald admin token create printed no token"; exit 1; }

ARGS=(--listen "127.0.0.1:$PORT" --subnet-pool "$POOL")
[[ -n "${CORRAL_CONSOLE_DIR:-}" ]] && ARGS+=(--console-dir "$(cd "$CORRAL_CONSOLE_DIR" && pwd)")
start_corrald "${ARGS[@]}" || exit 1

# A key pair, so that the create form also gets an SSH key.
PUBKEY=
if command -v ssh-keygen >/dev/null; then
  ssh-keygen -q -t ed25519 -N '' -C console-test -f "$WORK/id_ed25519" && PUBKEY=$(cat "$WORK/id_ed25519.pub")
fi

# Debian 12's node is 18, which has no --test-concurrency (one file runs its
# tests in order anyway).
NODE_TEST_ARGS=()
(( $(node -p 'process.versions.node.split(".")[0]') >= 20 )) && NODE_TEST_ARGS+=(--test-concurrency=1)

SHOTS=${CORRAL_SCREENSHOTS-$REPO/docs/console}
log "running console.test.mjs${SHOTS:+ (screenshots in $SHOTS)}"
# In the background and waited for, so that a signal to this script runs the
# cleanup at once (bash defers traps while a foreground child runs).
(
  cd "$HERE" &&
  CORRAL_URL=$URL CORRAL_TOKEN=$TOKEN CORRAL_DATA_DIR=$DATA CORRAL_SSH_PUBKEY=$PUBKEY \
  CORRAL_SCREENSHOTS=$SHOTS CORRAL_FAILURE_SHOTS=$WORK/failures TMPDIR=$WORK/tmp \
  exec node --test "${NODE_TEST_ARGS[@]}" --test-reporter=spec console.test.mjs
) &
TEST_PID=$!
wait "$TEST_PID"
status=$?
TEST_PID=
if ((status != 0)); then
  log "corrald log (last 30 lines):"
  tail -n 30 "$WORK/corrald.log" >&2
fi
exit "$status"
