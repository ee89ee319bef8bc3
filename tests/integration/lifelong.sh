#!/usr/bin/env bash
# Datasets arriving over time, through the lbo binary:
#  1. `lbo add-task` on a stopped run journals the task; the same command runs it on resume.
#  2. A running master (with [schedule] watch and idle_timeout_s) takes `lbo add-task` within
#     seconds and a file dropped into the watched folder, then exits when nothing more comes.
#  3. Bad add-task input: exit 2 with the reason, nothing written.
#  4. `lbo status` and tasks.csv show every task with its origin.
source "$(dirname "$0")/common.sh"
cd "$SCRATCH"
mkdir incoming
cat > job.toml <<JOB
name = "life"
seed = 4
[objective]
command = ["$LBO_TEST_OBJECTIVE"]
direction = "maximize"
[policy]
surrogate = "gp"
initial_random = 2
[schedule]
watch = "incoming"
default_budget = 3
idle_timeout_s = 3
[workers]
local_slots = 2
[space]
x = { type = "float", low = 0, high = 1 }
sleep_ms = { type = "int", low = 100, high = 200 }
[[tasks]]
name = "first"
budget = 4
JOB

# 1. Stopped run: add-task writes the journal; the same command continues with the task.
"$LBO_BIN" run job.toml > run1.log 2>&1 || fail "first run failed: $(cat run1.log)"
"$LBO_BIN" add-task runs/life --name later --budget 2 > add.log 2>&1 || fail "add-task on a stopped run failed: $(cat add.log)"
"$LBO_BIN" run job.toml > run2.log 2>&1 || fail "resumed run failed: $(cat run2.log)"
[ "$(grep -c '^[0-9]*,later,' runs/life/results.csv)" = 2 ] || fail "task later did not run its 2 trials: $(cat runs/life/results.csv)"

# 3. Bad input: a taken name, a missing dataset, a folder that is not a run.
set +e
"$LBO_BIN" add-task runs/life --name later > bad1.log 2>&1; s1=$?
"$LBO_BIN" add-task runs/life --name other --dataset missing.csv > bad2.log 2>&1; s2=$?
"$LBO_BIN" add-task incoming --name other > bad3.log 2>&1; s3=$?
set -e
[ "$s1" = 2 ] && grep -q "already has a task named later" bad1.log || fail "taken name: status $s1: $(cat bad1.log)"
[ "$s2" = 2 ] && grep -q "missing.csv" bad2.log || fail "missing dataset: status $s2: $(cat bad2.log)"
[ "$s3" = 2 ] || fail "not a run directory: status $s3: $(cat bad3.log)"
"$LBO_BIN" status runs/life | grep -q "^other" && fail "a refused task was recorded"

# 2. Running master: a request and a watched file while it runs, then the idle timeout.
"$LBO_BIN" add-task runs/life --name more --budget 3 > /dev/null 2>&1 || fail "second add-task failed"
"$LBO_BIN" run job.toml > run3.log 2>&1 &
master=$!
for _ in $(seq 100); do grep -q "resuming run life" run3.log 2>/dev/null && break; sleep 0.1; done
"$LBO_BIN" add-task runs/life --name live --budget 2 > live.log 2>&1 || fail "add-task on a running run failed: $(cat live.log)"
grep -q "added to the running run life" live.log || fail "no confirmation from the running master: $(cat live.log)"
echo "data" > incoming/.year-2006.csv.part
mv incoming/.year-2006.csv.part incoming/year-2006.csv
wait $master || fail "the running master failed: $(cat run3.log)"
grep -q "task year-2006 added (watch), budget 3" run3.log || fail "the watched file was not taken: $(cat run3.log)"
grep -q "no new task came: exiting" run3.log || fail "the idle timeout did not end the run: $(cat run3.log)"
for t in first:4 later:2 more:3 live:2 year-2006:3; do
  n=$(grep -c "^[0-9]*,${t%%:*}," runs/life/results.csv || true)
  [ "$n" = "${t##*:}" ] || fail "task ${t%%:*}: $n rows, expected ${t##*:}"
done

# 4. Reports.
"$LBO_BIN" status runs/life > status.txt
grep -q "^year-2006 *watch " status.txt || fail "status lacks the watched task's origin: $(cat status.txt)"
grep -q "^live *add-task " status.txt || fail "status lacks the added task's origin: $(cat status.txt)"
[ "$(tail -n +2 runs/life/tasks.csv | wc -l)" = 5 ] || fail "tasks.csv should have 5 rows: $(cat runs/life/tasks.csv)"
echo "lifelong: ok"
