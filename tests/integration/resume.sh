#!/usr/bin/env bash
# Never lose work:
#  1. kill -9 of lbo at random moments, then the same command, until the run completes: each
#     task ends with exactly its budget, no trial twice, every committed result unchanged, no
#     objective process left (several seeds).
#  2. Under mpirun: SIGUSR1 (the batch system's walltime warning) stops the run with exit 75;
#     it resumes on fewer ranks; kill -9 of the whole mpirun; it finishes on local slots.
#  3. A job whose space changed cannot resume (exit 2, reasons named, nothing written); --fresh
#     moves the old run aside.
#  4. --sync with a fixed seed: stopped and resumed, the run proposes what an unstopped one does.
#  5. Damage: a torn newest checkpoint and a torn journal tail are survived with warnings that
#     name the files; with nothing valid left, exit 1 and no fresh start. `lbo status` reads it.
source "$(dirname "$0")/common.sh"
read -r -a mpirun <<< "${LBO_MPIRUN:-mpirun --oversubscribe}"

write_job() {  # write_job FILE SEED [SYNC_SLEEP]
  cat > "$1" <<JOB
name = "resume"
seed = $2
grace_s = 0.5
checkpoint_every_s = 0.3
[objective]
command = ["$LBO_TEST_OBJECTIVE", "--function", "branin"]
direction = "minimize"
retries = 1
[policy]
surrogate = "gp"
initial_random = 4
[workers]
local_slots = 3
slots_per_rank = 2
[space]
x1 = { type = "float", low = -5, high = 10 }
x2 = { type = "float", low = 0, high = 15 }
sleep_ms = { type = "int", low = ${3:-10}, high = ${4:-120} }
outcome = { type = "categorical", choices = ["ok", "ok2", "fail"] }
[[tasks]]
name = "first"
budget = 30
[[tasks]]
name = "second"
budget = 20
JOB
}


check_complete() {  # check_complete RESULTS
  python3 - "$1" <<'PY' || fail "the resumed run did not end with exactly its budgets"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ids = sorted(int(r["trial"]) for r in rows)
per_task = {}
for r in rows:
    per_task[r["task"]] = per_task.get(r["task"], 0) + 1
    if r["status"] != ("failed" if r["outcome"] == "fail" else "ok"):
        sys.exit(f"trial {r['trial']}: outcome {r['outcome']} but status {r['status']}")
assert ids == list(range(len(ids))), f"trial ids {ids}"
assert per_task == {"first": 30, "second": 20}, per_task
PY
}

# 1. kill -9 at random moments, several seeds.
for seed in 1 2 3; do
  root="$SCRATCH/kill-$seed"
  write_job "$SCRATCH/kill-$seed.toml" "$seed"
  RANDOM=$seed
  before=""
  for round in $(seq 40); do
    "$LBO_BIN" run "$SCRATCH/kill-$seed.toml" --run-root "$root" > /dev/null 2>> "$SCRATCH/kill-$seed.log" &
    pid=$!
    sleep "0.$((RANDOM % 8 + 1))"
    if ! kill -9 "$pid" 2> /dev/null; then
      wait "$pid" || fail "seed $seed round $round: lbo failed: $(tail -3 "$SCRATCH/kill-$seed.log")"
      break
    fi
    wait "$pid" 2> /dev/null || true
    now=$(committed "$root/resume/results.csv")
    # Whatever was committed before this kill is still there, unchanged.
    keeps "$before" "$now" "seed $seed round $round"
    before=$now
  done
  "$LBO_BIN" run "$SCRATCH/kill-$seed.toml" --run-root "$root" > /dev/null 2>> "$SCRATCH/kill-$seed.log" \
    || fail "seed $seed: the last resume failed"
  check_complete "$root/resume/results.csv"
  echo "kill -9 seed $seed: complete after $round run(s)"
done
sleep 0.5
[ "$(objectives_left)" -eq 0 ] || fail "objective processes outlived the kill -9 rounds"

# 2. Under mpirun: SIGUSR1 → 75; resume on fewer ranks; kill -9 of mpirun; finish locally.
if command -v "${mpirun[0]}" > /dev/null; then
  write_job "$SCRATCH/mpi.toml" 7 200 400
  root="$SCRATCH/mpi"
  "${mpirun[@]}" -n 3 "$LBO_BIN" run "$SCRATCH/mpi.toml" --run-root "$root" > "$SCRATCH/mpi1.log" 2>&1 &
  pid=$!
  sleep 2.5
  kill -USR1 "$pid"
  set +e; wait "$pid"; status=$?; set -e
  [ "$status" -eq 75 ] || { cat "$SCRATCH/mpi1.log"; fail "mpirun exited $status after SIGUSR1, expected 75"; }
  "${mpirun[@]}" -n 2 "$LBO_BIN" run "$SCRATCH/mpi.toml" --run-root "$root" > "$SCRATCH/mpi2.log" 2>&1 &
  pid=$!
  sleep 2.5
  kill -9 "$pid"
  wait "$pid" 2> /dev/null || true
  # The ranks notice that their mpirun is gone and exit; until then the master holds the lock.
  for _ in $(seq 100); do
    "$LBO_BIN" status "$root/resume" | grep -q "^state: not running" && break
    sleep 0.1
  done
  "$LBO_BIN" run "$SCRATCH/mpi.toml" --run-root "$root" 2> "$SCRATCH/mpi3.log" || { cat "$SCRATCH/mpi3.log"; fail "local resume after mpirun failed"; }
  check_complete "$root/resume/results.csv"
  grep -q ",rank" "$root/resume/results.csv" && grep -q ",local:" "$root/resume/results.csv" \
    || fail "expected trials on MPI ranks and on local slots"
  sleep 0.5
  [ "$(objectives_left)" -eq 0 ] || fail "objective processes left after the MPI rounds"
  echo "mpirun: SIGUSR1 stop, resume on fewer ranks, kill -9, local finish ok"
fi

# 3. An incompatible job cannot resume; --fresh moves the old run aside.
write_job "$SCRATCH/changed.toml" 1
sed -i 's/x1 = { type = "float", low = -5, high = 10 }/x1 = { type = "float", low = -5, high = 5 }/' "$SCRATCH/changed.toml"
before=$(ls -l --time-style=full-iso "$SCRATCH/kill-1/resume")
set +e; "$LBO_BIN" run "$SCRATCH/changed.toml" --run-root "$SCRATCH/kill-1" 2> "$SCRATCH/changed.log"; status=$?; set -e
[ "$status" -eq 2 ] || { cat "$SCRATCH/changed.log"; fail "an incompatible resume exited $status, expected 2"; }
grep -q "space.x1: float \[-5, 10\] → float \[-5, 5\]" "$SCRATCH/changed.log" || { cat "$SCRATCH/changed.log"; fail "the change is not named"; }
grep -q -- "--fresh" "$SCRATCH/changed.log" || fail "no hint at --fresh"
"$LBO_BIN" run "$SCRATCH/changed.toml" --run-root "$SCRATCH/kill-1" --fresh 2> "$SCRATCH/fresh.log" || fail "--fresh failed"
ls -d "$SCRATCH"/kill-1/resume.* > /dev/null || fail "--fresh did not keep the old run"
echo "incompatible resume refused; --fresh ok"

# 4. Exact resume in --sync mode.
write_job "$SCRATCH/sync.toml" 11 30 30
sed -i 's/high = 30 }/high = 40 }/; s/retries = 1/retries = 0/' "$SCRATCH/sync.toml"
"$LBO_BIN" run "$SCRATCH/sync.toml" --sync --run-root "$SCRATCH/whole" 2> /dev/null || fail "unstopped --sync run failed"
"$LBO_BIN" run "$SCRATCH/sync.toml" --sync --run-root "$SCRATCH/parts" 2> /dev/null &
pid=$!
for _ in $(seq 500); do
  [ -f "$SCRATCH/parts/resume/results.csv" ] && [ "$(wc -l < "$SCRATCH/parts/resume/results.csv")" -ge 12 ] && break
  sleep 0.02
done
kill -TERM "$pid"
set +e; wait "$pid"; status=$?; set -e
[ "$status" -eq 75 ] || fail "the --sync run exited $status after SIGTERM, expected 75"
"$LBO_BIN" run "$SCRATCH/sync.toml" --sync --run-root "$SCRATCH/parts" 2> /dev/null || fail "--sync resume failed"
# trial, task, status, objective and the parameters (not attempts, duration_s, worker, times, places)
diff <(python3 "$HERE/comparable.py" "$SCRATCH/whole/resume/results.csv") <(python3 "$HERE/comparable.py" "$SCRATCH/parts/resume/results.csv") \
  || fail "the stopped and resumed --sync run differs from the unstopped one"
echo "exact --sync resume ok"

# 5. Damaged state.
root="$SCRATCH/damaged"
write_job "$SCRATCH/damaged.toml" 5 20 60
sed -i 's/budget = 30/budget = 60/' "$SCRATCH/damaged.toml"
"$LBO_BIN" run "$SCRATCH/damaged.toml" --run-root "$root" > /dev/null 2>&1 &
pid=$!
run="$root/resume"
# Killed mid-run once a checkpoint is written and a quarter of the trials are in (not after a
# fixed time: with failures learned the run avoids its failing configurations, and how fast it
# runs depends on that and on the machine).
for _ in $(seq 600); do
  ls "$run"/checkpoint.*.lbo > /dev/null 2>&1 && [ -f "$run/results.csv" ] && [ "$(wc -l < "$run/results.csv")" -gt 20 ] && break
  sleep 0.05
done
kill -9 "$pid" 2> /dev/null || fail "the damaged run ended before it was killed"
wait "$pid" 2> /dev/null || true
"$LBO_BIN" status "$run" > "$SCRATCH/status.txt" || fail "lbo status failed"
grep -q "^state: not running" "$SCRATCH/status.txt" || { cat "$SCRATCH/status.txt"; fail "status: state"; }
grep -q "^first " "$SCRATCH/status.txt" || { cat "$SCRATCH/status.txt"; fail "status: no task line"; }
newest=$(ls "$run"/checkpoint.*.lbo | sort -t. -k2 -n | tail -1)
truncate -s -7 "$newest"
printf 'torn' >> "$run/journal.lbo"
"$LBO_BIN" run "$SCRATCH/damaged.toml" --run-root "$root" 2> "$SCRATCH/damaged.log" || { cat "$SCRATCH/damaged.log"; fail "resume over damage failed"; }
grep -q "$(basename "$newest"): truncated" "$SCRATCH/damaged.log" || { cat "$SCRATCH/damaged.log"; fail "no warning for the torn checkpoint"; }
grep -q "journal.lbo: dropped 4 bytes" "$SCRATCH/damaged.log" || { cat "$SCRATCH/damaged.log"; fail "no warning for the torn journal"; }
python3 - "$run/results.csv" <<'PY' || fail "the run did not complete over the damage"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
per_task = {}
for r in rows: per_task[r["task"]] = per_task.get(r["task"], 0) + 1
assert per_task == {"first": 60, "second": 20}, per_task
assert sorted(int(r["trial"]) for r in rows) == list(range(80))
PY
for f in "$run"/checkpoint.*.lbo; do printf 'garbage' > "$f"; done
printf 'garbage' > "$run/journal.lbo"
set +e; "$LBO_BIN" run "$SCRATCH/damaged.toml" --run-root "$root" 2> "$SCRATCH/ruined.log"; status=$?; set -e
[ "$status" -eq 1 ] || { cat "$SCRATCH/ruined.log"; fail "nothing valid left: exit $status, expected 1"; }
grep -q "nothing to resume from" "$SCRATCH/ruined.log" || { cat "$SCRATCH/ruined.log"; fail "no clear message"; }
[ "$(cat "$run/journal.lbo")" = "garbage" ] || fail "the ruined run was overwritten"
echo "damaged state ok"
