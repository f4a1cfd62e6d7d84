#!/usr/bin/env bats
# Many steps at once making, and reusing, named containers.

load ./common

setup() { forget concurrent-test-{0..4}; }
teardown() { forget concurrent-test-{0..4}; }

@test "five named containers created at once" {
  local pids=() i p
  for i in {0..4}; do
    srun -n1 --overlap --container-image="$U24" --container-name="concurrent-test-$i" sleep 5 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
}

@test "thirty steps reusing five containers, started at random moments" {
  local pids=() i p
  for i in {0..4}; do
    step_ok --container-image="$U24" --container-name="concurrent-test-$i" true
  done
  for i in {1..30}; do
    srun -n1 --overlap --container-name="concurrent-test-$((i % 5)):no_exec" sleep 1 &
    pids+=($!)
    sleep "0.$((RANDOM % 10))"
  done
  for p in "${pids[@]}"; do wait "$p"; done
}
