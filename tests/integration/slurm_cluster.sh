#!/usr/bin/env bash
# cluster/scripts/slurm.sbatch on a real single-node SLURM that this test starts: munged,
# slurmctld and slurmd (Debian's munge and slurm-wlm) with their key, configuration, state and
# logs in the scratch folder, stopped on exit. Nothing under /etc is read or written.
#  A. Requeue across allocations: about 70 s of trials in allocations of one minute with
#     --signal=B:USR1@10. Each allocation ends with lbo's exit 75 (after SIGUSR1 or, with
#     walltime-aware dispatch, on its own) and `scontrol requeue`; the next allocation resumes.
#     The job ends COMPLETED with ExitCode 0:0 after 2 or more allocations, every trial once.
#  B. scancel in the middle of a run leaves no objective process; a new sbatch of the same
#     command resumes and completes the run, every trial once.
# lbo is found by the script's lookup, LBO unset: on PATH in A, as build/lbo of the folder the
# job was submitted from in B.
# Skipped unless run as root with the SLURM and MUNGE binaries (scripts/setup.sh installs them).
source "$(dirname "$0")/common.sh"

PATH="$PATH:/usr/sbin:/sbin"
if [ "$(id -u)" -ne 0 ]; then echo "skipped: the test's SLURM daemons run as root"; exit 0; fi
for binary in munged mungekey slurmctld slurmd sbatch scontrol squeue scancel sinfo mpirun; do
  command -v "$binary" > /dev/null \
    || { echo "skipped: no $binary (scripts/setup.sh installs slurm-wlm, munge and openmpi-bin)"; exit 0; }
done

test_start=$(date +%s)
phase() { echo "[$(date +%T) +$(($(date +%s) - test_start))s] $*"; }

# The cluster: one node, this host, with its real CPU count.
cluster="$SCRATCH/slurm"
mkdir -p "$cluster/munge" "$cluster/state" "$cluster/spool" "$cluster/log"
# munged wants every folder above its socket searchable by all; mktemp made SCRATCH 0700.
chmod 755 "$SCRATCH" "$cluster" "$cluster/munge"
node=$(hostname -s)
read -r ctld_port slurmd_port < <(python3 -c '
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in sockets))')
# proctrack/linuxproc, task/none and no job accounting: nothing needs cgroups. A requeued job
# may start again cred_expire seconds after the requeue (120 s by default), and then waits
# for the scheduler's periodic pass (sched_interval, 60 s by default): both shortened, a
# requeue takes about 11 s instead of up to 3 minutes. KillWait is the time from SIGTERM to
# SIGKILL when a job runs out of time (30 s by default). MinJobAge keeps ended jobs visible to
# `scontrol show job` for the whole test.
cat > "$cluster/slurm.conf" <<CONF
ClusterName=lbotest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$cluster/munge/socket,cred_expire=10
StateSaveLocation=$cluster/state
SlurmdSpoolDir=$cluster/spool
SlurmctldPidFile=$cluster/slurmctld.pid
SlurmdPidFile=$cluster/slurmd.pid
SlurmctldLogFile=$cluster/log/slurmctld.log
SlurmdLogFile=$cluster/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=sched_interval=1
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
KillWait=5
MinJobAge=3600
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
# Every SLURM command of this test, and the jobs' own scontrol, use this configuration only.
unset "${!SLURM_@}"
export SLURM_CONF="$cluster/slurm.conf"

munged_pid='' slurmctld_pid='' slurmd_pid=''
show_logs() {
  local log
  for log in "$cluster"/log/* "$SCRATCH"/job-*.log; do
    [ -f "$log" ] && { echo "---- $log (last 40 lines)"; tail -n 40 "$log"; }
  done
}
# Stops the cluster, whatever happened: jobs first (slurmstepd and the jobs' processes outlive
# slurmd), then the daemons, then whatever the jobs left (found by their SLURM_CONF).
stop_cluster() {
  if [ -n "$slurmctld_pid" ]; then
    scancel --quiet --partition=test 2> /dev/null || true
    for _ in $(seq 30); do
      [ -z "$(squeue -h -o %i 2> /dev/null)" ] && break
      sleep 0.5
    done
  fi
  local pid environ
  for pid in $slurmd_pid $slurmctld_pid $munged_pid; do kill -TERM "$pid" 2> /dev/null || true; done
  for pid in $slurmd_pid $slurmctld_pid $munged_pid; do wait "$pid" 2> /dev/null || true; done
  for environ in $(grep -lzxs "SLURM_CONF=$SLURM_CONF" /proc/[0-9]*/environ); do
    pid=${environ#/proc/}
    kill -KILL "${pid%/environ}" 2> /dev/null || true
  done
  rm -rf "$SCRATCH"
}
trap stop_cluster EXIT

phase "starting munged, slurmctld and slurmd (ports $ctld_port, $slurmd_port; node $node, $(nproc) CPUs)"
mungekey --create --keyfile="$cluster/munge/munge.key"
munged --foreground --key-file="$cluster/munge/munge.key" --socket="$cluster/munge/socket" \
  --pid-file="$cluster/munge/munged.pid" --seed-file="$cluster/munge/munged.seed" \
  --log-file="$cluster/log/munged.log" > /dev/null 2>&1 &
munged_pid=$!
for _ in $(seq 50); do [ -S "$cluster/munge/socket" ] && break; sleep 0.1; done
[ -S "$cluster/munge/socket" ] || { show_logs; fail "munged did not start"; }
slurmctld -D > "$cluster/log/slurmctld.out" 2>&1 &
slurmctld_pid=$!
slurmd -D > "$cluster/log/slurmd.out" 2>&1 &
slurmd_pid=$!
for _ in $(seq 60); do
  [ "$(sinfo -h -n "$node" -o %T 2> /dev/null)" = "idle" ] && break
  sleep 0.5
done
[ "$(sinfo -h -n "$node" -o %T 2> /dev/null)" = "idle" ] || { show_logs; fail "the node did not become idle"; }
phase "cluster up: $(sinfo -h -o '%P %D %T %c')"

# One field of `scontrol show job`: job_field ID FIELD
job_field() { scontrol show job -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# Processes of job ID, found by their environment (SLURM_CONF names this test's cluster).
job_processes() {
  { grep -lzxs "SLURM_CONF=$SLURM_CONF" /proc/[0-9]*/environ | xargs -r grep -lzxs "SLURM_JOB_ID=$1" || true; } | wc -l
}

# Waits until job ID has ended, at most TIMEOUT s, printing what happens on the way: its state
# changes, and the lines of its log that tell about allocations and stops.
# wait_job ID TIMEOUT
wait_job() {
  local id=$1 deadline=$(($(date +%s) + $2)) log="$SCRATCH/job-$1.log" seen=0 lines last='' state
  while [ "$(date +%s)" -lt "$deadline" ]; do
    state="$(job_field "$id" JobState) $(job_field "$id" Reason) restarts=$(job_field "$id" Restarts)"
    [ "$state" = "$last" ] || phase "job $id: $state"
    last=$state
    if [ -f "$log" ]; then
      lines=$(wc -l < "$log")
      sed -n "$((seen + 1)),${lines}p" "$log" | grep -E "^lbo: |received SIG|stopp|resume with" \
        | while read -r line; do phase "job $id log: $line"; done || true
      seen=$lines
    fi
    case "$state" in
      COMPLETED* | FAILED* | CANCELLED* | TIMEOUT* | NODE_FAIL* | OUT_OF_MEMORY* | BOOT_FAIL* | DEADLINE*) return 0 ;;
    esac
    sleep 0.5
  done
  show_logs
  fail "job $id did not end within $2 s"
}

# The batch script's environment, exported by sbatch: mpirun as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
unset LBO
# One task per rank on the one node, and no more tasks than it has CPUs: the script's own
# #SBATCH --ntasks-per-node cannot be undone, and SLURM refuses more tasks per node than CPUs
# even with --overcommit. 3 ranks (the master and 2 workers), or 2 on a 2-CPU node; 4 trials at
# a time either way.
ranks=$(($(nproc) < 3 ? $(nproc) : 3))
slots_per_rank=$((ranks > 1 ? 4 / (ranks - 1) : 4))
sbatch_lbo() {  # sbatch_lbo SBATCH_OPTIONS... -- JOB RUN_ROOT
  local options=()
  while [ "$1" != "--" ]; do options+=("$1"); shift; done
  sbatch --parsable --nodes=1 --ntasks="$ranks" --ntasks-per-node="$ranks" \
    --output="$SCRATCH/job-%j.log" "${options[@]}" "$REPO/cluster/scripts/slurm.sbatch" "$2" --run-root "$3"
}

write_job() {  # write_job FILE BUDGET: trials of 1-2 s, 4 at a time
  cat > "$1" <<JOB
name = "slurm"
seed = 7
grace_s = 10
[objective]
command = ["$LBO_TEST_OBJECTIVE"]
direction = "minimize"
[workers]
local_slots = 4
slots_per_rank = $slots_per_rank
[policy]
surrogate = "random"
[space]
x = { type = "float", low = 0, high = 1 }
sleep_ms = { type = "int", low = 1000, high = 2000 }
[[tasks]]
name = "a"
budget = $2
JOB
}

# A. About 190 × 1.5 s / 4 slots = 71 s of trials: more than a one-minute allocation holds.
# slurmctld looks for due signals every 30 s and sends them up to 30 s early: USR1@10 comes 20
# to 50 s into an allocation, at least 10 s before its walltime.
write_job "$SCRATCH/a.toml" 190
mkdir -p "$SCRATCH/bin"
ln -s "$LBO_BIN" "$SCRATCH/bin/lbo"
cd "$SCRATCH"
job_a=$(PATH="$SCRATCH/bin:$(path_without_lbo)" sbatch_lbo --time=1 --signal=B:USR1@10 \
  -- "$SCRATCH/a.toml" "$SCRATCH/runs-a")
phase "A: submitted job $job_a (lbo on PATH)"
wait_job "$job_a" 240
log_a="$SCRATCH/job-$job_a.log"
[ "$(job_field "$job_a" JobState)" = "COMPLETED" ] && [ "$(job_field "$job_a" ExitCode)" = "0:0" ] \
  || { show_logs; fail "job $job_a ended $(job_field "$job_a" JobState) with exit code $(job_field "$job_a" ExitCode)"; }
allocations=$(grep -c "^lbo: allocation $job_a (restart [0-9]*) on $ranks ranks: $SCRATCH/bin/lbo$" "$log_a" || true)
[ "$allocations" -ge 2 ] || { cat "$log_a"; fail "$allocations allocation(s) of job $job_a ran lbo from PATH, expected 2 or more"; }
[ "$(grep -c "^lbo: stopped before the walltime; requeueing to resume$" "$log_a" || true)" -eq $((allocations - 1)) ] \
  || { cat "$log_a"; fail "every allocation but the last should end with exit 75 and a requeue"; }
[ "$(job_field "$job_a" Restarts)" -eq $((allocations - 1)) ] || fail "SLURM counts $(job_field "$job_a" Restarts) restarts"
# Walltime-aware dispatch: each allocation's lbo learned its end from SLURM.
grep -Eq "allocation ends .* \((SLURM_JOB_END_TIME|squeue)\)" "$log_a" \
  || { cat "$log_a"; fail "lbo did not learn the allocation's end from SLURM"; }
ends=$(grep -Ec "allocation ends .* \((SLURM_JOB_END_TIME|squeue)\)" "$log_a")
phase "A: $ends allocation(s) logged their end: $(grep -Eho "\((SLURM_JOB_END_TIME|squeue)\)" "$log_a" | sort | uniq -c | tr -s ' \n' ' ')"
by_deadline=$(grep -c "stopping for the deadline" "$log_a" || true)
by_signal=$(grep -c "received SIGUSR1" "$log_a" || true)
phase "A: allocations stopped by lbo for the deadline: $by_deadline, by SLURM's SIGUSR1: $by_signal"
python3 "$HERE/check_results.py" "$SCRATCH/runs-a/slurm/results.csv" a=190
[ "$(objectives_left)" -eq 0 ] || fail "objective processes left after job $job_a"
phase "A: job $job_a completed in $allocations allocations"

# B. A run of about 60 × 1.5 s / 4 = 23 s in a 5-minute allocation (its signal would come after
# 2.5 minutes at the earliest), cancelled once trials have been committed. Submitted from a
# folder that looks like a source checkout, with no lbo on PATH.
write_job "$SCRATCH/b.toml" 60
mkdir -p "$SCRATCH/checkout/build"
ln -s "$LBO_BIN" "$SCRATCH/checkout/build/lbo"
cd "$SCRATCH/checkout"
submit_b() { PATH="$(path_without_lbo)" sbatch_lbo --time=5 -- "$SCRATCH/b.toml" "$SCRATCH/runs-b"; }
job_b=$(submit_b)
phase "B: submitted job $job_b (lbo as build/lbo of the submit folder)"
results_b="$SCRATCH/runs-b/slurm/results.csv"
for _ in $(seq 120); do
  [ -f "$results_b" ] && [ "$(wc -l < "$results_b")" -gt 4 ] && break
  sleep 0.5
done
[ -f "$results_b" ] && [ "$(wc -l < "$results_b")" -gt 4 ] || { show_logs; fail "job $job_b committed no trials within 60 s"; }
running=$(objectives_left)
scancel "$job_b"
phase "B: scancel $job_b: $running objectives were running"
wait_job "$job_b" 60
[ "$(job_field "$job_b" JobState)" = "CANCELLED" ] || fail "job $job_b ended $(job_field "$job_b" JobState), expected CANCELLED"
# proctrack/linuxproc loses the processes whose parent has died: the step can end before
# mpirun and lbo's ranks, which end on their own within about a second, killing the
# objectives they run; the objectives are counted once those are gone.
for _ in $(seq 100); do [ "$(job_processes "$job_b")" -eq 0 ] && break; sleep 0.1; done
[ "$(job_processes "$job_b")" -eq 0 ] || fail "processes of job $job_b still run 10 s after it was cancelled"
left=$(objectives_left)
[ "$left" -eq 0 ] || fail "$left objective processes left after scancel $job_b"
kept=$(committed "$results_b")
phase "B: job $job_b cancelled, no process of it left, $(echo "$kept" | wc -l) trials committed"

job_b2=$(submit_b)
phase "B: submitted job $job_b2 to resume"
wait_job "$job_b2" 120
[ "$(job_field "$job_b2" JobState)" = "COMPLETED" ] && [ "$(job_field "$job_b2" ExitCode)" = "0:0" ] \
  || { show_logs; fail "job $job_b2 ended $(job_field "$job_b2" JobState) with exit code $(job_field "$job_b2" ExitCode)"; }
grep -q "^lbo: allocation $job_b2 (restart 0) on $ranks ranks: $SCRATCH/checkout/build/lbo$" "$SCRATCH/job-$job_b2.log" \
  || { cat "$SCRATCH/job-$job_b2.log"; fail "job $job_b2 did not run build/lbo of its submit folder"; }
python3 "$HERE/check_results.py" "$results_b" a=60
keeps "$kept" "$(committed "$results_b")" "the run resumed after scancel"
[ "$(objectives_left)" -eq 0 ] || fail "objective processes left after job $job_b2"
phase "slurm cluster ok"
