#!/usr/bin/env bash
# The Kubernetes images, checked as images (ctest label kube, test
# kube_image_check; docs/images.md, "Images for Kubernetes"):
#
#   test/k8s/image-check.sh [BUILD_DIR]
#
# 1. builds the cluster image debian-unstable-slurm26.05 (cached after the
#    first time; without Debian's archive it fails, saying so);
# 2. starts a real registry (Debian's docker-registry) on loopback;
# 3. pushes every role's image with scripts/kube-images.sh;
# 4. pulls each back with corral's own client (corral-imagectl pull) and
#    inspects it with skopeo, and asserts what Slinky's pods run: the
#    entrypoint and command, the slurm user at uid and gid 401, corral's
#    binaries and SPANK plugin in /.corral-bin, Slurm's release;
# 5. starts slurmctld as uid 401 and checks it answers Slinky's probes
#    (/livez, /readyz), and the mariadb role with corral's environment.
# Any mismatch fails it. It stops the registry it started (by PID) and
# removes its directory. Needs root (chroot into the pulled images).
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
build_dir=$(cd "${1:-$here/build}" && pwd)
image=${CORRAL_KUBE_IMAGE:-debian-unstable-slurm26.05}
release=26.05
registry_bin=/usr/bin/docker-registry
failures=0

say() { echo "image-check: $*"; }
fail() {
  echo "image-check: FAIL: $*" >&2
  failures=$((failures + 1))
}
die() {
  echo "image-check: FAILED: $*" >&2
  exit 1
}

[[ $(id -u) -eq 0 ]] || die "run as root (it reads the image's root filesystem and chroots into what it pulls)"
for tool in "$registry_bin" skopeo jq curl python3; do
  command -v "$tool" >/dev/null || die "$tool is not installed (scripts/install-deps.sh installs it)"
done
for f in corrald corral-imagectl enroot corral-health "spank_pyxis-$release.so"; do
  [[ -e $build_dir/$f ]] || die "no $f in $build_dir (build corral first)"
done

work=$(mktemp -d /tmp/corral-image-check.XXXXXX)
registry_pid=""
cleanup() {
  if [[ -n $registry_pid ]] && [[ $(readlink "/proc/$registry_pid/exe" 2>/dev/null) == "$registry_bin" ]]; then
    kill "$registry_pid" 2>/dev/null || true
    wait "$registry_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

seconds() { date +%s.%N; }
elapsed() { printf '%.1f' "$(bc <<<"$(seconds) - $1")"; }

# 1. The cluster image.
t=$(seconds)
if ! "$build_dir/corrald" image build "$image" >"$work/build.log" 2>&1; then
  tail -n 15 "$work/build.log" >&2
  die "cannot build cluster image $image: it is built from Debian's unstable suite (deb.debian.org or --debian-mirror), which must be reachable the first time"
fi
say "cluster image $image built or cached in $(elapsed "$t") s"

# 2. A registry on a free loopback port.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
registry=127.0.0.1:$port
mkdir -p "$work/registry"
cat >"$work/registry.yml" <<EOF
version: 0.1
log:
  level: error
storage:
  filesystem:
    rootdirectory: $work/registry
http:
  addr: $registry
EOF
"$registry_bin" serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
registry_pid=$!
for _ in $(seq 1 100); do
  curl -fsS "http://$registry/v2/" >/dev/null 2>&1 && break
  kill -0 "$registry_pid" 2>/dev/null || die "docker-registry exited: $(cat "$work/registry.log")"
  sleep 0.1
done
curl -fsS "http://$registry/v2/" >/dev/null || die "docker-registry did not answer on $registry"
say "registry on $registry (pid $registry_pid)"

# 3. The export.
prefix=$registry/corral-check
t=$(seconds)
"$here/scripts/kube-images.sh" --http --bin-dir "$build_dir" --tag check "$image" "$prefix" >"$work/pushed" ||
  die "scripts/kube-images.sh failed"
say "exported in $(elapsed "$t") s:"
cat "$work/pushed"

# What Slinky's pods run (the operator gives only args, never a command, to
# slurmctld, slurmd and login; slurmdbd and slurmrestd as Slinky's images).
declare -A want_entry=(
  [slurmctld]='["/usr/bin/tini","-g","--","/usr/local/bin/corral-kube-entrypoint","slurmctld"]'
  [slurmd]='["/usr/bin/tini","-g","--","/usr/local/bin/corral-kube-entrypoint","slurmd"]'
  [login]='["/usr/bin/tini","-g","--","/usr/local/bin/corral-kube-entrypoint","login"]'
  [mariadb]='["/usr/bin/tini","-g","--","/usr/local/bin/corral-kube-entrypoint","mariadb"]'
  [slurmdbd]='["/usr/bin/tini","-g","--","slurmdbd","-D"]'
  [slurmrestd]='["/usr/bin/tini","-g","--","slurmrestd"]'
)
declare -A want_cmd=([slurmrestd]='["0.0.0.0:6820"]')
[[ $(wc -l <"$work/pushed") -eq ${#want_entry[@]} ]] || fail "expected ${#want_entry[@]} images, pushed $(wc -l <"$work/pushed")"

# 4. Each image, pulled back and inspected.
t=$(seconds)
checked_rootfs=""
while read -r role ref digest; do
  [[ -n ${want_entry[$role]:-} ]] || { fail "$role: not a role Slinky runs"; continue; }
  # corral's own client.
  if ! "$build_dir/corral-imagectl" pull --http --cache "$work/cache" "$ref" >"$work/pull.out" 2>"$work/pull.err"; then
    fail "$role: corral-imagectl pull $ref: $(tail -n 3 "$work/pull.err")"
    continue
  fi
  pulled=$(sed -n 's/^digest //p' "$work/pull.out")
  rootfs=$(sed -n 's/^rootfs //p' "$work/pull.out")
  [[ $pulled == "$digest" ]] || fail "$role: pulled $pulled, pushed $digest"
  # skopeo: the manifest's digest and the image's config.
  if ! skopeo inspect --tls-verify=false "docker://$ref" >"$work/inspect.json" 2>"$work/skopeo.err" ||
    ! skopeo inspect --config --tls-verify=false "docker://$ref" >"$work/config.json" 2>>"$work/skopeo.err"; then
    fail "$role: skopeo inspect $ref: $(cat "$work/skopeo.err")"
    continue
  fi
  [[ $(jq -r .Digest "$work/inspect.json") == "$digest" ]] ||
    fail "$role: skopeo sees digest $(jq -r .Digest "$work/inspect.json"), pushed $digest"
  [[ $(jq -r '.os + "/" + .architecture' "$work/config.json") == linux/amd64 ]] ||
    fail "$role: platform $(jq -r '.os + "/" + .architecture' "$work/config.json")"
  entry=$(jq -c '.config.Entrypoint // []' "$work/config.json")
  cmd=$(jq -c '.config.Cmd // []' "$work/config.json")
  [[ $entry == "${want_entry[$role]}" ]] || fail "$role: entrypoint $entry, Slinky's pod needs ${want_entry[$role]}"
  [[ $cmd == "${want_cmd[$role]:-[]}" ]] || fail "$role: cmd $cmd, wanted ${want_cmd[$role]:-[]}"
  jq -e '.config.Env // [] | any(startswith("PATH=/usr/local/sbin:"))' "$work/config.json" >/dev/null ||
    fail "$role: no PATH in the image's environment"
  # What the pulled root filesystem holds.
  [[ -d $rootfs ]] || { fail "$role: pull gave no rootfs ($rootfs)"; continue; }
  [[ $(awk -F: '$1 == "slurm" {print $3":"$4}' "$rootfs/etc/passwd") == 401:401 ]] ||
    fail "$role: /etc/passwd has slurm as '$(grep '^slurm:' "$rootfs/etc/passwd" || true)', not uid 401 gid 401"
  [[ $(awk -F: '$1 == "slurm" {print $3}' "$rootfs/etc/group") == 401 ]] ||
    fail "$role: /etc/group has slurm as '$(grep '^slurm:' "$rootfs/etc/group" || true)', not 401"
  for f in enroot corral-health corral-imagectl "spank_pyxis-$release.so"; do
    if [[ ! -f $rootfs/.corral-bin/$f ]]; then
      fail "$role: no /.corral-bin/$f"
    elif ! cmp -s "$rootfs/.corral-bin/$f" "$build_dir/$f"; then
      fail "$role: /.corral-bin/$f is not corral's build of it"
    fi
  done
  [[ -x $rootfs/usr/local/bin/corral-kube-entrypoint ]] || fail "$role: no executable /usr/local/bin/corral-kube-entrypoint"
  [[ -x $rootfs/usr/bin/tini ]] || fail "$role: no /usr/bin/tini"
  [[ -L $rootfs/usr/local/bin/enroot ]] || fail "$role: no enroot on PATH (/usr/local/bin/enroot)"
  # Runs in the image: the same layers in every role, so once is enough.
  if [[ -z $checked_rootfs ]]; then
    checked_rootfs=$rootfs
    v=$(chroot "$rootfs" slurmctld -V 2>&1) || true
    [[ $v =~ ^slurm-wlm\ ${release//./\\.}\. ]] || fail "slurmctld -V in the image says '$v', not Slurm $release"
    for b in enroot corral-health corral-imagectl; do
      chroot "$rootfs" "/.corral-bin/$b" --help >/dev/null 2>"$work/run.err" ||
        fail "/.corral-bin/$b does not run in the image: $(head -n 3 "$work/run.err")"
    done
    chroot "$rootfs" bash -n /usr/local/bin/corral-kube-entrypoint || fail "the entrypoint does not parse"
    chroot "$rootfs" /usr/local/bin/corral-kube-entrypoint no-such-role >/dev/null 2>&1 &&
      fail "the entrypoint accepted an unknown role"
    for d in slurmctld slurmd slurmdbd slurmrestd sackd sshd mariadbd; do
      chroot "$rootfs" sh -c "command -v $d" >/dev/null || fail "no $d in the image"
    done
    # slurmctld and slurmd answer Slinky's probes themselves (/livez, /readyz).
    for d in slurmctld slurmd; do
      grep -q /readyz "$rootfs/usr/sbin/$d-wlm" 2>/dev/null || grep -q /readyz "$rootfs/usr/sbin/$d" ||
        fail "$d has no /readyz probe endpoint"
    done
  fi
  [[ $role == slurmctld ]] && slurmctld_rootfs=$rootfs
  [[ $role == mariadb ]] && mariadb_rootfs=$rootfs
  say "$role: $ref $digest: ok"
done <"$work/pushed"
say "pulled and inspected in $(elapsed "$t") s"

# 5. Two roles started as their pods start them, in what was pulled: in a
# PID namespace of their own, killed with it. Each is stopped as Kubernetes
# stops a container (SIGTERM to PID 1, tini, which passes it on).
started_pid=""
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
start_role() { # ROOTFS USERSPEC LOG ENV... -- ENTRYPOINT ARGS...
  local root=$1 user=$2 log=$3
  shift 3
  # The layers hold no device nodes: a container runtime gives a pod its
  # /dev, and here the host's does (in this mount namespace only).
  mkdir -p "$root/proc" "$root/dev"
  unshare --mount --pid --fork --kill-child sh -c 'root=$0 user=$1; shift; mount -t proc proc "$root/proc" && mount --bind /dev "$root/dev" && exec chroot --userspec="$user" "$root" "$@"' \
    "$root" "$user" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@" >"$log" 2>&1 &
  started_pid=$!
}
stop_role() { # LOG: SIGTERM to the container's PID 1 (tini); it must exit
  local pid1
  pid1=$(pgrep -P "$started_pid" | head -n1 || true)
  [[ -n $pid1 ]] && kill -TERM "$pid1" 2>/dev/null
  for _ in $(seq 1 100); do
    kill -0 "$started_pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$started_pid" 2>/dev/null; then
    fail "$1 did not stop on SIGTERM"
    kill -KILL "$started_pid" 2>/dev/null || true
  fi
  wait "$started_pid" 2>/dev/null || true
  started_pid=""
}
trap 'if [[ -n $started_pid ]]; then kill -KILL "$started_pid" 2>/dev/null || true; fi; cleanup' EXIT

# slurmctld as uid 401 (Slinky's runAsUser), answering the operator's probes.
if [[ -n ${slurmctld_rootfs:-} ]]; then
  r=$slurmctld_rootfs ctld_port=$(free_port)
  mkdir -p "$r/etc/slurm" "$r/var/spool/slurmctld/check"
  chown 401:401 "$r/var/spool/slurmctld/check" "$r/run"
  head -c 1024 /dev/urandom >"$r/etc/slurm/slurm.key"
  chown 401:401 "$r/etc/slurm/slurm.key"
  chmod 600 "$r/etc/slurm/slurm.key"
  printf '%s\n' ClusterName=check SlurmctldHost=localhost "SlurmctldPort=$ctld_port" SlurmUser=slurm \
    AuthType=auth/slurm CredType=cred/slurm StateSaveLocation=/var/spool/slurmctld/check \
    SlurmctldPidFile=/run/slurmctld.pid ProctrackType=proctrack/linuxproc TaskPlugin=task/none \
    'NodeName=n1 CPUs=1 State=FUTURE' 'PartitionName=p Nodes=ALL Default=YES' >"$r/etc/slurm/slurm.conf"
  before=$failures
  start_role "$r" 401:401 "$work/slurmctld.log" $(jq -r '.[]' <<<"${want_entry[slurmctld]}")
  for probe in livez readyz; do
    code=000
    for _ in $(seq 1 100); do
      code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$ctld_port/$probe" || true)
      [[ $code == 2* ]] && break
      sleep 0.1
    done
    [[ $code == 2* ]] || fail "slurmctld (uid 401) answers /$probe with $code: $(tail -n 5 "$work/slurmctld.log")"
  done
  stop_role slurmctld
  ((failures > before)) || say "slurmctld ran as uid 401 and answered /livez and /readyz"
fi

# mariadb with the environment corral's accounting pod gives it.
if [[ -n ${mariadb_rootfs:-} ]] && command -v mariadb >/dev/null; then
  db_port=$(free_port) before=$failures
  start_role "$mariadb_rootfs" 0:0 "$work/mariadb.log" MARIADB_DATABASE=slurm_acct_db MARIADB_USER=slurm \
    "MARIADB_PASSWORD=it's\\secret" $(jq -r '.[]' <<<"${want_entry[mariadb]}") "--port=$db_port"
  ok=""
  for _ in $(seq 1 150); do
    ok=$(mariadb -h127.0.0.1 -P"$db_port" -uslurm "-pit's\\secret" -N -e 'show databases like "slurm_acct_db"' 2>/dev/null || true)
    [[ -n $ok ]] && break
    sleep 0.2
  done
  [[ $ok == slurm_acct_db ]] || fail "mariadb did not let slurm into slurm_acct_db: $(tail -n 5 "$work/mariadb.log")"
  stop_role mariadb
  ((failures > before)) || say "mariadb made slurm_acct_db and its user from the environment"
fi

if ((failures > 0)); then
  die "$failures check(s) failed"
fi
say "PASSED: ${#want_entry[@]} images of $image"
