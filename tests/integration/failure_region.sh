#!/usr/bin/env bash
# [objective] failures = "learn" (the default): where a corner of the space always fails, a
# --sync run's proposals leave it once it has failed a few times, a second task avoids it from
# its first trials, each proposal says how likely it was to succeed, and the log says the model
# learns from failures; with failures = "ignore" the same run keeps proposing there (lbo before).
# Where nothing fails, "learn" and "ignore" run exactly the same trials. An asynchronous run on
# 3 slots learns too (counted loosely: its order depends on the machine's load).
source "$(dirname "$0")/common.sh"

job() {  # job NAME FAILURES FAIL_CORNER [SYNC_SLOTS]
  local corner=""
  [ "$3" != 0 ] && corner=", \"--fail-corner\", \"$3\""
  cat > "$SCRATCH/$1.toml" <<JOB
name = "$1"
seed = 11
[objective]
command = ["$LBO_TEST_OBJECTIVE", "--function", "branin"$corner]
direction = "minimize"
failures = "$2"
[policy]
surrogate = "gp"
[workers]
local_slots = ${4:-1}
[space]
x1 = { type = "float", low = -5, high = 10 }
x2 = { type = "float", low = 0, high = 15 }
[[tasks]]
name = "first"
budget = 30
[[tasks]]
name = "second"
budget = 20
JOB
}

# failed FILE TASK FROM TO: failed trials among the task's FROM-th to TO-th (1-based).
failed() {
  python3 - "$@" <<'PY'
import csv, sys
path, task, lo, hi = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rows = [r for r in csv.DictReader(open(path)) if r["task"] == task]
print(sum(r["status"] == "failed" for r in rows[lo - 1:hi]))
PY
}

# A quarter disc of radius 0.65 around the corner (10, 15): a third of the box, Branin's minima outside.
job learn learn 0.65
job ignore ignore 0.65
"$LBO_BIN" run "$SCRATCH/learn.toml" --sync --run-root "$SCRATCH/runs" > "$SCRATCH/learn.log" 2>&1 || { cat "$SCRATCH/learn.log"; fail "the learning run failed"; }
"$LBO_BIN" run "$SCRATCH/ignore.toml" --sync --run-root "$SCRATCH/runs" > "$SCRATCH/ignore.log" 2>&1 || { cat "$SCRATCH/ignore.log"; fail "the ignoring run failed"; }
learned=$SCRATCH/runs/learn/results.csv
ignored=$SCRATCH/runs/ignore/results.csv
late_learn=$(failed "$learned" first 11 30)
late_ignore=$(failed "$ignored" first 11 30)
early_second=$(failed "$learned" second 1 10)
echo "failed after the first 10 of 30: learn $late_learn, ignore $late_ignore; the second task's first 10: $early_second"
[ "$late_ignore" -ge 10 ] || fail "with failures ignored only $late_ignore of 20 failed: the corner does not draw the GP, the test shows nothing"
[ "$late_learn" -le 5 ] || fail "$late_learn of the first task's last 20 trials failed with failures learned (ignored: $late_ignore)"
[ "$early_second" -le 3 ] || fail "$early_second of the second task's first 10 trials failed: it did not learn from the first task"
grep -q "failures teach the model: " "$SCRATCH/learn.log" || fail "the log does not say failures teach the model"
grep -q "failures teach the model" "$SCRATCH/ignore.log" && fail "failures = \"ignore\" still learned from them"
python3 - "$learned" "$ignored" <<'PY' || fail "proposal notes"
import csv, sys
learned = list(csv.DictReader(open(sys.argv[1])))
ignored = list(csv.DictReader(open(sys.argv[2])))
# After the first failure, every model proposal says its estimated probability of success.
first = next(i for i, r in enumerate(learned) if r["status"] == "failed")
noted = [r for r in learned[first + 1:] if r["proposed_by"] == "model"]
assert noted and all("estimated probability of success " in r["proposal_note"] for r in noted), noted[:3]
assert not any("probability of success" in r["proposal_note"] for r in ignored)
# A failed trial's reason is its own.
assert all("CUDA out of memory" in r["reason"] for r in learned if r["status"] == "failed")
PY

# Nothing fails: the same trials either way.
job calm-learn learn 0
job calm-ignore ignore 0
sed -i 's/^name = "calm-ignore"/name = "calm-learn"/' "$SCRATCH/calm-ignore.toml"
"$LBO_BIN" run "$SCRATCH/calm-learn.toml" --sync --run-root "$SCRATCH/calm-a" > "$SCRATCH/calm-a.log" 2>&1 || { cat "$SCRATCH/calm-a.log"; fail "calm run"; }
"$LBO_BIN" run "$SCRATCH/calm-ignore.toml" --sync --run-root "$SCRATCH/calm-b" > "$SCRATCH/calm-b.log" 2>&1 || { cat "$SCRATCH/calm-b.log"; fail "calm run"; }
[ "$(python3 "$HERE/comparable.py" "$SCRATCH/calm-a/calm-learn/results.csv")" == \
  "$(python3 "$HERE/comparable.py" "$SCRATCH/calm-b/calm-learn/results.csv")" ] || fail "where nothing fails, learn and ignore ran different trials"

# Asynchronous, 3 slots: it learns there too (a loose bound: the order of results depends on load).
job async learn 0.65 3
"$LBO_BIN" run "$SCRATCH/async.toml" --run-root "$SCRATCH/runs" > "$SCRATCH/async.log" 2>&1 || { cat "$SCRATCH/async.log"; fail "the asynchronous run failed"; }
late_async=$(failed "$SCRATCH/runs/async/results.csv" first 11 30)
echo "asynchronous on 3 slots: $late_async of the first task's last 20 failed"
[ "$late_async" -le 10 ] || fail "$late_async of 20 failed in the asynchronous run"
echo "failure_region: ok"
