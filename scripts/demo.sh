#!/usr/bin/env bash
# The quick start: installs what corral needs, builds it, starts corrald and
# creates a 4-node demo cluster, then says how to reach it.
#   ./scripts/demo.sh            # as root: cluster "demo", 4 GPU nodes, a registry
#   ./scripts/demo.sh NAME ARGS  # any `corral cluster create` flags
# The demo cluster runs a registry of its own (registry:5000 to jobs), filled
# with a busybox image built here, so that container jobs work at once.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
name=${1:-demo}
shift || true

./scripts/install-deps.sh
./scripts/build.sh

export PATH="$root/build:$PATH"
# The default cluster image (Debian 13, Slurm 24.11), built from Debian's
# archive once per host with its progress shown; a no-op afterwards.
corrald image build debian13-slurm24.11
data_dir=${CORRAL_DATA_DIR:-/var/lib/corral}
log_dir=/var/log/corral
mkdir -p "$log_dir" "$data_dir"
# The CLI and the console need an API token. The first run makes an admin
# user and a token and keeps it in the CLI's config file (mode 0600).
config=${CORRAL_CONFIG:-$HOME/.config/corral/config.json}
if [[ ! -s $config ]]; then
  corrald --data-dir "$data_dir" admin user list | grep -q '^admin ' ||
    corrald --data-dir "$data_dir" admin user add admin --admin
  token=$(corrald --data-dir "$data_dir" admin token create admin --description "demo.sh")
  mkdir -p "$(dirname "$config")"
  (umask 077 && printf '{"token": "%s"}\n' "$token" > "$config")
  echo "wrote an admin API token to $config"
fi
if ! curl -fsS http://127.0.0.1:8470/healthz >/dev/null 2>&1; then
  echo "starting corrald (data in $data_dir, log in $log_dir/corrald.log)"
  setsid corrald --data-dir "$data_dir" >>"$log_dir/corrald.log" 2>&1 < /dev/null &
  for _ in $(seq 100); do
    curl -fsS http://127.0.0.1:8470/healthz >/dev/null 2>&1 && break
    sleep 0.2
  done
fi

if corral cluster get "$name" >/dev/null 2>&1; then
  echo "cluster \"$name\" already exists:"
  corral cluster get "$name"
else
  if (($# == 0)); then set -- --registry --image-cache /shared/enroot-cache; fi
  corral cluster create "$name" "$@" --wait
fi

# A small image for container jobs, pushed to the cluster's registry.
./scripts/demo-image.sh "$name"
# These hints are run as written by test/e2e/docs_e2e_test.cc.
cat <<MSG

corral is running. The console: http://127.0.0.1:8470/ (sign in with the
"token" in $config). Try:
  export PATH=$root/build:\$PATH
  corral ssh $name -- sinfo
  corral ssh $name                      # a shell on the login node
  corral ssh $name -- srun -N2 --gres=gpu:2 nvidia-smi -L 2>/dev/null || \\
    corral ssh $name -- srun -N2 --gres=gpu:2 sh -c 'echo \$(hostname): \$CUDA_VISIBLE_DEVICES'
  corral ssh $name -- srun -N2 --container-image=registry:5000/demo/busybox \\
    sh -c 'hostname; cat /etc/os-release'
  corral cluster delete $name --wait
MSG
