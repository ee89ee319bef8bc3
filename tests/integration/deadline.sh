#!/usr/bin/env bash
# The deadline (issue 16 §4):
#  1. `lbo run --deadline +6s` on trials of about 1 s stops itself before the deadline: exit 75
#     without a signal, the log names the deadline and its source and the command that resumes
#     (the unit tests check which trials start). A resume 1.5 s before its deadline starts no
#     trial and says why. A resume under SLURM (SLURM_JOB_END_TIME an hour away) names that
#     source and completes the budget, every trial once, the results of the first part kept.
#  2. A bad --deadline or LBO_DEADLINE exits 2, names the option and the accepted forms, and
#     writes nothing.
source "$(dirname "$0")/common.sh"
unset LBO_DEADLINE SLURM_JOB_ID SLURM_JOB_END_TIME

cat > "$SCRATCH/job.toml" <<JOB
name = "dl"
seed = 4
grace_s = 1
[objective]
command = ["$LBO_TEST_OBJECTIVE"]
direction = "minimize"
[policy]
surrogate = "random"
[workers]
local_slots = 2
[space]
x = { type = "float", low = 0, high = 1 }
sleep_ms = { type = "int", low = 900, high = 1100 }
[[tasks]]
name = "a"
budget = 14
JOB

# 1. Stop before the deadline, then resume.
set +e
"$LBO_BIN" run "$SCRATCH/job.toml" --run-root "$SCRATCH/runs" --deadline +6s 2> "$SCRATCH/first.log"
status=$?
set -e
[ "$status" -eq 75 ] || { cat "$SCRATCH/first.log"; fail "lbo run --deadline +6s exited $status, expected 75"; }
expect_line() {  # expect_line LOG REGEX
  grep -qE -- "$2" "$1" || { cat "$1"; fail "no line matching '$2' in $1"; }
}
expect_line "$SCRATCH/first.log" "allocation ends [0-9-]+T[0-9:]+Z \(--deadline\); trials that cannot finish by then less grace_s 1 s are not started"
expect_line "$SCRATCH/first.log" "deadline: no trial has ended yet and the objective has no timeout_s"
expect_line "$SCRATCH/first.log" "stopping for the deadline: "
expect_line "$SCRATCH/first.log" "resume with: .* --deadline \+6s"
if grep -q "received SIG" "$SCRATCH/first.log"; then cat "$SCRATCH/first.log"; fail "a signal was reported"; fi
rows=$(($(wc -l < "$SCRATCH/runs/dl/results.csv") - 1))
[ "$rows" -ge 2 ] && [ "$rows" -lt 14 ] || { cat "$SCRATCH/first.log"; fail "$rows trials before the deadline"; }
[ "$(objectives_left)" -eq 0 ] || fail "objective processes left after the deadline stop"
echo "deadline stop ok ($rows trials)"
kept=$(committed "$SCRATCH/runs/dl/results.csv")

# 1.5 s before the deadline, less grace_s 1: no trial of 0.9 s or more fits (by the first part's).
set +e
LBO_DEADLINE=+1.5 "$LBO_BIN" run "$SCRATCH/job.toml" --run-root "$SCRATCH/runs" 2> "$SCRATCH/short.log"
status=$?
set -e
[ "$status" -eq 75 ] || { cat "$SCRATCH/short.log"; fail "a resume 1.5 s before its deadline exited $status, expected 75"; }
expect_line "$SCRATCH/short.log" "allocation ends [0-9T:-]+Z \(LBO_DEADLINE\)"
expect_line "$SCRATCH/short.log" "task a: not starting trials: a trial takes ~[01]\.[0-9]+ s \((longest|90th percentile) of [0-9]+ trials\), [0-9.]+ s left before the deadline [0-9T:-]+Z less grace_s 1"
expect_line "$SCRATCH/short.log" "stopping for the deadline: no trial can finish in the [0-9.]+ s left before the deadline [0-9T:-]+Z \(LBO_DEADLINE\) less grace_s 1: no new trials; none is running"
[ "$(committed "$SCRATCH/runs/dl/results.csv")" = "$kept" ] || fail "the resume 1.5 s before its deadline changed results.csv"
echo "short resume ok"

SLURM_JOB_ID=4242 SLURM_JOB_END_TIME=$(( $(date +%s) + 3600 )) \
  "$LBO_BIN" run "$SCRATCH/job.toml" --run-root "$SCRATCH/runs" 2> "$SCRATCH/resume.log" \
  || { cat "$SCRATCH/resume.log"; fail "the resume failed"; }
expect_line "$SCRATCH/resume.log" "allocation ends [0-9T:-]+Z \(SLURM_JOB_END_TIME\)"
python3 "$HERE/check_results.py" "$SCRATCH/runs/dl/results.csv" a=14
keeps "$kept" "$(committed "$SCRATCH/runs/dl/results.csv")" "the resume"
echo "resume ok"

# 2. Bad deadlines: exit 2, nothing written.
bad_run() {  # bad_run EXPECTED_MESSAGE ARGS...: with the environment the caller set
  local expected=$1
  shift
  set +e
  "$LBO_BIN" run "$SCRATCH/job.toml" --run-root "$SCRATCH/bad" "$@" > /dev/null 2> "$SCRATCH/bad.log"
  local status=$?
  set -e
  [ "$status" -eq 2 ] || { cat "$SCRATCH/bad.log"; fail "lbo run $* exited $status, expected 2"; }
  grep -qF -- "$expected" "$SCRATCH/bad.log" || { cat "$SCRATCH/bad.log"; fail "message lacks '$expected'"; }
  grep -qF -- "a deadline is unix seconds" "$SCRATCH/bad.log" || { cat "$SCRATCH/bad.log"; fail "the forms are not named"; }
  [ ! -e "$SCRATCH/bad" ] || fail "lbo run $* wrote $SCRATCH/bad"
}
bad_run "--deadline tomorrow: not a time" --deadline tomorrow
bad_run "--deadline +90x: not a duration" --deadline +90x
bad_run "--deadline 2026-13-01T00:00:00Z: no such date or time of day" --deadline 2026-13-01T00:00:00Z
bad_run "--deadline 1000: is not in the future" --deadline 1000
LBO_DEADLINE=soon bad_run "LBO_DEADLINE=soon: not a time"
echo "bad deadlines ok"
