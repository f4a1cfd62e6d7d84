#!/usr/bin/env bats
# Joining a running container: `enroot exec`, and steps that attach to a
# running named (or unnamed) container instead of starting a new one.

load ./common

setup() { forget exec-test; }
teardown() { stop_background; forget exec-test; }

@test "enroot list -f shows a running container's pid, and enroot exec enters it" {
  local pid
  step_ok --container-image="$U18" --container-name=exec-test true
  in_background --container-name=exec-test sleep 60
  runtime list -f
  pid=$(awk -v a=pyxis_exec-test -v b="pyxis_${SLURM_JOB_ID}_exec-test" '$1 == a || $1 == b { print $2 }' <<<"$output")
  say "pid: $pid"
  [ "${pid:-0}" -gt 1 ]
  runtime exec "$pid" true
}

@test "a second step sees the mounts a running step made in the container" {
  step_ok --container-image="$U18" --container-name=exec-test mkdir /mymnt
  in_background --container-name=exec-test --container-remap-root bash -c 'mount -t tmpfs none /mymnt && sleep 60'
  step_ok --overlap --container-name=exec-test findmnt /mymnt
}

@test "an unnamed container is joined by its job.step name" {
  local job stepid
  step_ok --container-image="$U22" true
  step_ok sh -c 'echo $SLURM_JOB_ID'
  job=${lines[-1]}
  step_ok sh -c 'echo $SLURM_STEP_ID'
  stepid=${lines[-1]}
  in_background --container-image="$U22" sleep 60
  step_ok --overlap --container-name="$job.$((stepid + 1))" true
}

@test "an attaching step starts in /, not where the running one went" {
  in_background --container-image="$U20" --container-name=exec-test bash -c 'cd /var && sleep 60'
  step_ok --overlap --container-name=exec-test pwd
  last_is /
}

@test "--container-mounts is ignored, with a warning, when attaching" {
  in_background --container-image="$U20" --container-name=exec-test sleep 60
  step_ok --overlap --container-name=exec-test --container-mounts /tmp:/mnt/pyxis_test \
    bash -c '[ ! -d /mnt/pyxis_test ]'
  expect 'ignoring --container-mounts'
}

@test "NAME:exec fails when the container is not running" {
  step_ok --container-image="$U22" --container-name=exec-test sleep 1
  step_fails --container-name=exec-test:exec true
}

@test "NAME:no_exec starts afresh beside a running container" {
  step_ok --container-image="$U22" --container-name=exec-test mkdir /mymnt
  in_background --container-name=exec-test --container-remap-root bash -c 'mount -t tmpfs none /mymnt && sleep 60'
  step_ok --overlap --container-name=exec-test:no_exec bash -c '! findmnt /mymnt'
}
