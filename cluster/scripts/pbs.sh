#!/bin/bash
# lbo under PBS Pro / Torque: the counterpart of slurm.sbatch.
#
#   qsub -v JOB=path/to/job.toml cluster/scripts/pbs.sh
#
# PBS has no signal-before-walltime option, so this script sets its own alarm: it sends SIGUSR1
# to mpirun LBO_WARNING seconds (default 120) before the walltime it reads from the job. lbo
# then stops handing out trials, lets the running ones finish within the job's grace_s,
# checkpoints and exits 75, and the script submits itself again to resume.
#PBS -N lbo
#PBS -l select=2:ncpus=8:mpiprocs=8
#PBS -l walltime=04:00:00
#PBS -j oe

set -u
cd "${PBS_O_WORKDIR:-.}"
job_file=${JOB:?submit with qsub -v JOB=path/to/job.toml}
lbo=${LBO:-$PWD/build/lbo}
warning=${LBO_WARNING:-120}

walltime=$(qstat -f "$PBS_JOBID" 2> /dev/null | awk -F' = ' '/Resource_List.walltime/ {print $2}')
IFS=: read -r h m s <<< "${walltime:-04:00:00}"
seconds_left=$((10#$h * 3600 + 10#$m * 60 + 10#$s - warning))

mpirun "$lbo" run "$job_file" &
mpirun_pid=$!
( sleep "$seconds_left" && kill -USR1 "$mpirun_pid" 2> /dev/null ) &
alarm_pid=$!
wait "$mpirun_pid"
status=$?
kill "$alarm_pid" 2> /dev/null

if [ "$status" -eq 75 ]; then
  echo "lbo: stopped before the walltime; resubmitting to resume"
  qsub -v "JOB=$job_file" "$0"
fi
exit "$status"
