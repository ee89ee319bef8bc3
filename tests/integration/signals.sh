#!/usr/bin/env bash
# Signals, locally and under mpirun:
#  1. SIGTERM to a local lbo: exit 75 after the grace period, no objective process left,
#     committed results kept; the same command resumes and completes the budget exactly.
#     SIGINT, SIGUSR1 and SIGHUP (a closed terminal) stop it the same way; a closed output
#     pipe (`lbo run … | head`) does not stop it at all.
#  2. SIGTERM to one MPI worker rank: its trials are killed, run again elsewhere or later, and
#     the run still completes every budget (the worker rank stays up).
#  3. SIGTERM to mpirun: everything exits promptly and no objective process is left; the
#     master's LBO_STATUS_FILE says "running" while it runs (not an earlier stop's 75), then 75,
#     and its checkpoint exists (mpirun's own status is not 75); its log says the worker ranks
#     got the signal too rather than promise the grace period.
#  4. SIGUSR1 to mpirun (what the sbatch script forwards): exit 75, and the run resumes.
source "$(dirname "$0")/common.sh"
read -r -a mpirun <<< "${LBO_MPIRUN:-mpirun --oversubscribe}"

write_job() {  # write_job FILE BUDGET SLEEP_MS_LOW SLEEP_MS_HIGH
  cat > "$1" <<JOB
name = "sig"
seed = 5
grace_s = 0.3
[objective]
command = ["$LBO_TEST_OBJECTIVE"]
direction = "minimize"
kill_grace_s = 0.5
[workers]
local_slots = 2
slots_per_rank = 2
[space]
x = { type = "float", low = 0, high = 1 }
sleep_ms = { type = "int", low = $3, high = $4 }
[[tasks]]
name = "a"
budget = $2
JOB
}



# 1. Local: stop a run in the middle.
write_job "$SCRATCH/local.toml" 1000 200 400
"$LBO_BIN" run "$SCRATCH/local.toml" --run-root "$SCRATCH/local" 2> "$SCRATCH/local.log" &
pid=$!
wait_for_rows "$SCRATCH/local/sig/results.csv" 4
kill -TERM "$pid"
set +e; wait "$pid"; status=$?; set -e
[ "$status" -eq 75 ] || { cat "$SCRATCH/local.log"; fail "local lbo exited $status after SIGTERM, expected 75"; }
grep -q "resume with: " "$SCRATCH/local.log" || { cat "$SCRATCH/local.log"; fail "no resume command printed"; }
[ "$(objectives_left)" -eq 0 ] || fail "objective processes left after a local SIGTERM"
rows=$(($(wc -l < "$SCRATCH/local/sig/results.csv") - 1))
[ "$rows" -ge 4 ] || fail "committed results lost: $rows rows"
echo "local SIGTERM ok ($rows trials kept)"
kept=$(cut -d, -f1,4 "$SCRATCH/local/sig/results.csv" | tail -n +2 | sort)
sed -i 's/budget = 1000/budget = 40/' "$SCRATCH/local.toml"
"$LBO_BIN" run "$SCRATCH/local.toml" --run-root "$SCRATCH/local" 2> "$SCRATCH/resume.log" || { cat "$SCRATCH/resume.log"; fail "resume failed"; }
python3 "$HERE/check_results.py" "$SCRATCH/local/sig/results.csv" a=40
comm -23 <(echo "$kept") <(cut -d, -f1,4 "$SCRATCH/local/sig/results.csv" | tail -n +2 | sort) | grep -q . \
  && fail "a result committed before the stop changed or vanished"
echo "local resume ok"

# SIGINT, SIGUSR1, SIGHUP: before issue 18 SIGHUP killed lbo outright (exit 129, no checkpoint).
for sig in INT USR1 HUP; do
  write_job "$SCRATCH/$sig.toml" 1000 200 400
  "$LBO_BIN" run "$SCRATCH/$sig.toml" --run-root "$SCRATCH/$sig" 2> "$SCRATCH/$sig.log" &
  pid=$!
  wait_for_rows "$SCRATCH/$sig/sig/results.csv" 2
  kill -"$sig" "$pid"
  set +e; wait "$pid"; status=$?; set -e
  [ "$status" -eq 75 ] || { cat "$SCRATCH/$sig.log"; fail "local lbo exited $status after SIG$sig, expected 75"; }
  grep -q "received SIG$sig: no new trials" "$SCRATCH/$sig.log" || { cat "$SCRATCH/$sig.log"; fail "SIG$sig not logged"; }
  ls "$SCRATCH/$sig/sig"/checkpoint.*.lbo > /dev/null 2>&1 || fail "no checkpoint after SIG$sig"
  [ "$(objectives_left)" -eq 0 ] || fail "objective processes left after SIG$sig"
done
echo "local SIGINT, SIGUSR1, SIGHUP ok"

# SIGTERM while lbo is starting (issue 31: exit 143, no checkpoint, no resume line, when it came
# before the master listened): sent as soon as the run folder exists, it stops the run with 75
# before any trial starts, and the same command then runs it.
write_job "$SCRATCH/early.toml" 6 50 100
for round in 1 2 3 4 5; do
  rm -rf "$SCRATCH/early"
  "$LBO_BIN" run "$SCRATCH/early.toml" --run-root "$SCRATCH/early" 2> "$SCRATCH/early.log" &
  pid=$!
  while [ ! -e "$SCRATCH/early/sig/lock" ] && kill -0 "$pid" 2> /dev/null; do :; done
  kill -TERM "$pid"
  set +e; wait "$pid"; status=$?; set -e
  [ "$status" -eq 75 ] || { cat "$SCRATCH/early.log"; fail "SIGTERM while starting (round $round): exit $status, expected 75"; }
  grep -q "resume with: " "$SCRATCH/early.log" || { cat "$SCRATCH/early.log"; fail "no resume command after an early SIGTERM"; }
done
"$LBO_BIN" run "$SCRATCH/early.toml" --run-root "$SCRATCH/early" 2> "$SCRATCH/early2.log" || { cat "$SCRATCH/early2.log"; fail "resume after an early SIGTERM failed"; }
python3 "$HERE/check_results.py" "$SCRATCH/early/sig/results.csv" a=6
echo "SIGTERM while starting ok"

# A closed output pipe: before issue 18 the next log line's SIGPIPE killed lbo (exit 141).
write_job "$SCRATCH/pipe.toml" 12 50 100
set +e
"$LBO_BIN" run "$SCRATCH/pipe.toml" --run-root "$SCRATCH/pipe" 2>&1 | head -1 > /dev/null
status=${PIPESTATUS[0]}
set -e
[ "$status" -eq 0 ] || fail "lbo run | head -1 exited $status, expected 0"
python3 "$HERE/check_results.py" "$SCRATCH/pipe/sig/results.csv" a=12
echo "closed output pipe ok"

if ! command -v "${mpirun[0]}" > /dev/null; then echo "no mpirun: MPI part skipped"; exit 0; fi

# 2. One worker rank is terminated; the run completes without it losing any trial.
write_job "$SCRATCH/mpi.toml" 24 300 600
"${mpirun[@]}" -n 3 "$LBO_BIN" run "$SCRATCH/mpi.toml" --run-root "$SCRATCH/mpi" 2> "$SCRATCH/mpi.log" &
mpirun_pid=$!
wait_for_rows "$SCRATCH/mpi/sig/results.csv" 2
# Only this job's ranks (their command line names its job file), so the search is quick and
# never finds another test's lbo.
rank2=""
for pid in $(pgrep -f -- "run $SCRATCH/mpi.toml"); do
  if tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=2" \
     && [[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" == "$(readlink -f "$LBO_BIN")" ]]; then
    rank2=$pid
  fi
done
[ -n "$rank2" ] || fail "worker rank 2 not found"
kill -TERM "$rank2"
set +e; wait "$mpirun_pid"; status=$?; set -e
[ "$status" -eq 0 ] || { cat "$SCRATCH/mpi.log"; fail "mpirun exited $status after SIGTERM to one worker"; }
python3 "$HERE/check_results.py" "$SCRATCH/mpi/sig/results.csv" a=24 --workers rank
# The killed trials ran again: status ok, second attempt (a cancellation uses no retry: retries = 0).
grep -Eq '^[0-9]+,a,ok,[^,]+,2,' "$SCRATCH/mpi/sig/results.csv" || fail "no trial was run again after the kill"
echo "worker SIGTERM ok"

# 3. The whole job is terminated.
write_job "$SCRATCH/kill.toml" 1000 5000 10000
echo 75 > "$SCRATCH/kill.status"  # left by an earlier stop: a new master must not keep it
LBO_STATUS_FILE="$SCRATCH/kill.status" "${mpirun[@]}" -x LBO_STATUS_FILE -n 3 "$LBO_BIN" run "$SCRATCH/kill.toml" \
  --run-root "$SCRATCH/kill" 2> "$SCRATCH/kill.log" &
mpirun_pid=$!
for _ in $(seq 100); do [ "$(objectives_left)" -ge 4 ] && break; sleep 0.1; done
[ "$(objectives_left)" -ge 4 ] || fail "the objectives never started"
[ "$(cat "$SCRATCH/kill.status")" = running ] || fail "the status file still says $(cat "$SCRATCH/kill.status") from an earlier stop"
kill -TERM "$mpirun_pid"
set +e; wait "$mpirun_pid"; status=$?; set -e
sleep 0.5
[ "$(objectives_left)" -eq 0 ] || { ps -ef | grep -v grep | grep lbo-test-objective; fail "objective processes outlived mpirun"; }
[ "$(cat "$SCRATCH/kill.status" 2>/dev/null)" = 75 ] || { cat "$SCRATCH/kill.log"; fail "the status file does not say 75"; }
ls "$SCRATCH/kill/sig"/checkpoint.*.lbo > /dev/null 2>&1 || fail "no checkpoint after SIGTERM to mpirun"
# The log does not promise a grace period the worker ranks do not give (they got SIGTERM too).
grep -q "s to finish unless the worker ranks got SIGTERM too" "$SCRATCH/kill.log" \
  || { cat "$SCRATCH/kill.log"; fail "the stop line promises a grace period under mpirun's SIGTERM"; }
echo "mpirun SIGTERM ok (mpirun exited $status; the master's status file says 75)"

# 4. SIGUSR1 to mpirun, as the sbatch script forwards any stop signal: mpirun passes it to the
# ranks and does not escalate, so the master's grace period and its exit status 75 hold.
write_job "$SCRATCH/usr1.toml" 1000 200 400
"${mpirun[@]}" -n 3 "$LBO_BIN" run "$SCRATCH/usr1.toml" --run-root "$SCRATCH/usr1" 2> "$SCRATCH/usr1.log" &
mpirun_pid=$!
wait_for_rows "$SCRATCH/usr1/sig/results.csv" 2
kill -USR1 "$mpirun_pid"
set +e; wait "$mpirun_pid"; status=$?; set -e
[ "$status" -eq 75 ] || { cat "$SCRATCH/usr1.log"; fail "mpirun exited $status after SIGUSR1, expected 75"; }
[ "$(objectives_left)" -eq 0 ] || fail "objective processes left after SIGUSR1 to mpirun"
sed -i 's/budget = 1000/budget = 30/' "$SCRATCH/usr1.toml"
"${mpirun[@]}" -n 2 "$LBO_BIN" run "$SCRATCH/usr1.toml" --run-root "$SCRATCH/usr1" 2> "$SCRATCH/usr1b.log" \
  || { cat "$SCRATCH/usr1b.log"; fail "resume after SIGUSR1 to mpirun failed"; }
echo "mpirun SIGUSR1 ok"
