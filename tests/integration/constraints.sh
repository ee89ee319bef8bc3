#!/usr/bin/env bash
# [[constraints]]: a limit on a metric the result reports. Branin minimized where its "twice"
# metric (2 × the value) is at least 20, so every trial below 10 is infeasible: results.csv marks
# exactly those (infeasible, the last fixed column), the task's best in tasks.csv and the log is
# the best feasible one (never below 10), infeasible trials are not failures, and the log says the
# limits teach the model. A resume whose job file changes the limit judges every trial anew. A
# limit on a metric the result lacks fails each trial with a reason naming it.
source "$(dirname "$0")/common.sh"

job() {  # job NAME BUDGET CONSTRAINT SLOTS
  cat > "$SCRATCH/$1.toml" <<JOB
name = "$1"
seed = 5
[objective]
command = ["$LBO_TEST_OBJECTIVE", "--function", "branin", "--metrics", "on"]
direction = "minimize"
[policy]
surrogate = "gp"
[workers]
local_slots = $4
[space]
x1 = { type = "float", low = -5, high = 10 }
x2 = { type = "float", low = 0, high = 15 }
[[constraints]]
$3
[[tasks]]
name = "only"
budget = $2
JOB
}

# judged RESULTS TASKS MIN MAX: each ok row's infeasible is whether twice lies outside [MIN, MAX]
# ("-" for no bound), and tasks.csv's best is the best feasible row's; prints the counts.
judged() {
  python3 - "$@" <<'PY'
import csv, sys
results, tasks, lo, hi = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
lo = None if lo == "-" else float(lo)
hi = None if hi == "-" else float(hi)
header = next(csv.reader(open(results)))
assert header[header.index("clock") + 1] == "infeasible", header
rows = list(csv.DictReader(open(results)))
feasible = []
for r in rows:
    if r["status"] != "ok":
        assert r["infeasible"] == "", r
        continue
    twice = float(r["metric:twice"])
    outside = (lo is not None and twice < lo) or (hi is not None and twice > hi)
    assert r["infeasible"] == ("1" if outside else "0"), (r["trial"], twice, r["infeasible"])
    if not outside:
        feasible.append(r)
task = next(csv.DictReader(open(tasks)))
if feasible:
    best = min(feasible, key=lambda r: float(r["objective"]))
    assert task["best_trial"] == best["trial"], (task["best_trial"], best["trial"])
else:
    assert task["best"] == "" and task["best_trial"] == "", task
assert int(task["infeasible"]) == sum(r["status"] == "ok" for r in rows) - len(feasible), task
print(len(rows), sum(r["infeasible"] == "1" for r in rows), best["objective"] if feasible else "none")
PY
}

job limit 24 'name = "twice"
min = 20' 2
"$LBO_BIN" run "$SCRATCH/limit.toml" --run-root "$SCRATCH/runs" > "$SCRATCH/limit.log" 2>&1 || { cat "$SCRATCH/limit.log"; fail "the constrained run failed"; }
run="$SCRATCH/runs/limit"
read -r rows infeasible best < <(judged "$run/results.csv" "$run/tasks.csv" 20 -) || fail "the constrained run's outputs"
echo "twice >= 20: $rows trials, $infeasible infeasible, best feasible $best"
[ "$infeasible" -ge 1 ] || fail "no trial was infeasible: the limit tests nothing"
python3 -c "import sys; assert float(sys.argv[1]) >= 10" "$best" || fail "the best $best is below the limit's 10"
grep -q "limits teach the model: 20 <= twice by a GP of twice on" "$SCRATCH/limit.log" || fail "the log does not say the limits teach the model"
grep -q "task only done: 24/24 ok ($infeasible of them infeasible), best feasible $(python3 -c "print('%.6g' % float('$best'))")" "$SCRATCH/limit.log" \
  || { grep "task only done" "$SCRATCH/limit.log"; fail "the log's best is not the best feasible $best"; }
"$LBO_BIN" status "$run" > "$SCRATCH/status.txt" 2>&1 || { cat "$SCRATCH/status.txt"; fail "status failed"; }
grep -Eq "^task +origin +done/budget +ok +infeasible +failed .*best feasible \(minimize\)" "$SCRATCH/status.txt" \
  || { cat "$SCRATCH/status.txt"; fail "status has no infeasible column"; }
grep -Eq "^only +job file +24/24 +24 +$infeasible +0 " "$SCRATCH/status.txt" || { cat "$SCRATCH/status.txt"; fail "status counts"; }

# The same run resumed under the opposite limit (twice <= 20), two trials more: every trial judged anew.
job limit 26 'name = "twice"
max = 20' 2
"$LBO_BIN" run "$SCRATCH/limit.toml" --run-root "$SCRATCH/runs" > "$SCRATCH/resumed.log" 2>&1 || { cat "$SCRATCH/resumed.log"; fail "the resume failed"; }
read -r rows2 infeasible2 best2 < <(judged "$run/results.csv" "$run/tasks.csv" - 20) || fail "the resumed run's outputs"
echo "resumed under twice <= 20: $rows2 trials, $infeasible2 infeasible, best feasible $best2"
[ "$rows2" -eq 26 ] || fail "the resumed run has $rows2 trials, not 26"

# A limit on a metric the result does not report: each trial fails and says which.
job missing 3 'name = "memory_gb"
max = 16' 1
"$LBO_BIN" run "$SCRATCH/missing.toml" --run-root "$SCRATCH/runs" > "$SCRATCH/missing.log" 2>&1 || { cat "$SCRATCH/missing.log"; fail "the run with a missing metric failed outright"; }
python3 - "$SCRATCH/runs/missing/results.csv" <<'PY' || fail "a missing constraint value is not a failed trial naming it"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 3
for r in rows:
    assert r["status"] == "failed", r
    assert "lack \"memory_gb\", which [[constraints]] limits (memory_gb <= 16)" in r["reason"], r["reason"]
PY
echo "constraints: labels, bests, rejudged on resume, missing values fail their trials"
