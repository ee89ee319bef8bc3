#!/usr/bin/env bash
# The run lock (issue 31): removing the `lock` file of a live run (a cleanup of "stale locks")
# lets no second master in. The second `lbo run` is refused (exit 2) and writes nothing; the
# live master says the file was removed and writes it again; the run ends with every trial run
# once, by one master.
source "$(dirname "$0")/common.sh"

cat > "$SCRATCH/job.toml" <<JOB
name = "lk"
seed = 5
[objective]
command = ["$LBO_TEST_OBJECTIVE"]
direction = "minimize"
[workers]
local_slots = 2
[policy]
surrogate = "random"
[space]
x = { type = "float", low = 0, high = 1 }
sleep_ms = { type = "int", low = 150, high = 250 }
[[tasks]]
name = "a"
budget = 80
JOB

"$LBO_BIN" run "$SCRATCH/job.toml" --run-root "$SCRATCH/runs" 2> "$SCRATCH/first.log" &
first=$!
wait_for_rows "$SCRATCH/runs/lk/results.csv" 2
rm "$SCRATCH/runs/lk/lock"
journal_before=$(stat -c %s "$SCRATCH/runs/lk/journal.lbo")
status=0
"$LBO_BIN" run "$SCRATCH/job.toml" --run-root "$SCRATCH/runs" 2> "$SCRATCH/second.log" || status=$?
[ "$status" -eq 2 ] || { cat "$SCRATCH/second.log"; fail "a second lbo run of a live run exited $status, not 2"; }
grep -q "is in use by a running lbo" "$SCRATCH/second.log" || { cat "$SCRATCH/second.log"; fail "the refusal does not say why"; }
"$LBO_BIN" status "$SCRATCH/runs/lk" | grep -q "^state: running" || { "$LBO_BIN" status "$SCRATCH/runs/lk"; fail "status of the live run"; }
wait "$first" || { cat "$SCRATCH/first.log"; fail "the first lbo run failed"; }
grep -q "lock was removed or replaced while this lbo holds the run; lbo wrote it again" "$SCRATCH/first.log" \
  || { cat "$SCRATCH/first.log"; fail "the live master did not say the lock file was removed"; }
head -1 "$SCRATCH/runs/lk/lock" | grep -q "^pid $first on " || { cat "$SCRATCH/runs/lk/lock"; fail "the lock file does not name the master"; }
[ "$(grep -c "^resuming run\|resuming run" "$SCRATCH/first.log")" -eq 0 ] || fail "the first master resumed?"
python3 "$HERE/check_results.py" "$SCRATCH/runs/lk/results.csv" a=80
python3 - "$SCRATCH/runs/lk/results.csv" <<'PY' || fail "a trial ran under two masters"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
sys.exit(0 if all(r["attempts"] == "1" for r in rows) and len({r["trial"] for r in rows}) == 80 else 1)
PY
[ "$(stat -c %s "$SCRATCH/runs/lk/journal.lbo")" -gt "$journal_before" ] || fail "the journal did not grow"
echo "a removed lock file let no second master in"

# lbo add-task racing the run's end (issue 31: it waited its whole 30 s for a master that had
# ended, and the next start left a .reply nobody read). The master is stopped so that it cannot
# read the request, then killed: add-task sees the lock free, adds the task to the stopped run
# itself, and the next start runs it.
"$LBO_BIN" run "$SCRATCH/job.toml" --run-root "$SCRATCH/race" 2> "$SCRATCH/race.log" &
master=$!
wait_for_rows "$SCRATCH/race/lk/results.csv" 2
kill -STOP "$master"
start=$(date +%s%N)
"$LBO_BIN" add-task "$SCRATCH/race/lk" --name late --budget 3 > "$SCRATCH/add.log" 2>&1 &
adder=$!
for _ in $(seq 100); do ls "$SCRATCH/race/lk/requests/"*.request > /dev/null 2>&1 && break; sleep 0.05; done
kill -KILL "$master"
wait "$adder" || { cat "$SCRATCH/add.log"; fail "add-task failed after the master ended"; }
waited_ms=$((($(date +%s%N) - start) / 1000000))
[ "$waited_ms" -lt 10000 ] || fail "add-task waited ${waited_ms} ms for a master that had ended"
grep -q "task late added to the stopped run in .* (its master ended before it read the request)" "$SCRATCH/add.log" \
  || { cat "$SCRATCH/add.log"; fail "add-task did not add the task to the stopped run"; }
sed -i 's/^budget = 80/budget = 6/' "$SCRATCH/job.toml"
"$LBO_BIN" run "$SCRATCH/job.toml" --run-root "$SCRATCH/race" 2> "$SCRATCH/race2.log" || { cat "$SCRATCH/race2.log"; fail "the resume failed"; }
[ "$(grep -c ',late,ok,' "$SCRATCH/race/lk/results.csv")" -eq 3 ] || fail "the added task did not run"
[ -z "$(ls -A "$SCRATCH/race/lk/requests")" ] || { ls -l "$SCRATCH/race/lk/requests"; fail "requests left behind"; }
echo "add-task after its master ended: added in ${waited_ms} ms"
