#!/usr/bin/env bash
# Cores and GPUs per trial on local slots: with threads_per_trial and gpus_per_trial, each slot's
# trials are pinned to their own core and see their own device (a fake device list: no GPU is
# needed), results.csv records both, and the objective's environment says the same. Asking for
# GPUs where none is visible is bad input: exit 2, nothing written.
source "$(dirname "$0")/common.sh"

cores=$(sed -n 's/Cpus_allowed_list:\t//p' /proc/self/status)
# An objective that reports what it got: its mask, its devices and its thread variables.
cat > "$SCRATCH/objective.sh" <<'SH'
#!/bin/sh
sleep 0.2
cpus=$(sed -n 's/Cpus_allowed_list:\t//p' /proc/self/status)
echo "{\"objective\": 1, \"metrics\": {\"cpus\": \"$cpus\", \"cuda\": \"$CUDA_VISIBLE_DEVICES\", \"rocr\": \"$ROCR_VISIBLE_DEVICES\", \"lbo_gpus\": \"$LBO_GPUS\", \"omp\": \"$OMP_NUM_THREADS\", \"lbo_threads\": \"$LBO_THREADS\"}}"
SH
chmod +x "$SCRATCH/objective.sh"
write_job() {  # write_job FILE WORKERS_KEYS
  cat > "$1" <<JOB
name = "res"
[objective]
command = ["$SCRATCH/objective.sh"]
direction = "minimize"
[policy]
surrogate = "random"
[workers]
$2
[space]
x = { type = "float", low = 0, high = 1 }
[[tasks]]
name = "a"
budget = 8
JOB
}

write_job "$SCRATCH/job.toml" $'local_slots = 2\nthreads_per_trial = 1\ngpus_per_trial = 1'
CUDA_VISIBLE_DEVICES=3,5,7 "$LBO_BIN" run "$SCRATCH/job.toml" --run-root "$SCRATCH/runs" 2> "$SCRATCH/log" \
  || { cat "$SCRATCH/log"; fail "lbo run exited $?"; }
grep -q "local: 2 slot(s) × 1 thread(s)" "$SCRATCH/log" || { cat "$SCRATCH/log"; fail "the slot plan is not logged"; }
python3 - "$SCRATCH/runs/res/results.csv" "$cores" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 8, len(rows)
two_cores = "," in sys.argv[2] or "-" in sys.argv[2]
slots = {}
for r in rows:
    assert r["status"] == "ok", r
    m = {k[len("metric:"):]: v for k, v in r.items() if k.startswith("metric:")}
    assert m["cuda"] == m["rocr"] == m["lbo_gpus"] == r["gpus"], r
    assert m["omp"] == m["lbo_threads"] == "1", r
    assert r["gpus"] in ("3", "5"), r  # two slots take one device each; the third stays unused
    if two_cores:
        assert r["cores"] and m["cpus"] == r["cores"], r
    slots.setdefault(r["slot"], set()).add((r["gpus"], r["cores"]))
assert sorted(slots) == ["0", "1"], slots
assert all(len(v) == 1 for v in slots.values()), f"a slot changed its resources: {slots}"
assert slots["0"] != slots["1"], f"two slots share resources: {slots}"
print("resources:", {k: sorted(v) for k, v in slots.items()})
PY

# Two GPUs per trial with three devices: one slot, and the log says why.
write_job "$SCRATCH/job2.toml" $'local_slots = 2\ngpus_per_trial = 2'
sed -i 's/name = "res"/name = "res2"/' "$SCRATCH/job2.toml"
CUDA_VISIBLE_DEVICES=3,5,7 "$LBO_BIN" run "$SCRATCH/job2.toml" --run-root "$SCRATCH/runs" 2> "$SCRATCH/log2" \
  || { cat "$SCRATCH/log2"; fail "lbo run exited $?"; }
grep -q "local slots: 3 GPU(s) for gpus_per_trial = 2: 1 slot(s) instead of 2" "$SCRATCH/log2" \
  || { cat "$SCRATCH/log2"; fail "no note about the slot lost for lack of GPUs"; }
python3 - "$SCRATCH/runs/res2/results.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 8 and {r["gpus"] for r in rows} == {"3,5"}, [r["gpus"] for r in rows]
PY

# No device visible: exit 2, and the run root is not even created.
set +e
env -u CUDA_VISIBLE_DEVICES -u ROCR_VISIBLE_DEVICES -u SLURM_STEP_GPUS -u SLURM_JOB_GPUS \
  "$LBO_BIN" run "$SCRATCH/job.toml" --run-root "$SCRATCH/none" 2> "$SCRATCH/log3"
status=$?
set -e
[ "$status" -eq 2 ] || { cat "$SCRATCH/log3"; fail "exit $status without GPUs, expected 2"; }
grep -q "gpus_per_trial = 1 needs 1 GPU(s) per slot, and no GPU is visible" "$SCRATCH/log3" || { cat "$SCRATCH/log3"; fail "unclear error"; }
[ ! -e "$SCRATCH/none" ] || fail "something was written"
echo "resources ok"
