#!/usr/bin/env bash
# Installs, from Debian's own archive, everything corral needs to build, run
# and test: the compiler toolchain and libraries, and the genuine Slurm,
# MariaDB, munge and OpenSSH that clusters run. Idempotent; safe to re-run.
set -euo pipefail

PACKAGES=(
  # Build
  build-essential cmake ninja-build pkg-config git
  nlohmann-json3-dev libcpp-httplib-dev libssl-dev zlib1g-dev libbrotli-dev
  libcli11-dev libsqlite3-dev libgtest-dev libgmock-dev libbenchmark-dev
  libcurl4-openssl-dev libarchive-dev libyaml-cpp-dev
  # Slurm's SPANK header for corral's plugin (libslurm-dev); ssh and ssh-keygen
  # for `corral ssh` and host keys; and the host's own Slurm 22.05, MariaDB and
  # munge, which bench/sandbox.sh's baseline (pods over the host's root, before
  # cluster images) runs on. A cluster runs what its image holds.
  slurm-wlm slurmdbd slurm-client munge mariadb-server mariadb-client
  openssh-server openssh-client libslurm-dev slurm-wlm-plugins-dev
  # What corral's local runtime drives: namespaces, the cluster networks'
  # firewall, and mmdebstrap, which builds the cluster images (images/*.yaml)
  # from Debian's archive
  iproute2 util-linux procps coreutils nftables mmdebstrap
  # Login users (corral user add) on every pod, from rendered files
  libnss-extrausers
  # Container jobs: squashfs images for the Enroot-compatible runtime, the
  # cluster registry (--registry), and busybox for test and demo images
  squashfs-tools docker-registry busybox-static
  # Used by tests and benchmarks
  curl jq bc
  # The Kubernetes images' check (test/k8s/image-check.sh): an independent
  # client that inspects what scripts/kube-images.sh pushed
  skopeo
  # scripts/long-functions.py (a unit test of the house rules) and the
  # Kubernetes test environment (test/k8s: its certificates, its API calls)
  python3 openssl
  # The Pyxis-behaviour suite (test/pyxis): bats, which it copies into a
  # cluster's /shared, and what its fixture images are built with: a flat apt
  # repository (dpkg-dev), an rpm one (rpm, createrepo-c) for dnf (Debian's)
  bats dpkg-dev rpm createrepo-c dnf
  # The console's end-to-end test: a real headless Chromium, driven by
  # playwright-core from the npm registry (test/console)
  chromium
)
# Node.js and npm from Debian, unless the machine has a node already (a newer
# one from elsewhere would conflict with Debian's npm package).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  PACKAGES+=(nodejs npm)
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: run as root (it uses apt-get)" >&2
  exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# The packages' own services (slurmctld, mariadb, ssh, munge, docker-registry) are not
# started here: corral runs private copies of them inside each cluster.
# A policy-rc.d the machine already has is left as it is.
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod 755 /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
