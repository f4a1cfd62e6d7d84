#!/usr/bin/env bats
# A real MPI program (mpi4py over Open MPI, PMIx) in a container, four
# ranks, with the PMIx server's directory in each of the places Slurm may
# put it. The image is Debian trixie's Open MPI and mpi4py (images.sh), so
# its PMIx client is the version of the cluster's PMIx server.

load ./common

# An MPI launch that does not come together hangs: cut it off sooner.
STEP_TIMEOUT=60

NAME=mpi4py-trixie

setup() { forget "$NAME"; }
teardown() { forget "$NAME"; }


start_container() { step_ok --container-image="$MPI_IMAGE" --container-name="$NAME" true; }

@test "mpi4py: four ranks, PMIx server directory where Slurm puts it" {
  start_container
  step_ok --mpi=pmix --ntasks=4 --container-name="$NAME" \
    --container-mounts="$SUITE_DIR/mpi_check.py:/opt/mpi_check.py:ro" python3 /opt/mpi_check.py
  [ "$(grep -c ': ok$' <<<"$output")" -eq 4 ]
}

@test "mpi4py: four ranks, SLURM_PMIX_TMPDIR=/dev/shm" {
  start_container
  SLURM_PMIX_TMPDIR=/dev/shm step_ok --mpi=pmix --ntasks=4 --container-name="$NAME" \
    --container-mounts="$SUITE_DIR/mpi_check.py:/opt/mpi_check.py:ro" python3 /opt/mpi_check.py
  [ "$(grep -c ': ok$' <<<"$output")" -eq 4 ]
}

@test "mpi4py: four ranks, SLURM_PMIX_TMPDIR=/var/tmp" {
  start_container
  SLURM_PMIX_TMPDIR=/var/tmp step_ok --mpi=pmix --ntasks=4 --container-name="$NAME" \
    --container-mounts="$SUITE_DIR/mpi_check.py:/opt/mpi_check.py:ro" python3 /opt/mpi_check.py
  [ "$(grep -c ': ok$' <<<"$output")" -eq 4 ]
}

internet_mpi() {
  skip "installs $1's Open MPI and mpi4py from the internet (apt/pip); the trixie image's cases above cover the behaviour"
}
@test "mpi4py installed into ubuntu:20.04" { internet_mpi ubuntu:20.04; }
@test "mpi4py installed into ubuntu:22.04" { internet_mpi ubuntu:22.04; }
@test "mpi4py installed into ubuntu:24.04" { internet_mpi ubuntu:24.04; }
@test "mpi4py installed into ubuntu:26.04" { internet_mpi ubuntu:26.04; }
@test "mpi4py installed into NGC PyTorch 26.02" { internet_mpi nvcr.io/nvidia/pytorch:26.02-py3; }
@test "mpi4py installed into NGC PyTorch 26.03" { internet_mpi nvcr.io/nvidia/pytorch:26.03-py3; }
