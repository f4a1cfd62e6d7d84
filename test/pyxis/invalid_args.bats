#!/usr/bin/env bats
# Values the plugin refuses: every case must fail.

load ./common

@test "--container-image with no value" {
  step_fails --container-image= true
}

@test "--container-image of 2 KiB of noise" {
  step_fails --container-image="$(head -c 2048 /dev/urandom | base64 -w0)" true
}

@test "--container-image=./ (a directory, not a squashfs file)" {
  step_fails --container-image=./ true
}

@test "--container-image=/dev/urandom (not a squashfs file)" {
  step_fails --container-image=/dev/urandom true
}

@test "--container-name of a container that does not exist, and no image" {
  step_fails --container-name=args-test true
}

@test "--container-name with a slash" {
  step_fails --container-name=/tmp/foo --container-image="$U18" true
}

@test "--container-name that is only a flag" {
  step_fails --container-name=:attach --container-image="$U22" true
}

@test "--container-name of 300 characters" {
  step_fails --container-name="$(printf 'a%.0s' {1..300})" --container-image="$U24" true
}

@test "--container-mounts with no value" {
  step_fails --container-mounts= --container-image="$U18" findmnt /foo
}

@test "--container-mounts=:" {
  step_fails --container-mounts=: --container-image="$U18" true
}

@test "--container-mounts with an empty target" {
  step_fails --container-mounts=/tmp: --container-image="$U18" true
}

@test "--container-workdir with no value" {
  step_fails --container-workdir= --container-image="$U18" true
}

@test "--container-readonly and --container-writable together" {
  step_fails --container-readonly --container-writable --container-image="$U20" true
}

@test "--container-env with no value" {
  step_fails --container-env= --container-image="$U22" true
}

@test "--container-env with a trailing comma" {
  step_fails --container-env FOO, --container-image="$U22" true
}

@test "--container-save to a directory" {
  step_fails --container-save=/tmp/ --container-image="$U24" true
  step_fails --container-save=/ --container-image="$U24" true
  step_fails --container-save=./ --container-image="$U24" true
}
