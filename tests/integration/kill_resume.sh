#!/usr/bin/env bash
# A --sync run killed with SIGKILL at any moment and resumed makes exactly the trials of the run
# that was never stopped: the same configurations in the same order, the same values, stops,
# pauses and promotions. Eight jobs: a GP on 4 slots; GP-Hedge over two open tasks; ASHA stopping
# trials; Hyperband promoting them; the predictive rule stopping them on forecasts learned from
# the curves that ended before (the second task's from the first's); a tabulated job on 8
# simulated slots; a GP learning where a corner of the space fails and where a limit on a
# reported metric is kept, over two tasks in sequence; two objectives over two tasks. Each is
# killed right after a journal record drawn at random (LBO_TEST_KILL_AFTER_RECORD: every point
# of a run is reachable, whatever the machine's load), some of them twice (the resumed run
# killed again), and at a random moment by the clock. The draws print their seed;
# LBO_KILL_SEED=N repeats them.
source "$(dirname "$0")/common.sh"

seed=${LBO_KILL_SEED:-$RANDOM}
echo "kill_resume: LBO_KILL_SEED=$seed"
draw() { python3 -c "import random, sys; r = random.Random('$seed ' + sys.argv[1]); print(r.randint(1, int(sys.argv[2])))" "$@"; }

objective() { echo "\"$LBO_TEST_OBJECTIVE\", \"--function\", \"branin\"$1"; }
space='x1 = { type = "float", low = -5, high = 10 }
x2 = { type = "float", low = 0, high = 15 }'

cat > "$SCRATCH/plain.toml" <<JOB
name = "plain"
seed = 7
[objective]
command = [$(objective ', "--sleep-ms", "20"')]
direction = "minimize"
[policy]
surrogate = "gp"
[workers]
local_slots = 4
[space]
$space
[[tasks]]
name = "a"
budget = 28
JOB

# Two objectives by name (a trade-off of Branin against the parameters' size), two tasks: the
# Pareto column and the scalarized proposals are functions of the journal too.
cat > "$SCRATCH/pareto.toml" <<JOB
name = "pareto"
seed = 9
[objective]
command = [$(objective ', "--pareto", "on"')]
objectives = [{ name = "value", direction = "minimize" }, { name = "cost", direction = "minimize" }]
[policy]
surrogate = "gp"
[workers]
local_slots = 3
[space]
$space
[[tasks]]
name = "a"
budget = 14
[[tasks]]
name = "b"
budget = 10
JOB

cat > "$SCRATCH/failing.toml" <<JOB
name = "failing"
seed = 5
[objective]
command = [$(objective ', "--fail-corner", "0.65", "--metrics", "on"')]
direction = "minimize"
[policy]
surrogate = "gp"
[workers]
local_slots = 3
[space]
$space
[[constraints]]
name = "twice"
max = 60
[[tasks]]
name = "a"
budget = 15
[[tasks]]
name = "b"
budget = 12
JOB

cat > "$SCRATCH/hedge.toml" <<JOB
name = "hedge"
seed = 3
[objective]
command = [$(objective ', "--sleep-ms", "10"')]
direction = "minimize"
[policy]
surrogate = "gp"
acquisition = "hedge"
initial_random = 3
[schedule]
concurrent_tasks = 2
[workers]
local_slots = 3
[space]
$space
[[tasks]]
name = "a"
budget = 12
[[tasks]]
name = "b"
budget = 12
JOB

for rule in "asha stop" "hyperband promotion" "predictive stop"; do
  set -- $rule
  cat > "$SCRATCH/$1.toml" <<JOB
name = "$1"
seed = 5
[objective]
command = [$(objective ', "--reports", "9", "--report-ms", "5"')]
direction = "minimize"
[policy]
surrogate = "gp"
initial_random = 4
[workers]
local_slots = 3
[early_stopping]
rule = "$1"
mode = "$2"
step_name = "epoch"
max_step = 9
[space]
$space
[[tasks]]
name = "a"
budget = 15
[[tasks]]
name = "b"
budget = 9
JOB
done

python3 - "$SCRATCH/evals.csv" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("task,x,opt,score,seconds\n")
    for task, shift in (("first", 0.3), ("second", 0.6)):
        for i in range(41):
            for opt, bonus in (("a", 0), ("b", 0.1), ("c", 0.05)):
                f.write(f"{task},{i / 40},{opt},{-(i / 40 - shift) ** 2 + bonus!r},{100 + 10 * i}\n")
PY
cat > "$SCRATCH/simulated.toml" <<JOB
name = "simulated"
seed = 5
[objective]
table = "$SCRATCH/evals.csv"
table_objective = "score"
table_time = "seconds"
direction = "maximize"
[policy]
surrogate = "gp"
acquisition = "hedge"
initial_random = 3
[space]
x = { type = "float", low = 0, high = 1 }
opt = { type = "categorical", choices = ["a", "b", "c"] }
[[tasks]]
name = "first"
budget = 30
[[tasks]]
name = "second"
budget = 30
JOB

records() {  # records JOURNAL: how many records it holds (8-byte header, then length, CRC, payload)
  python3 - "$1" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
at, n = 8, 0
while at + 8 <= len(data):
    at += 8 + struct.unpack_from("<I", data, at)[0]
    n += 1
print(n)
PY
}

run() {  # run JOB ROOT LOG [ARGS...]: one lbo run --sync; its exit status
  local job=$1 root=$2 log=$3
  shift 3
  local status=0
  # In a subshell whose stderr is the log: bash's "Killed" for a killed lbo goes there too.
  ( "$LBO_BIN" run "$job" --sync --run-root "$root" "$@" >> "$log" 2>&1 ) 2>> "$log" || status=$?
  return $status
}

compare() {  # compare REFERENCE ROOT NAME WHAT
  local this
  this=$(python3 "$HERE/comparable.py" "$2/$3/results.csv" --keep-order)
  [ "$1" == "$this" ] && return 0
  diff <(echo "$1") <(echo "$this") | head -6 >&2 || true
  tail -20 "$2.log" >&2 || true
  fail "$3: $4 differs from the run that was never stopped (LBO_KILL_SEED=$seed)"
}

kills=0
for name in plain hedge asha hyperband predictive simulated failing pareto; do
  job=$SCRATCH/$name.toml
  extra=()
  [ "$name" == simulated ] && extra=(--simulate 8)
  start=$(date +%s.%N)
  run "$job" "$SCRATCH/$name-whole" "$SCRATCH/$name-whole.log" "${extra[@]}" || { cat "$SCRATCH/$name-whole.log"; fail "$name: the unstopped run failed"; }
  whole_s=$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$start" "$(date +%s.%N)")
  reference=$(python3 "$HERE/comparable.py" "$SCRATCH/$name-whole/$name/results.csv" --keep-order)
  total=$(records "$SCRATCH/$name-whole/$name/journal.lbo")
  # Four kills after a record (the last two killed again after the resume) and one by the clock
  # per job and run: the draws change with every run's seed, so CI covers more points over its
  # runs than one run could (scripts/test.sh keeps under 20 minutes on 2 cores).
  for i in 1 2 3 4; do
    root=$SCRATCH/$name-$i
    first=$(draw "$name $i" "$total")
    second=$([ "$i" -gt 2 ] && draw "$name $i again" "$((total / 2))" || echo 0)
    LBO_TEST_KILL_AFTER_RECORD=$first run "$job" "$root" "$root.log" "${extra[@]}" && continue  # past its end
    if [ "$second" -gt 0 ]; then LBO_TEST_KILL_AFTER_RECORD=$second run "$job" "$root" "$root.log" "${extra[@]}" || true; fi
    run "$job" "$root" "$root.log" "${extra[@]}" || { tail -20 "$root.log"; fail "$name: the resumed run failed"; }
    compare "$reference" "$root" "$name" "killed after record $first${second:+ and then $second}"
    kills=$((kills + 1))
  done
  # By the clock: SIGKILL at a moment drawn within the unstopped run's time.
  for i in 1; do
    root=$SCRATCH/$name-clock-$i
    at=$(python3 -c "import random; print(random.Random('$seed $name clock $i').uniform(0.05, $whole_s))")
    "$LBO_BIN" run "$job" --sync --run-root "$root" "${extra[@]}" >> "$root.log" 2>&1 &
    pid=$!
    sleep "$at"
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    run "$job" "$root" "$root.log" "${extra[@]}" || { tail -20 "$root.log"; fail "$name: the run resumed after a kill at $at s failed"; }
    compare "$reference" "$root" "$name" "killed at $at s"
    kills=$((kills + 1))
  done
done
echo "$kills kill -9 resumes of 8 --sync jobs (plain, GP-Hedge, ASHA, Hyperband promotion, predictive, simulated, failing and limited, two objectives): all exact"
