#!/usr/bin/env bats
# PyTorch images (PYTORCH_VERSION in their environment) get the variables
# torch.distributed reads, from Slurm's: MASTER_ADDR, MASTER_PORT, RANK,
# LOCAL_RANK.

load ./common

setup() { forget pytorch-test; }
teardown() { forget pytorch-test; }

@test "NGC-style PyTorch: MASTER_ADDR, MASTER_PORT, RANK, LOCAL_RANK" {
  step_ok --mpi=none --container-name=pytorch-test --container-image="$REG#nvidia/pytorch:20.02-py3" true
  step_ok --mpi=none --ntasks=4 --container-name=pytorch-test bash -c '[ -n "$MASTER_ADDR" ]'
  step_ok --mpi=none --ntasks=4 --container-name=pytorch-test bash -c '[ -n "$MASTER_PORT" ]'
  step_ok --mpi=none --ntasks=4 --container-name=pytorch-test \
    bash -c '[ -n "$LOCAL_RANK" ] && [ "$LOCAL_RANK" -eq "$SLURM_LOCALID" ]'
  step_ok --mpi=none --ntasks=4 --container-name=pytorch-test \
    bash -c '[ -n "$RANK" ] && [ "$RANK" -eq "$SLURM_PROCID" ]'
}

@test "Docker Hub-style PyTorch: RANK and LOCAL_RANK for six tasks" {
  step_ok --mpi=none --container-name=pytorch-test --container-image="$REG/pytorch/pytorch:1.8.1-cuda11.1-cudnn8-runtime" true
  step_ok --mpi=none --ntasks=6 --container-name=pytorch-test \
    bash -c '[ -n "$LOCAL_RANK" ] && [ "$LOCAL_RANK" -eq "$SLURM_LOCALID" ]'
  step_ok --mpi=none --ntasks=6 --container-name=pytorch-test \
    bash -c '[ -n "$RANK" ] && [ "$RANK" -eq "$SLURM_PROCID" ]'
  step_ok --mpi=none --ntasks=6 --container-name=pytorch-test bash -c 'echo $LOCAL_RANK'
  [ "$(grep -E '^[0-9]+$' <<<"$output" | sort -n)" == "$(seq 0 5)" ]
}
