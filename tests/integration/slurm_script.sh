#!/usr/bin/env bash
# cluster/scripts/slurm.sbatch outside SLURM: with a stand-in scontrol, SIGUSR1 to the batch
# script (what --signal=B:USR1@120 sends) stops lbo with exit 75 and requeues the job; the
# requeued run finishes the budget. SIGTERM (scancel) ends with 75 and no requeue. Then the script's lookup of lbo: LBO naming a file that is
# not executable is the error (exit 2, naming it); an installed copy runs the lbo that cmake
# --install wrote into it; with nothing to find, the error names every place tried.
source "$(dirname "$0")/common.sh"
command -v mpirun > /dev/null || { echo "no mpirun: skipped"; exit 0; }

mkdir -p "$SCRATCH/bin"
cat > "$SCRATCH/bin/scontrol" <<SH
#!/bin/sh
echo "\$@" >> "$SCRATCH/scontrol.calls"
SH
chmod +x "$SCRATCH/bin/scontrol"
export PATH="$SCRATCH/bin:$PATH" LBO="$LBO_BIN" SLURM_JOB_ID=4242 SLURM_NTASKS=3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

cat > "$SCRATCH/job.toml" <<JOB
name = "slurm"
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
budget = 30
JOB

script="$REPO/cluster/scripts/slurm.sbatch"
bash "$script" "$SCRATCH/job.toml" --run-root "$SCRATCH/runs" > "$SCRATCH/first.log" 2>&1 &
pid=$!
sleep 2
kill -USR1 "$pid"
set +e; wait "$pid"; status=$?; set -e
[ "$status" -eq 75 ] || { cat "$SCRATCH/first.log"; fail "the batch script exited $status after SIGUSR1, expected 75"; }
grep -q "^requeue 4242$" "$SCRATCH/scontrol.calls" || fail "the job was not requeued"
grep -q "received SIGUSR1" "$SCRATCH/first.log" || { cat "$SCRATCH/first.log"; fail "lbo's master did not get SIGUSR1"; }

bash "$script" "$SCRATCH/job.toml" --run-root "$SCRATCH/runs" > "$SCRATCH/second.log" 2>&1 \
  || { cat "$SCRATCH/second.log"; fail "the requeued run failed"; }
[ "$(wc -l < "$SCRATCH/scontrol.calls")" -eq 1 ] || fail "requeued although the run finished"
python3 "$HERE/check_results.py" "$SCRATCH/runs/slurm/results.csv" a=30
echo "requeue ok"

# scancel: SIGTERM to the batch script and to every process of the job (mpirun and the ranks);
# mpirun then exits 1 or 137 and kills the ranks, but the master has checkpointed: exit 75 from
# its status file, and no requeue (a cancel stays a cancel). Then SIGTERM to the script alone.
for target in all script; do
  sed "s/^name = .*/name = \"cancel-$target\"/; s/budget = 30/budget = 1000/" "$SCRATCH/job.toml" > "$SCRATCH/cancel-$target.toml"
  SLURM_SUBMIT_DIR="$SCRATCH" bash "$script" "$SCRATCH/cancel-$target.toml" --run-root "$SCRATCH/runs" > "$SCRATCH/cancel-$target.log" 2>&1 &
  pid=$!
  for _ in $(seq 300); do
    [ -f "$SCRATCH/runs/cancel-$target/results.csv" ] && [ "$(wc -l < "$SCRATCH/runs/cancel-$target/results.csv")" -ge 3 ] && break
    sleep 0.1
  done
  if [ "$target" = all ]; then
    kill -TERM "$pid" $(pgrep -f -- "$SCRATCH/cancel-$target.toml" | grep -vx "$pid") 2> /dev/null || true
  else
    kill -TERM "$pid"
  fi
  set +e; wait "$pid"; status=$?; set -e
  [ "$status" -eq 75 ] || { cat "$SCRATCH/cancel-$target.log"; fail "SIGTERM to $target: the batch script exited $status, expected 75"; }
  grep -q "stopped by SIGTERM; not requeued" "$SCRATCH/cancel-$target.log" || { cat "$SCRATCH/cancel-$target.log"; fail "SIGTERM to $target: not said"; }
  [ "$(wc -l < "$SCRATCH/scontrol.calls")" -eq 1 ] || fail "SIGTERM to $target: requeued"
  ls "$SCRATCH/runs/cancel-$target"/checkpoint.*.lbo > /dev/null 2>&1 || fail "SIGTERM to $target: no checkpoint"
  [ ! -e "$SCRATCH/lbo-4242.status" ] || fail "the status file was left behind"
  [ "$(objectives_left)" -eq 0 ] || fail "SIGTERM to $target: objective processes left"
  echo "SIGTERM to $target ok: $(grep -o 'mpirun exited [0-9]*' "$SCRATCH/cancel-$target.log" || echo 'mpirun exited 75')"
done

touch "$SCRATCH/not-lbo"
set +e; LBO="$SCRATCH/not-lbo" bash "$script" "$SCRATCH/job.toml" > "$SCRATCH/lookup.log" 2>&1; status=$?; set -e
[ "$status" -eq 2 ] || { cat "$SCRATCH/lookup.log"; fail "LBO naming a file that is not executable: exit $status, expected 2"; }
grep -q "tried LBO=$SCRATCH/not-lbo\." "$SCRATCH/lookup.log" || { cat "$SCRATCH/lookup.log"; fail "the error does not name LBO"; }

# cmake --install fills the one `installed_lbo=` line of the installed copy.
[ "$(grep -c '^installed_lbo=  *# ' "$script")" -eq 1 ] || fail "$script needs one empty installed_lbo= line"
sed "s|^installed_lbo=  *#|installed_lbo=$LBO_BIN  #|" "$script" > "$SCRATCH/installed.sbatch"
no_lbo_path="$SCRATCH/bin:$(path_without_lbo)"
mkdir "$SCRATCH/submitted"
env -u LBO PATH="$no_lbo_path" SLURM_SUBMIT_DIR="$SCRATCH/submitted" bash "$SCRATCH/installed.sbatch" \
  "$SCRATCH/job.toml" --run-root "$SCRATCH/runs" > "$SCRATCH/installed.log" 2>&1 \
  || { cat "$SCRATCH/installed.log"; fail "the installed copy failed"; }
grep -q "ranks: $LBO_BIN$" "$SCRATCH/installed.log" || { cat "$SCRATCH/installed.log"; fail "the installed copy did not run its lbo"; }

set +e
env -u LBO PATH="$no_lbo_path" SLURM_SUBMIT_DIR="$SCRATCH/submitted" bash "$script" "$SCRATCH/job.toml" \
  > "$SCRATCH/nothing.log" 2>&1
status=$?
set -e
[ "$status" -eq 2 ] || { cat "$SCRATCH/nothing.log"; fail "no lbo anywhere: exit $status, expected 2"; }
for place in "LBO (unset)" "the installed lbo (none" "lbo on PATH=$no_lbo_path" "$SCRATCH/submitted/build/lbo"; do
  grep -qF "$place" "$SCRATCH/nothing.log" || { cat "$SCRATCH/nothing.log"; fail "the error does not name $place"; }
done
echo "slurm script ok"
