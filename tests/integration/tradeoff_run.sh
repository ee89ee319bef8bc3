#!/usr/bin/env bash
# jobs/examples/tradeoff.toml as shipped: two objectives (AUC, fit seconds) and a limit on the
# model's size, real models on real data, 3 tasks x 10 trials. Every trial ok; a trial is
# infeasible exactly when its model_kb breaks the limit; each task's Pareto column marks the
# feasible trials no other of the task dominates, and tasks.csv counts them.
source "$(dirname "$0")/common.sh"
"$LBO_BIN" run "$REPO/jobs/examples/tradeoff.toml" --run-root "$SCRATCH/runs" 2> "$SCRATCH/log" \
  || { cat "$SCRATCH/log"; fail "the tradeoff example exited $?"; }
run="$SCRATCH/runs/tradeoff"
python3 "$HERE/check_results.py" "$run/results.csv" year-1995=10 year-1996=10 year-1997-2003=10 --workers local:
python3 - "$run/results.csv" "$run/tasks.csv" <<'PY' || { cat "$SCRATCH/log"; fail "the tradeoff example's outputs are wrong"; }
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tasks = {r["task"]: r for r in csv.DictReader(open(sys.argv[2]))}
for r in rows:
    assert r["status"] == "ok", (r["trial"], r["reason"])
    assert r["infeasible"] == ("1" if float(r["metric:model_kb"]) > 64 else "0"), r
for name, task in tasks.items():
    mine = [r for r in rows if r["task"] == name]
    feasible = [(float(r["objective"]), float(r["objective:fit_s"])) for r in mine if r["infeasible"] == "0"]
    def dominated(p):
        return any(q[0] >= p[0] and q[1] <= p[1] and q != p for q in feasible)
    front = [r for r in mine if r["pareto"] == "1"]
    assert front, name
    for r in mine:
        p = (float(r["objective"]), float(r["objective:fit_s"]))
        member = r["infeasible"] == "0" and not dominated(p)
        # Of equal points, the set keeps one: a member is never dominated, and a trial left out is
        # dominated or equal to a member.
        if r["pareto"] == "1":
            assert member, (name, r["trial"])
        elif r["infeasible"] == "0":
            assert dominated(p) or any(p == (float(m["objective"]), float(m["objective:fit_s"])) for m in front), (name, r["trial"])
    assert int(task["pareto_size"]) == len(front), (name, task["pareto_size"], len(front))
    assert float(task["hypervolume"]) > 0, name
print("tradeoff: Pareto sets of", ", ".join(tasks[t]["pareto_size"] for t in tasks))
PY
grep -q "Pareto set of" "$SCRATCH/log" || { cat "$SCRATCH/log"; fail "the log gives no Pareto set"; }
echo "tradeoff example ok"
