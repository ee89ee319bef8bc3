#!/usr/bin/env bash
# Builds unit tests with AddressSanitizer and UndefinedBehaviorSanitizer (GCC, LBO_SANITIZE=ON,
# into build-sanitize/) and runs them: a read past a buffer, a use after free or after its
# scope, a leak, a signed overflow or a misaligned load stops the test with a report and fails
# it. The release build runs such code on as if nothing happened (Lbo::initial_parameters read
# a dead copy for a week; bench/README, simulated scale, tenth run).
#   scripts/sanitize.sh                the models' tests (tests/surrogate)
#   scripts/sanitize.sh surrogate jobs  the tests of tests/surrogate and tests/jobs
# GCC, not clang 14: the tests capture structured bindings in lambdas, which clang takes from 16.
# The run takes about 5 times as long as the release build's; the tests run 2 at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
modules=("${@:-surrogate}")
scripts/setup.sh
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLBO_SANITIZE=ON -DLBO_BUILD_BENCHMARKS=OFF > /dev/null
targets=()
for module in "${modules[@]}"; do
  [ -d "tests/$module" ] || { echo "sanitize: no tests/$module (modules: $(ls tests | tr '\n' ' '))" >&2; exit 2; }
  targets+=("test_$module")
done
cmake --build build-sanitize -j "$(nproc)" --target "${targets[@]}"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
for module in "${modules[@]}"; do
  echo "sanitize: tests/$module under ASan and UBSan"
  ctest --test-dir "build-sanitize/tests/$module" -L unit -j "$(nproc)" --output-on-failure --timeout 1800 || status=$?
done
if [ "$status" -ne 0 ]; then
  echo "sanitize: a test failed or a sanitizer reported (the report is in the test's output above)"
  exit 1
fi
echo "sanitize: no report"
