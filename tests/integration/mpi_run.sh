#!/usr/bin/env bash
# The same job under `mpirun -n 3` (rank 0 master, 2 worker ranks with 2 slots each): every
# trial once, budget rows per task, trials ran on both worker ranks.
source "$(dirname "$0")/common.sh"
read -r -a mpirun <<< "${LBO_MPIRUN:-mpirun --oversubscribe}"
write_test_job "$SCRATCH/job.toml" 2
"${mpirun[@]}" -n 3 "$LBO_BIN" run "$SCRATCH/job.toml" --run-root "$SCRATCH/runs" 2> "$SCRATCH/log" \
  || { cat "$SCRATCH/log"; fail "mpirun lbo run exited $?"; }
run="$SCRATCH/runs/it"
python3 "$HERE/check_results.py" "$run/results.csv" first=20 second=15 --workers rank
for rank in 1 2; do
  grep -q ",rank$rank:" "$run/results.csv" || fail "no trial ran on rank $rank"
done
grep -q "on 4 slot(s)" "$SCRATCH/log" || { cat "$SCRATCH/log"; fail "expected 2 ranks x 2 slots"; }
echo "mpi run ok"
