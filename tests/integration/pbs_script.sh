#!/usr/bin/env bash
# cluster/scripts/pbs.sh outside PBS, with stand-ins for qstat (a 7 s walltime) and qsub: the
# script's own alarm sends SIGUSR1 at walltime - LBO_WARNING, lbo exits 75, the script resubmits
# itself with the same JOB, and the resubmitted run finishes the budget. lbo is found as
# build/lbo in PBS_O_WORKDIR (LBO unset, no lbo on PATH); LBO naming a file that is not
# executable stops the script with exit 2 and a message naming it.
source "$(dirname "$0")/common.sh"
command -v mpirun > /dev/null || { echo "no mpirun: skipped"; exit 0; }

mkdir -p "$SCRATCH/bin" "$SCRATCH/work/build"
echo "00:00:07" > "$SCRATCH/walltime"
cat > "$SCRATCH/bin/qstat" <<SH2
#!/bin/sh
echo "Job Id: \$2"
echo "    Resource_List.walltime = \$(cat "$SCRATCH/walltime")"
SH2
cat > "$SCRATCH/bin/qsub" <<SH2
#!/bin/sh
echo "\$@" >> "$SCRATCH/qsub.calls"
SH2
chmod +x "$SCRATCH/bin/qstat" "$SCRATCH/bin/qsub"
ln -s "$LBO_BIN" "$SCRATCH/work/build/lbo"
unset LBO
PATH="$SCRATCH/bin:$(path_without_lbo)"
export PATH PBS_JOBID=77.pbs PBS_O_WORKDIR="$SCRATCH/work" JOB="$SCRATCH/job.toml" LBO_WARNING=5
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

cat > "$SCRATCH/job.toml" <<JOB
name = "pbs"
grace_s = 5
[objective]
command = ["$LBO_TEST_OBJECTIVE"]
direction = "minimize"
[policy]
surrogate = "random"
[space]
x = { type = "float", low = 0, high = 1 }
sleep_ms = { type = "int", low = 200, high = 300 }
[[tasks]]
name = "a"
budget = 40
JOB

script="$REPO/cluster/scripts/pbs.sh"
start_ms=$(($(date +%s%N) / 1000000))
set +e; bash "$script" > "$SCRATCH/first.log" 2>&1; status=$?; set -e
elapsed_ms=$(($(date +%s%N) / 1000000 - start_ms))
[ "$status" -eq 75 ] || { cat "$SCRATCH/first.log"; fail "the job script exited $status, expected 75 after its alarm"; }
grep -q "walltime 00:00:07: SIGUSR1 to mpirun in 2 s; $SCRATCH/work/build/lbo$" "$SCRATCH/first.log" \
  || { cat "$SCRATCH/first.log"; fail "no alarm at walltime 7 s - LBO_WARNING 5 s with lbo from PBS_O_WORKDIR"; }
grep -q "received SIGUSR1" "$SCRATCH/first.log" || { cat "$SCRATCH/first.log"; fail "lbo's master did not get SIGUSR1"; }
# 40 trials of 0.2-0.3 s take longer than the 2 s before the alarm.
[ "$elapsed_ms" -ge 2000 ] || fail "stopped after $elapsed_ms ms, before the alarm"
[ "$(cat "$SCRATCH/qsub.calls")" = "-v JOB=$JOB,LBO=$SCRATCH/work/build/lbo,LBO_WARNING=5 $script" ] \
  || fail "not resubmitted with the same JOB: qsub $(cat "$SCRATCH/qsub.calls")"
echo "alarm: exit 75 after $elapsed_ms ms, resubmitted"

echo "01:00:00" > "$SCRATCH/walltime"
bash "$script" > "$SCRATCH/second.log" 2>&1 || { cat "$SCRATCH/second.log"; fail "the resubmitted run failed"; }
[ "$(wc -l < "$SCRATCH/qsub.calls")" -eq 1 ] || fail "resubmitted although the run finished"
python3 "$HERE/check_results.py" "$SCRATCH/work/runs/pbs/results.csv" a=40

# qdel: SIGTERM to the job script and to mpirun (mpirun then exits 1 or 137): exit 75 from the
# master's status file, and no resubmission.
sed 's/^name = .*/name = "deleted"/; s/budget = 40/budget = 1000/' "$SCRATCH/job.toml" > "$SCRATCH/deleted.toml"
JOB="$SCRATCH/deleted.toml" bash "$script" > "$SCRATCH/deleted.log" 2>&1 &
pid=$!
for _ in $(seq 300); do
  [ -f "$SCRATCH/work/runs/deleted/results.csv" ] && [ "$(wc -l < "$SCRATCH/work/runs/deleted/results.csv")" -ge 3 ] && break
  sleep 0.1
done
kill -TERM "$pid" $(pgrep -f -- "$SCRATCH/deleted.toml" | grep -vx "$pid") 2> /dev/null || true
set +e; wait "$pid"; status=$?; set -e
[ "$status" -eq 75 ] || { cat "$SCRATCH/deleted.log"; fail "qdel: the job script exited $status, expected 75"; }
grep -q "stopped by SIGTERM; not resubmitted" "$SCRATCH/deleted.log" || { cat "$SCRATCH/deleted.log"; fail "qdel: not said"; }
[ "$(wc -l < "$SCRATCH/qsub.calls")" -eq 1 ] || fail "qdel: resubmitted"
[ "$(objectives_left)" -eq 0 ] || fail "qdel: objective processes left"
echo "qdel ok: $(grep -o 'mpirun exited [0-9]*' "$SCRATCH/deleted.log" || echo 'mpirun exited 75')"

touch "$SCRATCH/not-lbo"
set +e; LBO="$SCRATCH/not-lbo" bash "$script" > "$SCRATCH/lookup.log" 2>&1; status=$?; set -e
[ "$status" -eq 2 ] || { cat "$SCRATCH/lookup.log"; fail "LBO naming a file that is not executable: exit $status, expected 2"; }
grep -q "tried LBO=$SCRATCH/not-lbo\." "$SCRATCH/lookup.log" || { cat "$SCRATCH/lookup.log"; fail "the error does not name LBO"; }
echo "pbs script ok"
