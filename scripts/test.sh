#!/usr/bin/env bash
# Sets up what is missing, builds everything, runs the whole test suite (unit, MPI and
# integration tests) with ctest. Extra arguments go to ctest, e.g. `scripts/test.sh -L unit`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The same configuration as scripts/quickstart.sh (build/ is shared, so nothing is built twice);
# CI sets LBO_WERROR=ON to make warnings errors.
scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
