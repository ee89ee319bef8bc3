#!/usr/bin/env bash
# The README's quickstart job, as shipped: real models on real data, 3 tasks x 12 trials, all ok.
source "$(dirname "$0")/common.sh"
"$LBO_BIN" run "$REPO/jobs/examples/quickstart.toml" --run-root "$SCRATCH/runs" 2> "$SCRATCH/log" \
  || { cat "$SCRATCH/log"; fail "quickstart exited $?"; }
results="$SCRATCH/runs/quickstart/results.csv"
python3 "$HERE/check_results.py" "$results" year-1995=12 year-1996=12 year-1997-2003=12 --workers local:
if grep -v '^trial,' "$results" | grep -qv ',ok,'; then
  cat "$SCRATCH/log"; fail "a quickstart trial did not succeed"
fi
echo "quickstart ok"
