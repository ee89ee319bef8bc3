#!/usr/bin/env bash
# [objective] objectives: two objectives the result line gives by name. results.csv holds the
# second's value (objective:cost) and each row's pareto flag, which this script recomputes from
# the rows (no ok row of a task dominates a flagged one; every unflagged one is dominated);
# tasks.csv's pareto_size and hypervolume match the rows, with the job's reference for cost and
# a derived one for value (stated in reference_from). A result lacking an objective, or giving
# one the job does not name, is a failed trial whose reason says which. lbo compare compares
# the runs' hypervolumes so far from a reference common to them.
source "$(dirname "$0")/common.sh"

job() {  # job NAME ARGS: ARGS after the objective's command
  cat > "$SCRATCH/$1.toml" <<JOB
name = "$1"
seed = 4
[objective]
command = ["$LBO_TEST_OBJECTIVE", "--function", "branin"$2]
objectives = [{ name = "value", direction = "minimize" }, { name = "cost", direction = "minimize", reference = 450 }]
[policy]
surrogate = "gp"
[workers]
local_slots = 2
[space]
x1 = { type = "float", low = -5, high = 10 }
x2 = { type = "float", low = 0, high = 15 }
[[tasks]]
name = "a"
budget = 16
[[tasks]]
name = "b"
budget = 8
JOB
}

job two ', "--pareto", "on"'
"$LBO_BIN" run "$SCRATCH/two.toml" --run-root "$SCRATCH/runs" > "$SCRATCH/two.log" 2>&1 || { cat "$SCRATCH/two.log"; fail "the run failed"; }
python3 - "$SCRATCH/runs/two" <<'PY' || fail "the outputs of two objectives"
import csv, sys
run = sys.argv[1]
header = next(csv.reader(open(run + "/results.csv")))
assert header[header.index("clock") + 1:header.index("clock") + 3] == ["objective:cost", "pareto"], header
rows = list(csv.DictReader(open(run + "/results.csv")))
tasks = {t["task"]: t for t in csv.DictReader(open(run + "/tasks.csv"))}
assert len(rows) == 24 and all(r["status"] == "ok" for r in rows), [r["status"] for r in rows]
def dominates(p, q):
    return p[0] <= q[0] and p[1] <= q[1] and p != q
for name in ("a", "b"):
    mine = [r for r in rows if r["task"] == name]
    points = {r["trial"]: (float(r["objective"]), float(r["objective:cost"])) for r in mine}
    front = sorted((p for t, p in points.items() if not any(dominates(q, p) for q in points.values())))
    for r in mine:
        on = not any(dominates(q, points[r["trial"]]) for q in points.values())
        assert r["pareto"] == ("1" if on else "0"), (name, r["trial"], r["pareto"])
    t = tasks[name]
    assert int(t["pareto_size"]) == len(front), (t["pareto_size"], front)
    assert t["reference_from"] == "derived;job", t["reference_from"]
    worst, best = max(p[0] for p in points.values()), min(p[0] for p in points.values())
    ref = (worst + 0.1 * (worst - best), 450.0)
    assert abs(float(t["reference"].split(";")[0]) - ref[0]) <= 1e-5 * abs(ref[0]), (t["reference"], ref)
    # The staircase's area below the reference, front sorted by value ascending.
    area, last_cost = 0.0, ref[1]
    for value, cost in front:
        if value < ref[0] and cost < last_cost:
            area += (ref[0] - value) * (last_cost - cost)
            last_cost = cost
    assert abs(float(t["hypervolume"]) - area) <= 1e-5 * area, (t["hypervolume"], area)
    best_row = min(mine, key=lambda r: (float(r["objective"]), float(r["objective:cost"])))
    assert t["best_trial"] == best_row["trial"], (t["best_trial"], best_row["trial"])
print("two objectives: pareto flags, sizes and hypervolumes agree with the rows")
PY
grep -Eq "task a done: 16/16 ok, best [0-9.e+-]+ \(trial [0-9]+\); Pareto set of [0-9]+, hypervolume [0-9.e+-]+ from \(value [0-9.e+-]+ derived, cost 450\)" "$SCRATCH/two.log" \
  || { grep "done:" "$SCRATCH/two.log"; fail "the log's task line does not give the Pareto set and its reference"; }

"$LBO_BIN" status "$SCRATCH/runs/two" > "$SCRATCH/status.txt" 2>&1 || { cat "$SCRATCH/status.txt"; fail "status failed"; }
size=$(python3 -c "import csv; print(next(csv.DictReader(open('$SCRATCH/runs/two/tasks.csv')))['pareto_size'])")
members=$(python3 -c "import csv; print(' '.join(r['trial'] for r in csv.DictReader(open('$SCRATCH/runs/two/results.csv')) if r['task'] == 'a' and r['pareto'] == '1'))")
grep -Eq "best value \(minimize\) +pareto set$" "$SCRATCH/status.txt" || { cat "$SCRATCH/status.txt"; fail "status has no pareto column"; }
grep -Eq "^a +job file +16/16 .* $size trials?: $members$" "$SCRATCH/status.txt" || { cat "$SCRATCH/status.txt"; fail "status's Pareto set of a is not $size trials: $members"; }

# A result line that still gives "objective": every trial fails, naming what the job expects.
job old ''
"$LBO_BIN" run "$SCRATCH/old.toml" --run-root "$SCRATCH/runs" > "$SCRATCH/old.log" 2>&1 || true
python3 - "$SCRATCH/runs/old/results.csv" <<'PY' || fail "a result without the named objectives"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and all(r["status"] == "failed" for r in rows), [r["status"] for r in rows]
assert all('result "objective" is none of the objectives (value, cost)' in r["reason"] for r in rows), rows[0]["reason"]
print(len(rows), "trials failed with:", rows[0]["reason"])
PY

# lbo compare with two objectives: each run's hypervolume so far, from one reference per task
# for every run (cost's the job's, value's derived from the feasible results of all four runs),
# recomputed here from the runs' results.csv files.
"$LBO_BIN" compare "$SCRATCH/two.toml" --surrogates gp,random --seeds 2 --sync --run-root "$SCRATCH/cmp" > "$SCRATCH/cmp.out" 2> "$SCRATCH/cmp.log" \
  || { tail -20 "$SCRATCH/cmp.log"; fail "lbo compare of two objectives failed"; }
grep -Eq "^task a \(hypervolume of the feasible results so far from value [0-9.e+-]+ \(derived\), cost 450 \(job\), larger is better" "$SCRATCH/cmp.out" \
  || { cat "$SCRATCH/cmp.out"; fail "the comparison does not say it compares hypervolumes from which reference"; }
python3 - "$SCRATCH/cmp/two-compare" <<'PY' || fail "compare.csv's hypervolumes disagree with the runs"
import csv, os, statistics, sys
d = sys.argv[1]
runs = {(m, s): [r for r in csv.DictReader(open(os.path.join(d, f"{m}-seed{s}", "results.csv")))] for m in ("gp", "random") for s in (1, 2)}
rows = {(r["task"], int(r["trials"]), r["method"]): r for r in csv.DictReader(open(os.path.join(d, "compare.csv")))}
assert all(r["measure"] == "hypervolume" for r in rows.values()), "measure"
def point(r):
    return (float(r["objective"]), float(r["objective:cost"]))
def area(points, ref):
    total, last = 0.0, ref[1]
    for value, cost in sorted(points):
        if value < ref[0] and cost < last:
            total += (ref[0] - value) * (last - cost)
            last = cost
    return total
for task, budget in (("a", 16), ("b", 8)):
    pooled = [point(r) for rs in runs.values() for r in rs if r["task"] == task and r["status"] == "ok"]
    worst, best = max(p[0] for p in pooled), min(p[0] for p in pooled)
    ref = (worst + 0.1 * (worst - best), 450.0)
    curves = {}
    for key, rs in runs.items():
        mine = sorted((r for r in rs if r["task"] == task), key=lambda r: int(r["trial"]))
        curves[key] = [area([point(r) for r in mine[:k] if r["status"] == "ok"], ref) for k in range(1, budget + 1)]
    for k in range(1, budget + 1):
        for m in ("gp", "random"):
            want = statistics.mean(curves[(m, s)][k - 1] for s in (1, 2))
            got = float(rows[(task, k, m)]["mean_best"])
            assert abs(got - want) <= 1e-6 * max(1.0, want), (task, k, m, got, want)
        advantage = statistics.mean(curves[("gp", s)][k - 1] - curves[("random", s)][k - 1] for s in (1, 2))
        got = float(rows[(task, k, "random")]["paired_advantage"])
        assert abs(got - advantage) <= 1e-6 * max(1.0, abs(advantage)), (task, k, got, advantage)
print("compare: hypervolumes so far of 4 runs agree with their results.csv")
PY

# A run of one objective resumed with two: refused, saying why, and nothing written.
"$LBO_BIN" run "$SCRATCH/two.toml" --run-root "$SCRATCH/runs" > /dev/null 2>&1
sed -i 's/name = "cost", direction = "minimize"/name = "cost", direction = "maximize"/' "$SCRATCH/two.toml"
status=0
"$LBO_BIN" run "$SCRATCH/two.toml" --run-root "$SCRATCH/runs" > "$SCRATCH/changed.log" 2>&1 || status=$?
[ "$status" -eq 2 ] || { cat "$SCRATCH/changed.log"; fail "a changed objective was not refused (status $status)"; }
grep -q "objective.objectives: value (minimize), cost (minimize) → value (minimize), cost (maximize)" "$SCRATCH/changed.log" \
  || { cat "$SCRATCH/changed.log"; fail "the refusal does not name the change"; }
echo "a changed objective is refused: $(grep -m1 "objective.objectives" "$SCRATCH/changed.log")"
