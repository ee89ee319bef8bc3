#!/usr/bin/env bash
# bench/scale_simulated: lbo at thousands of workers without the cluster. The published DeepAR
# evaluations (jobs/examples/data/deepar/) as a tabulated objective, run simulated (README,
# "Simulated runs") on N virtual workers whose trials take DURATION virtual seconds, the
# master's real proposing and fitting time charged to the virtual clock. Per method and worker
# count: the real time the run took, the virtual time it covered, utilization, how long a free
# slot waited for work (p50/p99, virtual ms: the master's real cost), the model's share of
# proposals, trials per second of real time, and the mean over tasks of each task's best CRPS
# (lower is better), and util_open: utilization until the last trial started (without the drain
# at the end, slots idle while the last trials run), and of the waits: the longest of the first
# wave (from the run's start: reading the table, the initial design) and the p99 of the
# decisions after it (slots a result freed). Figures come from the journal
# (build/bench/scale_report).
#
# Usage: bench/scale_simulated.sh [--workers "64 256 1024"] [--methods "random gp lbo"]
#   (a method may carry [policy] keys: "lbo+max_fit_results=500")
#          [--trials-per-worker 2] [--duration 600] [--tasks 11] [--timeout 900]
#   --trials-per-worker K   K × N trials in all, split evenly over the tasks
#   --duration D            simulate_duration: seconds, "table" (each row's training time) or a
#                           distribution ("lognormal(6.4, 0.5)")
#   --timeout S             a run still going after S real seconds is stopped (SIGTERM) and
#                           reported from what it had done, marked "stopped"
# Environment: LBO_BUILD_DIR (default <repo>/build), TMPDIR (run folders).
set -euo pipefail

workers_list="64 256 1024"
methods="random gp lbo"
per_worker=2
duration=600
tasks=11
timeout_s=900
while [ $# -gt 0 ]; do
  case "$1" in
    --workers) workers_list=$2; shift 2 ;;
    --methods) methods=$2; shift 2 ;;
    --trials-per-worker) per_worker=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --tasks) tasks=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    *) echo "usage: $0 [--workers LIST] [--methods LIST] [--trials-per-worker K] [--duration D] [--tasks N] [--timeout S]" >&2; exit 2 ;;
  esac
done

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$bench_dir")
build=${LBO_BUILD_DIR:-$repo/build}
lbo=$build/lbo
report=$build/bench/scale_report
for bin in "$lbo" "$report"; do
  [ -x "$bin" ] || { echo "missing $bin: build the project first (cmake --build build)" >&2; exit 1; }
done
table=$repo/jobs/examples/data/deepar/DeepAR.csv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

case "$duration" in
  table|*\(*) duration_toml="\"$duration\"" ;;
  *) duration_toml=$duration ;;
esac

write_job() {  # write_job FILE METHOD WORKERS BUDGET_PER_TASK
  {
    echo "name = \"scale\""
    echo "seed = 1"
    echo "[objective]"
    echo "table = \"$table\""
    echo "table_objective = \"metric_CRPS\""
    echo "table_time = \"metric_time\""
    echo "direction = \"minimize\""
    echo "[policy]"
    # A method may carry policy keys: lbo+max_fit_results=500+output_warping="copula".
    echo "surrogate = \"${2%%+*}\""
    case "$2" in *+*) echo "${2#*+}" | tr '+' '\n' | sed 's/=/ = /' ;; esac
    echo "[workers]"
    echo "simulate = $3"
    echo "simulate_duration = $duration_toml"
    # As jobs/examples/deepar_table.toml: the table's columns are ln of the hyperparameters.
    echo "[space]"
    echo "hp_num_layers = { type = \"float\", low = 0.69, high = 1.39 }"
    echo "hp_num_cells = { type = \"float\", low = 3.4, high = 4.79 }"
    echo "hp_dropout_rate_log = { type = \"float\", low = -4.61, high = -0.69 }"
    echo "hp_learning_rate_log = { type = \"float\", low = -9.21, high = -2.3 }"
    echo "hp_num_batches_per_epoch_log = { type = \"float\", low = 2.3, high = 9.22 }"
    echo "hp_context_length_ratio_log = { type = \"float\", low = -2.9, high = 1.38 }"
    for name in electricity exchange-rate m4-Daily m4-Hourly m4-Monthly m4-Quarterly m4-Weekly m4-Yearly solar \
                traffic wiki-rolling; do
      echo "[[tasks]]"
      echo "name = \"$name\""
      echo "budget = $4"
    done
  } > "$1"
}

value() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# The mean over tasks of each task's best objective, from results.csv.
mean_best() {
  /usr/bin/python3 - "$1" <<'PY'
import csv, sys
best = {}
for r in csv.DictReader(open(sys.argv[1])):
    if r["status"] == "ok":
        best[r["task"]] = min(best.get(r["task"], float("inf")), float(r["objective"]))
print(f"{sum(best.values()) / len(best):.4f}" if best else "-")
PY
}

printf "%-7s %7s %7s %7s %8s %8s %11s %11s %7s %10s %9s %-7s %9s %12s %10s\n" method workers trials real_s virt_h util \
  lat_p50_ms lat_p99_ms model trials/s mean_best state util_open first_max_ms dec_p99_ms
for workers in $workers_list; do
  for method in $methods; do
    per_task=$(( (per_worker * workers + tasks - 1) / tasks ))
    job=$tmp/$(echo "$method" | tr '+=' '__')-$workers.toml root=$tmp/runs-$(echo "$method" | tr '+=' '__')-$workers
    write_job "$job" "$method" "$workers" "$per_task"
    # Only the first $tasks task names are written.
    /usr/bin/python3 - "$job" "$tasks" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
head, *blocks = text.split("[[tasks]]")
open(sys.argv[1], "w").write(head + "".join("[[tasks]]" + b for b in blocks[:int(sys.argv[2])]))
PY
    start=$(date +%s.%N)
    state=done
    set +e
    timeout -s TERM "$timeout_s" "$lbo" run "$job" --run-root "$root" > "$root.log" 2>&1
    status=$?
    set -e
    real_s=$(/usr/bin/python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$start" "$(date +%s.%N)")
    if [ "$status" -eq 124 ] || [ "$status" -eq 75 ]; then
      state=stopped
    elif [ "$status" -ne 0 ]; then
      tail -5 "$root.log" >&2; echo "run failed: $job" >&2; continue
    fi
    figures=$("$report" "$root/scale" 1)
    trials=$(($(wc -l < "$root/scale/results.csv") - 1))
    wall=$(value "$figures" wall_s)
    printf "%-7s %7s %7s %7s %8s %8s %11s %11s %7s %10s %9s %-7s %9s %12s %10s\n" "$method" "$workers" "$trials" "$real_s" \
      "$(/usr/bin/python3 -c "import sys; print(f'{float(sys.argv[1]) / 3600:.2f}')" "$wall")" \
      "$(value "$figures" utilization)" "$(value "$figures" latency_ms_p50)" "$(value "$figures" latency_ms_p99)" \
      "$(value "$figures" model_share)" "$(/usr/bin/python3 -c "import sys; print(f'{int(sys.argv[1]) / max(float(sys.argv[2]), 0.01):.0f}')" "$trials" "$real_s")" \
      "$(mean_best "$root/scale/results.csv")" "$state" "$(value "$figures" utilization_open)" \
      "$(value "$figures" first_ms_max)" "$(value "$figures" decision_ms_p99)"
    rm -rf "$root"
  done
done
