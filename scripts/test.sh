#!/usr/bin/env bash
# Installs what corral needs, builds it, and runs every test: the unit tests,
# the integration tests (root: the container runtime against the real kernel,
# the registry client against a real registry), then the end-to-end tests that
# create real Slurm clusters (root needed).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
cd build
ctest --output-on-failure -L unit
ctest --output-on-failure -L integration
# The cluster images the end-to-end tests run on, built once per host and
# cached outside the clone (/var/cache/corral/images): one to two minutes
# each the first time (Debian unstable's, for Kubernetes, about 105 s),
# nothing afterwards.
for image in debian13-slurm24.11 debian12-slurm22.05 debian-unstable-slurm26.05; do
  ./corrald image build "$image"
done
# Every end-to-end test on each image: the default (Slurm 24.11), then
# Slurm 22.05 (the console's test and the Pyxis-behaviour suite, test/pyxis,
# run once, on the default).
ctest --output-on-failure -L e2e --timeout 1500
# The Kubernetes side (issue 15): a real etcd, kube-apiserver,
# kube-controller-manager and Slinky operator built from their Go modules
# (test/k8s; about 5 minutes on 2 cores the first time, cached in
# /var/cache/corral afterwards); the check that the API server accepts every
# object corral renders and what the real operator makes of them; and
# corrald --runtime kubernetes driven through the CLI (test/k8s/cli-e2e.sh).
# It needs Go (1.26) and the Go module proxy; without Go it says so and is
# skipped.
if command -v go >/dev/null || [[ -x /usr/local/go/bin/go ]]; then
  K8S_ENV_CONTROLLER_MANAGER=1 ../test/k8s/env.sh build
  ctest --output-on-failure -L kube
else
  echo "test.sh: SKIPPED the Kubernetes checks: no Go toolchain (install Go 1.26)" >&2
fi
CORRAL_E2E_IMAGE=debian12-slurm22.05 ctest --output-on-failure -R '^e2e$' --timeout 1500
