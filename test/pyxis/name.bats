#!/usr/bin/env bats
# Named containers persist across steps of a job; unnamed ones go away.

load ./common

setup() { forget name-test name-test2; }
teardown() { stop_background; forget name-test name-test2; }

@test "an unnamed container is removed after its step" {
  local name i
  step_ok --container-image="$U18" sh -c 'echo $SLURM_JOB_ID.$SLURM_STEP_ID'
  name=${lines[-1]}
  # Removal happens just after the step ends: poll a little.
  for ((i = 0; i < 50; i++)); do
    runtime list
    grep -qF "$name" <<<"$output" || return 0
    sleep 0.2
  done
  say "container $name is still there"
  return 1
}

@test "what a named container installs stays in it, and only in it" {
  step_ok --container-image="$U18" bash -c '! which file'
  step_ok --container-image="$U18" --container-name=name-test --container-remap-root \
    bash -c 'apt-get update && apt-get install -y --no-install-recommends file'
  step_ok --container-image="$U18" --container-name=name-test which file
  step_ok --container-name=name-test which file
  step_ok --container-image="$U18" bash -c '! which file'
  step_ok --container-image="$U18" --container-name=name-test2 true
  step_ok --container-image="$U18" bash -c '! which file'
}

@test "a named container removed with enroot remove is gone" {
  step_ok --container-image="$U18" --container-name=name-test --container-remap-root \
    bash -c 'apt-get update && apt-get install -y --no-install-recommends file'
  step_ok --container-name=name-test which file
  runtime remove -f pyxis_name-test || runtime remove -f "pyxis_${SLURM_JOB_ID}_name-test"
  step_fails --container-name=name-test which file
  step_ok --container-image="$U18" --container-name=name-test bash -c '! which file'
  step_ok --container-name=name-test bash -c '! which file'
}

@test "NAME:create fails when the container exists" {
  step_ok --container-image="$U22" --container-name=name-test sleep 1
  step_fails --container-name=name-test:create true
}

@test "a cancelled step leaves no container" {
  local job stepid
  step_ok --container-image="$U24" bash -c 'echo $SLURM_JOB_ID; echo $SLURM_STEP_ID'
  job=${lines[-2]}
  stepid=${lines[-1]}
  in_background --container-image="$U24" sleep 60
  scancel "$job.$((stepid + 1))"
  wait "$BG_PID" || true
  BG_PID=
  sleep 3
  runtime list
  expect_not 'pyxis_'
}
