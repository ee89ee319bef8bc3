#!/usr/bin/env bash
# Configures and builds lbo into build/ (shared by test.sh and quickstart.sh).
#   scripts/build.sh [cmake --build arguments, e.g. --target lbo]
# LBO_WERROR=ON turns compiler warnings into errors (CI does: .ci/run). quickstart.sh and test.sh
# use the same configuration, so the second of them builds only what the first did not.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLBO_WARNINGS_AS_ERRORS="${LBO_WERROR:-OFF}"
cmake --build build -j "$(nproc)" "$@"
