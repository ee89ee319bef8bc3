#!/usr/bin/env bash
# Configures and builds lbo into build/ (shared by test.sh and quickstart.sh).
#   scripts/build.sh [cmake --build arguments, e.g. --target lbo]
# LBO_WERROR=ON turns compiler warnings into errors (CI does: .ci/run). quickstart.sh and test.sh
# use the same configuration, so the second of them builds only what the first did not.
set -euo pipefail
cd "$(dirname "$0")/.."
# -g1: line tables only (a backtrace and gdb's `bt` name functions, files and lines, not local
# variables). The code is the same as with -g; a clean build of lbo took 240 s against 336 s on 2
# cores (bench/README.md, "Build time"). Configure build/ with -DCMAKE_BUILD_TYPE=Debug to debug.
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DLBO_WARNINGS_AS_ERRORS="${LBO_WERROR:-OFF}"
cmake --build build -j "$(nproc)" "$@"
