#!/usr/bin/env bash
# Soak: one run killed with kill -9 at random moments, SOAK_ROUNDS times (default 40), on a
# different number of slots each time, then finished. After every round: no committed result
# changed or vanished, the journal holds no damage (a kill leaves at most a torn last record),
# and at most the trials that were running ran again. At the end: exactly the budgets, every
# trial once, no objective process left.
source "$(dirname "$0")/common.sh"
rounds=${SOAK_ROUNDS:-40}
root="$SCRATCH/runs"; run="$root/soak"; mkdir -p "$root"
cat > "$SCRATCH/soak.toml" <<JOB
name = "soak"
seed = 12
grace_s = 0.5
checkpoint_every_s = 0.2
[objective]
command = ["sh", "-c", "echo \$LBO_TRIAL_ID >> $root/ran.log; exec $LBO_TEST_OBJECTIVE --function branin"]
direction = "minimize"
retries = 1
[policy]
surrogate = "random"
[space]
x1 = { type = "float", low = -5, high = 10 }
x2 = { type = "float", low = 0, high = 15 }
sleep_ms = { type = "int", low = 20, high = 60 }
outcome = { type = "categorical", choices = ["ok", "ok2", "ok3", "fail"] }
[[tasks]]
name = "first"
budget = 2500
[[tasks]]
name = "second"
budget = 500
JOB


RANDOM=12
before=""
reruns_allowed=0
for round in $(seq "$rounds"); do
  slots=$((RANDOM % 3 + 2))
  "$LBO_BIN" run "$SCRATCH/soak.toml" --run-root "$root" --local-slots "$slots" > /dev/null 2>> "$SCRATCH/soak.log" &
  pid=$!
  sleep "0.$((RANDOM % 45 + 5))"
  kill -9 "$pid" 2> /dev/null || fail "round $round: the run ended before it was killed; raise the budgets"
  wait "$pid" 2> /dev/null || true
  reruns_allowed=$((reruns_allowed + slots))
  now=$(committed "$run/results.csv")
  keeps "$before" "$now" "round $round"
  before=$now
  "$LBO_BIN" status "$run" > "$SCRATCH/status.txt" 2>&1 || { cat "$SCRATCH/status.txt"; fail "round $round: status failed"; }
  if grep "^warning:" "$SCRATCH/status.txt" | grep -v "of a torn last record" | grep -q .; then
    cat "$SCRATCH/status.txt"; fail "round $round: a kill -9 left more than a torn last record"
  fi
done
"$LBO_BIN" run "$SCRATCH/soak.toml" --run-root "$root" --local-slots 8 2>> "$SCRATCH/soak.log" \
  || { tail -5 "$SCRATCH/soak.log"; fail "the final resume failed"; }
python3 - "$run/results.csv" <<'PY' || fail "the run did not end with exactly its budgets"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ids = sorted(int(r["trial"]) for r in rows)
assert ids == list(range(len(ids))), "trial ids are not 0..n-1, each once"
per_task = {}
for r in rows:
    per_task[r["task"]] = per_task.get(r["task"], 0) + 1
    want = "failed" if r["outcome"] == "fail" else "ok"
    assert r["status"] == want, f"trial {r['trial']}: outcome {r['outcome']} but status {r['status']}"
assert per_task == {"first": 2500, "second": 500}, per_task
PY
keeps "$before" "$(committed "$run/results.csv")" "the final resume"
# Each trial starts once per attempt (2 for a failed one); beyond that, only trials a kill
# interrupted start again.
extra=$(python3 - "$root/ran.log" "$run/results.csv" <<'PY'
import collections, csv, sys
starts = collections.Counter(open(sys.argv[1]).read().split())
attempts = {r["trial"]: 2 if r["outcome"] == "fail" else 1 for r in csv.DictReader(open(sys.argv[2]))}
print(sum(max(0, n - attempts.get(t, 0)) for t, n in starts.items()))
PY
)
[ "$extra" -le "$reruns_allowed" ] || fail "$extra extra starts of objectives, more than the $reruns_allowed slots the kills interrupted"
sleep 0.5
[ "$(objectives_left)" -eq 0 ] || fail "objective processes outlived the run"
echo "soak: $rounds kill -9 rounds, $(wc -l < "$root/ran.log") objective starts ($extra cut short by a kill), budgets exact, nothing left running"
