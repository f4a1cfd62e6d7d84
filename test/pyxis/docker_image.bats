#!/usr/bin/env bats
# Images from registries: every reference form Pyxis takes, multi-platform
# lists, zstd layers, digests, and a failing pull tried once. The images are
# look-alikes in the cluster's registry (test/pyxis/images.sh): the Ubuntu
# and CentOS ones differ in their release files, as the cases check.

load ./common

@test "ubuntu:12.04" { step_ok --container-image="$U12" grep 'Ubuntu precise' /etc/os-release; }
@test "ubuntu:14.04" { step_ok --container-image="$U14" grep 'Ubuntu 14.04' /etc/os-release; }
@test "ubuntu:16.04" { step_ok --container-image="$U16" grep 'Ubuntu 16.04' /etc/os-release; }
@test "ubuntu:18.04" { step_ok --container-image="$U18" grep 'Ubuntu 18.04' /etc/os-release; }
@test "ubuntu:20.04" { step_ok --container-image="$U20" grep 'Ubuntu 20.04' /etc/os-release; }
@test "ubuntu:22.04" { step_ok --container-image="$U22" grep 'Ubuntu 22.04' /etc/os-release; }

@test "ubuntu:24.04, and tzdata installs as remapped root" {
  step_ok --container-image="$U24" grep 'Ubuntu 24.04' /etc/os-release
  step_ok --container-image="$U24" --container-remap-root \
    bash -c 'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends tzdata'
}

@test "ubuntu:26.04, and apt works with a ';' in /etc/environment" {
  step_ok --container-image="$U26" grep 'Resolute Raccoon' /etc/os-release
  step_ok --container-image="$U26" --container-remap-root bash -c \
    'echo "MY_LIST=1;2;3;4" >> /etc/environment && apt-get update && apt-get install -y --no-install-recommends install-info'
}

@test "REGISTRY/IMAGE and REGISTRY#IMAGE name the same image" {
  step_ok --container-image="$REG/ubuntu:24.04" grep 'Ubuntu 24.04' /etc/os-release
  step_ok --container-image="$REG#ubuntu:24.04" grep 'Ubuntu 24.04' /etc/os-release
}

@test "centos:5" { step_ok --container-image="$REG/centos:5" grep 'CentOS release 5.11 (Final)' /etc/redhat-release; }
@test "centos:6" { step_ok --container-image="$REG/centos:6" grep 'CentOS release 6.10 (Final)' /etc/redhat-release; }
@test "centos:7" { step_ok --container-image="$REG/centos:7" grep 'CentOS Linux release 7.' /etc/redhat-release; }
@test "centos:8" { step_ok --container-image="$REG/centos:8" grep 'CentOS Linux release 8.' /etc/redhat-release; }

@test "NGC-style PyTorch 20.02 (REGISTRY#IMAGE)" {
  step_ok --container-image="$REG#nvidia/pytorch:20.02-py3" sh -c 'echo $PYTORCH_VERSION'
  last_is 1.5.0a0+3bbb36e
}

@test "NGC-style PyTorch 22.04 (REGISTRY#IMAGE)" {
  step_ok --container-image="$REG#nvidia/pytorch:22.04-py3" sh -c 'echo $PYTORCH_VERSION'
  last_is 1.12.0a0+bd13bc6
}

@test "a TensorFlow deep learning container, through its /entrypoint.sh" {
  step_ok --no-container-mount-home --container-image="$REG#deeplearning-platform-release/tf-cpu.2-9" \
    /entrypoint.sh python -c 'import tensorflow; print(tensorflow.__version__)'
  [[ ${lines[-1]} == 2.9.* ]]
}

@test "a deep repository path (gitlab-style device plugin)" {
  step_ok --container-image="$REG#nvidia/kubernetes/device-plugin/k8s-device-plugin:1.0.0-beta4" \
    md5sum /usr/bin/nvidia-device-plugin
  last_is "$FIX_MD5_GITLAB_DEVPLUGIN  /usr/bin/nvidia-device-plugin"
}

@test "a two-component path (NGC-style device plugin)" {
  step_ok --container-image="$REG#nvidia/k8s-device-plugin:v0.11.0" md5sum /usr/bin/nvidia-device-plugin
  last_is "$FIX_MD5_NVCR_DEVPLUGIN  /usr/bin/nvidia-device-plugin"
}

@test "a missing image is pulled once, and the error says which" {
  step_fails --ntasks=2 --container-image="$REG/thisimagedoesntexist" true
  [ "$(grep -c 'failed to import docker image' <<<"$output")" -eq 1 ]
  expect "failed to import docker image: .*thisimagedoesntexist"
}

@test "docker:// in front of REGISTRY#IMAGE" {
  step_ok --container-image "docker://$REG#nvidia/cuda:11.8.0-base-ubuntu20.04" grep 'Ubuntu 20.04' /etc/os-release
}

@test "dockerd:// imports from the node's Docker daemon" {
  on_node sh -c 'command -v docker' >/dev/null 2>&1 ||
    skip "needs a Docker daemon on the node (dockerd://); corral's nodes have none"
  step_ok --container-image "dockerd://$REG/nvidia/cuda:11.8.0-base-ubuntu22.04" grep 'Ubuntu 22.04' /etc/os-release
}

@test "zstd layers under an OCI manifest, pinned by digest" {
  [[ -n ${FIX_ZSTD_DIGEST:-} ]]
  step_ok --container-image="$REG/rapidsai/devcontainers@$FIX_ZSTD_DIGEST" grep 'Ubuntu 24.04' /etc/os-release
}
