#!/usr/bin/env bash
# bench/scale: does learning survive parallelism? lbo on many slots of a sleeping objective (a
# Branin value after SLEEP_MS), over a sequence of related Branin tasks, for each surrogate:
# utilization, how long a free slot waits for work, the share of model proposals, and each
# task's best after 1×, 2× and 4× the slot count of trials. Figures come from the run's journal
# (build/bench/scale_report); the objective only sleeps, so hundreds of slots fit on 2 cores.
#
# Usage: bench/scale.sh [options]
#   --slots "16 64 256"     local slot counts
#   --methods "random gp lbo"
#   --budget N              trials per task (default: 4 × the slot count, so the 1×/2×/4× figures exist)
#   --tasks 2               tasks (1: standard Branin; later ones perturbed, as LBO's lifelong protocol)
#   --sleep-ms 1000         objective duration
#   --mpi RANKSxSLOTS       also run under mpirun with RANKS worker ranks of SLOTS slots (e.g. 8x8)
#   --repeat 1              runs per configuration (different seeds)
#   --pareto                two objectives (the test objective's --pareto on: Branin against the
#                           parameters' size): what several objectives cost the master at scale
#   --limit                 a limit on a metric the objective reports (twice <= 200, [[constraints]])
#   --early-stopping N      the objective reports N steps over its duration (lbo:report lines,
#                           SLEEP_MS/N apart) under [early_stopping] asha (max_step N, r = 1,
#                           eta = 3); adds the utilization until the last trial started (util_open:
#                           without the drain at the end, where the survivors run alone), and how
#                           long reports take from the worker to the master's journal and to the
#                           stops they cause (p50/p99, ms): from the worker's own clock when it
#                           read the line (rep_w, stop_w: the master's delay, the spawn queue
#                           apart), and from the master's dispatch (rep, stop: the spawn's
#                           delay in them)
#   --rule NAME             the [early_stopping] rule with --early-stopping (default asha)
# Environment: LBO_BUILD_DIR (default <repo>/build), TMPDIR (run folders), MPIRUN (default
# "mpirun --oversubscribe", plus --allow-run-as-root as root).
set -euo pipefail

slots_list="16 64 256"
methods="random gp lbo"
budget=""
tasks=2
sleep_ms=1000
mpi=""
repeat=1
early=""
rule=asha
pareto=""
limit=""
while [ $# -gt 0 ]; do
  case "$1" in
    --slots) slots_list=$2; shift 2 ;;
    --methods) methods=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --tasks) tasks=$2; shift 2 ;;
    --sleep-ms) sleep_ms=$2; shift 2 ;;
    --mpi) mpi=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --early-stopping) early=$2; shift 2 ;;
    --rule) rule=$2; shift 2 ;;
    --pareto) pareto=1; shift ;;
    --limit) limit=1; shift ;;
    *) echo "usage: $0 [--slots LIST] [--methods LIST] [--budget N] [--tasks N] [--sleep-ms MS] [--mpi RxS] [--repeat N] [--early-stopping N [--rule NAME]] [--pareto] [--limit]" >&2; exit 2 ;;
  esac
done

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${LBO_BUILD_DIR:-$(dirname "$bench_dir")/build}
lbo=$build/lbo
objective=$build/tests/objectives/lbo-test-objective
report=$build/bench/scale_report
for bin in "$lbo" "$objective" "$report"; do
  [ -x "$bin" ] || { echo "missing $bin: build the project first (cmake --build build)" >&2; exit 1; }
done
read -r -a mpirun <<< "${MPIRUN:-mpirun --oversubscribe}"
[ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)
ulimit -n "$(ulimit -Hn)" 2> /dev/null || true

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Task k's Branin: the standard one first, then each of its six parameters perturbed by 10%
# (fixed draws, the same for every method).
python3 - "$tmp" "$tasks" <<'PY'
import json, math, random, sys
folder, tasks = sys.argv[1], int(sys.argv[2])
standard = {"a": 1, "b": 5.1 / (4 * math.pi ** 2), "c": 5 / math.pi, "r": 6, "s": 10, "t": 1 / (8 * math.pi)}
rng = random.Random(2026)
for k in range(tasks):
    params = dict(standard) if k == 0 else {key: v * (1 + 0.1 * rng.gauss(0, 1)) for key, v in standard.items()}
    json.dump(params, open(f"{folder}/task{k + 1}.json", "w"))
PY

write_job() {  # write_job FILE METHOD SEED LOCAL_SLOTS SLOTS_PER_RANK BUDGET
  {
    echo "name = \"scale\""
    echo "seed = $3"
    echo "[objective]"
    local two=""
    [ -n "$pareto" ] && two=', "--pareto", "on"'
    [ -n "$limit" ] && two="$two"', "--metrics", "on"'
    if [ -n "$early" ]; then
      echo "command = [\"$objective\", \"--function\", \"branin\", \"--context\", \"{dataset}\", \"--reports\", \"$early\", \"--report-ms\", \"$((sleep_ms / early))\"$two]"
    else
      echo "command = [\"$objective\", \"--function\", \"branin\", \"--context\", \"{dataset}\", \"--sleep-ms\", \"$sleep_ms\"$two]"
    fi
    if [ -n "$pareto" ]; then
      echo 'objectives = [{ name = "value", direction = "minimize" }, { name = "cost", direction = "minimize" }]'
    else
      echo "direction = \"minimize\""
    fi
    if [ -n "$limit" ]; then
      echo "[[constraints]]"
      echo "name = \"twice\""
      echo "max = 200"
    fi
    echo "[policy]"
    echo "surrogate = \"$2\""
    echo "acquisition = \"ei\""
    echo "initial_random = 5"
    echo "[workers]"
    echo "local_slots = $4"
    echo "slots_per_rank = $5"
    if [ -n "$early" ]; then
      echo "[early_stopping]"
      echo "rule = \"$rule\""
      echo "max_step = $early"
    fi
    echo "[space]"
    echo "x1 = { type = \"float\", low = -5, high = 10 }"
    echo "x2 = { type = \"float\", low = 0, high = 15 }"
    for k in $(seq "$tasks"); do
      echo "[[tasks]]"
      echo "name = \"task$k\""
      echo "dataset = \"$tmp/task$k.json\""
      echo "budget = $6"
    done
  } > "$1"
}

value() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

printf "%-7s %-11s %6s %8s %11s %11s %7s %6s" method slots wall_s util lat_p50_ms lat_p99_ms model fallb
for k in $(seq 2 "$tasks"); do printf " %9s %9s %9s" "t$k@1x" "t$k@2x" "t$k@4x"; done
[ -n "$early" ] && printf " %9s %8s %10s %10s %6s %9s %9s %9s %9s %9s %9s" util_open reports rep_p50_ms rep_p99_ms stops stop_p50 stop_p99 \
  rep_w_p50 rep_w_p99 stop_w_p50 stop_w_p99
printf "\n"

run_one() {  # run_one METHOD LABEL SEED LOCAL_SLOTS SLOTS_PER_RANK SLOTS [LAUNCHER...]
  local method=$1 label=$2 seed=$3 local_slots=$4 per_rank=$5 slots=$6
  shift 6
  local job="$tmp/$method-$label-$seed.toml" root="$tmp/runs-$method-$label-$seed"
  write_job "$job" "$method" "$seed" "$local_slots" "$per_rank" "${budget:-$((4 * slots))}"
  "$@" "$lbo" run "$job" --run-root "$root" > "$root.log" 2>&1 || { tail -5 "$root.log" >&2; echo "run failed: $job" >&2; return 1; }
  local figures
  figures=$("$report" "$root/scale" 1 2 4)
  printf "%-7s %-11s %6s %8s %11s %11s %7s %6s" "$method" "$label" "$(value "$figures" wall_s)" \
    "$(value "$figures" utilization)" "$(value "$figures" latency_ms_p50)" "$(value "$figures" latency_ms_p99)" \
    "$(value "$figures" model_share)" "$(value "$figures" fallbacks)"
  for k in $(seq 2 "$tasks"); do
    printf " %9s %9s %9s" "$(value "$figures" "best_t${k}_at1")" "$(value "$figures" "best_t${k}_at2")" "$(value "$figures" "best_t${k}_at4")"
  done
  if [ -n "$early" ]; then
    printf " %9s %8s %10s %10s %6s %9s %9s" "$(value "$figures" utilization_open)" "$(value "$figures" reports)" "$(value "$figures" report_ms_p50)" \
      "$(value "$figures" report_ms_p99)" "$(value "$figures" stops)" "$(value "$figures" stop_ms_p50)" "$(value "$figures" stop_ms_p99)"
    printf " %9s %9s %9s %9s" "$(value "$figures" report_worker_ms_p50)" "$(value "$figures" report_worker_ms_p99)" \
      "$(value "$figures" stop_worker_ms_p50)" "$(value "$figures" stop_worker_ms_p99)"
  fi
  printf "\n"
  rm -rf "$root"
}

for slots in $slots_list; do
  for method in $methods; do
    for r in $(seq "$repeat"); do run_one "$method" "$slots" "$r" "$slots" 1 "$slots"; done
  done
done
if [ -n "$mpi" ]; then
  ranks=${mpi%x*}; per_rank=${mpi#*x}
  for method in $methods; do
    for r in $(seq "$repeat"); do
      run_one "$method" "mpi${ranks}x$per_rank" "$r" 1 "$per_rank" $((ranks * per_rank)) "${mpirun[@]}" -n $((ranks + 1))
    done
  done
fi
