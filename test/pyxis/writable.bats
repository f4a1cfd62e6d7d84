#!/usr/bin/env bats
# The container's root filesystem: read-only or writable.

load ./common

@test "a read-only container refuses new files" {
  step_fails --container-readonly --container-image="$U20" touch /newfile
  expect 'Read-only file system'
}

@test "a writable container takes new files" {
  step_ok --container-writable --container-image="$U20" touch /newfile
}
