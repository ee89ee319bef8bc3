#!/usr/bin/env bash
# Processes an objective leaves outside its process group (setsid daemons) are killed for every
# attempt, the last ones included, before lbo exits (issue 31: the last trial's daemons outlived
# an lbo that exited 0). Locally and on MPI worker ranks.
source "$(dirname "$0")/common.sh"

cat > "$SCRATCH/daemons.sh" <<'SH'
#!/bin/sh
# 300 daemons, each out of the group (its own session) before the objective ends.
for i in $(seq 300); do
  setsid sh -c 'echo $$ >> "$LBO_WORKDIR/daemons"; exec sleep 300' < /dev/null > /dev/null 2>&1 &
done
while [ "$(cat "$LBO_WORKDIR/daemons" 2> /dev/null | wc -l)" -lt 300 ]; do sleep 0.01; done
echo '{"objective": 1}'
SH
chmod +x "$SCRATCH/daemons.sh"
cat > "$SCRATCH/job.toml" <<JOB
name = "esc"
seed = 1
[objective]
command = ["$SCRATCH/daemons.sh"]
direction = "minimize"
[policy]
surrogate = "random"
[workers]
local_slots = 2
slots_per_rank = 2
[space]
x = { type = "float", low = 0, high = 1 }
[[tasks]]
name = "a"
budget = 4
JOB

check() {  # check NAME LOG: every trial's daemons were killed, and none is left once lbo is gone
  local left
  python3 "$HERE/check_results.py" "$SCRATCH/$1/esc/results.csv" a=4
  [ "$(grep -c "killed 300 process group(s) that trial [0-9]* attempt 1 (.*) left running outside its own" "$2")" -eq 4 ] \
    || { cat "$2"; fail "$1: not every trial's daemons were said killed"; }
  # SIGKILL is sent, not waited for: on a loaded machine 600 dying processes take a moment.
  for _ in $(seq 100); do left=$(objectives_left); [ "$left" -eq 0 ] && break; sleep 0.1; done
  [ "$left" -eq 0 ] || fail "$1: $left daemon(s) outlived lbo by 10 s"
}

"$LBO_BIN" run "$SCRATCH/job.toml" --run-root "$SCRATCH/local" 2> "$SCRATCH/local.log" || { cat "$SCRATCH/local.log"; fail "lbo run failed"; }
check local "$SCRATCH/local.log"
echo "local: every attempt's daemons killed before lbo exited"

read -r -a mpirun <<< "${LBO_MPIRUN:-mpirun --oversubscribe}"
command -v "${mpirun[0]}" > /dev/null || { echo "no mpirun: MPI part skipped"; exit 0; }
"${mpirun[@]}" -n 3 "$LBO_BIN" run "$SCRATCH/job.toml" --run-root "$SCRATCH/mpi" > "$SCRATCH/mpi.log" 2>&1 \
  || { cat "$SCRATCH/mpi.log"; fail "mpirun lbo run failed"; }
check mpi "$SCRATCH/mpi.log"
echo "MPI: every attempt's daemons killed before the ranks exited"
