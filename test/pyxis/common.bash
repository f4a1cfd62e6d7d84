# Helpers of corral's Pyxis-behaviour suite. The suite runs on the login
# node, as an ordinary user, inside `salloc -N1 --exclusive`: every step goes
# to the one allocated worker, which is "the host" a container is compared
# with (its namespaces, its /tmp, its enroot).

# The fixture images are in the cluster's registry (test/pyxis/images.sh).
REG=${PYXIS_TEST_REGISTRY:-registry:5000}
U12=$REG/ubuntu:12.04 U14=$REG/ubuntu:14.04 U16=$REG/ubuntu:16.04 U18=$REG/ubuntu:18.04
U20=$REG/ubuntu:20.04 U22=$REG/ubuntu:22.04 U24=$REG/ubuntu:24.04 U26=$REG/ubuntu:26.04
DIND=$REG/docker:26.1.0-dind-rootless
CUDA_BASE=$REG/nvidia/cuda:11.8.0-base-ubuntu22.04
CUDA12_BASE=$REG/nvidia/cuda:12.9.1-base-ubuntu24.04
CUDA_RUNTIME=$REG/nvidia/cuda:12.5.1-runtime-ubuntu24.04
CUDA12_RUNTIME=$REG/nvidia/cuda:12.9.1-runtime-ubuntu24.04
MPI_IMAGE=$REG/mpi/openmpi-mpi4py:trixie
SUITE_DIR=${BATS_TEST_DIRNAME:-$(pwd)}
# Digests and checksums known once the images exist.
# shellcheck disable=SC1091
[[ -f $SUITE_DIR/fixtures.env ]] && source "$SUITE_DIR/fixtures.env"
# Scratch space every node sees at the same path.
SCRATCH=$SUITE_DIR/work

# The runtime: `enroot` on the PATH, or corral's, which every pod has.
ENROOT=$(command -v enroot || echo /.corral-bin/enroot)

say() { echo "$@" >&2; }

# step ARGS...: one srun on the allocated node; output, status and lines as
# bats' `run` sets them, and the whole exchange in the case's log. A step
# that hangs is cut off after STEP_TIMEOUT seconds (srun cancels it on
# SIGTERM), so that one hanging case does not stop the suite.
STEP_TIMEOUT=${STEP_TIMEOUT:-150}
step() {
  say "+ srun $*"
  run timeout -k 10 "$STEP_TIMEOUT" srun -N1 --oversubscribe "$@"
  say "$output"
  if [ "$status" -eq 124 ]; then
    say "+ status 124: cut off after $STEP_TIMEOUT s"
  else
    say "+ status $status"
  fi
}
# step_ok ARGS...: the same, and the step must succeed.
step_ok() {
  step "$@"
  [ "$status" -eq 0 ]
}
# step_fails ARGS...: the step must fail.
step_fails() {
  step "$@"
  [ "$status" -ne 0 ]
}
# expect PATTERN: the last step's output matches (grep -E).
expect() {
  grep -qE -- "$1" <<<"$output" || { say "expected /$1/ in the output"; return 1; }
}
# expect_not PATTERN: it does not.
expect_not() {
  ! grep -qE -- "$1" <<<"$output" || { say "did not expect /$1/ in the output"; return 1; }
}
# last_is TEXT: the last line of the output is TEXT.
last_is() {
  [ "${lines[-1]}" == "$1" ] || { say "last line '${lines[-1]}', wanted '$1'"; return 1; }
}

# on_node CMD...: what the node itself (not a container) says; runs beside any
# step already running.
on_node() { srun -N1 --overlap "$@"; }

# runtime ARGS...: enroot on the node, which must succeed.
runtime() {
  say "+ enroot $*"
  run srun -N1 --overlap "$ENROOT" "$@"
  say "$output"
  [ "$status" -eq 0 ]
}

# batch ARGS... < SCRIPT: sbatch --wait, the job's output in the log.
batch() {
  local out
  out=$(mktemp -p "$SCRATCH" sbatch.XXXXXX)
  say "+ sbatch --wait $*"
  run sbatch --wait -o "$out" "$@"
  say "$output"
  say "+ job output:"
  say "$(cat "$out")"
  rm -f "$out"
  [ "$status" -eq 0 ]
}

# forget NAME...: removes named containers of this user on the node, under
# either naming Pyxis uses (per job, or not).
forget() {
  local n
  for n in "$@"; do
    srun -N1 --overlap "$ENROOT" remove -f "pyxis_$n" >/dev/null 2>&1 ||
      srun -N1 --overlap "$ENROOT" remove -f "pyxis_${SLURM_JOB_ID}_$n" >/dev/null 2>&1 || true
  done
}

# in_background ARGS...: an srun left running (BG_PID); wait_started waits
# until Slurm runs it and its container has had time to start.
in_background() {
  say "+ srun $* &"
  srun -N1 --oversubscribe "$@" >"$SCRATCH/bg.$BATS_TEST_NUMBER.log" 2>&1 &
  BG_PID=$!
  wait_started
}
wait_started() {
  local i
  for ((i = 0; i < 100; i++)); do
    # The job's own steps, less the extern/interactive ones.
    if squeue -h -s -j "$SLURM_JOB_ID" -o '%i %j' 2>/dev/null | grep -vE '\.(extern|interactive|batch)' |
      grep -q .; then
      sleep 3
      return 0
    fi
    sleep 0.2
  done
  say "the background step did not start"
  return 1
}
# stop_background: ends the background srun (its step is cancelled).
stop_background() {
  [[ -n ${BG_PID:-} ]] || return 0
  if kill -0 "$BG_PID" 2>/dev/null; then
    kill -INT "$BG_PID" 2>/dev/null
    sleep 0.5
    kill -INT "$BG_PID" 2>/dev/null
  fi
  wait "$BG_PID" 2>/dev/null || true
  say "background step's output:"
  say "$(cat "$SCRATCH/bg.$BATS_TEST_NUMBER.log" 2>/dev/null)"
  rm -f "$SCRATCH/bg.$BATS_TEST_NUMBER.log"
  BG_PID=
}

# uid_map_is INSIDE OUTSIDE COUNT: the last line is that uid_map line.
uid_map_is() {
  local m
  read -r -a m <<<"${lines[-1]}"
  [ "${m[0]}" -eq "$1" ] && [ "${m[1]}" -eq "$2" ] && [ "${m[2]}" -eq "$3" ] ||
    { say "uid_map '${lines[-1]}', wanted '$1 $2 $3'"; return 1; }
}

# no_gpus_here: the reason GPU cases skip on corral (its GPUs are device
# files without a driver).
no_nvidia_smi() { ! on_node sh -c 'command -v nvidia-smi' >/dev/null 2>&1; }
