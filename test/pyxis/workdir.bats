#!/usr/bin/env bats
# The container's working directory: --container-workdir, and the image's.

load ./common

@test "--container-workdir to an absolute path" {
  step_ok --container-workdir=/usr/local/bin --container-image="$U18" pwd
  last_is /usr/local/bin
}

@test "--container-workdir cannot climb out of the root" {
  step_ok --container-workdir=../ --container-image="$U18" pwd
  last_is /
}

@test "--container-workdir to a missing directory fails" {
  step_fails --container-workdir=/pyxis --container-image="$U18" true
  expect '/pyxis: No such file or directory'
}

@test "the image's WORKDIR is the default (PyTorch's /workspace)" {
  step_ok --container-image="$REG#nvidia/pytorch:20.02-py3" pwd
  last_is /workspace
}
