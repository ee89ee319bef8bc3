#!/usr/bin/env bash
# --no-lock (issue 16 §5), for filesystems without file locks:
#  1. `lbo run --no-lock` says so in its log and runs; `lbo status` cannot tell whether a live
#     lbo uses the folder, and says so instead of "running" or "not running".
#  2. `lbo add-task --no-lock` hands the task to the running master, which takes it.
#  3. A later run with the lock makes the folder's state known again.
source "$(dirname "$0")/common.sh"

cat > "$SCRATCH/job.toml" <<JOB
name = "nl"
seed = 2
[objective]
command = ["$LBO_TEST_OBJECTIVE"]
direction = "minimize"
[workers]
local_slots = 2
[policy]
surrogate = "random"
[schedule]
default_budget = 2
idle_timeout_s = 3
[space]
x = { type = "float", low = 0, high = 1 }
sleep_ms = { type = "int", low = 200, high = 300 }
[[tasks]]
name = "a"
budget = 8
JOB

"$LBO_BIN" run "$SCRATCH/job.toml" --run-root "$SCRATCH/runs" --no-lock 2> "$SCRATCH/run.log" &
pid=$!
for _ in $(seq 300); do [ -f "$SCRATCH/runs/nl/journal.lbo" ] && break; sleep 0.1; done
"$LBO_BIN" status "$SCRATCH/runs/nl" > "$SCRATCH/status.txt" || fail "lbo status failed"
grep -qE "^state: unknown \(the last lbo, pid $pid on .*, ran with --no-lock; lbo cannot tell whether a live lbo uses the folder\)" \
  "$SCRATCH/status.txt" || { cat "$SCRATCH/status.txt"; fail "status of a --no-lock run"; }
"$LBO_BIN" add-task "$SCRATCH/runs/nl" --name later --no-lock > "$SCRATCH/add.log" 2>&1 \
  || { cat "$SCRATCH/add.log"; fail "add-task --no-lock failed"; }
grep -q "task later added to the running run nl" "$SCRATCH/add.log" || { cat "$SCRATCH/add.log"; fail "the master did not take the task"; }
wait "$pid" || { cat "$SCRATCH/run.log"; fail "lbo run --no-lock failed"; }
grep -q -- "--no-lock: $SCRATCH/runs/nl is not locked; no other lbo may use it while this one runs" "$SCRATCH/run.log" \
  || { cat "$SCRATCH/run.log"; fail "the log does not say the folder is not locked"; }
python3 "$HERE/check_results.py" "$SCRATCH/runs/nl/results.csv" a=8 later=2
echo "--no-lock run and add-task ok"

"$LBO_BIN" run "$SCRATCH/job.toml" --run-root "$SCRATCH/runs" 2> "$SCRATCH/again.log" || { cat "$SCRATCH/again.log"; fail "run with the lock failed"; }
"$LBO_BIN" status "$SCRATCH/runs/nl" | grep -q "^state: not running (last held by pid [0-9]* on [^(,]*, which ended)$" \
  || { "$LBO_BIN" status "$SCRATCH/runs/nl"; fail "status after a run with the lock"; }
echo "status ok"
