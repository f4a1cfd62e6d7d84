#!/usr/bin/env bash
# Installs what corral needs, builds it, and runs every test: the unit tests,
# then the end-to-end tests that create real Slurm clusters (root needed).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
cd build
ctest --output-on-failure -L unit
ctest --output-on-failure -L e2e --timeout 1500
