#!/usr/bin/env bats
# PYXIS_CONTAINER_* variables: defaults for each --container-* flag, which
# the command line overrides.

load ./common

setup() {
  forget env-test env-test2
  rm -f "$SCRATCH"/env-test.sqsh "$SCRATCH"/cli-test.sqsh
}
teardown() {
  forget env-test env-test2
  rm -f "$SCRATCH"/env-test.sqsh "$SCRATCH"/cli-test.sqsh
}

@test "PYXIS_CONTAINER_IMAGE" {
  PYXIS_CONTAINER_IMAGE=$U22 step_ok grep 'Ubuntu 22.04' /etc/os-release
}

@test "PYXIS_CONTAINER_IMAGE loses to --container-image" {
  PYXIS_CONTAINER_IMAGE=$U22 step_ok --container-image="$U24" grep 'Ubuntu 24.04' /etc/os-release
}

@test "PYXIS_CONTAINER_MOUNTS" {
  PYXIS_CONTAINER_MOUNTS=/home:/test-mnt step_ok --container-image="$U24" findmnt /test-mnt
}

@test "PYXIS_CONTAINER_MOUNTS loses to --container-mounts" {
  PYXIS_CONTAINER_MOUNTS=/home:/mnt-env step_ok --container-image="$U24" --container-mounts=/tmp:/mnt-cli \
    bash -c 'findmnt /mnt-cli && ! findmnt /mnt-env'
}

@test "PYXIS_CONTAINER_WORKDIR" {
  PYXIS_CONTAINER_WORKDIR=/usr/local/bin step_ok --container-image="$U24" pwd
  last_is /usr/local/bin
}

@test "PYXIS_CONTAINER_WORKDIR loses to --container-workdir" {
  PYXIS_CONTAINER_WORKDIR=/usr/local/bin step_ok --container-image="$U24" --container-workdir=/tmp pwd
  last_is /tmp
}

@test "PYXIS_CONTAINER_NAME" {
  PYXIS_CONTAINER_NAME=env-test step_ok --container-image="$U24" --container-remap-root \
    bash -c 'apt-get update && apt-get install -y --no-install-recommends file'
  step_ok --container-name=env-test which file
}

@test "PYXIS_CONTAINER_NAME loses to --container-name" {
  PYXIS_CONTAINER_NAME=env-test step_ok --container-image="$U24" --container-name=env-test2 --container-remap-root \
    bash -c 'apt-get update && apt-get install -y --no-install-recommends make'
  step_ok --container-name=env-test2 which make
  step_fails --container-name=env-test which make
}

@test "PYXIS_CONTAINER_SAVE" {
  PYXIS_CONTAINER_SAVE=$SCRATCH/env-test.sqsh step_ok --container-image="$U24" sh -c 'echo pyxis > /test'
  sleep 1
  step_ok --container-image="$SCRATCH/env-test.sqsh" cat /test
  last_is pyxis
}

@test "PYXIS_CONTAINER_SAVE loses to --container-save" {
  PYXIS_CONTAINER_SAVE=$SCRATCH/env-test.sqsh step_ok --container-image="$U24" \
    --container-save="$SCRATCH/cli-test.sqsh" sh -c 'echo pyxis > /test'
  sleep 1
  step_ok --container-image="$SCRATCH/cli-test.sqsh" cat /test
  last_is pyxis
  [ ! -f "$SCRATCH/env-test.sqsh" ]
}

@test "PYXIS_CONTAINER_MOUNT_HOME=1" {
  PYXIS_CONTAINER_MOUNT_HOME=1 step_ok --container-remap-root --container-image="$U24" findmnt /root
}

@test "PYXIS_CONTAINER_MOUNT_HOME=0" {
  PYXIS_CONTAINER_MOUNT_HOME=0 step_ok --container-remap-root --container-image="$U24" bash -c '! findmnt /root'
}

@test "PYXIS_CONTAINER_MOUNT_HOME loses to --no-container-mount-home" {
  PYXIS_CONTAINER_MOUNT_HOME=1 step_ok --no-container-mount-home --container-remap-root --container-image="$U24" \
    bash -c '! findmnt /root'
}

@test "PYXIS_CONTAINER_REMAP_ROOT=1" {
  PYXIS_CONTAINER_REMAP_ROOT=1 step_ok --container-image="$U24" cat /proc/self/uid_map
  uid_map_is 0 "$(id -u)" 1
}

@test "PYXIS_CONTAINER_REMAP_ROOT=0" {
  PYXIS_CONTAINER_REMAP_ROOT=0 step_ok --container-image="$U24" cat /proc/self/uid_map
  uid_map_is "$(id -u)" "$(id -u)" 1
}

@test "PYXIS_CONTAINER_REMAP_ROOT loses to --no-container-remap-root" {
  PYXIS_CONTAINER_REMAP_ROOT=1 step_ok --no-container-remap-root --container-image="$U24" cat /proc/self/uid_map
  uid_map_is "$(id -u)" "$(id -u)" 1
}

entrypoints_allowed() {
  if on_node test -f /etc/enroot/entrypoint; then
    skip "this cluster's enroot configuration disables entrypoints"
  fi
}

@test "PYXIS_CONTAINER_ENTRYPOINT=1" {
  entrypoints_allowed
  PYXIS_CONTAINER_ENTRYPOINT=1 step_ok --container-image="$DIND" sh -c '[ -n "$DOCKER_HOST" ]'
}

@test "PYXIS_CONTAINER_ENTRYPOINT=0" {
  PYXIS_CONTAINER_ENTRYPOINT=0 step_ok --container-image="$DIND" sh -c '[ -z "$DOCKER_HOST" ]'
}

@test "PYXIS_CONTAINER_ENTRYPOINT loses to --container-entrypoint" {
  entrypoints_allowed
  PYXIS_CONTAINER_ENTRYPOINT=0 step_ok --container-entrypoint --container-image="$DIND" sh -c '[ -n "$DOCKER_HOST" ]'
}

@test "PYXIS_CONTAINER_ENTRYPOINT_LOG=1" {
  entrypoints_allowed
  PYXIS_CONTAINER_ENTRYPOINT_LOG=1 step_ok --container-entrypoint --container-image="$CUDA12_RUNTIME" true
  expect '== CUDA =='
}

@test "PYXIS_CONTAINER_ENTRYPOINT_LOG=0" {
  entrypoints_allowed
  PYXIS_CONTAINER_ENTRYPOINT_LOG=0 step_ok --container-entrypoint --container-image="$CUDA12_RUNTIME" true
  expect_not '== CUDA =='
}

@test "PYXIS_CONTAINER_WRITABLE=1" {
  PYXIS_CONTAINER_WRITABLE=1 step_ok --container-image="$U24" touch /newfile
}

@test "PYXIS_CONTAINER_WRITABLE=0" {
  PYXIS_CONTAINER_WRITABLE=0 step_fails --container-image="$U24" touch /newfile
  expect 'Read-only file system'
}

@test "PYXIS_CONTAINER_WRITABLE loses to --container-readonly" {
  PYXIS_CONTAINER_WRITABLE=1 step_fails --container-readonly --container-image="$U24" touch /newfile
  expect 'Read-only file system'
}

@test "PYXIS_CONTAINER_READONLY=1" {
  PYXIS_CONTAINER_READONLY=1 step_fails --container-image="$U24" touch /newfile
  expect 'Read-only file system'
}

@test "PYXIS_CONTAINER_READONLY=0" {
  PYXIS_CONTAINER_READONLY=0 step_ok --container-image="$U24" touch /newfile
}

@test "PYXIS_CONTAINER_READONLY loses to --container-readonly" {
  PYXIS_CONTAINER_READONLY=0 step_fails --container-readonly --container-image="$U24" touch /newfile
  expect 'Read-only file system'
}

@test "PYXIS_CONTAINER_ENV" {
  export CUDA_VERSION=11.0.0
  PYXIS_CONTAINER_ENV=CUDA_VERSION step_ok --no-container-mount-home --container-image="$CUDA12_BASE" sh -c 'echo $CUDA_VERSION'
  last_is 11.0.0
}

@test "PYXIS_CONTAINER_ENV loses to --container-env" {
  export CUDA_VERSION=12.0.0 LD_LIBRARY_PATH=/usr/local/cuda/lib64
  PYXIS_CONTAINER_ENV=CUDA_VERSION step_ok --no-container-mount-home --container-image="$CUDA12_BASE" \
    --container-env=LD_LIBRARY_PATH sh -c 'echo $CUDA_VERSION $LD_LIBRARY_PATH'
  last_is "12.9.1 /usr/local/cuda/lib64"
}
