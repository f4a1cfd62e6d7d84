#!/usr/bin/env bash
# corral's entrypoint for the Kubernetes images (docs/images.md, "Images for
# Kubernetes"): scripts/kube-images.sh installs it as
# /usr/local/bin/corral-kube-entrypoint and makes each role's image start
#
#   tini -g -- corral-kube-entrypoint ROLE [ARG...]
#
# where ARG are the container's args, as Slinky's operator (v1.1) gives them:
#   slurmctld  none (the pod runs as uid 401, the slurm user); ARG go to slurmctld
#   slurmd     -Z --conf-server HOST:6817 [--conf "…"], as root; env POD_CPUS,
#              POD_MEMORY (MiB), POD_TOPOLOGY narrow what slurmd offers
#   login      none; env SACKD_OPTIONS="--conf-server HOST:6817", SSHD_OPTIONS;
#              the readiness probe is `test -S /run/slurm/sack.socket`
#   mariadb    none; env MARIADB_DATABASE, MARIADB_USER, MARIADB_PASSWORD
# Every daemon runs in the foreground, logging to stderr; when one of a
# role's daemons exits, the container exits with its status, and Kubernetes
# restarts it. tini (PID 1, -g) passes signals to the whole process group.
set -euo pipefail

die() {
  echo "corral-kube-entrypoint: $*" >&2
  exit 1
}

# Runs the given daemons (each a command line in one string, run by bash) in
# the background and waits until the first exits; its status is ours.
run_all() {
  local pids=() cmd
  for cmd in "$@"; do
    bash -c "exec $cmd" &
    pids+=("$!")
  done
  local status=0
  wait -n "${pids[@]}" || status=$?
  echo "corral-kube-entrypoint: a daemon exited (status $status); stopping the others" >&2
  kill "${pids[@]}" 2>/dev/null || true
  wait || true
  exit "$status"
}

# slurmd's options with ITEM added to its --conf (one --conf only: slurmd
# reads the last one), as the array SLURMD_ARGS.
add_conf_item() {
  local item=$1 i found=0
  for i in "${!SLURMD_ARGS[@]}"; do
    case "${SLURMD_ARGS[$i]}" in
      --conf=*)
        SLURMD_ARGS[i]="--conf=${SLURMD_ARGS[$i]#--conf=} $item"
        found=1
        ;;
      --conf)
        SLURMD_ARGS[i + 1]="${SLURMD_ARGS[$((i + 1))]:-} $item"
        found=1
        ;;
    esac
  done
  ((found)) || SLURMD_ARGS+=(--conf "$item")
}

# A field of `slurmd -C` ("CoresPerSocket"), or 0.
slurmd_c() {
  local v
  v=$(slurmd -C 2>/dev/null | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n1)
  echo "${v:-0}"
}

# What the pod's limits leave slurmd: the cores and memory (MiB) of the
# host beyond POD_CPUS and POD_MEMORY are withheld (CoreSpecCount,
# MemSpecLimit), so Slurm schedules the pod's share, not the node's.
pod_limits() {
  local cpus=${POD_CPUS:-0} mem=${POD_MEMORY:-0}
  if ((cpus > 0)); then
    local boards sockets cores threads
    boards=$(slurmd_c Boards) sockets=$(slurmd_c SocketsPerBoard)
    cores=$(slurmd_c CoresPerSocket) threads=$(slurmd_c ThreadsPerCore)
    ((boards > 0)) || boards=1
    ((threads > 0)) || threads=1
    local spec=$((boards * sockets * cores - cpus / threads))
    ((spec > 0)) && add_conf_item "CoreSpecCount=$spec"
  fi
  if ((mem > 0)); then
    local spec=$(($(slurmd_c RealMemory) - mem))
    ((spec > 0)) && add_conf_item "MemSpecLimit=$spec"
  fi
  [[ -z ${POD_TOPOLOGY:-} ]] || add_conf_item "Topology=$POD_TOPOLOGY"
  return 0
}

# sshd on a node whose host keys are mounted (the cluster's secrets; an
# image never holds any), as a command line for run_all, or nothing.
sshd_if_keyed() {
  compgen -G '/etc/ssh/ssh_host_*_key' >/dev/null || return 0
  mkdir -p /run/sshd
  chmod 0755 /run/sshd
  echo "/usr/sbin/sshd -D -e ${SSHD_OPTIONS:-}"
}

# An SQL string literal's inside: quotes and backslashes escaped.
sql_quote() {
  local s=${1//\\/\\\\}
  printf '%s' "${s//\'/\'\'}"
}

role_mariadb() {
  # Debian's configuration puts the socket and pid file in /run/mariadbd
  # (/run/mysqld before trixie).
  local data=/var/lib/mysql init=/run/mariadbd/corral-init.sql
  mkdir -p "$data" /run/mariadbd /run/mysqld
  chown mysql:mysql "$data" /run/mariadbd /run/mysqld
  if [[ ! -d $data/mysql ]]; then
    mariadb-install-db --user=mysql --datadir="$data" --auth-root-authentication-method=socket \
      --skip-test-db --skip-name-resolve >/dev/null
  fi
  # Run at every start, so a changed password is the password; root logs in
  # only through the socket, inside the pod (MARIADB_RANDOM_ROOT_PASSWORD's
  # intent: no root password anyone knows).
  (
    umask 077
    : >"$init"
    if [[ -n ${MARIADB_DATABASE:-} ]]; then
      echo "CREATE DATABASE IF NOT EXISTS \`${MARIADB_DATABASE//\`/}\`;" >>"$init"
    fi
    if [[ -n ${MARIADB_USER:-} ]]; then
      local user password
      user=$(sql_quote "$MARIADB_USER") password=$(sql_quote "${MARIADB_PASSWORD:-}")
      {
        echo "CREATE USER IF NOT EXISTS '$user'@'%';"
        echo "ALTER USER '$user'@'%' IDENTIFIED BY '$password';"
        [[ -z ${MARIADB_DATABASE:-} ]] ||
          echo "GRANT ALL ON \`${MARIADB_DATABASE//\`/}\`.* TO '$user'@'%';"
      } >>"$init"
    fi
  )
  chown mysql:mysql "$init"
  exec mariadbd --user=mysql --datadir="$data" --bind-address=0.0.0.0 --port=3306 \
    --skip-name-resolve --init-file="$init" "$@"
}

main() {
  (($# > 0)) || die "usage: corral-kube-entrypoint slurmctld|slurmd|login|mariadb [ARG...]"
  local role=$1
  shift
  case "$role" in
    slurmctld)
      # /run is the pod's; the auth socket directory is a volume of its own.
      mkdir -p /run/slurmctld 2>/dev/null || true
      exec slurmctld -D "$@"
      ;;
    slurmd)
      mkdir -p /run/slurm /var/spool/slurmd
      SLURMD_ARGS=("$@")
      pod_limits
      local sshd
      sshd=$(sshd_if_keyed)
      if [[ -z $sshd ]]; then exec slurmd -D "${SLURMD_ARGS[@]}"; fi
      run_all "slurmd -D $(printf '%q ' "${SLURMD_ARGS[@]}")" "$sshd"
      ;;
    login)
      mkdir -p /run/slurm /run/sshd
      chmod 0755 /run/sshd
      chown slurm:slurm /run/slurm
      # sackd (the auth/slurm agent: clients on this node use its socket)
      # as the slurm user, in /run/slurm, where the probe looks; sshd, with
      # the host keys and sshd_config the operator mounts.
      run_all "setpriv --reuid=slurm --regid=slurm --init-groups -- bash -c 'cd /run/slurm && exec sackd -D ${SACKD_OPTIONS:-}'" \
        "/usr/sbin/sshd -D -e ${SSHD_OPTIONS:-}"
      ;;
    mariadb) role_mariadb "$@" ;;
    *) die "unknown role '$role' (slurmctld, slurmd, login, mariadb)" ;;
  esac
}

main "$@"
