#!/usr/bin/env bash
# Promotion mode ([early_stopping] mode = "promotion"): each trial keeps LBO_CHECKPOINT_DIR while
# it may resume; once its task is done the folders of the trials that cannot resume go, but the
# task's best trial's, and the log says how many and how large ("keep_checkpoints", issue 56: six
# paused trials of 300 MB left 1.8 GB). "all" keeps every one, "none" none.
source "$(dirname "$0")/common.sh"

# The test objective writes its step to $LBO_CHECKPOINT_DIR/step; 64 kB more stand for a model.
cat > "$SCRATCH/objective.sh" <<SH
#!/bin/sh
head -c 65536 /dev/zero > "\$LBO_CHECKPOINT_DIR/model.bin"
exec "$LBO_TEST_OBJECTIVE" --function branin --reports 9 --report-ms 2
SH
chmod +x "$SCRATCH/objective.sh"
write_job() {  # write_job NAME [KEY LINE]
  cat > "$SCRATCH/$1.toml" <<JOB
name = "$1"
seed = 3
[objective]
command = ["$SCRATCH/objective.sh"]
direction = "minimize"
[policy]
surrogate = "random"
[workers]
local_slots = 2
[early_stopping]
rule = "hyperband"
mode = "promotion"
step_name = "epoch"
max_step = 9
${2:-}
[space]
x1 = { type = "float", low = -5, high = 10 }
x2 = { type = "float", low = 0, high = 15 }
[[tasks]]
name = "a"
budget = 9
[[tasks]]
name = "b"
budget = 6
JOB
}

check() {  # check NAME KEEP: the checkpoint folders left are what KEEP says; the log says what went
  python3 - "$SCRATCH/runs/$1" "$2" "$SCRATCH/$1.log" <<'PY' || { cat "$SCRATCH/$1.log"; fail "$1: checkpoint folders"; }
import csv, os, re, sys
run, keep, log = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
rows = list(csv.DictReader(open(os.path.join(run, "results.csv"))))
assert len(rows) == 15, len(rows)
left = {int(t) for t in os.listdir(os.path.join(run, "trials")) if os.path.isdir(os.path.join(run, "trials", t, "checkpoint"))}
for task, budget in (("a", 9), ("b", 6)):
    mine = [r for r in rows if r["task"] == task]
    ok = [r for r in mine if r["status"] == "ok"]
    best = min(ok, key=lambda r: float(r["objective"]))
    ids = {int(r["trial"]) for r in mine}
    expected = {"all": ids, "none": set(), "best": {int(best["trial"])}}[keep]
    assert left & ids == expected, (task, sorted(left & ids), sorted(expected))
    said = re.search(rf"task {task}: removed the checkpoint folders of (\d+) trial\(s\) that cannot resume \(([\d.]+) kB\)", log)
    if keep == "all":
        assert not said, said.group(0)
        continue
    assert said, f"task {task}: no line says what was removed"
    assert int(said.group(1)) == budget - len(expected), (said.group(0), budget, expected)
    assert float(said.group(2)) >= 64 * int(said.group(1)), said.group(0)  # each held its 64 kB model
    assert (f"kept trial {best['trial']}'s (the task's best)" in said.string) == (keep == "best")
PY
}

for keep in best all none; do
  name="keep-$keep"
  if [ "$keep" = best ]; then write_job "$name"; else write_job "$name" "keep_checkpoints = \"$keep\""; fi
  "$LBO_BIN" run "$SCRATCH/$name.toml" --run-root "$SCRATCH/runs" 2> "$SCRATCH/$name.log" \
    || { cat "$SCRATCH/$name.log"; fail "$name: the run failed"; }
  check "$name" "$keep"
done
echo "promotion mode: the checkpoint folders of trials that cannot resume removed and said; best, all, none kept as asked"

# A run killed before it tidied (its task done, the folders still there) tidies on resume.
rm -rf "$SCRATCH/runs/keep-best"
"$LBO_BIN" run "$SCRATCH/keep-best.toml" --run-root "$SCRATCH/runs" 2> /dev/null || fail "keep-best: the second run failed"
for t in "$SCRATCH"/runs/keep-best/trials/*; do mkdir -p "$t/checkpoint"; head -c 65536 /dev/zero > "$t/checkpoint/model.bin"; done
"$LBO_BIN" run "$SCRATCH/keep-best.toml" --run-root "$SCRATCH/runs" 2> "$SCRATCH/keep-best.log" || fail "keep-best: the resume failed"
check keep-best best
echo "a resumed run removes what a killed one left"
