#!/usr/bin/env bash
# lbo compare: the job run with each surrogate and seed in <run-root>/<name>-compare/; its
# compare.csv against the same figures computed here from the runs' results.csv files (mean
# best so far, standard error, the first method's paired advantage; failed trials, so that a
# run may have no best yet after its first trials); a second call runs nothing;
# a comparison stopped by SIGTERM (exit 75) continues with the same command and, with --sync,
# ends with the figures of one that ran through; bad input is exit 2 with nothing written.
source "$(dirname "$0")/common.sh"

cat > "$SCRATCH/job.toml" <<JOB
name = "cmp"
seed = 7
[objective]
command = ["$LBO_TEST_OBJECTIVE", "--function", "branin", "--sleep-ms", "150"]
direction = "minimize"
[policy]
surrogate = "lbo"
initial_random = 3
candidates = 128
[workers]
local_slots = 2
[space]
x1 = { type = "float", low = -5, high = 10 }
x2 = { type = "float", low = 0, high = 15 }
outcome = { type = "categorical", choices = ["ok", "fail"] }
[[tasks]]
name = "a"
budget = 6
[[tasks]]
name = "b"
budget = 6
JOB

compare() {  # compare RUN_ROOT [more options]
  local root=$1
  shift
  "$LBO_BIN" compare "$SCRATCH/job.toml" --surrogates gp,random --seeds 3 --sync --run-root "$root" "$@"
}

compare "$SCRATCH/whole" > "$SCRATCH/whole.out" 2> "$SCRATCH/whole.log" || { tail -20 "$SCRATCH/whole.log"; fail "lbo compare failed"; }
dir="$SCRATCH/whole/cmp-compare"
for m in gp random; do
  for s in 1 2 3; do
    [ -s "$dir/$m-seed$s/results.csv" ] || fail "no run $m-seed$s"
    grep -q "surrogate = '$m'" "$dir/$m-seed$s/job.toml" || fail "$m-seed$s: its job.toml does not say surrogate $m"
    grep -q "^seed = $((6 + s))" "$dir/$m-seed$s/job.toml" || fail "$m-seed$s: its seed is not $((6 + s))"
  done
done
grep -q "^task a (minimize" "$SCRATCH/whole.out" || fail "no summary on stdout: $(cat "$SCRATCH/whole.out")"
[ -s "$dir/compare.html" ] || fail "no compare.html"
grep -q "window.LBO_COMPARE = {" "$dir/compare.html" || fail "compare.html holds no data"

python3 - "$dir" <<'PY' || fail "compare.csv disagrees with the runs"
import csv, math, os, statistics, sys
d = sys.argv[1]
rows = {(r["task"], int(r["trials"]), r["method"]): r for r in csv.DictReader(open(os.path.join(d, "compare.csv")))}
def curves(method, seed):
    out = {}
    results = sorted(csv.DictReader(open(os.path.join(d, f"{method}-seed{seed}", "results.csv"))), key=lambda r: int(r["trial"]))
    for task in ("a", "b"):
        best, curve = math.inf, []
        for r in results:
            if r["task"] != task:
                continue
            if r["status"] == "ok":
                best = min(best, float(r["objective"]))
            curve.append(best)
        out[task] = curve
    return out
c = {(m, s): curves(m, s) for m in ("gp", "random") for s in (1, 2, 3)}
assert len(rows) == 2 * 6 * 2, len(rows)
def close(a, b):
    return abs(a - b) <= 1e-8 * max(1.0, abs(b))
def check(field, xs):  # a mean and its standard error, empty when there is nothing to average
    if not xs:
        assert r[field] == "", (r, field)
        return
    assert close(float(r[field]), statistics.mean(xs)), (r, field, xs)
    se = {"mean_best": "stderr", "paired_advantage": "paired_stderr"}[field]
    if len(xs) < 2:
        assert r[se] == "", (r, se)
    else:
        assert close(float(r[se]), statistics.stdev(xs) / math.sqrt(len(xs))), (r, se, xs)
fewer = 0
for task in ("a", "b"):
    for k in range(1, 7):
        for m in ("gp", "random"):
            r = rows[(task, k, m)]
            # A run whose first k trials of the task all failed has no best yet: left out.
            bests = [b for b in (c[(m, s)][task][k - 1] for s in (1, 2, 3)) if b != math.inf]
            fewer += len(bests) < 3
            assert r["runs"] == str(len(bests)), (r, bests)
            check("mean_best", bests)
            if m == "gp":
                assert r["paired_advantage"] == "" and r["first_better"] == "", r
                continue
            # gp's advantage, minimizing: random's best less gp's, on the seeds where both have one.
            adv = [c[("random", s)][task][k - 1] - c[("gp", s)][task][k - 1] for s in (1, 2, 3)
                   if c[("random", s)][task][k - 1] != math.inf and c[("gp", s)][task][k - 1] != math.inf]
            check("paired_advantage", adv)
            assert int(r["first_better"]) == sum(a > 0 for a in adv) and int(r["first_worse"]) == sum(a < 0 for a in adv), (r, adv)
assert fewer > 0, "no run began with a failed trial: the test checks less than it says"
print(f"compare.csv: 24 rows as computed from the runs ({fewer} with a run that had no ok result yet)")
PY

# The verdict on stdout: gp's best less random's over every task and seed, pooled, at 5 and 6
# trials, by hand from the runs' results.csv files.
python3 - "$dir" "$SCRATCH/whole.out" <<'PY' || { cat "$SCRATCH/whole.out"; fail "the verdict disagrees with the runs"; }
import csv, math, os, re, statistics, sys
d, out = sys.argv[1], open(sys.argv[2]).read()
def best(method, seed, task, k):
    rows = sorted((r for r in csv.DictReader(open(os.path.join(d, f"{method}-seed{seed}", "results.csv"))) if r["task"] == task),
                  key=lambda r: int(r["trial"]))[:k]
    ok = [float(r["objective"]) for r in rows if r["status"] == "ok"]
    return min(ok) if ok else None
for k in (5, 6):
    diffs = []
    for task in ("a", "b"):
        for s in (1, 2, 3):
            g, r = best("gp", s, task, k), best("random", s, task, k)
            if g is not None and r is not None:
                diffs.append(r - g)  # minimizing: > 0, gp better
    mean, se = statistics.mean(diffs), statistics.stdev(diffs) / math.sqrt(len(diffs))
    line = re.search(rf"gp against random at {k} trials over (\d+) task run\(s\): (ahead|behind) by (\S+) ± (\S+): (.*)", out)
    assert line, (k, out)
    assert int(line.group(1)) == len(diffs), (line.group(0), diffs)
    assert (line.group(2) == "ahead") == (mean >= 0), (line.group(0), mean)
    assert f"{abs(mean):.3g}" == line.group(3) and f"{se:.3g}" == line.group(4), (line.group(0), mean, se)
    assert line.group(5).startswith("distinguishable" if abs(mean) > 2 * se else "not distinguishable"), line.group(0)
assert re.search(r"spent per run \(mean\):  gp 6 trials", out) or re.search(r"spent per run \(mean\):  gp 12 trials", out), out
print("verdict: as computed from the runs")
PY

# A second call finds every run finished and runs none.
compare "$SCRATCH/whole" > /dev/null 2> "$SCRATCH/again.log" || fail "the second lbo compare failed"
[ "$(grep -c ': finished in ' "$SCRATCH/again.log")" = 6 ] || fail "the second call ran again: $(cat "$SCRATCH/again.log")"
grep -q "trials finished" "$SCRATCH/again.log" && fail "the second call ran a trial"

# Stopped in its third run, continued by the same command: the figures of the whole one.
# (lbo itself in the background, not a shell function's subshell, which the signal would end)
"$LBO_BIN" compare "$SCRATCH/job.toml" --surrogates gp,random --seeds 3 --sync --run-root "$SCRATCH/part" \
  > /dev/null 2> "$SCRATCH/part.log" &
pid=$!
wait_for_rows "$SCRATCH/part/cmp-compare/gp-seed2/results.csv" 2
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
[ "$status" = 75 ] || { tail -5 "$SCRATCH/part.log"; fail "a stopped lbo compare exited $status, not 75"; }
grep -q "stopped at gp, seed 2 (3/6) (exit 75); the same command continues it" "$SCRATCH/part.log" \
  || fail "no word of where it stopped: $(tail -3 "$SCRATCH/part.log")"
[ -e "$SCRATCH/part/cmp-compare/random-seed2" ] && fail "a run started after the stop"
[ -e "$SCRATCH/part/cmp-compare/compare.csv" ] && fail "a stopped comparison wrote compare.csv"
compare "$SCRATCH/part" > /dev/null 2> "$SCRATCH/rest.log" || { tail -20 "$SCRATCH/rest.log"; fail "the continued lbo compare failed"; }
cmp "$SCRATCH/part/cmp-compare/compare.csv" "$dir/compare.csv" || fail "stopped and continued, the figures differ from the whole run's"

# Bad input: exit 2, nothing written.
for bad in "--surrogates gp,nothing" "--surrogates gp,gp" "--seeds 0" "--surrogates="; do
  status=0
  # shellcheck disable=SC2086
  "$LBO_BIN" compare "$SCRATCH/job.toml" $bad --run-root "$SCRATCH/bad" > /dev/null 2> "$SCRATCH/bad.log" || status=$?
  [ "$status" = 2 ] || fail "lbo compare $bad: exit $status, not 2"
  [ -e "$SCRATCH/bad" ] && fail "lbo compare $bad wrote $SCRATCH/bad"
done
grep -q "is not a surrogate; use lbo, gp" "$SCRATCH/bad.log" || true
echo "compare run ok"
