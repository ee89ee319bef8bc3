#!/usr/bin/env bash
# The same job under `mpirun -n 3` (rank 0 master, 2 worker ranks with 2 slots each): every
# trial once, budget rows per task, trials ran on both worker ranks; the objective reports three
# steps before each ok result, and every one reaches reports.csv through the ranks' batches.
source "$(dirname "$0")/common.sh"
read -r -a mpirun <<< "${LBO_MPIRUN:-mpirun --oversubscribe}"
write_test_job "$SCRATCH/job.toml" 2
sed -i 's|"--via", "file"\]|"--via", "file", "--reports", "3"]|' "$SCRATCH/job.toml"
grep -q -- '"--reports", "3"' "$SCRATCH/job.toml" || fail "the job's command was not changed"
"${mpirun[@]}" -n 3 "$LBO_BIN" run "$SCRATCH/job.toml" --run-root "$SCRATCH/runs" 2> "$SCRATCH/log" \
  || { cat "$SCRATCH/log"; fail "mpirun lbo run exited $?"; }
run="$SCRATCH/runs/it"
python3 "$HERE/check_results.py" "$run/results.csv" first=20 second=15 --workers rank
for rank in 1 2; do
  grep -q ",rank$rank:" "$run/results.csv" || fail "no trial ran on rank $rank"
done
python3 - "$run/results.csv" "$run/reports.csv" <<'PY' || fail "reports.csv does not hold three steps of every ok trial"
import csv, sys
ok = {r["trial"] for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "ok"}
steps = {}
for r in csv.DictReader(open(sys.argv[2])):
    steps.setdefault(r["trial"], []).append(int(r["step"]))
assert ok and set(steps) == ok, (sorted(ok), sorted(steps))
assert all(s == [1, 2, 3] for s in steps.values()), steps
PY
grep -q "on 4 slot(s)" "$SCRATCH/log" || { cat "$SCRATCH/log"; fail "expected 2 ranks x 2 slots"; }

# Early stopping through the ranks: stops decided by the master reach the trial on its rank,
# which ends it; the stopped trials' slots take new trials.
cat > "$SCRATCH/asha.toml" <<JOB
name = "asha"
seed = 4
[objective]
command = ["$LBO_TEST_OBJECTIVE", "--reports", "9", "--report-ms", "30"]
direction = "maximize"
[policy]
surrogate = "random"
[workers]
slots_per_rank = 2
[early_stopping]
rule = "asha"
step_name = "epoch"
max_step = 9
[space]
x = { type = "float", low = 0, high = 1 }
[[tasks]]
name = "a"
budget = 16
JOB
"${mpirun[@]}" -n 3 "$LBO_BIN" run "$SCRATCH/asha.toml" --run-root "$SCRATCH/runs" 2> "$SCRATCH/asha.log" \
  || { cat "$SCRATCH/asha.log"; fail "mpirun lbo run (early stopping) exited $?"; }
python3 - "$SCRATCH/runs/asha/results.csv" <<'PY' || { cat "$SCRATCH/asha.log"; fail "early stopping under mpirun"; }
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 16, len(rows)
stopped = [r for r in rows if r["status"] == "stopped"]
# Judged at a rung (epoch 1 or 3: the reason says which); last_step is the steps it ran, at
# least that far (reports in flight when the stop came count).
judged = [re.search(r"at epoch (\d+) ", r["reason"]) for r in stopped]
assert stopped and all(j and j.group(1) in ("1", "3") for j in judged), stopped
assert all(int(r["last_step"]) >= int(j.group(1)) and r["objective"] for r, j in zip(stopped, judged)), stopped
assert all(r["status"] in ("ok", "stopped") for r in rows), [r["status"] for r in rows]
assert all(r["worker"].startswith("rank") for r in rows)
PY
echo "mpi run ok"
