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
# cached outside the clone (/var/cache/corral/images): about a minute each
# the first time, nothing afterwards.
for image in debian13-slurm24.11 debian12-slurm22.05; do
  ./corrald image build "$image"
done
# Every end-to-end test on each image: the default (Slurm 24.11), then
# Slurm 22.05 (the console's test and the Pyxis-behaviour suite, test/pyxis,
# run once, on the default).
ctest --output-on-failure -L e2e --timeout 1500
CORRAL_E2E_IMAGE=debian12-slurm22.05 ctest --output-on-failure -R '^e2e$' --timeout 1500
