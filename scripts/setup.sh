#!/usr/bin/env bash
# Installs every Debian/Ubuntu package lbo needs to build, test and run its examples.
# Idempotent: installs only what is missing (run as root, or with sudo available).
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake pkg-config
  # libraries (CMake imported targets)
  libopenmpi-dev openmpi-bin libeigen3-dev libboost-dev libcereal-dev libtomlplusplus-dev
  liblbfgspp-dev libcli11-dev nlohmann-json3-dev libnanoflann-dev
  # scripts/fuzz.sh: clang 14 and its libFuzzer and sanitizer runtimes
  clang-14 libclang-rt-14-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  # the example objectives (run by /usr/bin/python3) and the benchmark's Optuna peer
  python3 python3-numpy python3-sklearn python3-xgboost python3-optuna
  # tests: process lookup (pgrep), a stuck process's stacks when a test hangs (gdb),
  # and the report's browser test (headless Chromium)
  procps gdb chromium
  # tests: the single-node SLURM that tests/integration/slurm_cluster.sh starts
  slurm-wlm munge
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages are installed"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: run as root to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
