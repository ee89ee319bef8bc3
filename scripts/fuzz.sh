#!/usr/bin/env bash
# Builds the libFuzzer targets (clang 14, LBO_FUZZ=ON, into build-fuzz/) and runs each of them
# for SECONDS (default 60) on a scratch copy of its seed corpus (fuzz/corpus/<target>/, which
# stays as committed). Prints each target's executions; exits non-zero if any target found a
# crash, a leak, undefined behaviour, a timeout (> 10 s on one input) or an out-of-memory
# (> 2 GiB), leaving the reproducer in the scratch folder it names.
#   scripts/fuzz.sh [SECONDS]                     all four targets, SECONDS each
#   FUZZ_TARGETS="fuzz_journal" scripts/fuzz.sh 600   only some
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
targets=${FUZZ_TARGETS:-"fuzz_job_file fuzz_checkpoint fuzz_journal fuzz_result"}
scripts/setup.sh
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLBO_FUZZ=ON > /dev/null
# shellcheck disable=SC2086
cmake --build build-fuzz -j "$(nproc)" --target $targets

scratch=$(mktemp -d "${TMPDIR:-/tmp}/lbo-fuzz.XXXXXX")
failed=()
for target in $targets; do
  mkdir -p "$scratch/$target/corpus" "$scratch/$target/artifacts"
  cp fuzz/corpus/"$target"/* "$scratch/$target/corpus/"
  log="$scratch/$target/log"
  echo "fuzz: $target for ${seconds} s"
  status=0
  # Relative paths a fuzzed job file names resolve in a folder of the scratch's own.
  (cd "$scratch/$target" && TMPDIR="$scratch/$target" \
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$OLDPWD/build-fuzz/fuzz/$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
      -print_final_stats=1 -artifact_prefix="$scratch/$target/artifacts/" corpus > "$log" 2>&1) || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  corpus=$(ls "$scratch/$target/corpus" | wc -l)
  echo "fuzz: $target: ${runs:-?} executions, corpus $corpus inputs, exit $status"
  if [ "$status" -ne 0 ] || ls "$scratch/$target/artifacts" | grep -q .; then
    grep -m1 -A30 "ERROR: \|runtime error\|==ERROR\|SUMMARY" "$log" | head -40 || tail -40 "$log"
    echo "fuzz: $target FOUND A PROBLEM: reproducer(s) in $scratch/$target/artifacts/, log $log"
    failed+=("$target")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: problems found by ${failed[*]} (scratch kept: $scratch)"
  exit 1
fi
rm -rf "$scratch"
echo "fuzz: no problem found"
