#!/usr/bin/env bats
# The environment inside: what passes through, what the image sets, what
# --container-env decides, and the special cases.

load ./common

@test "the caller's variables pass through" {
  export FOO=bar
  step_ok --container-image="$U18" sh -c 'echo $FOO'
  last_is bar
}

@test "TERM passes through" {
  TERM=dumb step_ok --no-container-mount-home --container-image="$U18" sh -c 'echo $TERM'
  last_is dumb
}

@test "HOME decides what is mounted at /root" {
  local tmp
  # What /tmp is on the node (on corral a directory of the pod, and the
  # job's own one over it; not a tmpfs): /root must be one of them.
  tmp=$(on_node findmnt -n -o SOURCE --target /tmp)
  say "the node's /tmp: $tmp"
  HOME=/tmp step_ok --container-mount-home --container-remap-root --container-image="$U18" findmnt /root -o SOURCE
  grep -qxF -- "${lines[-1]}" <<<"$tmp" || grep -qE '/tmp|tmpfs' <<<"${lines[-1]}"
}

@test "LANG is not passed to the container unless asked" {
  LANG=en_US.UTF-8 step_ok --container-image="$U22" --no-container-mount-home perl --version
  expect_not 'Setting locale failed'
}

@test "--container-env LANG passes it (and perl complains: no such locale)" {
  LANG=en_US.UTF-8 step_ok --container-image="$U22" --container-env LANG --no-container-mount-home perl --version
  expect 'Setting locale failed'
}

@test "NVIDIA_VISIBLE_DEVICES=0 leaves one GPU to nvidia-smi" {
  no_nvidia_smi && skip "needs NVIDIA GPUs and their driver (nvidia-smi): corral's GPUs are device files without one"
  local gpus
  gpus=$(on_node nvidia-smi -L | wc -l)
  [ "$gpus" -gt 1 ] || skip "needs 2 or more GPUs"
  step_ok --container-image="$REG/nvidia/cuda:11.8.0-base-ubuntu22.04" bash -c 'nvidia-smi -L | wc -l'
  last_is "$gpus"
  NVIDIA_VISIBLE_DEVICES=0 step_ok --container-image="$CUDA_BASE" bash -c 'nvidia-smi -L | wc -l'
  last_is 1
}

@test "NVIDIA_VISIBLE_DEVICES=all brings nvidia-smi into a plain image" {
  no_nvidia_smi && skip "needs NVIDIA GPUs and their driver (nvidia-smi): corral's GPUs are device files without one"
  NVIDIA_VISIBLE_DEVICES=all step_ok --container-image="$U24" nvidia-smi
}

@test "NVIDIA_DRIVER_CAPABILITIES=utility,compute brings libcuda" {
  no_nvidia_smi && skip "needs NVIDIA GPUs and their driver (libcuda): corral's GPUs are device files without one"
  NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=utility,compute step_ok --container-image="$U24" \
    bash -c 'ldconfig -p | grep libcuda.so.1'
}

@test "--container-env decides between the caller's value and the image's" {
  unset CUDA_VERSION
  # Named but unset: the image's value stays.
  step_ok --no-container-mount-home --container-image="$CUDA_BASE" --container-env CUDA_VERSION sh -c 'echo $CUDA_VERSION'
  last_is 11.8.0
  export CUDA_VERSION=12.0.0 LD_LIBRARY_PATH=/usr/local/cuda/lib64
  step_ok --no-container-mount-home --container-image="$CUDA_BASE" sh -c 'echo $CUDA_VERSION'
  last_is 11.8.0
  step_ok --no-container-mount-home --container-image="$CUDA_BASE" sh -c 'echo $LD_LIBRARY_PATH'
  last_is /usr/local/nvidia/lib:/usr/local/nvidia/lib64
  step_ok --no-container-mount-home --container-image="$CUDA_BASE" --container-env CUDA_VERSION sh -c 'echo $CUDA_VERSION'
  last_is 12.0.0
  step_ok --no-container-mount-home --container-image="$CUDA_BASE" --container-env CUDA_VERSION,LD_LIBRARY_PATH \
    sh -c 'echo $LD_LIBRARY_PATH'
  last_is /usr/local/cuda/lib64
  step_ok --no-container-mount-home --container-image="$CUDA_BASE" --container-env LD_LIBRARY_PATH,CUDA_VERSION \
    sh -c 'echo $LD_LIBRARY_PATH'
  last_is /usr/local/cuda/lib64
}
