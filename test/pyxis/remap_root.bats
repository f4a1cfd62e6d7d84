#!/usr/bin/env bats
# --container-remap-root: the user's uid as root in the container, and the
# seccomp filter that lets package managers "chown" there.

load ./common

@test "with --container-remap-root the user is uid 0, mapped to their own uid" {
  step_ok --container-remap-root --container-image="$U24" id -u
  last_is 0
  step_ok --container-remap-root --container-image="$U24" cat /proc/self/uid_map
  uid_map_is 0 "$(id -u)" 1
}

@test "with --no-container-remap-root the user keeps their uid" {
  step_ok --no-container-remap-root --container-image="$U24" id -u
  last_is "$(id -u)"
  step_ok --no-container-remap-root --container-image="$U24" cat /proc/self/uid_map
  uid_map_is "$(id -u)" "$(id -u)" 1
}

@test "a remapped-root container runs under a seccomp filter" {
  step_ok --container-remap-root --container-image="$U18" grep -E 'Seccomp:[[:space:]]+2' /proc/self/status
}

@test "a container that is not remapped runs under a seccomp filter too" {
  step_ok --no-container-remap-root --container-image="$U18" grep -E 'Seccomp:[[:space:]]+2' /proc/self/status
}

@test "apt-get installs a package as remapped root (file)" {
  step_ok --container-remap-root --container-image="$U18" \
    bash -c 'apt-get update && apt-get install -y --no-install-recommends file && file /bin/sh'
}

@test "apt-get installs a package whose scripts chown and setgid (emacs-nox)" {
  step_ok --container-remap-root --container-image="$U18" \
    bash -c 'apt-get update && apt-get install -y --no-install-recommends emacs-nox && emacs-nox'
}

need_dnf_image() {
  [[ ${FIX_HAVE_DNF:-0} == 1 ]] ||
    skip "no dnf look-alike image (rpm or createrepo-c were missing where the images were built)"
}

@test "yum installs a package as remapped root (file)" {
  need_dnf_image
  step_ok --container-remap-root --container-image="$REG/almalinux:9" bash -c 'yum install -y file && file'
}

@test "yum installs a package with a setgid directory (emacs-nox)" {
  need_dnf_image
  step_ok --container-remap-root --container-image="$REG/almalinux:9" bash -c 'yum install -y emacs-nox'
}
