#!/usr/bin/env bash
# bench/real: lifelong model selection on real data (see suite.py and bench/README.md).
# lbo (lbo, gp, ablr, random) against Optuna (TPE, TPE multivariate + group, random) on three
# problems, with the same objective, 20 trials per task, 2 at a time, 5 seeds; prints the table.
#
# Usage: bench/real/run.sh [--out DIR] [suite.py options: --seeds N --problems ... --methods ... --sync]
#   --out DIR   raw results; an existing DIR is continued (default: bench/real/out)
# Needs Debian's python3-optuna, python3-sklearn and python3-xgboost (scripts/setup.sh) and a
# built lbo (LBO_BUILD_DIR, default <repo>/build; built here if missing). About 20 minutes
# for the default methods and 5 seeds on 2 cores.
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$bench_dir/../.." && pwd)
build=${LBO_BUILD_DIR:-$repo/build}
out=$bench_dir/out
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done

if ! /usr/bin/python3 -c "import optuna, sklearn, xgboost" 2>/dev/null; then
  echo "bench/real: /usr/bin/python3 lacks optuna, sklearn or xgboost; run scripts/setup.sh" >&2
  exit 2
fi
if [ ! -x "$build/lbo" ]; then
  cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" --target lbo -j"$(nproc)"
fi
exec /usr/bin/python3 "$bench_dir/suite.py" run --out "$out" --lbo "$build/lbo" ${args[@]+"${args[@]}"}
