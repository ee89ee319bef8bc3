#!/usr/bin/env bash
# bench/fidelity: early stopping on learning curves (see suite.py and bench/README.md): lbo with
# and without [early_stopping] against Optuna 3.1's pruners, the same objective reporting each
# step (XGBoost's boosting rounds, or an MLP's epochs), 20 trials per task of a bench/real problem
# (--problem rotterdam, nwtco or rotterdam-mlp), 2 at a time.
#
# Usage: bench/fidelity/run.sh [--out DIR] [suite.py options: --seeds N --trials N --methods ...]
#   --out DIR   raw results per method and seed; an existing DIR is continued by the lbo build that
#               began it only (DIR/lbo-build.txt; default: bench/fidelity/out)
# Needs Debian's python3-optuna, python3-sklearn and python3-xgboost (scripts/setup.sh) and a
# built lbo (LBO_BUILD_DIR, default <repo>/build; built here if missing).
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
  echo "bench/fidelity: /usr/bin/python3 lacks optuna, sklearn or xgboost; run scripts/setup.sh" >&2
  exit 2
fi
if [ ! -x "$build/lbo" ]; then
  cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" --target lbo -j"$(nproc)"
fi
exec /usr/bin/python3 "$bench_dir/suite.py" --out "$out" --lbo "$build/lbo" ${args[@]+"${args[@]}"}
