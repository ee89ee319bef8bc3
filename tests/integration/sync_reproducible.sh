#!/usr/bin/env bash
# `lbo run --sync` with a fixed seed is reproducible exactly: two runs of a GP-Hedge job on 3
# slots give the same trials, in the same order, with the same values; a different seed does not.
source "$(dirname "$0")/common.sh"

write_job() {  # write_job FILE SEED
  cat > "$1" <<JOB
name = "sync"
seed = $2
[objective]
command = ["$LBO_TEST_OBJECTIVE", "--function", "branin"]
direction = "minimize"
[policy]
surrogate = "gp"
acquisition = "hedge"
initial_random = 3
[workers]
local_slots = 3
[space]
x1 = { type = "float", low = -5, high = 10 }
x2 = { type = "float", low = 0, high = 15 }
[[tasks]]
name = "branin"
budget = 15
JOB
}

# Everything but duration_s, worker, started, finished, rank and slot, which depend on timing.
run() {  # run JOB ROOT → prints the comparable columns of results.csv
  "$LBO_BIN" run "$1" --sync --run-root "$2" 2> "$2.log" || { cat "$2.log"; fail "lbo run --sync exited $?"; }
  python3 "$HERE/comparable.py" "$2/sync/results.csv" --keep-attempts --keep-order
}

write_job "$SCRATCH/a.toml" 4
write_job "$SCRATCH/b.toml" 5
first=$(run "$SCRATCH/a.toml" "$SCRATCH/run1")
second=$(run "$SCRATCH/a.toml" "$SCRATCH/run2")
other=$(run "$SCRATCH/b.toml" "$SCRATCH/run3")
[ "$(echo "$first" | wc -l)" -eq 16 ] || fail "expected 15 trials"
[ "$first" == "$second" ] || { diff <(echo "$first") <(echo "$second"); fail "two --sync runs with one seed differ"; }
[ "$first" != "$other" ] || fail "another seed gave the same run"
echo "sync runs reproducible"
