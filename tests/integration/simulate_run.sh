#!/usr/bin/env bash
# A simulated run (--simulate, [workers] simulate): trials complete on a virtual clock, each
# taking its table row's time; results.csv marks its times virtual; the master's real time is on
# the clock (with zero-length trials the virtual span is what the master spent, at most the
# real time the run took); a --sync run stopped by SIGTERM resumes to the unstopped run's
# trials, its clock going on from where it stopped; a simulated run cannot be continued for
# real; --simulate of a command's job is exit 2 with nothing written.
source "$(dirname "$0")/common.sh"

python3 - "$SCRATCH/evals.csv" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("task,x,opt,score,seconds\n")
    for task, shift in (("first", 0.3), ("second", 0.6)):
        for i in range(21):
            for opt in ("a", "b"):
                x = i / 20
                f.write(f"{task},{x},{opt},{-(x - shift) ** 2 + (0.1 if opt == 'b' else 0)!r},{100 + 10 * i}\n")
PY

write_job() {  # write_job FILE BUDGET [WORKERS_LINES]
  cat > "$1" <<JOB
name = "sim"
seed = 5
[objective]
table = "$SCRATCH/evals.csv"
table_objective = "score"
table_time = "seconds"
direction = "maximize"
[policy]
surrogate = "lbo"
initial_random = 3
[workers]
${3:-}
[space]
x = { type = "float", low = 0, high = 1 }
opt = { type = "categorical", choices = ["a", "b"] }
[[tasks]]
name = "first"
budget = $2
[[tasks]]
name = "second"
budget = $2
JOB
}

# Durations from the table, 4 virtual slots, --sync.
write_job "$SCRATCH/job.toml" 12
real_start=$(date +%s.%N)
"$LBO_BIN" run "$SCRATCH/job.toml" --simulate 4 --sync --run-root "$SCRATCH/a" 2> "$SCRATCH/a.log" \
  || { cat "$SCRATCH/a.log"; fail "lbo run --simulate exited $?"; }
real_s=$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$real_start" "$(date +%s.%N)")
grep -q "simulated: 4 virtual slot(s) on a virtual clock, durations from column seconds of evals.csv" "$SCRATCH/a.log" \
  || { cat "$SCRATCH/a.log"; fail "the log does not say the run is simulated"; }
grep -q "of virtual time in .* of real time" "$SCRATCH/a.log" || fail "the log does not sum up the virtual time"
python3 - "$SCRATCH/evals.csv" "$SCRATCH/a/sim/results.csv" "$real_s" <<'PY' || fail "the virtual times are wrong"
import csv, sys
from datetime import datetime
rows = {int(r.pop("line")): r for r in ({**r, "line": i} for i, r in enumerate(csv.DictReader(open(sys.argv[1])), start=2))}
results = list(csv.DictReader(open(sys.argv[2])))
real_s = float(sys.argv[3])
t = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
assert len(results) == 24, len(results)
late = 0.0
for r in results:
    assert r["clock"] == "virtual", r
    row = rows[int(r["metric:table_line"])]
    assert float(r["duration_s"]) == float(row["seconds"]), (r, row)
    took = t(r["finished"]) - t(r["started"])
    # Completed when due, or later by what the master was doing meanwhile (real time).
    assert took >= float(row["seconds"]) - 1e-3, (took, r)
    late = max(late, took - float(row["seconds"]))
assert late <= real_s + 1e-3, (late, real_s)
# --sync rounds of 4: each round lasts at least its longest trial, so the run spans at least
# the sum of those, and at most that plus the real time the master spent.
by_id = sorted(results, key=lambda r: int(r["trial"]))
rounds = sum(max(float(r["duration_s"]) for r in by_id[i:i + 4]) for i in range(0, 24, 4))
span = max(t(r["finished"]) for r in results) - min(t(r["started"]) for r in results)
assert rounds - 1e-3 <= span <= rounds + real_s + 1e-3, (rounds, span, real_s)
print(f"24 trials, virtual span {span:.0f} s over rounds of {rounds:.0f} s, real {real_s:.1f} s")
PY
"$LBO_BIN" status "$SCRATCH/a/sim" | grep -q "^last checkpoint: .* (virtual time: a simulated run)$" \
  || { "$LBO_BIN" status "$SCRATCH/a/sim"; fail "lbo status does not say the checkpoint's time is virtual"; }
"$LBO_BIN" report "$SCRATCH/a/sim" --output "$SCRATCH/a.html" > /dev/null 2>&1 || fail "lbo report exited $?"
grep -q '"virtual_clock":true' "$SCRATCH/a.html" || fail "the report does not know the run's times are virtual"

# The master's time is charged: with trials that take no time, the virtual clock moves only
# while the master works, so the run's virtual span is positive and at most its real time.
write_job "$SCRATCH/zero.toml" 10 $'simulate = 3\nsimulate_duration = 0'
real_start=$(date +%s.%N)
"$LBO_BIN" run "$SCRATCH/zero.toml" --run-root "$SCRATCH/z" 2> "$SCRATCH/z.log" || { cat "$SCRATCH/z.log"; fail "exit $?"; }
real_s=$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$real_start" "$(date +%s.%N)")
python3 - "$SCRATCH/z/sim/results.csv" "$real_s" <<'PY' || fail "the master's time is not what moves a zero-duration run's clock"
import csv, sys
from datetime import datetime
t = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
results = list(csv.DictReader(open(sys.argv[1])))
assert len(results) == 20 and all(float(r["duration_s"]) == 0 for r in results), results
span = max(t(r["finished"]) for r in results) - min(t(r["started"]) for r in results)
assert 0 < span <= float(sys.argv[2]) + 1e-3, (span, sys.argv[2])
print(f"zero-length trials: virtual span {span:.3f} s within real {float(sys.argv[2]):.3f} s")
PY

"$LBO_BIN" validate "$REPO/jobs/examples/deepar_simulated.toml" | grep -q "simulated on 64 virtual slot(s), durations table" \
  || fail "jobs/examples/deepar_simulated.toml does not validate as a simulated job"

# SIGTERM and resume under --sync: the unstopped run's trials; the clock goes on from the stop.
write_job "$SCRATCH/long.toml" 40 "simulate = 4"
"$LBO_BIN" run "$SCRATCH/long.toml" --sync --run-root "$SCRATCH/whole" 2> "$SCRATCH/whole.log" || fail "lbo run exited $?"
"$LBO_BIN" run "$SCRATCH/long.toml" --sync --run-root "$SCRATCH/b" 2> "$SCRATCH/b.log" &
pid=$!
wait_for_rows "$SCRATCH/b/sim/results.csv" 12
kill -TERM "$pid"
set +e; wait "$pid"; status=$?; set -e
[ "$status" -eq 75 ] || { cat "$SCRATCH/b.log"; fail "a stopped simulated run exited $status, expected 75"; }
cp "$SCRATCH/b/sim/results.csv" "$SCRATCH/stopped.csv"
sed 's/^simulate = 4$//' "$SCRATCH/long.toml" > "$SCRATCH/real.toml"
set +e
"$LBO_BIN" run "$SCRATCH/real.toml" --sync --run-root "$SCRATCH/b" 2> "$SCRATCH/real.log"; status=$?
set -e
[ "$status" -eq 2 ] || { cat "$SCRATCH/real.log"; fail "continuing a simulated run for real: exit $status, expected 2"; }
grep -q "workers.simulate: the run was simulated (its times are virtual); simulate it again" "$SCRATCH/real.log" \
  || { cat "$SCRATCH/real.log"; fail "the refusal does not say why"; }
"$LBO_BIN" run "$SCRATCH/long.toml" --sync --run-root "$SCRATCH/b" 2>> "$SCRATCH/b.log" || { cat "$SCRATCH/b.log"; fail "resume exited $?"; }
first=$(python3 "$HERE/comparable.py" "$SCRATCH/whole/sim/results.csv" --keep-attempts)
again=$(python3 "$HERE/comparable.py" "$SCRATCH/b/sim/results.csv" --keep-attempts)
[ "$first" == "$again" ] || { diff <(echo "$first") <(echo "$again"); fail "a --sync simulated run stopped and resumed differs"; }
python3 - "$SCRATCH/stopped.csv" "$SCRATCH/b/sim/results.csv" <<'PY' || fail "the resumed clock went back"
import csv, sys
from datetime import datetime
t = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
before = list(csv.DictReader(open(sys.argv[1])))
stop = max(t(r["finished"]) for r in before)
known = {r["trial"] for r in before}
after = [r for r in csv.DictReader(open(sys.argv[2])) if r["trial"] not in known]
assert after and all(t(r["started"]) >= stop - 1e-3 for r in after), (stop, after[:2])
PY

# --simulate of a job whose objective is a command: exit 2, nothing written.
cat > "$SCRATCH/command.toml" <<JOB
name = "cmd"
[objective]
command = ["/bin/true"]
direction = "maximize"
[space]
x = { type = "float", low = 0, high = 1 }
[[tasks]]
name = "a"
budget = 2
JOB
set +e
"$LBO_BIN" run "$SCRATCH/command.toml" --simulate 8 --run-root "$SCRATCH/c" 2> "$SCRATCH/c.log"; status=$?
set -e
[ "$status" -eq 2 ] || { cat "$SCRATCH/c.log"; fail "--simulate of a command: exit $status, expected 2"; }
grep -q -- "--simulate: a simulated run looks its trials up in a table, and this job runs a command" "$SCRATCH/c.log" \
  || { cat "$SCRATCH/c.log"; fail "the message does not say why"; }
[ ! -e "$SCRATCH/c" ] || fail "a refused --simulate wrote $SCRATCH/c"
# 200 virtual slots: more of a task's trials run than its batch conditions on; the others are
# penalized, and the log says so once per task.
write_job "$SCRATCH/wide.toml" 300 $'simulate = 200\nsimulate_duration = 600'
"$LBO_BIN" run "$SCRATCH/wide.toml" --run-root "$SCRATCH/w" 2> "$SCRATCH/w.log" \
  || { cat "$SCRATCH/w.log"; fail "the 200-slot run exited $?"; }
[ "$(grep -c "of its trials are running; its proposals condition the model on at most 128 of them and keep out of the others' neighbourhoods (local penalization" "$SCRATCH/w.log")" -ge 1 ] \
  || { cat "$SCRATCH/w.log"; fail "the log does not say that running trials are penalized"; }
python3 - "$SCRATCH/w/sim/results.csv" <<'PY' || fail "the 200-slot run's results are wrong"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 600 and all(r["status"] == "ok" for r in rows), len(rows)
# A wave's proposals do not wait for the lifelong fit: a GP on the task's own results proposes
# until a fit covers it (interim-gp, saying why), an earlier task's posterior before that.
model = sum(r["proposed_by"] in ("model", "model-prior", "interim-gp") for r in rows)
assert model > 300, f"the model proposed {model} of 600"
interim = [r for r in rows if r["proposed_by"] == "interim-gp"]
assert all(r["proposal_note"].startswith("a GP on ") for r in interim), interim[:1]
PY

echo "simulated runs: virtual durations and times, the master's time charged, --sync resume, refusals, penalized running trials"
