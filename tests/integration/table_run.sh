#!/usr/bin/env bash
# A tabulated objective ([objective] table): no process runs; every ok trial's value is that of
# its task's nearest row in the encoded box (worked out here independently: x linear, y
# (y-1)/4, a differing choice √2, ties to the first row), the row's failed evaluation fails
# the trial with the line, --sync resumes exactly after a stop, and kill -9 loses nothing.
# A table lacking a task, or with a row outside the space, is exit 2 and nothing written.
source "$(dirname "$0")/common.sh"

python3 - "$SCRATCH/evals.csv" <<'PY'
import math, sys
with open(sys.argv[1], "w") as f:
    f.write("dataset,x,y,opt,score,seconds\n")
    for task, shift in (("first", 0.3), ("second", 0.6)):
        for i in range(11):
            for y in (1, 3, 5):
                for opt in ("a", "b"):
                    x = i / 10
                    value = -(x - shift) ** 2 - 0.05 * (y - 3) ** 2 + (0.1 if opt == "b" else 0)
                    score = "" if (i == 4 and y == 3 and opt == "b") else repr(value)  # a failed evaluation
                    f.write(f"{task},{x},{y},{opt},{score},{10 + i}\n")
PY

write_job() {  # write_job FILE [TASK_NAME_2] [BUDGET]
  cat > "$1" <<JOB
name = "table"
seed = 3
[objective]
table = "$SCRATCH/evals.csv"
table_task = "dataset"
table_objective = "score"
table_time = "seconds"
direction = "maximize"
[policy]
surrogate = "lbo"
initial_random = 4
[workers]
local_slots = 3
[space]
x = { type = "float", low = 0, high = 1 }
y = { type = "int", low = 1, high = 5 }
opt = { type = "categorical", choices = ["a", "b"] }
[[tasks]]
name = "first"
budget = ${3:-14}
[[tasks]]
name = "${2:-second}"
budget = ${3:-14}
JOB
}

write_job "$SCRATCH/job.toml"
"$LBO_BIN" run "$SCRATCH/job.toml" --sync --run-root "$SCRATCH/a" 2> "$SCRATCH/a.log" || { cat "$SCRATCH/a.log"; fail "lbo run exited $?"; }
results="$SCRATCH/a/table/results.csv"
python3 - "$SCRATCH/evals.csv" "$results" <<'PY' || fail "values are not the nearest rows'"
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def enc(x, y, opt):
    return (float(x), (float(y) - 1) / 4, 1.0 if opt == "a" else 0.0, 1.0 if opt == "b" else 0.0)
results = list(csv.DictReader(open(sys.argv[2])))
assert len(results) == 28, len(results)
failed = 0
for r in results:
    me = enc(r["x"], r["y"], r["opt"])
    best, best_d = None, math.inf
    for line, t in enumerate(rows, start=2):
        if t["dataset"] != r["task"]:
            continue
        d = math.dist(me, enc(t["x"], t["y"], t["opt"]))
        if d < best_d:
            best, best_d = (line, t), d
    line, t = best
    if t["score"] == "":
        assert r["status"] == "failed", r
        assert f"evals.csv:{line}) failed" in r["reason"], r["reason"]
        failed += 1
    else:
        assert r["status"] == "ok", r
        assert float(r["objective"]) == float(t["score"]), (r, line, t)
print(f"{len(results)} trials, each its nearest row's value ({failed} on the failed row)")
PY
[ ! -d "$SCRATCH/a/table/trials" ] || [ -z "$(ls -A "$SCRATCH/a/table/trials")" ] || fail "a table run made trial folders"
grep -q "table evals.csv: 3 slot(s), no process" "$SCRATCH/a.log" || { cat "$SCRATCH/a.log"; fail "the log does not say where trials run"; }

# --sync: stopped (SIGTERM) and resumed, the run is the unstopped one's; after kill -9 and a
# resume it completes with every committed result kept (longer runs, to be stopped midway).
write_job "$SCRATCH/long.toml" second 60
"$LBO_BIN" run "$SCRATCH/long.toml" --sync --run-root "$SCRATCH/whole" 2> "$SCRATCH/whole.log" || fail "lbo run exited $?"
"$LBO_BIN" run "$SCRATCH/long.toml" --sync --run-root "$SCRATCH/b" 2> "$SCRATCH/b.log" &
pid=$!
wait_for_rows "$SCRATCH/b/table/results.csv" 10
kill -TERM "$pid"
set +e; wait "$pid"; status=$?; set -e
[ "$status" -eq 75 ] || { cat "$SCRATCH/b.log"; fail "a stopped table run exited $status, expected 75"; }
"$LBO_BIN" run "$SCRATCH/long.toml" --sync --run-root "$SCRATCH/b" 2>> "$SCRATCH/b.log" || { cat "$SCRATCH/b.log"; fail "resume exited $?"; }
first=$(python3 "$HERE/comparable.py" "$SCRATCH/whole/table/results.csv" --keep-attempts)
again=$(python3 "$HERE/comparable.py" "$SCRATCH/b/table/results.csv" --keep-attempts)
[ "$first" == "$again" ] || { diff <(echo "$first") <(echo "$again"); fail "a --sync table run stopped and resumed differs"; }
"$LBO_BIN" run "$SCRATCH/long.toml" --sync --run-root "$SCRATCH/k" 2> "$SCRATCH/k.log" &
pid=$!
wait_for_rows "$SCRATCH/k/table/results.csv" 10
before=$(committed "$SCRATCH/k/table/results.csv")
kill -9 "$pid"; wait "$pid" 2>/dev/null || true
"$LBO_BIN" run "$SCRATCH/long.toml" --sync --run-root "$SCRATCH/k" 2>> "$SCRATCH/k.log" || { cat "$SCRATCH/k.log"; fail "resume after kill -9 exited $?"; }
keeps "$before" "$(committed "$SCRATCH/k/table/results.csv")" "a table run resumed after kill -9"
[ "$(($(wc -l < "$SCRATCH/k/table/results.csv") - 1))" -eq 120 ] || fail "a table run resumed after kill -9 did not complete"

# table_restrict: proposals are the task's own rows, each at most once (the papers' protocol).
# With a budget of every distinct row, lbo and random each evaluate every row exactly once.
for method in lbo random; do
  sed -e 's/^table_time = "seconds"$/table_time = "seconds"\ntable_restrict = true/' -e "s/^surrogate = \"lbo\"$/surrogate = \"$method\"/" \
    "$SCRATCH/job.toml" > "$SCRATCH/restricted-$method.toml"
  sed -i 's/^budget = 14$/budget = 66/' "$SCRATCH/restricted-$method.toml"
  "$LBO_BIN" run "$SCRATCH/restricted-$method.toml" --sync --run-root "$SCRATCH/r-$method" 2> "$SCRATCH/r-$method.log" \
    || { cat "$SCRATCH/r-$method.log"; fail "a restricted $method run exited $?"; }
  python3 - "$SCRATCH/r-$method/table/results.csv" <<'PY' || fail "a restricted $method run left its task's rows"
import collections, csv, sys
results = list(csv.DictReader(open(sys.argv[1])))
assert len(results) == 132, len(results)
for r in results:
    assert float(r["metric:table_distance"]) == 0, r  # a row's own configuration
lines = collections.Counter((r["task"], r["metric:table_line"]) for r in results)
assert all(n == 1 for n in lines.values()), [k for k, n in lines.items() if n > 1]
print(f"{len(lines)} rows, each once")
PY
done
sed -i 's/^budget = 66$/budget = 67/' "$SCRATCH/restricted-lbo.toml"
set +e
"$LBO_BIN" validate "$SCRATCH/restricted-lbo.toml" 2> "$SCRATCH/r.log"; status=$?
set -e
[ "$status" -eq 2 ] || fail "a restricted budget above the rows: exit $status, expected 2"
grep -qF 'restricted-lbo.toml:21:10: tasks[0].budget: 67 trials are more than the 66 configuration(s) of task "first" in evals.csv, and objective.table_restrict proposes each at most once; lower the budget' "$SCRATCH/r.log" \
  || { cat "$SCRATCH/r.log"; fail "the message does not name the budget"; }
# add-task says the same of a task the table lacks, or a budget above its configurations.
for request in "--name third --budget 3|no row of evals.csv is of task \"third\" (column \"dataset\"); its tasks are \"first\", \"second\"" \
               "--name second --budget 3|the run already has a task named second"; do
  set +e
  "$LBO_BIN" add-task "$SCRATCH/r-lbo/table" ${request%%|*} > /dev/null 2> "$SCRATCH/add.log"; status=$?
  set -e
  [ "$status" -eq 2 ] || { cat "$SCRATCH/add.log"; fail "add-task ${request%%|*}: exit $status, expected 2"; }
  grep -qF "${request#*|}" "$SCRATCH/add.log" || { cat "$SCRATCH/add.log"; fail "add-task ${request%%|*}: not said why"; }
done

# Bad tables: exit 2, the place and the fix, nothing written.
write_job "$SCRATCH/missing.toml" third
set +e
"$LBO_BIN" run "$SCRATCH/missing.toml" --run-root "$SCRATCH/c" 2> "$SCRATCH/c.log"; status=$?
set -e
[ "$status" -eq 2 ] || { cat "$SCRATCH/c.log"; fail "a task the table lacks: exit $status, expected 2"; }
grep -qF 'missing.toml:4:9: objective.table: no row of evals.csv is of task "third" (column "dataset"); its tasks are "first", "second"' "$SCRATCH/c.log" \
  || { cat "$SCRATCH/c.log"; fail "the message does not name the task"; }
[ ! -e "$SCRATCH/c" ] || fail "a bad table wrote $SCRATCH/c"
sed 's/high = 5 }/high = 4 }/' "$SCRATCH/job.toml" > "$SCRATCH/narrow.toml"
set +e
"$LBO_BIN" validate "$SCRATCH/narrow.toml" 2> "$SCRATCH/d.log"; status=$?
set -e
[ "$status" -eq 2 ] || fail "a row outside the space: exit $status, expected 2"
grep -qF "evals.csv:6: y: 5 is above high = 4; fix the row or widen the space, or leave the row out" "$SCRATCH/d.log" \
  || { cat "$SCRATCH/d.log"; fail "the message does not name the row"; }
# The example job on the published DeepAR evaluations reads its table.
"$LBO_BIN" validate "$REPO/jobs/examples/deepar_table.toml" | grep -q ": ok: 6 parameter(s), 11 task(s)" \
  || fail "jobs/examples/deepar_table.toml does not validate"
echo "table runs: nearest rows, failed rows, --sync resume, bad tables, the DeepAR example"
