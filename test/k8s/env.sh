#!/usr/bin/env bash
# corral's Kubernetes test environment: a real etcd, a real kube-apiserver and
# the real Slinky operator (cmd/manager), all built here from their Go modules
# (test/k8s/go pins the versions), running on loopback only. No kubelet.
#
#   env.sh build        build what is missing into $CORRAL_K8S_CACHE/bin
#   env.sh start DIR    start etcd + kube-apiserver + operator, state in DIR
#   env.sh check DIR    smoke test: Controller + NodeSet -> operator's objects
#   env.sh stop DIR     stop what start started (by recorded PID), remove DIR
#
# Settings (environment): K8S_ENV_CONTROLLER_MANAGER=1 also builds and runs
# kube-controller-manager (same for build and start); K8S_ENV_SERVICEMONITOR_CRD=0
# leaves out the ServiceMonitor stand-in CRD; CHECK_NAMESPACE (corral-check)
# and CHECK_TIMEOUT (120 s) for check; CORRAL_K8S_CACHE (/var/cache/corral/k8s).
# See test/k8s/README.md.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Go's own install (go.dev's tarball) is often not on a root shell's PATH.
command -v go >/dev/null || export PATH=$PATH:/usr/local/go/bin
MODDIR=$HERE/go

export GOPATH=${GOPATH_CORRAL:-/var/cache/corral/go}
export GOCACHE=${GOCACHE_CORRAL:-/var/cache/corral/go-build}
export GOMODCACHE=$GOPATH/pkg/mod
export GOTOOLCHAIN=local
export GOFLAGS="-mod=readonly -buildvcs=false -trimpath"
export CGO_ENABLED=0
# The machine's two cores are shared with real Slurm clusters: keep builds
# to two threads at the lowest priority, one build at a time.
export GOMAXPROCS=${GOMAXPROCS:-2}

CACHE=${CORRAL_K8S_CACHE:-/var/cache/corral/k8s}
BIN=$CACHE/bin

log() { printf '[k8s-env %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# The versions come from go.mod, the one place they are pinned.
modver() { awk -v m="$1" '$1==m && $2 ~ /^v/ {print $2; exit}' "$MODDIR/go.mod"; }
K8S_VERSION=$(modver k8s.io/kubernetes)
ETCD_VERSION=$(modver go.etcd.io/etcd/server/v3)
SLINKY_VERSION=$(modver github.com/SlinkyProject/slurm-operator)
[[ -n $K8S_VERSION && -n $ETCD_VERSION && -n $SLINKY_VERSION ]] || die "cannot read versions from $MODDIR/go.mod"

APISERVER_BIN=$BIN/kube-apiserver-$K8S_VERSION
ETCD_BIN=$BIN/etcd-$ETCD_VERSION
MANAGER_BIN=$BIN/slurm-operator-manager-$SLINKY_VERSION
KCM_BIN=$BIN/kube-controller-manager-$K8S_VERSION
# Optional: kube-controller-manager (garbage collector, StatefulSet,
# Deployment, namespace and serviceaccount controllers). Off by default.
WITH_KCM=${K8S_ENV_CONTROLLER_MANAGER:-0}

slinky_dir() {
  (cd "$MODDIR" && go list -m -f '{{.Dir}}' github.com/SlinkyProject/slurm-operator)
}

# build_one OUT PKG [LDFLAGS]
build_one() {
  local out=$1 pkg=$2 ldflags=${3:-}
  if [[ -x $out ]]; then
    log "cached: $out"
    return 0
  fi
  mkdir -p "$BIN"
  log "building $pkg -> $out"
  local t0=$SECONDS tmp="$out.tmp.$$"
  (cd "$MODDIR" && nice -n 19 go build -ldflags "-s -w $ldflags" -o "$tmp" "$pkg") ||
    { rm -f "$tmp"; die "go build $pkg failed"; }
  mv -f "$tmp" "$out"
  log "built $(basename "$out") in $((SECONDS - t0)) s ($(du -h "$out" | cut -f1))"
}

cmd_build() {
  command -v go >/dev/null || die "go is not installed"
  log "go: $(go version); GOMAXPROCS=$GOMAXPROCS; cache $BIN"
  local t0=$SECONDS
  if [[ ! -x $ETCD_BIN || ! -x $APISERVER_BIN || ! -x $MANAGER_BIN ]] ||
     [[ $WITH_KCM == 1 && ! -x $KCM_BIN ]]; then
    log "downloading modules (go mod download)"
    (cd "$MODDIR" && nice -n 19 go mod download) || die "go mod download failed"
    log "modules ready after $((SECONDS - t0)) s"
  fi
  build_one "$ETCD_BIN" go.etcd.io/etcd/server/v3
  local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  local v=k8s.io/component-base/version
  build_one "$APISERVER_BIN" k8s.io/kubernetes/cmd/kube-apiserver \
    "-X $v.gitVersion=$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
  build_one "$MANAGER_BIN" github.com/SlinkyProject/slurm-operator/cmd/manager
  if [[ $WITH_KCM == 1 ]]; then
    build_one "$KCM_BIN" k8s.io/kubernetes/cmd/kube-controller-manager \
      "-X $v.gitVersion=$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
  fi
  log "build done in $((SECONDS - t0)) s"
}

# ---------------------------------------------------------------- helpers ---

# free_ports N: N distinct free TCP ports on 127.0.0.1, held open together
# while they are chosen so that no two are the same.
free_ports() {
  python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# state DIR KEY: a value that start recorded in DIR/env
state() { awk -F= -v k="$2" '$1==k {sub(/^[^=]*=/, ""); print; exit}' "$1/env"; }

# api DIR METHOD PATH [curl args...]: a request as the admin user (client
# certificate); prints the body; fails with the API server's message.
api() {
  local dir=$1 method=$2 path=$3; shift 3
  local out code
  out=$(curl -sS --max-time 30 -X "$method" --cacert "$dir/pki/ca.crt" \
    --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key" \
    -w '\n%{http_code}' "$@" "$(state "$dir" SERVER)$path") || return 1
  code=${out##*$'\n'}; out=${out%$'\n'*}
  if [[ $code != 2* ]]; then
    printf '%s %s -> HTTP %s: %s\n' "$method" "$path" "$code" \
      "$(jq -r '.message // .' <<<"$out" 2>/dev/null || echo "$out")" >&2
    return 1
  fi
  printf '%s\n' "$out"
}

# apply DIR PATH [FILE]: server-side apply of a YAML body (stdin or FILE)
apply() {
  local dir=$1 path=$2 file=${3:--}
  api "$dir" PATCH "$path?fieldManager=corral-test-env&force=true" \
    -H 'Content-Type: application/apply-patch+yaml' --data-binary "@$file" >/dev/null
}

# start_daemon DIR NAME CMD...: start CMD in its own session, logging to
# DIR/logs/NAME.log; its PID (the daemon's own, not a wrapper's) goes to DIR/pids.
start_daemon() {
  local dir=$1 name=$2; shift 2
  local pidfile=$dir/run/$name.pid
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@" \
    </dev/null >"$dir/logs/$name.log" 2>&1 &
  local i
  for i in $(seq 50); do [[ -s $pidfile ]] && break; sleep 0.1; done
  [[ -s $pidfile ]] || die "$name did not start"
  echo "$name $(cat "$pidfile") $(readlink -f "$1")" >>"$dir/pids"
  log "started $name (pid $(cat "$pidfile")), log $dir/logs/$name.log"
}

# alive DIR NAME: the recorded process is still running (and is still ours)
alive() {
  local pid exe
  read -r _ pid exe < <(awk -v n="$2" '$1==n' "$1/pids")
  [[ -n ${pid:-} ]] && kill -0 "$pid" 2>/dev/null &&
    [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$exe" ]]
}

# wait_for SECONDS WHAT CMD...: retry CMD every 0.5 s
wait_for() {
  local limit=$1 what=$2; shift 2
  local t0=$SECONDS
  until "$@" >/dev/null 2>&1; do
    ((SECONDS - t0 < limit)) || return 1
    sleep 0.5
  done
  log "$what after $((SECONDS - t0)) s"
}

# wait_daemon DIR NAME SECONDS WHAT CMD...: wait_for, but give up at once
# (showing the end of its log) if the daemon NAME has exited
wait_daemon() {
  local dir=$1 name=$2 limit=$3 what=$4; shift 4
  local t0=$SECONDS
  until "$@" >/dev/null 2>&1; do
    if ! alive "$dir" "$name"; then
      tail -20 "$dir/logs/$name.log" >&2
      die "$name exited (log $dir/logs/$name.log)"
    fi
    if ((SECONDS - t0 >= limit)); then
      tail -20 "$dir/logs/$name.log" >&2
      die "$what: not within $limit s (log $dir/logs/$name.log)"
    fi
    sleep 0.5
  done
  log "$what after $((SECONDS - t0)) s"
}

# ------------------------------------------------------------------- pki ---

make_pki() {
  local pki=$1 sa_ip=$2
  mkdir -p "$pki"; chmod 700 "$pki"
  (
    cd "$pki"
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -sha256 \
      -keyout ca.key -out ca.crt -subj "/CN=corral-test-env-ca" \
      -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    # serving certificate for kube-apiserver
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr \
      -subj "/CN=kube-apiserver" 2>/dev/null
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
      -days 30 -sha256 -out apiserver.crt -extfile <(printf '%s\n' \
        "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
        "extendedKeyUsage=serverAuth" \
        "subjectAltName=IP:127.0.0.1,IP:$sa_ip,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local") 2>/dev/null
    # client certificate for the admin user (group system:masters)
    openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr \
      -subj "/O=system:masters/CN=corral-admin" 2>/dev/null
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
      -days 30 -sha256 -out admin.crt -extfile <(printf '%s\n' \
        "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
        "extendedKeyUsage=clientAuth") 2>/dev/null
    # client certificate for kube-controller-manager (bound by RBAC's
    # bootstrap policy, as kubeadm does it)
    openssl req -newkey rsa:2048 -nodes -keyout kcm.key -out kcm.csr \
      -subj "/CN=system:kube-controller-manager" 2>/dev/null
    openssl x509 -req -in kcm.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
      -days 30 -sha256 -out kcm.crt -extfile <(printf '%s\n' \
        "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
        "extendedKeyUsage=clientAuth") 2>/dev/null
    # service-account token signing keys
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    # static bearer token for the same admin identity: token,user,uid,"groups"
    local token; token=$(openssl rand -hex 32)
    printf '%s,corral-admin-token,corral-admin-token,"system:masters"\n' "$token" >tokens.csv
    printf '%s' "$token" >admin.token
    rm -f ./*.csr ca.srl
    chmod 600 ./*.key tokens.csv admin.token
  )
}

# write_kubeconfig FILE SERVER CA USERNAME (cert KEYFILE CRTFILE | token TOKEN)
write_kubeconfig() {
  local file=$1 server=$2 ca=$3 user=$4 kind=$5
  {
    cat <<EOF
apiVersion: v1
kind: Config
clusters:
- name: corral-test-env
  cluster:
    server: $server
    certificate-authority-data: $(base64 -w0 "$ca")
users:
- name: $user
  user:
EOF
    if [[ $kind == cert ]]; then
      echo "    client-certificate-data: $(base64 -w0 "$7")"
      echo "    client-key-data: $(base64 -w0 "$6")"
    else
      echo "    token: $6"
    fi
    cat <<EOF
contexts:
- name: corral-test-env
  context:
    cluster: corral-test-env
    user: $user
current-context: corral-test-env
EOF
  } >"$file"
  chmod 600 "$file"
}

# ----------------------------------------------------------------- start ---

cmd_start() {
  local dir=${1:?usage: env.sh start DIR}
  [[ -e $dir/pids ]] && die "$dir already holds an environment (env.sh stop $dir first)"
  local bins=("$ETCD_BIN" "$APISERVER_BIN" "$MANAGER_BIN")
  [[ $WITH_KCM == 1 ]] && bins+=("$KCM_BIN")
  true
  for b in "${bins[@]}"; do
    [[ -x $b ]] || die "$b is missing: run env.sh build first (with the same K8S_ENV_* settings)"
  done
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  mkdir -p "$dir/logs" "$dir/run" "$dir/etcd"
  chmod 700 "$dir/etcd"
  : >"$dir/.corral-k8s-env"
  : >"$dir/pids"
  # On any failure below, stop what was started but keep DIR (its logs).
  START_DIR=$dir
  trap 'rc=$?; if ((rc != 0)); then log "start failed: stopping what it started; logs kept in $START_DIR/logs (env.sh stop $START_DIR removes it)"; stop_processes "$START_DIR"; fi' EXIT
  local t0=$SECONDS
  local slinky; slinky=$(slinky_dir) || die "cannot find the slurm-operator module"

  local etcd_port etcd_peer api_port health_port metrics_port kcm_port
  read -r etcd_port etcd_peer api_port health_port metrics_port kcm_port < <(free_ports 6)
  local server=https://127.0.0.1:$api_port
  # The Service CIDR's first address is the 'kubernetes' Service's ClusterIP.
  local svc_cidr=10.96.0.0/16 svc_ip=10.96.0.1
  make_pki "$dir/pki" "$svc_ip"
  cat >"$dir/env" <<EOF
SERVER=$server
ETCD=http://127.0.0.1:$etcd_port
OPERATOR_HEALTH=http://127.0.0.1:$health_port
OPERATOR_METRICS=http://127.0.0.1:$metrics_port
KUBECONFIG=$dir/kubeconfig
KUBECONFIG_TOKEN=$dir/kubeconfig-token
KUBECONFIG_OPERATOR=$dir/kubeconfig-operator
K8S_VERSION=$K8S_VERSION
ETCD_VERSION=$ETCD_VERSION
SLINKY_VERSION=$SLINKY_VERSION
SLINKY_DIR=$slinky
CONTROLLER_MANAGER=$WITH_KCM
EOF

  # etcd: loopback only; fsync off (test data, and the disk is shared).
  start_daemon "$dir" etcd "$ETCD_BIN" --name default --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" \
    --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-cluster "default=http://127.0.0.1:$etcd_peer" \
    --unsafe-no-fsync --log-level warn
  wait_daemon "$dir" etcd 30 "etcd healthy" curl -fsS "http://127.0.0.1:$etcd_port/health"

  start_daemon "$dir" kube-apiserver "$APISERVER_BIN" \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
    --cert-dir "$dir/pki" \
    --tls-cert-file "$dir/pki/apiserver.crt" --tls-private-key-file "$dir/pki/apiserver.key" \
    --client-ca-file "$dir/pki/ca.crt" \
    --token-auth-file "$dir/pki/tokens.csv" \
    --requestheader-client-ca-file "$dir/pki/ca.crt" \
    --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User \
    --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$dir/pki/sa.pub" \
    --service-account-signing-key-file "$dir/pki/sa.key" \
    --service-cluster-ip-range "$svc_cidr" \
    --endpoint-reconciler-type none \
    --allow-privileged=true \
    --profiling=false \
    --v=1
  wait_daemon "$dir" kube-apiserver 120 "kube-apiserver /readyz ok" \
    curl -fsS --cacert "$dir/pki/ca.crt" -H "Authorization: Bearer $(cat "$dir/pki/admin.token")" \
    "$server/readyz"

  write_kubeconfig "$dir/kubeconfig" "$server" "$dir/pki/ca.crt" corral-admin \
    cert "$dir/pki/admin.key" "$dir/pki/admin.crt"
  write_kubeconfig "$dir/kubeconfig-token" "$server" "$dir/pki/ca.crt" corral-admin-token \
    token "$(cat "$dir/pki/admin.token")"

  if [[ $WITH_KCM == 1 ]]; then
    write_kubeconfig "$dir/kubeconfig-kcm" "$server" "$dir/pki/ca.crt" \
      system:kube-controller-manager cert "$dir/pki/kcm.key" "$dir/pki/kcm.crt"
    mkdir -p "$dir/pki/kcm"
    start_daemon "$dir" kube-controller-manager "$KCM_BIN" \
      --kubeconfig "$dir/kubeconfig-kcm" \
      --authentication-kubeconfig "$dir/kubeconfig-kcm" \
      --authorization-kubeconfig "$dir/kubeconfig-kcm" \
      --use-service-account-credentials=true \
      --service-account-private-key-file "$dir/pki/sa.key" \
      --root-ca-file "$dir/pki/ca.crt" \
      --cluster-signing-cert-file "$dir/pki/ca.crt" --cluster-signing-key-file "$dir/pki/ca.key" \
      --service-cluster-ip-range "$svc_cidr" \
      --bind-address 127.0.0.1 --secure-port "$kcm_port" --cert-dir "$dir/pki/kcm" \
      --leader-elect=false \
      --profiling=false \
      --v=1
    wait_daemon "$dir" kube-controller-manager 60 "kube-controller-manager /healthz ok" \
      curl -fsSk "https://127.0.0.1:$kcm_port/healthz"
  fi

  # Slinky's CRDs, as the downloaded module ships them, by server-side apply.
  local f name
  for f in "$slinky"/config/crd/bases/slinky.slurm.net_*.yaml; do
    name=$(basename "$f" .yaml); name="${name#slinky.slurm.net_}.slinky.slurm.net"
    apply "$dir" "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/$name" "$f" ||
      die "applying CRD $name failed"
  done
  # A stand-in for prometheus-operator's ServiceMonitor CRD (schema left
  # open): Slinky's Controller reconciler deletes a ServiceMonitor when
  # metrics are off and, without this kind, ends every pass with 'no matches
  # for kind "ServiceMonitor"' and requeues. K8S_ENV_SERVICEMONITOR_CRD=0
  # leaves it out, as on a cluster without prometheus-operator.
  if [[ ${K8S_ENV_SERVICEMONITOR_CRD:-1} != 0 ]]; then
    apply "$dir" /apis/apiextensions.k8s.io/v1/customresourcedefinitions/servicemonitors.monitoring.coreos.com <<EOF
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: servicemonitors.monitoring.coreos.com}
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: {kind: ServiceMonitor, listKind: ServiceMonitorList, plural: servicemonitors, singular: servicemonitor}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
EOF
  fi
  crds_established() {
    local pending
    pending=$(api "$dir" GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions |
      jq '[.items[] | select(any(.status.conditions[]?; .type=="Established" and .status=="True") | not)] | length')
    [[ $pending == 0 ]]
  }
  wait_for 60 "CRDs established" crds_established || die "CRDs not established"

  # The operator runs as its own ServiceAccount with Slinky's own ClusterRole
  # (config/rbac/role.yaml), as its chart deploys it, not as an admin.
  apply "$dir" /api/v1/namespaces/slinky <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: slinky}
EOF
  apply "$dir" /api/v1/namespaces/slinky/serviceaccounts/slurm-operator <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: slurm-operator, namespace: slinky}
EOF
  apply "$dir" /apis/rbac.authorization.k8s.io/v1/clusterroles/manager-role \
    "$slinky/config/rbac/role.yaml" || die "applying Slinky's ClusterRole failed"
  apply "$dir" /apis/rbac.authorization.k8s.io/v1/clusterrolebindings/slurm-operator <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: slurm-operator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: manager-role}
subjects:
- {kind: ServiceAccount, name: slurm-operator, namespace: slinky}
EOF
  local sa_token
  sa_token=$(api "$dir" POST /api/v1/namespaces/slinky/serviceaccounts/slurm-operator/token \
    -H 'Content-Type: application/json' \
    -d '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":604800}}' |
    jq -r .status.token) || die "TokenRequest for the operator failed"
  write_kubeconfig "$dir/kubeconfig-operator" "$server" "$dir/pki/ca.crt" \
    system:serviceaccount:slinky:slurm-operator token "$sa_token"

  # The operator's manager: no webhooks (cmd/webhook is not run and no
  # webhook configuration is registered), no leader election, probes and
  # metrics on loopback.
  KUBECONFIG=$dir/kubeconfig-operator start_daemon "$dir" slurm-operator "$MANAGER_BIN" \
    --kubeconfig "$dir/kubeconfig-operator" \
    --leader-elect=false \
    --health-addr "127.0.0.1:$health_port" \
    --metrics-addr "127.0.0.1:$metrics_port" \
    --zap-log-level info
  wait_daemon "$dir" slurm-operator 60 "slurm-operator /readyz ok" \
    curl -fsS "http://127.0.0.1:$health_port/readyz"

  log "environment up in $((SECONDS - t0)) s: $server"
  log "  kubeconfig (client cert): $dir/kubeconfig"
  log "  kubeconfig (bearer token): $dir/kubeconfig-token"
  log "  state: $dir/env, pids: $dir/pids, logs: $dir/logs/"
}

# ------------------------------------------------------------------ stop ---

cmd_stop() {
  local dir=${1:?usage: env.sh stop DIR}
  [[ -d $dir ]] || { log "$dir does not exist: nothing to stop"; return 0; }
  dir=$(cd "$dir" && pwd)
  [[ -e $dir/.corral-k8s-env ]] || die "$dir was not made by env.sh start: not touching it"
  stop_processes "$dir"
  rm -rf -- "$dir"
  log "removed $dir"
}

# stop_processes DIR: SIGTERM (then SIGKILL after 10 s) each recorded PID
# that is still the binary it was, newest first. Nothing else is signalled.
stop_processes() {
  local dir=$1 name pid exe
  if [[ -s $dir/pids ]]; then
    # newest first: operator, (kube-controller-manager,) kube-apiserver, etcd
    while read -r name pid exe; do
      if kill -0 "$pid" 2>/dev/null && [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$exe" ]]; then
        kill -TERM "$pid" 2>/dev/null || true
        local i
        for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
          log "$name (pid $pid) ignored SIGTERM for 10 s: SIGKILL"
          kill -KILL "$pid" 2>/dev/null || true
        fi
        log "stopped $name (pid $pid)"
      else
        log "$name (pid $pid) was not running"
      fi
    done < <(tac "$dir/pids")
  fi
}

# ----------------------------------------------------------------- check ---

cmd_check() {
  local dir=${1:?usage: env.sh check DIR}
  [[ -e $dir/.corral-k8s-env && -e $dir/env ]] || die "$dir holds no environment (env.sh start $dir)"
  dir=$(cd "$dir" && pwd)
  local ns=${CHECK_NAMESPACE:-corral-check} timeout=${CHECK_TIMEOUT:-120}
  local name
  local names=(etcd kube-apiserver slurm-operator)
  [[ $(state "$dir" CONTROLLER_MANAGER) == 1 ]] && names+=(kube-controller-manager)
  true
  for name in "${names[@]}"; do
    alive "$dir" "$name" || die "$name is not running (see $dir/logs/$name.log)"
  done
  local t0=$SECONDS
  echo "== Kubernetes $(api "$dir" GET /version | jq -r .gitVersion), Slinky $SLINKY_VERSION, namespace $ns"

  apply "$dir" "/api/v1/namespaces/$ns" <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: $ns}
EOF
  # kube-controller-manager's serviceaccount controller would make this; the
  # ServiceAccount admission plugin refuses pods without it.
  apply "$dir" "/api/v1/namespaces/$ns/serviceaccounts/default" <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: default, namespace: $ns}
EOF
  # Keys made once per environment, so that a second check changes nothing.
  [[ -s $dir/run/slurm.key ]] || openssl rand 1024 >"$dir/run/slurm.key"
  [[ -s $dir/run/jwt_hs256.key ]] || openssl rand 32 >"$dir/run/jwt_hs256.key"
  chmod 600 "$dir/run/slurm.key" "$dir/run/jwt_hs256.key"
  apply "$dir" "/api/v1/namespaces/$ns/secrets/slurm-auth-slurm" <<EOF
apiVersion: v1
kind: Secret
metadata: {name: slurm-auth-slurm, namespace: $ns}
type: Opaque
data:
  slurm.key: $(base64 -w0 "$dir/run/slurm.key")
EOF
  apply "$dir" "/api/v1/namespaces/$ns/secrets/slurm-auth-jwths256" <<EOF
apiVersion: v1
kind: Secret
metadata: {name: slurm-auth-jwths256, namespace: $ns}
type: Opaque
data:
  jwt_hs256.key: $(base64 -w0 "$dir/run/jwt_hs256.key")
EOF

  # CRD validation is live: a Controller without its keys is refused (dry run).
  local refused
  if refused=$(api "$dir" POST "/apis/slinky.slurm.net/v1beta1/namespaces/$ns/controllers?dryRun=All" \
      -H 'Content-Type: application/json' \
      -d '{"apiVersion":"slinky.slurm.net/v1beta1","kind":"Controller","metadata":{"name":"bad"},"spec":{}}' 2>&1); then
    die "a Controller with no slurmKeyRef/jwtKeyRef was accepted"
  fi
  echo "== CRD validation refuses a Controller without keys:"
  echo "   $refused"

  # What Slinky's own chart (helm/slurm) writes. The operator defaults
  # none of it: without images or with persistence lacking accessModes and
  # storage, the StatefulSet it builds is refused by the API server. Nothing
  # pulls the images here (no kubelet).
  local img=ghcr.io/slinkyproject tag=25.11-ubuntu24.04
  apply "$dir" "/apis/slinky.slurm.net/v1beta1/namespaces/$ns/controllers/slurm" <<EOF
apiVersion: slinky.slurm.net/v1beta1
kind: Controller
metadata: {name: slurm, namespace: $ns}
spec:
  slurmKeyRef: {name: slurm-auth-slurm, key: slurm.key}
  jwtKeyRef: {name: slurm-auth-jwths256, key: jwt_hs256.key}
  slurmctld: {image: $img/slurmctld:$tag}
  reconfigure: {image: $img/slurmctld:$tag}
  logfile: {image: docker.io/library/alpine:latest}
  persistence:
    enabled: true
    accessModes: [ReadWriteOnce]
    resources: {requests: {storage: 4Gi}}
EOF
  apply "$dir" "/apis/slinky.slurm.net/v1beta1/namespaces/$ns/nodesets/slinky" <<EOF
apiVersion: slinky.slurm.net/v1beta1
kind: NodeSet
metadata: {name: slinky, namespace: $ns}
spec:
  controllerRef: {name: slurm, namespace: $ns}
  replicas: 2
  partition: {enabled: true, config: "State=UP MaxTime=INFINITE"}
  slurmd: {image: $img/slurmd:$tag}
  logfile: {image: docker.io/library/alpine:latest}
  template:
    spec:
      hostname: slinky-
EOF
  echo "== applied Secrets slurm-auth-slurm, slurm-auth-jwths256, Controller slurm, NodeSet slinky (replicas 2, hostname slinky-)"
  # controllerRef needs its namespace: the operator looks the Controller up
  # by exactly {namespace, name} as written (empty means cluster scope).

  local base=/api/v1/namespaces/$ns apps=/apis/apps/v1/namespaces/$ns
  local kcm; kcm=$(state "$dir" CONTROLLER_MANAGER)
  produced() {
    api "$dir" GET "$apps/statefulsets/slurm-controller" >/dev/null &&
      [[ $(api "$dir" GET "$base/pods/slinky-0" | jq -r .spec.hostname) == slinky-0 ]] &&
      [[ $(api "$dir" GET "$base/pods/slinky-1" | jq -r .spec.hostname) == slinky-1 ]] &&
      api "$dir" GET "$base/configmaps/slurm-config" | jq -r '.data["slurm.conf"]' >"$dir/run/slurm.conf" &&
      grep -qx 'NodeSet=slinky Feature=slinky' "$dir/run/slurm.conf" &&
      grep -q '^PartitionName=slinky Nodes=slinky' "$dir/run/slurm.conf" &&
      if [[ $kcm == 1 ]]; then
        # kube-controller-manager's StatefulSet controller makes the pod
        [[ $(api "$dir" GET "$base/pods/slurm-controller-0" | jq -r .spec.hostname) == slurm-controller-0 ]]
      fi
  }
  if ! wait_for "$timeout" "operator produced its objects" produced; then
    echo "== FAILED: not all of the operator's objects appeared within $timeout s; last operator log lines:"
    tail -20 "$dir/logs/slurm-operator.log"
    exit 1
  fi

  echo "== StatefulSets:"
  api "$dir" GET "$apps/statefulsets" | jq -r '.items[] |
    "   \(.metadata.name): replicas \(.spec.replicas), serviceName \(.spec.serviceName), owner \(.metadata.ownerReferences[0].kind)/\(.metadata.ownerReferences[0].name), containers \([.spec.template.spec.containers[].name] | join(","))"'
  echo "== Pods (no kubelet: they stay Pending, on no node):"
  api "$dir" GET "$base/pods" | jq -r '.items[] |
    "   \(.metadata.name): hostname \(.spec.hostname), subdomain \(.spec.subdomain // "-"), phase \(.status.phase // "-"), node \(.spec.nodeName // "none"), owner \(.metadata.ownerReferences[0].kind)/\(.metadata.ownerReferences[0].name), image \(.spec.containers[0].image)"'
  echo "== Services:"
  api "$dir" GET "$base/services" | jq -r '.items[] |
    "   \(.metadata.name): clusterIP \(.spec.clusterIP), ports \([.spec.ports[]? | "\(.name // "-")/\(.port)"] | join(","))"'
  echo "== ConfigMaps:"
  api "$dir" GET "$base/configmaps" | jq -r '.items[] | "   \(.metadata.name): \(.data // {} | keys | join(", "))"'
  echo "== slurm.conf (ConfigMap slurm-config, key slurm.conf), NodeSet and partition lines:"
  grep -E '^(NodeSet|PartitionName)=' "$dir/run/slurm.conf" | sed 's/^/   /'
  echo "== NodeSet status: $(api "$dir" GET "/apis/slinky.slurm.net/v1beta1/namespaces/$ns/nodesets/slinky" | jq -c '.status // {}')"
  echo "== check passed in $((SECONDS - t0)) s"
}

case "${1:-}" in
  build) cmd_build ;;
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  check) shift; cmd_check "$@" ;;
  *) awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"; exit 2 ;;
esac
