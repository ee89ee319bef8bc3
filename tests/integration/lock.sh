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
