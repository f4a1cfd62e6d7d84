#!/usr/bin/env bash
# End to end on Kubernetes (issue 15): `corrald --runtime kubernetes` against
# test/k8s's real etcd, kube-apiserver, kube-controller-manager and Slinky
# operator, driven through the unchanged `corral` CLI. It asserts what the
# API server stores, that CRD validation and admission accept every object
# corral writes (and that a refused one fails the create, or rolls a change
# back, with the API server's message), and what the real operator makes of
# them. There is no kubelet: test/k8s/kubelet-standin.py writes pod status
# as one would, so that "Running" is reached; everything it does is said
# there. Run by ctest (label kube) after `test/k8s/env.sh build` with
# K8S_ENV_CONTROLLER_MANAGER=1.
#
#   BUILD=build test/k8s/cli-e2e.sh
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
BUILD=$(cd "$BUILD" && pwd)
NAME=kube-e2e
# shellcheck source=corrald-env.sh
source "$HERE/corrald-env.sh"
log() { echo "cli-e2e: $*" >&2; }
fail() { log "FAILED: $*"; exit 1; }

for bin in corrald corral; do
  [[ -x $BUILD/$bin ]] || fail "no $BUILD/$bin: build corral first"
done
start_kube_env || fail "env.sh start"

# q PATH EXPR: evaluates the Python expression EXPR over the object at PATH (`o`).
q() {
  kapi GET "$1" | python3 -c "import json,sys; o=json.load(sys.stdin); print($2)"
}
# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds.
wait_for() {
  local limit=$1 what=$2
  shift 2
  local deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "timed out after $limit s waiting for $what"
    sleep 0.5
  done
}
has() { q "$1" "$2" | grep -qx True; }
status_of() { "$BUILD/corral" cluster get "$1" -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])'; }
status_is() { [[ $(status_of "$1") == "$2" ]]; }
SLINKY=/apis/slinky.slurm.net/v1beta1/namespaces

# The platform's side: a namespace per cluster (corrald makes none), and an
# admission policy of the kind an operator sets, refusing NodeSets of more
# than 6 workers (CEL, evaluated by the API server itself).
for ns in corral-alpha corral-beta; do kube_namespace "$ns"; done
kapi POST /apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies '{
  "apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy",
  "metadata":{"name":"nodeset-size"},
  "spec":{"failurePolicy":"Fail",
    "matchConstraints":{"resourceRules":[{"apiGroups":["slinky.slurm.net"],"apiVersions":["*"],
      "operations":["CREATE","UPDATE"],"resources":["nodesets"]}]},
    "validations":[{"expression":"!has(object.spec.replicas) || object.spec.replicas <= 6",
      "message":"this platform allows at most 6 workers per NodeSet"}]}}' >/dev/null
kapi POST /apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings '{
  "apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding",
  "metadata":{"name":"nodeset-size"},"spec":{"policyName":"nodeset-size","validationActions":["Deny"]}}' >/dev/null
probe='{"apiVersion":"slinky.slurm.net/v1beta1","kind":"NodeSet","metadata":{"name":"probe"},
  "spec":{"replicas":7,"controllerRef":{"name":"x","namespace":"corral-beta"},"template":{"spec":{}}}}'
policy_active() { kapi POST "$SLINKY/corral-beta/nodesets?dryRun=All" "$probe" | grep -q "at most 6 workers"; }
wait_for 30 "the admission policy to be active" policy_active

mkdir -p "$DATA"
TOKEN=$(admin_token alice "kube e2e")
export CORRAL_SERVER=$URL CORRAL_TOKEN=$TOKEN
start_kube_corrald --kube-image-prefix registry.corral.test/corral
C="$BUILD/corral"

log "1. create: 4 GPU workers, 2 CPU workers"
"$C" cluster create alpha --gpu-nodes 4 --cpu-nodes 2 >/dev/null
wait_for 20 "alpha's objects to be applied" bash -c "'$C' events alpha | grep -q ObjectsApplied"
"$C" events alpha | grep ObjectsApplied >&2
A=$SLINKY/corral-alpha
has "$A/controllers/alpha" "o['metadata']['labels']['app.kubernetes.io/managed-by']=='corral' and 'PartitionName=all' in o['spec']['extraConf']" ||
  fail "Controller alpha (labels, extraConf) is not what corral renders"
has "$A/nodesets/slinky" "o['spec']['replicas']==4" || fail "NodeSet slinky should have 4 replicas"
has "$A/nodesets/cpu-workers" "o['spec']['replicas']==2" || fail "NodeSet cpu-workers should have 2 replicas"
has "$A/loginsets/alpha-login" "len(o['spec']['rootSshAuthorizedKeys'])>0" || fail "LoginSet without root keys"
has "$A/accountings/alpha" "o['spec']['storageConfig']['host']=='alpha-mariadb'" || fail "Accounting alpha"
has "/api/v1/namespaces/corral-alpha/secrets/alpha-slurm-key" "len(o['data']['slurm.key'])>1000" || fail "Secret alpha-slurm-key"
has "/api/v1/namespaces/corral-alpha/persistentvolumeclaims/alpha-shared" "o['spec']['accessModes']==['ReadWriteMany']" ||
  fail "claim alpha-shared"

log "2. what the real operator made of them"
P=/api/v1/namespaces/corral-alpha
wait_for 60 "StatefulSet alpha-controller" has "/apis/apps/v1/namespaces/corral-alpha/statefulsets/alpha-controller" "True"
for i in 0 1 2 3; do
  wait_for 60 "pod slinky-$i" has "$P/pods/slinky-$i" "o['spec']['hostname']=='slinky-$i'"
done
for i in 0 1; do
  wait_for 60 "pod cpu-workers-$i" has "$P/pods/cpu-workers-$i" "o['spec']['hostname']=='cpu-workers-$i'"
done
wait_for 60 "the operator's slurm.conf" has "$P/configmaps/alpha-config" \
  "'NodeSet=slinky' in o['data']['slurm.conf'] and 'PartitionName=slinky' in o['data']['slurm.conf'] and 'NodeSet=cpu-workers' in o['data']['slurm.conf']"
wait_for 60 "Service alpha-login (SSH)" has "$P/services/alpha-login" "o['spec']['ports'][0]['port']==22"
status_is alpha Creating || fail "alpha should be Creating while its pods are Pending"
"$C" cluster get alpha | grep -q "Phase: *waiting for alpha-controller-0 (Pending" ||
  fail "alpha's phase should name the Pending controller pod: $("$C" cluster get alpha | grep Phase)"

log "3. pods start (kubelet-standin.py): alpha is Running"
python3 "$HERE/kubelet-standin.py" "$ENVDIR" corral-alpha corral-beta --loop >"$WORK/standin.log" 2>&1 &
STANDIN_PID=$!
wait_for 60 "alpha to be Running" status_is alpha Running
nodes=$("$C" cluster get alpha | awk '/^(slinky|cpu-workers)-/ {print $1}' | tr '\n' ' ')
[[ $nodes == "slinky-0 slinky-1 slinky-2 slinky-3 cpu-workers-0 cpu-workers-1 " ]] || fail "alpha's nodes: $nodes"

log "4. scale up to 6 GPU workers"
"$C" cluster scale alpha --gpu-nodes 6 --timeout 120 >/dev/null || fail "scale to 6 did not apply"
has "$A/nodesets/slinky" "o['spec']['replicas']==6" || fail "NodeSet slinky should have 6 replicas"
has "$P/pods/slinky-5" "o['spec']['hostname']=='slinky-5'" || fail "pod slinky-5"
"$C" cluster get alpha | grep -q '^slinky-5 ' || fail "slinky-5 is not in alpha's node table"

log "5. a configuration change reaches the operator's slurm.conf"
"$C" config set alpha MinJobAge=321 >/dev/null
wait_for 60 "MinJobAge in the Controller" has "$A/controllers/alpha" "'MinJobAge=321' in o['spec']['extraConf']"
wait_for 60 "MinJobAge in the operator's slurm.conf" has "$P/configmaps/alpha-config" "'MinJobAge=321' in o['data']['slurm.conf']"
wait_for 60 "the change to be applied" bash -c "'$C' cluster history alpha | grep -q 'Applied (current)'"

log "6. a change the API server refuses is rolled back"
if "$C" cluster scale alpha --gpu-nodes 8 --timeout 120 >"$WORK/scale8.out" 2>&1; then
  fail "scaling to 8 should have failed (the admission policy refuses it)"
fi
wait_for 60 "the rollback to be applied" bash -c "'$C' cluster history alpha | grep -q 'Applied (current)'"
"$C" events alpha | grep ChangeFailed | grep -q "at most 6 workers per NodeSet" ||
  fail "no ChangeFailed event with the API server's message: $("$C" events alpha | grep ChangeFailed)"
"$C" cluster history alpha | grep -q "Failed" || fail "the refused revision is not marked Failed"
has "$A/nodesets/slinky" "o['spec']['replicas']==6" || fail "NodeSet slinky should still have 6 replicas"
status_is alpha Running || fail "alpha should still be Running"

log "7. a create the API server refuses fails, and leaves nothing behind"
"$C" cluster create beta --gpu-nodes 8 >/dev/null
wait_for 60 "beta to be Failed" status_is beta Failed
"$C" cluster get beta | grep -q "at most 6 workers per NodeSet" || fail "beta's reason lacks the API server's message"
left=$(q "$SLINKY/corral-beta/controllers" "len(o['items'])")
[[ $left == 0 ]] || fail "beta's Controller was left behind"
"$C" cluster delete beta >/dev/null
wait_for 60 "beta to be gone" bash -c "! '$C' cluster get beta"

log "8. scale down to 2 GPU workers and no CPU workers (the operator drains, then deletes)"
"$C" cluster scale alpha --gpu-nodes 2 --cpu-nodes 0 --timeout 150 >/dev/null || fail "scale down did not apply"
gone() { [[ $(q "$1" "o.get('code', 200)") == 404 ]]; }
gone "$A/nodesets/cpu-workers" || fail "NodeSet cpu-workers should be gone"
for pod in slinky-2 slinky-5 cpu-workers-0; do gone "$P/pods/$pod" || fail "pod $pod should be gone"; done
nodes=$("$C" cluster get alpha | awk '/^(slinky|cpu-workers)-/ {print $1}' | tr '\n' ' ')
[[ $nodes == "slinky-0 slinky-1 " ]] || fail "alpha's nodes after scale down: $nodes"

log "9. corrald restarts: the cluster stays Running on the same keys, its revision applied once more"
key=$(q "$P/secrets/alpha-slurm-key" "o['data']['slurm.key']")
applies=$("$C" events alpha | grep -c ObjectsApplied)
kill "$CORRALD_PID"; wait "$CORRALD_PID" 2>/dev/null || true
start_kube_corrald --kube-image-prefix registry.corral.test/corral
wait_for 30 "the re-apply" bash -c "(( \$('$C' events alpha | grep -c ObjectsApplied) == $((applies + 1)) ))"
status_is alpha Running || fail "alpha should be Running after corrald restarted"
[[ $(q "$P/secrets/alpha-slurm-key" "o['data']['slurm.key']") == "$key" ]] || fail "the slurm key changed"
has "$A/nodesets/slinky" "o['spec']['replicas']==2" || fail "NodeSet slinky changed across the restart"

log "10. terminate keeps the state, deletes what runs"
"$C" cluster terminate alpha >/dev/null
wait_for 60 "alpha to be Terminated" status_is alpha Terminated
gone "$A/controllers/alpha" || fail "Controller alpha should be gone"
gone "$A/nodesets/slinky" || fail "NodeSet slinky should be gone"
has "$P/secrets/alpha-slurm-key" "o['data']['slurm.key']=='$key'" || fail "the slurm key should be kept"
has "$P/persistentvolumeclaims/alpha-shared" "True" || fail "the shared claim should be kept"

log "11. delete removes everything corral made, and nothing else"
kapi POST "$P/configmaps" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"not-corrals"}}' >/dev/null
"$C" cluster delete alpha >/dev/null
wait_for 120 "alpha to be gone" bash -c "! '$C' cluster get alpha"
sel="labelSelector=corral.dev/cluster%3Dalpha"
for path in "$A/controllers" "$A/nodesets" "$A/loginsets" "$A/accountings" "/apis/apps/v1/namespaces/corral-alpha/statefulsets" \
    "$P/secrets" "$P/configmaps" "$P/services"; do
  left=$(q "$path?$sel" "len(o['items'])")
  [[ $left == 0 ]] || fail "$left objects left at $path"
done
left=$(q "$P/persistentvolumeclaims?$sel" "len([i for i in o['items'] if 'deletionTimestamp' not in i['metadata']])")
[[ $left == 0 ]] || fail "$left claims left that are not being deleted"
has "$P/configmaps/not-corrals" "True" || fail "delete removed a ConfigMap corral did not make"
log "passed"
