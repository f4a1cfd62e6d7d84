# Helpers for the test scripts that run a corrald of their own
# (test/console/run.sh, test/pyxis/run.sh): sourced, not run. A script sets
# BUILD (where the built corrald is), URL (the address it will listen on),
# DATA (its data dir), WORK (logs and scratch files) and CORRALD_PID= before
# it calls them.

log() { echo "run.sh: $*" >&2; }

# Stops process $1 and everything under it (a test runner and the browser or
# ssh it started), children first, by PID.
kill_tree() {
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do kill_tree "$child"; done
  kill "$1" 2>/dev/null
}

# Adds admin user $1 to $DATA's database and prints a new API token of
# theirs, described as $2.
admin_token() {
  local out
  "$BUILD/corrald" --data-dir "$DATA" admin user add "$1" --admin >/dev/null || return 1
  out=$("$BUILD/corrald" --data-dir "$DATA" admin token create "$1" --description "$2") || return 1
  echo "$out" | tail -n 1 | tr -d '[:space:]'
}

# Starts corrald on $DATA with the further arguments given (--listen and
# --subnet-pool at least), its output in $WORK/corrald.log, sets CORRALD_PID
# and waits up to 120 s for $URL/healthz. Fails, with the end of the log,
# when corrald exits or does not answer by then.
start_corrald() {
  "$BUILD/corrald" --data-dir "$DATA" "$@" >"$WORK/corrald.log" 2>&1 &
  CORRALD_PID=$!
  log "corrald pid $CORRALD_PID on $URL, data in $DATA"
  local deadline=$((SECONDS + 120))
  until curl -sf -m 2 "$URL/healthz" >/dev/null; do
    if ! kill -0 "$CORRALD_PID" 2>/dev/null || ((SECONDS > deadline)); then
      log "corrald did not start:"
      tail -n 20 "$WORK/corrald.log" >&2
      return 1
    fi
    sleep 0.5
  done
}

# The end of a cleanup, once the clusters are deleted: stops corrald (by its
# PID), removes $DATA unless $2 is 0 (a cluster could not be deleted; its
# files stay to be looked at), and removes $WORK if the run passed ($1 is its
# exit status), else says where it is: $3, e.g. "logs in $WORK".
stop_corrald_and_clean_up() {
  local status=$1 clean=$2 failed_note=$3
  if [[ -n "$CORRALD_PID" ]]; then
    kill "$CORRALD_PID" 2>/dev/null
    wait "$CORRALD_PID" 2>/dev/null
  fi
  if ((clean)); then
    rm -rf --one-file-system "$DATA"
  else
    log "kept $DATA: a cluster could not be deleted"
  fi
  if ((status == 0)); then
    rm -rf "$WORK"
  else
    log "failed (exit $status); $failed_note"
  fi
}
