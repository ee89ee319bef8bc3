#!/usr/bin/env bash
# The report in a real browser: builds report.html for real runs and loads it in headless
# Chromium (no network), then checks that its scripts raised nothing on the console and that
# every figure the page laid out was drawn (each chart element holds an ECharts <svg>), and
# saves a PNG screenshot.
#
#   browser.sh OUT_DIR              runs a small lifelong job (lbo with GP-Hedge, failures and
#                                   retries, two slots, two open tasks) and a gp run of it, then
#                                   checks its report and the side-by-side page
#   browser.sh OUT_DIR RUN_DIR...   checks the report of existing runs (e.g. runs/quickstart;
#                                   the README's screenshot is made this way)
#
# Screenshots: OUT_DIR/report.png (and OUT_DIR/compare.png, OUT_DIR/compare-methods.png: lbo
# compare's page). Needs LBO_BIN (and, for the
# job, LBO_TEST_OBJECTIVE): ctest sets both.
source "$(dirname "$0")/../integration/common.sh"
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
shift

chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || fail "no chromium on PATH: scripts/setup.sh installs Debian's chromium"

# check PAGE NAME: loads PAGE, prints its figure count, saves OUT/NAME.png.
check() {
  local page=$1 name=$2
  # The page's own scripts decide when they are done (data-ready); the virtual-time budget
  # lets them finish without wall-clock sleeps. A private profile: nothing of the user's.
  local flags=(--headless=new --no-sandbox --disable-gpu --no-first-run --disable-extensions
               --user-data-dir="$SCRATCH/profile-$name" --enable-logging=stderr --v=0
               --virtual-time-budget=30000 --window-size=1400,900)
  timeout 180 "$chromium" "${flags[@]}" --dump-dom "file://$page" > "$SCRATCH/$name.dom" 2> "$SCRATCH/$name.console" \
    || { tail -20 "$SCRATCH/$name.console"; fail "$name: chromium could not load the page"; }
  # Every console message of the page is a failure: the report logs nothing when it works.
  if grep -a 'CONSOLE' "$SCRATCH/$name.console" | grep -a "file://$page" > "$SCRATCH/$name.errors"; then
    cat "$SCRATCH/$name.errors" >&2
    fail "$name: the page wrote to the console"
  fi
  python3 - "$SCRATCH/$name.dom" "$name" <<'PY'
import sys
from html.parser import HTMLParser

class Figures(HTMLParser):
    """Counts chart elements and those holding an <svg>, and reads <body>'s data attributes."""
    def __init__(self):
        super().__init__()
        self.stack = []          # open elements: (tag, is_chart)
        self.charts = []         # per chart element: whether an svg was seen inside it
        self.body = {}
        self.errors = []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        is_chart = "chart" in (a.get("class") or "").split() and "data-figure" in a
        if is_chart:
            self.charts.append([a["data-figure"], False])
        if tag == "svg":
            for t, chart_index in reversed(self.stack):
                if chart_index is not None:
                    self.charts[chart_index][1] = True
                    break
        if "figure-error" in (a.get("class") or "").split():
            self.errors.append(a)
        if tag not in ("br", "img", "input", "meta", "link", "hr", "path", "rect", "circle", "line", "polyline", "polygon", "text", "tspan", "g", "image", "use"):
            self.stack.append((tag, len(self.charts) - 1 if is_chart else None))
    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

dom, name = sys.argv[1], sys.argv[2]
p = Figures()
p.feed(open(dom, encoding="utf-8", errors="replace").read())
if p.body.get("data-ready") != "1":
    sys.exit(f"FAIL: {name}: the report's script did not finish (no data-ready on <body>)")
if p.errors:
    sys.exit(f"FAIL: {name}: a figure failed: {p.errors}")
empty = [f for f, drawn in p.charts if not drawn]
if not p.charts or empty:
    sys.exit(f"FAIL: {name}: {len(p.charts)} chart elements, not drawn: {empty}")
declared = int(p.body.get("data-figures", "-1"))
if declared != len(p.charts):
    sys.exit(f"FAIL: {name}: the page says {declared} figures, {len(p.charts)} chart elements hold an svg")
print(f"{name}: {len(p.charts)} figures drawn: {' '.join(sorted(set(f for f, _ in p.charts)))}")
PY
  timeout 180 "$chromium" "${flags[@]/--window-size=1400,900/--window-size=1400,${SHOT_HEIGHT:-2400}}" \
    --hide-scrollbars --screenshot="$OUT/$name.png" "file://$page" > /dev/null 2>&1 \
    || fail "$name: no screenshot"
  [ -s "$OUT/$name.png" ] || fail "$name: the screenshot is empty"
  echo "$name: screenshot $OUT/$name.png"
}

if [ $# -gt 0 ]; then
  for run in "$@"; do
    "$LBO_BIN" report "$run" > /dev/null || fail "lbo report $run failed"
    check "$(cd "$run" && pwd)/report.html" "$(basename "$run")"
  done
  exit 0
fi

# A lifelong job with every figure's data: two open tasks (Hedge across tasks), GP-Hedge,
# failures (the test objective exits 3 when outcome = "fail") with a retry, metrics,
# conditional parameters, two slots, intermediate reports (4 steps) with ASHA stopping some.
write_job() {  # write_job FILE SURROGATE
  cat > "$1" <<JOB
name = "browser-$2"
seed = 4
[objective]
command = ["$LBO_TEST_OBJECTIVE", "--metrics", "on", "--sleep-ms", "20", "--reports", "4", "--report-ms", "5"]
direction = "maximize"
retries = 1
[policy]
surrogate = "$2"
acquisition = "hedge"
initial_random = 3
candidates = 256
[workers]
local_slots = 2
[schedule]
concurrent_tasks = 2
[early_stopping]
rule = "asha"
max_step = 4
[space]
x = { type = "float", low = 0, high = 1 }
outcome = { type = "categorical", choices = ["ok", "fail"] }
k = { type = "int", low = 1, high = 4, when = { outcome = "ok" } }
lr = { type = "float", low = 0.001, high = 0.1, log = true, when = { outcome = "ok" } }
[[tasks]]
name = "first"
budget = 14
[[tasks]]
name = "second"
budget = 14
[[tasks]]
name = "third"
budget = 10
JOB
}
write_job "$SCRATCH/lbo.toml" lbo
write_job "$SCRATCH/gp.toml" gp
for s in lbo gp; do
  "$LBO_BIN" run "$SCRATCH/$s.toml" --run-root "$SCRATCH/runs" 2> "$SCRATCH/$s.log" \
    || { tail -20 "$SCRATCH/$s.log"; fail "the $s run failed"; }
  [ -s "$SCRATCH/runs/browser-$s/report.html" ] || fail "the $s run wrote no report.html"
done
check "$SCRATCH/runs/browser-lbo/report.html" report
for figure in curves resource; do
  grep -q "data-figure=\"$figure\"" "$SCRATCH/report.dom" || fail "report: no $figure figure"
done
grep -q ',stopped,' "$SCRATCH/runs/browser-lbo/results.csv" || fail "no trial of the browser run was stopped early"
"$LBO_BIN" report "$SCRATCH/runs/browser-lbo" "$SCRATCH/runs/browser-gp" -o "$SCRATCH/compare.html" > /dev/null \
  || fail "lbo report of two runs failed"
check "$SCRATCH/compare.html" compare
# lbo compare's page: a chart per task, both methods on the same axes.
"$LBO_BIN" compare "$SCRATCH/gp.toml" --surrogates gp,random --seeds 2 --run-root "$SCRATCH/runs" > /dev/null \
  2> "$SCRATCH/compare-methods.log" || { tail -20 "$SCRATCH/compare-methods.log"; fail "lbo compare failed"; }
check "$SCRATCH/runs/browser-gp-compare/compare.html" compare-methods
for task in first second third; do
  grep -q "data-figure=\"best-$task\"" "$SCRATCH/compare-methods.dom" || fail "compare-methods: no chart of task $task"
done
# Two objectives under a limit: the report draws each task's Pareto set and its hypervolume,
# and lbo compare's page compares hypervolumes.
cat > "$SCRATCH/pareto.toml" <<JOB
name = "browser-pareto"
seed = 4
[objective]
command = ["$LBO_TEST_OBJECTIVE", "--function", "branin", "--pareto", "on", "--metrics", "on"]
objectives = [{ name = "value", direction = "minimize" }, { name = "cost", direction = "minimize" }]
[[constraints]]
name = "twice"
max = 100
[policy]
surrogate = "gp"
[space]
x1 = { type = "float", low = -5, high = 10 }
x2 = { type = "float", low = 0, high = 15 }
[[tasks]]
name = "a"
budget = 14
[[tasks]]
name = "b"
budget = 8
JOB
"$LBO_BIN" run "$SCRATCH/pareto.toml" --run-root "$SCRATCH/runs" 2> "$SCRATCH/pareto.log" \
  || { tail -20 "$SCRATCH/pareto.log"; fail "the two-objective run failed"; }
grep -Eq ',real,1,[^,]+,0,' "$SCRATCH/runs/browser-pareto/results.csv" || fail "no trial of the two-objective run broke the limit"
check "$SCRATCH/runs/browser-pareto/report.html" pareto
for figure in pareto hypervolume; do
  grep -q "data-figure=\"$figure\"" "$SCRATCH/pareto.dom" || fail "pareto: no $figure figure"
done
grep -q 'data-figure="pareto"' "$SCRATCH/report.dom" && fail "report: a Pareto figure in a run of one objective"
"$LBO_BIN" compare "$SCRATCH/pareto.toml" --surrogates gp,random --seeds 2 --run-root "$SCRATCH/runs" > /dev/null \
  2> "$SCRATCH/compare-pareto.log" || { tail -20 "$SCRATCH/compare-pareto.log"; fail "lbo compare of two objectives failed"; }
check "$SCRATCH/runs/browser-pareto-compare/compare.html" compare-pareto
grep -q "hypervolume so far" "$SCRATCH/compare-pareto.dom" || fail "compare-pareto: the page does not say it compares hypervolumes"
# Strings that once made the page draw nothing: a categorical choice "<!--" and another
# "<script>" (the HTML parser then looked for a second "</script>" past the data), and metrics
# strings of the objective with the same.
cat > "$SCRATCH/hostile.toml" <<JOB
name = "browser-hostile"
seed = 4
[objective]
command = ["$LBO_TEST_OBJECTIVE", "--metrics", "on", "--function", "<!--<script>&amp;\u2028"]
direction = "maximize"
[policy]
surrogate = "random"
[space]
x = { type = "float", low = 0, high = 1 }
tag = { type = "categorical", choices = ["<!--", "<script>", "</script><!--", "&lt;b&gt;"] }
[[tasks]]
name = "a"
budget = 8
JOB
"$LBO_BIN" run "$SCRATCH/hostile.toml" --run-root "$SCRATCH/runs" 2> "$SCRATCH/hostile.log" \
  || { tail -20 "$SCRATCH/hostile.log"; fail "the hostile run failed"; }
check "$SCRATCH/runs/browser-hostile/report.html" hostile
"$LBO_BIN" report "$SCRATCH/runs/browser-hostile" "$SCRATCH/runs/browser-lbo" -o "$SCRATCH/hostile-two.html" > /dev/null \
  || fail "lbo report of the hostile run and another failed"
check "$SCRATCH/hostile-two.html" hostile-two
echo "browser test ok"
