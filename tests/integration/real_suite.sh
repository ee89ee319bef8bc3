#!/usr/bin/env bash
# bench/real end to end, in small: one problem (flchain, 3 tasks), one seed, 3 trials per task,
# lbo, random search and Optuna TPE through the suite's forkserver objective. Checks that every
# method evaluated every trial with a valid AUC, that a later lbo task starts with the earlier
# tasks' bests (`earlier-best`), and that the report has the problem's table and the margins.
source "$(dirname "$0")/common.sh"
if ! /usr/bin/python3 -c "import optuna, sklearn, xgboost" 2> /dev/null; then
  fail "/usr/bin/python3 lacks optuna, sklearn or xgboost: run scripts/setup.sh"
fi
out="$SCRATCH/real"
/usr/bin/python3 "$REPO/bench/real/suite.py" run --out "$out" --lbo "$LBO_BIN" --problems flchain \
  --methods lbo random optuna-tpe --seeds 1 --trials 3 > "$SCRATCH/report" 2>&1 \
  || { cat "$SCRATCH/report"; fail "suite.py run exited $?"; }
for method in lbo random optuna-tpe; do
  /usr/bin/python3 - "$out/raw/flchain/$method/seed1.csv" "$method" <<'PY' || { cat "$SCRATCH/report"; exit 1; }
import csv, sys
path, method = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(path)))
tasks = {}
for r in rows:
    tasks.setdefault(int(r["task_index"]), []).append(r)
assert sorted(tasks) == [0, 1, 2], f"{method}: tasks {sorted(tasks)}"
for index, trials in tasks.items():
    assert len(trials) == 3, f"{method}: task {index} has {len(trials)} trials"
    for r in trials:
        assert r["value"] and 0.5 <= float(r["value"]) <= 1.0, f"{method}: task {index}: value {r['value']!r}"
if method == "lbo":
    for index in (1, 2):
        first = [r["proposed_by"] for r in tasks[index]]
        assert first[0] == "earlier-best", f"lbo: task {index} starts with {first}"
    assert all(r["proposed_by"] == "initial" for r in tasks[0]), "lbo: the first task is not all initial design"
PY
done
grep -q "^## flchain: 3 tasks" "$SCRATCH/report" || { cat "$SCRATCH/report"; fail "no flchain table"; }
for method in lbo random optuna-tpe; do
  grep -q "^| $method | 1 |" "$SCRATCH/report" || { cat "$SCRATCH/report"; fail "no report row for $method"; }
done
grep -q "^| flchain | " "$SCRATCH/report" || { cat "$SCRATCH/report"; fail "no margin against Optuna"; }
echo "real suite ok"
