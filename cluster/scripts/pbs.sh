#!/bin/bash
# lbo under PBS Pro / Torque: the counterpart of slurm.sbatch.
#
#   qsub -v JOB=path/to/job.toml cluster/scripts/pbs.sh
#
# PBS has no signal-before-walltime option, so this script sets its own alarm: it sends SIGUSR1
# to mpirun LBO_WARNING seconds (default 120) before the walltime it reads from the job. lbo
# then stops handing out trials, lets the running ones finish within the job's grace_s,
# checkpoints and exits 75, and the script submits itself again to resume.
#
# qdel sends SIGTERM to this script and to mpirun, which passes it to the ranks and kills them
# soon after (its own exit status is then 1 or 137): the master writes its status to
# LBO_STATUS_FILE (75 once its stop checkpoint is written), and the script exits 75 when that
# file says so, without resubmitting (a deleted job stays deleted; submit it again to resume).
# SIGINT and SIGHUP are treated like SIGTERM; each is forwarded to mpirun as SIGUSR1.
#PBS -N lbo
#PBS -l select=2:ncpus=8:mpiprocs=8
#PBS -l walltime=04:00:00
#PBS -j oe

set -u
cd "${PBS_O_WORKDIR:-.}" || exit 2
job_file=${JOB:?submit with qsub -v JOB=path/to/job.toml}

# The lbo to run, first hit wins: $LBO; the installed lbo; lbo on PATH; build/lbo in the folder
# the job was submitted from (the top folder of a source checkout).
installed_lbo=  # cmake --install writes the installed lbo's path here
if [ -n "${LBO:-}" ]; then
  candidates=("$LBO")
  tried="LBO=$LBO"
else
  submitted=${PBS_O_WORKDIR:-$PWD}/build/lbo
  candidates=("$installed_lbo" "$(command -v lbo)" "$submitted")
  tried="LBO (unset), the installed lbo (${installed_lbo:-none: this copy is not installed}),"
  tried+=" lbo on PATH=$PATH, $submitted"
fi
lbo=
for candidate in "${candidates[@]}"; do
  if [ -f "$candidate" ] && [ -x "$candidate" ]; then lbo=$candidate; break; fi
done
if [ -z "$lbo" ]; then
  echo "lbo: no executable lbo; tried $tried. Set LBO to lbo's path." >&2
  exit 2
fi

warning=${LBO_WARNING:-120}

walltime=$(qstat -f "$PBS_JOBID" 2> /dev/null | awk -F' = ' '/Resource_List.walltime/ {print $2}')
IFS=: read -r h m s <<< "${walltime:-04:00:00}"
seconds_left=$((10#$h * 3600 + 10#$m * 60 + 10#$s - warning))
[ "$seconds_left" -gt 0 ] || seconds_left=0
echo "lbo: job ${PBS_JOBID:-?}, walltime ${walltime:-04:00:00}: SIGUSR1 to mpirun in $seconds_left s; $lbo"

stop_signal=
mpirun_pid=
forward() {  # forward SIGNAL: the first stop signal is the one reported
  [ -n "$stop_signal" ] || stop_signal=$1
  [ -n "$mpirun_pid" ] && kill -USR1 "$mpirun_pid" 2> /dev/null
}
for sig in TERM INT HUP; do trap "forward $sig" "$sig"; done

# The master's own exit status, whatever mpirun reports.
export LBO_STATUS_FILE=${PBS_O_WORKDIR:-$PWD}/lbo-${PBS_JOBID:-$$}.status
rm -f "$LBO_STATUS_FILE"

mpirun -x LBO_STATUS_FILE "$lbo" run "$job_file" &
mpirun_pid=$!
sleep "$seconds_left" &
alarm_pid=$!
# Whichever ends first: the alarm sends SIGUSR1 to mpirun, or mpirun's end cancels the alarm
# (a trapped signal also ends `wait -n`: then wait for mpirun below).
wait -n
[ -z "$stop_signal" ] && kill -0 "$mpirun_pid" 2> /dev/null && kill -USR1 "$mpirun_pid"
while true; do
  wait "$mpirun_pid"
  status=$?
  kill -0 "$mpirun_pid" 2> /dev/null || break
done
kill "$alarm_pid" 2> /dev/null
master_status=$(cat "$LBO_STATUS_FILE" 2> /dev/null)
rm -f "$LBO_STATUS_FILE"
# mpirun reports 1 or 137 when it killed the ranks after a SIGTERM, or when a rank was lost
# (the master carried on without it); the master's own status is the run's.
# "running": the master was killed before it could write where it stopped; mpirun's status stands.
case $master_status in ''|*[!0-9]*) master_status= ;; esac
if [ -n "$master_status" ] && [ "$status" != "$master_status" ]; then
  echo "lbo: mpirun exited $status${stop_signal:+ after SIG$stop_signal}; lbo's master exited $master_status"
  status=$master_status
fi

if [ "$status" -eq 75 ] && [ -n "$stop_signal" ]; then
  echo "lbo: stopped by SIG$stop_signal; not resubmitted (submit the same command again to resume)"
elif [ "$status" -eq 75 ]; then
  echo "lbo: stopped before the walltime; resubmitting to resume"
  # The same lbo and warning for the next job, whatever its environment.
  qsub -v "JOB=$job_file,LBO=$lbo,LBO_WARNING=$warning" "$0"
fi
exit "$status"
