#!/usr/bin/env bats
# Squashfs files as images: imported with enroot, saved with --container-save,
# and used like registry images.

load ./common

setup() {
  cd "$SCRATCH"
  rm -f ./*.sqsh
  forget squashfs-test
}
teardown() {
  stop_background
  cd "$SCRATCH"
  rm -f ./*.sqsh
  forget squashfs-test
}

import_ubuntu() { runtime import -o ubuntu.sqsh "docker://$REG#ubuntu:24.04"; }

@test "an imported squashfs file runs" {
  import_ubuntu
  step_ok --container-image=./ubuntu.sqsh grep 'Ubuntu 24.04' /etc/os-release
}

@test "import, change in a named container, export, run the export" {
  import_ubuntu
  step_ok --container-image=./ubuntu.sqsh --container-name=squashfs-test --container-remap-root \
    sh -c 'apt-get update && apt-get install -y file'
  step_ok --container-name=squashfs-test sh -c 'echo pyxis > /test'
  runtime export -o ubuntu-modified.sqsh pyxis_squashfs-test ||
    runtime export -o ubuntu-modified.sqsh "pyxis_${SLURM_JOB_ID}_squashfs-test"
  step_ok --container-image=./ubuntu-modified.sqsh which file
  step_ok --container-image=./ubuntu-modified.sqsh cat /test
  last_is pyxis
}

save_three_times() { # IMAGE: each step saves over the image it started from
  local image=$1
  step_ok --container-image="$U24" --container-save="$image" sh -c 'echo pyxis > /test'
  sleep 1
  step_ok --container-image="$image" --container-save="$image" sh -c 'echo slurm > /test2'
  sleep 1
  step_ok --container-image="$image" --container-save="$image" --container-remap-root \
    sh -c 'apt-get update && apt-get install -y file'
  sleep 1
  step_ok --container-image="$image" which file
  step_ok --container-image="$image" cat /test
  last_is pyxis
  step_ok --container-image="$image" cat /test2
  last_is slurm
}

@test "--container-save to an absolute path, over and over" {
  save_three_times "$PWD/ubuntu-modified.sqsh"
}

@test "--container-save to a relative path, over and over" {
  save_three_times ./ubuntu-modified.sqsh
}

@test "a squashfs image with --container-writable" {
  import_ubuntu
  step_ok --container-image=./ubuntu.sqsh --container-writable bash -c 'echo test > /tmp/file.txt && cat /tmp/file.txt'
  expect test
}

@test "a squashfs image with --container-mounts" {
  import_ubuntu
  echo "mounted content" >test-file.txt
  step_ok --container-image=./ubuntu.sqsh --container-mounts="$PWD/test-file.txt:/mnt/test.txt" cat /mnt/test.txt
  expect 'mounted content'
  rm -f test-file.txt
}

@test "a squashfs image with --container-workdir" {
  import_ubuntu
  step_ok --container-image=./ubuntu.sqsh --container-workdir=/tmp pwd
  last_is /tmp
}

@test "a squashfs image with --no-container-remap-root" {
  import_ubuntu
  step_ok --container-image=./ubuntu.sqsh --no-container-remap-root id -u
  last_is "$(id -u)"
}

@test "a squashfs image for four tasks" {
  import_ubuntu
  step_ok -n 4 --container-image=./ubuntu.sqsh hostname
  [ "${#lines[@]}" -ge 4 ]
}

@test "two steps at once on one squashfs file" {
  local a b
  import_ubuntu
  srun -N1 --overlap --container-image=./ubuntu.sqsh sleep 2 &
  a=$!
  srun -N1 --overlap --container-image=./ubuntu.sqsh sleep 2 &
  b=$!
  wait "$a"
  wait "$b"
}

@test "squashfs steps leave no container" {
  import_ubuntu
  step_ok --container-image=./ubuntu.sqsh true
  step_ok --container-image=./ubuntu.sqsh true
  runtime list
  expect_not 'pyxis_'
}

@test "a missing squashfs file fails" {
  step_fails --container-image=./nonexistent.sqsh true
}
