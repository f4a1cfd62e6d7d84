#!/usr/bin/env bats
# What MPI launchers pass into a container: PMIx (its directory and
# variables) and PMI2 (its file descriptor and variables).

load ./common

# An MPI launch that does not come together hangs: cut it off sooner.
STEP_TIMEOUT=60

setup() { forget mpi-test; }
teardown() { forget mpi-test; }

@test "PMIx: the server's directory is mounted in the container" {
  step_ok --mpi=pmix --ntasks=4 --container-image="$U18" \
    sh -c '[ -n "$PMIX_SERVER_TMPDIR" ] && findmnt "${PMIX_SERVER_TMPDIR:-error}"'
}

@test "PMIx: rank and the security and storage modules reach every task" {
  step_ok --container-name=mpi-test --container-image="$U20" true
  step_ok --mpi=pmix --ntasks=4 --container-name=mpi-test bash -c '[ -n "$PMIX_RANK" ]'
  step_ok --mpi=pmix --ntasks=4 --container-name=mpi-test \
    bash -c '[ -n "$PMIX_MCA_psec" ] && [ "$PMIX_MCA_psec" == "$PMIX_SECURITY_MODE" ]'
  step_ok --mpi=pmix --ntasks=4 --container-name=mpi-test \
    bash -c '[ -n "$PMIX_MCA_gds" ] && [ "$PMIX_MCA_gds" == "$PMIX_GDS_MODULE" ]'
  step_ok --mpi=pmix --ntasks=4 --container-name=mpi-test bash -c 'echo $PMIX_RANK'
  [ "$(grep -E '^[0-9]+$' <<<"$output" | sort -n)" == "$(seq 0 3)" ]
}

@test "PMIx: Horovod under TensorFlow" {
  skip "needs NGC's TensorFlow with Horovod (nvcr.io/nvidia/tensorflow), a multi-GB image from the internet"
}

@test "PMI2: the file descriptor is a socket in the container" {
  step_ok --mpi=pmi2 --ntasks=4 --container-image="$U18" \
    bash -c '[ -n "$PMI_FD" ] && realpath /proc/self/fd/$PMI_FD | grep -q socket'
}

@test "PMI2: rank and size reach every task" {
  step_ok --mpi=pmi2 --ntasks=4 --container-image="$U18" bash -c '[ -n "$PMI_RANK" ]'
  step_ok --mpi=pmi2 --ntasks=4 --container-image="$U18" bash -c '[ -n "$PMI_SIZE" ] && [ "$PMI_SIZE" -eq 4 ]'
}
