#!/usr/bin/env bash
# Promises that must hold on a busy node (issue 31): three `lbo run --sync` of one job started
# together, on 2 local slots each, beside two busy loops that keep every core loaded, make the
# same trials with the same values, and lbo kills none of its own trials (no attempt ends
# crashed or cancelled; every trial ran once). A trial's exit was once taken for another's and
# a live trial killed (`crashed: killed by SIGKILL`), about once per batch of three under load.
source "$(dirname "$0")/common.sh"

cat > "$SCRATCH/job.toml" <<JOB
name = "load"
seed = 21
[objective]
command = ["$LBO_TEST_OBJECTIVE", "--function", "branin", "--sleep-ms", "15"]
direction = "minimize"
[policy]
surrogate = "gp"
initial_random = 4
[workers]
local_slots = 2
[space]
x1 = { type = "float", low = -5, high = 10 }
x2 = { type = "float", low = 0, high = 15 }
[[tasks]]
name = "branin"
budget = 60
JOB

hogs=()
for _ in 1 2; do (while :; do :; done) & hogs+=($!); done
trap 'kill "${hogs[@]}" 2>/dev/null || true; rm -rf "$SCRATCH"' EXIT

for batch in 1 2 3; do
  pids=()
  for run in 1 2 3; do
    "$LBO_BIN" run "$SCRATCH/job.toml" --sync --run-root "$SCRATCH/b$batch-$run" > "$SCRATCH/b$batch-$run.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { cat "$SCRATCH/b$batch-$((i + 1)).log"; fail "batch $batch run $((i + 1)) exited $?"; }
  done
done
kill "${hogs[@]}"

reference=$(python3 "$HERE/comparable.py" "$SCRATCH/b1-1/load/results.csv" --keep-attempts --keep-order)
[ "$(echo "$reference" | wc -l)" -eq 61 ] || fail "expected 60 trials"
for results in "$SCRATCH"/b*/load/results.csv; do
  if grep -E ',(crashed|cancelled),|SIGKILL' "$results" > /dev/null; then
    grep -E ',(crashed|cancelled),|SIGKILL' "$results" | head -3 >&2
    fail "lbo killed or cancelled a trial of its own in $results"
  fi
  python3 - "$results" <<'PY' || fail "a trial of $results ran more than once"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
sys.exit(0 if all(r["attempts"] == "1" and r["status"] == "ok" for r in rows) else 1)
PY
  this=$(python3 "$HERE/comparable.py" "$results" --keep-attempts --keep-order)
  [ "$this" == "$reference" ] || { diff <(echo "$reference") <(echo "$this") | head >&2; fail "$results differs from b1-1"; }
done
echo "9 --sync runs under load: identical, no trial killed by lbo"
