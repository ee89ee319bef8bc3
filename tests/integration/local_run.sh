#!/usr/bin/env bash
# A full run on local slots: exit 0, every trial id once in results.csv, budget rows per task,
# failed/crashed trials retried once, each trial's files in place.
source "$(dirname "$0")/common.sh"
write_test_job "$SCRATCH/job.toml"
"$LBO_BIN" run "$SCRATCH/job.toml" --run-root "$SCRATCH/runs" 2> "$SCRATCH/log" || { cat "$SCRATCH/log"; fail "lbo run exited $?"; }
run="$SCRATCH/runs/it"
python3 "$HERE/check_results.py" "$run/results.csv" first=20 second=15 --workers local:
for f in job.toml journal.lbo results.csv trials/0/params.json trials/0/stdout trials/0/stderr; do
  [ -e "$run/$f" ] || fail "missing $f"
done
grep -q "done: 35 trials finished" "$SCRATCH/log" || { cat "$SCRATCH/log"; fail "no final summary"; }
echo "local run ok"
