#!/usr/bin/env bash
# bench/burst: what a wave of thousands of results that end together does to lbo's proposals.
# Hartmann-6 (minimized; the table's minimum is about -3.16) tabulated at 60,000 random points
# (seeded, so every run sees the same table), one task of TRIALS trials on WORKERS simulated
# workers whose trials all take 600 virtual seconds, `max_fit_results = 500`: the first wave is
# the random design, and each later wave's results arrive together. Each build given runs each
# seed in turn (A, B, A, B, ...: the machine's load falls on both alike).
#
# Per run: real seconds, utilization, p50 / p99 wait of a free slot (ms, from the journal:
# build/bench/scale_report), the best so far after k results in finishing order, and, per model
# wave (trials 2,048-4,095, 4,096-6,143, 6,144-8,191 at 2,048 workers), the mean of its best 20,
# its best 100 and all of it. With two builds, B - A paired over the seeds, ± its standard
# error (negative: B better).
#
# Usage: bench/burst.sh [--seeds "1 2 3"] [--workers 2048] [--trials 8192] [--policy-a LINES]
#                       [--policy-b LINES] BUILD_A [BUILD_B]
#   BUILD_*: a folder holding an lbo binary (a build folder, or a copy of its lbo); the same
#            folder twice, with --policy-a/-b, pairs two settings of one build
#   --policy-a/-b: lines added to the job's [policy] for build A/B ("refine = 2")
# Environment: TMPDIR (the table and run folders), LBO_BUILD_DIR (scale_report; default <repo>/build).
set -euo pipefail

seeds="1 2 3"
workers=2048
trials=8192
policy=("" "")
while [ $# -gt 0 ]; do
  case "$1" in
    --seeds) seeds=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --policy-a) policy[0]=$2; shift 2 ;;
    --policy-b) policy[1]=$2; shift 2 ;;
    -*) echo "usage: $0 [--seeds LIST] [--workers N] [--trials N] [--policy-a LINES] [--policy-b LINES] BUILD_A [BUILD_B]" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 [--seeds LIST] [--workers N] [--trials N] [--policy-a LINES] [--policy-b LINES] BUILD_A [BUILD_B]" >&2; exit 2; }
builds=("$@")
for b in "${builds[@]}"; do [ -x "$b/lbo" ] || { echo "no lbo in $b" >&2; exit 2; }; done
bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
report=${LBO_BUILD_DIR:-$bench_dir/../build}/bench/scale_report
[ -x "$report" ] || { echo "missing $report: build the project first" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lbo-burst.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The table: Hartmann-6 (Dixon and Szegő 1978) at 60,000 points of a seeded stream.
/usr/bin/python3 - "$tmp/h6.csv" <<'PY'
import math, random, sys
A = [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14], [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]]
P = [[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
     [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]]
alpha = [1.0, 1.2, 3.0, 3.2]
def h6(x):
    return -sum(alpha[i] * math.exp(-sum(A[i][j] * (x[j] - P[i][j] * 1e-4) ** 2 for j in range(6))) for i in range(4))
r = random.Random(7)
with open(sys.argv[1], "w") as f:
    f.write("task,x1,x2,x3,x4,x5,x6,y\n")
    for _ in range(60000):
        x = [r.random() for _ in range(6)]
        f.write("h6," + ",".join(f"{v:.5f}" for v in x) + f",{h6(x):.6f}\n")
PY

write_job() {  # seed policy-lines
  cat <<EOF
name = "h6"
seed = $1
[objective]
table = "$tmp/h6.csv"
table_task = "task"
table_objective = "y"
direction = "minimize"
[policy]
surrogate = "lbo"
max_fit_results = 500
$2
[workers]
simulate = $workers
simulate_duration = 600
[space]
EOF
  local d
  for d in 1 2 3 4 5 6; do echo "x$d = { type = \"float\", low = 0, high = 1 }"; done
  printf '[[tasks]]\nname = "h6"\nbudget = %s\n' "$trials"
}

summary=$tmp/summary.txt
printf "%-5s %4s %7s %6s %8s %8s | %s\n" build seed real_s util p50_ms p99_ms "best@k ... ; per wave: top20 top100 mean ..."
for seed in $seeds; do
  for i in "${!builds[@]}"; do
    name=$(printf "\\x$(printf %x $((65 + i)))")
    root=$tmp/runs-$name-$seed
    write_job "$seed" "${policy[$i]}" > "$tmp/job-$name-$seed.toml"
    start=$(date +%s.%N)
    "${builds[$i]}/lbo" run "$tmp/job-$name-$seed.toml" --run-root "$root" > "$root.log" 2>&1 || { tail -5 "$root.log" >&2; exit 1; }
    real_s=$(/usr/bin/python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)")
    figures=$("$report" "$root/h6" 1)
    value() { echo "$figures" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
    line=$(/usr/bin/python3 - "$root/h6/results.csv" "$workers" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "ok"]
w = int(sys.argv[2])
ordered = sorted(rows, key=lambda r: (r["finished"], int(r["trial"])))
marks = [w, w + w // 4, w + w // 2, 2 * w, 3 * w, 4 * w]
best, at = float("inf"), []
for k, r in enumerate(ordered, 1):
    best = min(best, float(r["objective"]))
    if k in marks:
        at.append(f"{best:.3f}")
ys = {int(r["trial"]): float(r["objective"]) for r in rows}
waves = []
for lo in range(w, 4 * w, w):
    v = sorted(y for t, y in ys.items() if lo <= t < lo + w)
    if v:
        waves += [f"{statistics.mean(v[:20]):.3f}", f"{statistics.mean(v[:100]):.3f}", f"{statistics.mean(v):.3f}"]
print(" ".join(at), ";", " ".join(waves))
PY
)
    printf "%-5s %4s %7s %6s %8s %8s | %s\n" "$name" "$seed" "$real_s" "$(value utilization)" "$(value latency_ms_p50)" \
      "$(value latency_ms_p99)" "$line" | tee -a "$summary"
    rm -rf "$root" "$root.log"
  done
done

[ ${#builds[@]} -eq 2 ] || exit 0
/usr/bin/python3 - "$summary" "$workers" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    head, tail = line.split("|")
    name, seed = head.split()[:2]
    best, waves = tail.split(";")
    runs[(name, seed)] = [float(v) for v in best.split()] + [float(v) for v in waves.split()]
w = int(sys.argv[2])
labels = [f"best@{k}" for k in (w, w + w // 4, w + w // 2, 2 * w, 3 * w, 4 * w)]
labels += [f"wave {i} {m}" for i in (2, 3, 4) for m in ("top20", "top100", "mean")]
seeds = sorted({s for n, s in runs if (("A", s) in runs and ("B", s) in runs)}, key=int)
print(f"B - A over {len(seeds)} seed(s), ± standard error; B better / worse")
for i, label in enumerate(labels):
    d = [runs[("B", s)][i] - runs[("A", s)][i] for s in seeds if i < len(runs[("A", s)]) and i < len(runs[("B", s)])]
    if not d:
        continue
    se = statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else float("nan")
    print(f"{label:17s} {statistics.mean(d):+.3f} ± {se:.3f}   {sum(x < 0 for x in d)} / {sum(x > 0 for x in d)}")
PY
