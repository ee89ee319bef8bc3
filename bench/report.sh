#!/usr/bin/env bash
# Report benchmark: how big report.html is and how long it takes to build and to draw for a
# run of N trials (default 10000). Makes the run with random search on the test objective
# (4 tasks, a conditional space, metrics, 1 in 20 trials failing, 2 slots), then times
# `lbo report` (the same work the master does at every checkpoint) over several runs, and
# Chromium's load of the page until the report's script is done (wall time of a headless
# --dump-dom, browser start included; the time to draw alone is that less an empty page's).
#
# Usage: bench/report.sh [N]
# Environment: LBO_BUILD_DIR (default <repo>/build), RUNS (timed runs of lbo report, default 5)
set -euo pipefail

n=${1:-10000}
runs=${RUNS:-5}
[[ $n =~ ^[1-9][0-9]*$ && $runs =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [N]" >&2; exit 2; }
bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${LBO_BUILD_DIR:-$(dirname "$bench_dir")/build}
lbo=$build/lbo
objective=$build/tests/objectives/lbo-test-objective
for bin in "$lbo" "$objective"; do
  [ -x "$bin" ] || { echo "$bin is missing: build lbo with its tests (scripts/build.sh)" >&2; exit 2; }
done
chromium=$(command -v chromium || true)
work=$(mktemp -d "${TMPDIR:-/tmp}/lbo-report-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
# calc EXPR: floating-point arithmetic (awk; bc is not on every machine).
calc() { awk "BEGIN { print $1 }"; }

per_task=$(( (n + 3) / 4 ))
cat > "$work/job.toml" <<JOB
name = "report-bench"
seed = 1
[objective]
command = ["$objective", "--metrics", "on"]
direction = "maximize"
[policy]
surrogate = "random"
[workers]
local_slots = 2
[space]
x = { type = "float", low = 0, high = 1 }
outcome = { type = "categorical", choices = ["ok", "ok2", "ok3", "ok4", "ok5", "ok6", "ok7", "ok8", "ok9", "ok10", "ok11", "ok12", "ok13", "ok14", "ok15", "ok16", "ok17", "ok18", "ok19", "fail"] }
model = { type = "categorical", choices = ["a", "b", "c"] }
k = { type = "int", low = 1, high = 20, when = { model = ["a", "b"] } }
lr = { type = "float", low = 0.0001, high = 0.1, log = true, when = { model = "c" } }
JOB
for t in 1 2 3 4; do printf '[[tasks]]\nname = "task%d"\nbudget = %d\n' "$t" "$per_task" >> "$work/job.toml"; done

start=$(now)
"$lbo" run "$work/job.toml" --run-root "$work/runs" 2> "$work/run.log" || { tail "$work/run.log"; exit 1; }
run_dir=$work/runs/report-bench
trials=$(($(wc -l < "$run_dir/results.csv") - 1))
printf 'run: %d trials in %.1f s; journal %.1f MB\n' "$trials" "$(calc "$(now) - $start")" \
  "$(calc "$(stat -c %s "$run_dir/journal.lbo") / 1000000")"

times=()
for _ in $(seq "$runs"); do
  s=$(now)
  "$lbo" report "$run_dir" > /dev/null
  times+=("$(calc "$(now) - $s")")
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
printf 'lbo report: median %.3f s, min %.3f s, max %.3f s over %d runs\n' \
  "$(echo "$sorted" | sed -n "$(( (runs + 1) / 2 ))p")" "$(echo "$sorted" | head -1)" "$(echo "$sorted" | tail -1)" "$runs"
printf 'report.html: %.2f MB (the chart library and script: %.2f MB)\n' \
  "$(calc "$(stat -c %s "$run_dir/report.html") / 1000000")" \
  "$(calc "($(stat -c %s "$(dirname "$bench_dir")/report/assets/vendor/echarts/echarts.min.js") + $(stat -c %s "$(dirname "$bench_dir")/report/assets/report.js")) / 1000000")"

if [ -n "$chromium" ]; then
  flags=(--headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/profile" --window-size=1400,900 --dump-dom)
  echo '<html><body>empty</body></html>' > "$work/empty.html"
  s=$(now); "$chromium" "${flags[@]}" "file://$work/empty.html" > /dev/null 2>&1; empty=$(calc "$(now) - $s")
  s=$(now); "$chromium" "${flags[@]}" "file://$run_dir/report.html" > "$work/dom.html" 2> /dev/null
  page=$(calc "$(now) - $s")
  grep -q 'data-ready="1"' "$work/dom.html" && ready=yes || ready=no
  printf 'chromium: %.2f s to load and draw (an empty page: %.2f s); script done: %s; figures: %s\n' "$page" "$empty" "$ready" \
    "$(grep -o 'data-figures="[0-9]*"' "$work/dom.html" | head -1)"
else
  echo "chromium: not installed (scripts/setup.sh installs it); draw time not measured"
fi
