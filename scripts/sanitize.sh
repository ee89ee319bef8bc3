#!/usr/bin/env bash
# Builds unit tests under sanitizers (GCC) and runs them; a report stops the test and fails it.
#   scripts/sanitize.sh [MODULE...]           AddressSanitizer and UndefinedBehaviorSanitizer
#                                             (LBO_SANITIZE=ON, build-sanitize/): a read past a
#                                             buffer, a use after free or after its scope, a leak,
#                                             a signed overflow or a misaligned load
#   scripts/sanitize.sh --thread [MODULE...]  ThreadSanitizer (LBO_SANITIZE=thread, build-tsan/):
#                                             two threads touching the same memory, one writing,
#                                             with nothing ordering them (a data race), and
#                                             locks taken in orders that can deadlock
# MODULE: a folder of tests/ (default surrogate), e.g. `scripts/sanitize.sh surrogate jobs`.
# The release build runs such code on as if nothing happened (Lbo::initial_parameters read a
# dead copy for a week; bench/README, simulated scale, tenth run).
# GCC, not clang 14: the tests capture structured bindings in lambdas, which clang takes from 16.
# The run takes about 5 times as long as the release build's; the tests run 2 at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=address
if [ "${1:-}" = "--thread" ]; then
  kind=thread
  shift
fi
modules=("${@:-surrogate}")
for module in "${modules[@]}"; do
  [ -d "tests/$module" ] && [ "${module#-}" = "$module" ] ||
    { echo "sanitize: no tests/$module (usage: scripts/sanitize.sh [--thread] [MODULE...]; modules: $(cd tests && ls -d */ | tr -d / | tr '\n' ' '))" >&2; exit 2; }
done
scripts/setup.sh
if [ "$kind" = thread ]; then
  dir=build-tsan
  option=thread
  # halt_on_error: the first race fails its test. handle_segv=0: the tests' objective (built
  # here too) crashes on purpose with SIGSEGV, and must die of it, as it would in a release
  # build, not exit as TSan's handler would make it. libgomp is not built for TSan, so its
  # barriers look like no order at all: the models' OpenMP loops run on one thread here (their
  # results do not depend on the thread count), and the threads checked are lbo's own.
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:handle_segv=0 OMP_NUM_THREADS=1
  what="ThreadSanitizer"
else
  dir=build-sanitize
  option=ON
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  what="ASan and UBSan"
fi
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DLBO_SANITIZE="$option" -DLBO_BUILD_BENCHMARKS=OFF > /dev/null
targets=()
for module in "${modules[@]}"; do targets+=("test_$module"); done
cmake --build "$dir" -j "$(nproc)" --target "${targets[@]}"

status=0
for module in "${modules[@]}"; do
  echo "sanitize: tests/$module under $what"
  ctest --test-dir "$dir/tests/$module" -L unit -j "$(nproc)" --output-on-failure --timeout 1800 || status=$?
done
if [ "$status" -ne 0 ]; then
  echo "sanitize: a test failed or a sanitizer reported (the report is in the test's output above)"
  exit 1
fi
echo "sanitize: no report"
