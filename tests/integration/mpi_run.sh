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
echo "mpi run ok"
