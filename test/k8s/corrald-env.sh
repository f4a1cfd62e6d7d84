# Sourced, not run, by test/k8s/cli-e2e.sh and bench/kube-corrald.sh: a
# test/k8s environment with kube-controller-manager, and a private
# `corrald --runtime kubernetes` on it (test/support/private_corrald.sh).
# The caller sets ROOT (the clone), BUILD (where corrald is) and NAME (in
# its paths: /tmp/corral-NAME-PID, /var/lib/corral-NAME-PID) first. On exit,
# whatever happened, the stand-in kubelet, corrald and the environment are
# stopped by PID and their directories removed (WORK kept after a failure).
export K8S_ENV_CONTROLLER_MANAGER=1
ENVDIR=/tmp/corral-$NAME-$$
DATA=/var/lib/corral-$NAME-$$
WORK=$(mktemp -d "/tmp/corral-$NAME-work.XXXXXX")
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT
CORRALD_PID=
STANDIN_PID=
# shellcheck source=../support/private_corrald.sh
source "$ROOT/test/support/private_corrald.sh"

kube_cleanup() {
  local status=$?
  # Every step runs, whatever the one before returned (a killed process's
  # wait returns 143, which errexit would end the cleanup at).
  set +e
  if [[ -n $STANDIN_PID ]]; then
    kill "$STANDIN_PID" 2>/dev/null
    wait "$STANDIN_PID" 2>/dev/null
  fi
  if ((status != 0)) && [[ -f $WORK/corrald.log ]]; then
    echo "corrald's log (last 40 lines):" >&2
    tail -n 40 "$WORK/corrald.log" >&2
  fi
  stop_corrald_and_clean_up "$status" 1 "logs in $WORK"
  [[ -d $ENVDIR ]] && "$ROOT/test/k8s/env.sh" stop "$ENVDIR" >/dev/null 2>&1
  exit "$status"
}
trap kube_cleanup EXIT

# Starts the environment and reads its addresses ($SERVER, …).
start_kube_env() {
  "$ROOT/test/k8s/env.sh" start "$ENVDIR" >"$WORK/env.log" 2>&1 || { cat "$WORK/env.log" >&2; return 1; }
  # shellcheck source=/dev/null
  source "$ENVDIR/env"
}

# kapi METHOD PATH [BODY]: the API as the environment's admin (not corrald's identity).
kapi() {
  local method=$1 path=$2 body=${3:-}
  curl -sS --max-time 30 -X "$method" --cacert "$ENVDIR/pki/ca.crt" \
    -H "Authorization: Bearer $(cat "$ENVDIR/pki/admin.token")" -H 'Content-Type: application/json' \
    ${body:+--data "$body"} "$SERVER$path"
}

# kube_namespace NAME: a namespace, as the platform's admin makes it.
kube_namespace() {
  kapi POST /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$1\"}}" >/dev/null
}

# Starts corrald --runtime kubernetes on $DATA, one namespace per cluster
# (corral-<cluster>), with the further arguments given.
start_kube_corrald() {
  start_corrald --listen "127.0.0.1:$PORT" --runtime kubernetes --kubeconfig "$ENVDIR/kubeconfig" \
    --namespace 'corral-{cluster}' "$@"
}
