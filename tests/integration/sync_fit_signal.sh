#!/usr/bin/env bash
# A --sync run fits its model between rounds on a thread of its own, so a stop signal that comes
# during a long fit is taken at once: under SLURM a SIGTERM is followed by SIGKILL after a grace
# period, and a fit of minutes (a transfer model with large earlier tasks, on a loaded node)
# once held the signal until it ended. The run exits 75 and says the fit was cut short; the same
# command then fits again and proposes exactly what an unstopped run proposes.
source "$(dirname "$0")/common.sh"

# Earlier tasks for the transfer model: enough rows that its fit lasts about 10 s (2 cores).
python3 - "$SCRATCH/history.csv" <<'PY'
import csv, math, random, sys
rng = random.Random(5)
with open(sys.argv[1], "w", newline="") as f:
    out = csv.writer(f)
    out.writerow(["task", "x1", "x2", "objective"])
    for t in range(3):
        shift = 0.3 * t
        for _ in range(60):
            x1, x2 = rng.uniform(-5, 10), rng.uniform(0, 15)
            b = (x2 - 5.1 / (4 * math.pi ** 2) * x1 ** 2 + 5 / math.pi * x1 - 6) ** 2 \
                + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1 - shift) + 10
            out.writerow([f"earlier-{t}", f"{x1:.6f}", f"{x2:.6f}", f"{b:.6f}"])
PY

cat > "$SCRATCH/job.toml" <<JOB
name = "fitting"
seed = 3
[objective]
command = ["$LBO_TEST_OBJECTIVE", "--function", "branin"]
direction = "minimize"
[policy]
surrogate = "lbo"
warm_start = ["history.csv"]
[workers]
local_slots = 2
[space]
x1 = { type = "float", low = -5, high = 10 }
x2 = { type = "float", low = 0, high = 15 }
[[tasks]]
name = "branin"
budget = 4
JOB

"$LBO_BIN" run "$SCRATCH/job.toml" --sync --run-root "$SCRATCH/whole" 2> "$SCRATCH/whole.log" \
  || { cat "$SCRATCH/whole.log"; fail "the unstopped --sync run failed"; }

# The first round (2 trials) is committed to results.csv just before its fit starts.
"$LBO_BIN" run "$SCRATCH/job.toml" --sync --run-root "$SCRATCH/parts" 2> "$SCRATCH/parts.log" &
pid=$!
wait_for_rows "$SCRATCH/parts/fitting/results.csv" 2
kill -TERM "$pid"
set +e; wait "$pid"; status=$?; set -e
[ "$status" -eq 75 ] || { cat "$SCRATCH/parts.log"; fail "the --sync run exited $status after SIGTERM, expected 75"; }
grep -q "the run stops while the model fits on the round's results" "$SCRATCH/parts.log" \
  || { cat "$SCRATCH/parts.log"; fail "the stop waited for the fit (or did not say that it cut it short)"; }
[ "$(($(wc -l < "$SCRATCH/parts/fitting/results.csv") - 1))" -eq 2 ] || fail "the stopped run went on past its first round"

"$LBO_BIN" run "$SCRATCH/job.toml" --sync --run-root "$SCRATCH/parts" 2> "$SCRATCH/resumed.log" \
  || { cat "$SCRATCH/resumed.log"; fail "the --sync resume failed"; }
diff <(python3 "$HERE/comparable.py" "$SCRATCH/whole/fitting/results.csv" --keep-order) \
  <(python3 "$HERE/comparable.py" "$SCRATCH/parts/fitting/results.csv" --keep-order) \
  || fail "the run stopped during its fit and resumed differs from the unstopped one"
echo "a stop during a --sync fit is taken at once; the resumed run repeats the unstopped one"
