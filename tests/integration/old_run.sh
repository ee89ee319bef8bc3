#!/usr/bin/env bash
# A run directory written by an earlier lbo (38354a9: data/old-run-38354a9, killed with kill -9
# midway) stays readable and resumable: `lbo status` and `lbo report` read it, and `lbo run`
# continues it to the end of its budgets, keeping every result it had committed, the trials it
# had paused and the one it had running.
source "$(dirname "$0")/common.sh"

mkdir -p "$SCRATCH/runs"
cp -r "$HERE/data/old-run-38354a9" "$SCRATCH/runs/old-run"
rm "$SCRATCH/runs/old-run/README.md"
run=$SCRATCH/runs/old-run
before=$(committed "$run/results.csv")
[ "$(echo "$before" | wc -l)" -eq 2 ] || fail "the fixture should hold 2 committed results"

"$LBO_BIN" status "$run" > "$SCRATCH/status.txt" 2>&1 || { cat "$SCRATCH/status.txt"; fail "lbo status of the old run exited $?"; }
grep -q "^first .* 2/10 .* 7 .*  1 " "$SCRATCH/status.txt" || { cat "$SCRATCH/status.txt"; fail "status: 2 done, 7 paused, 1 to rerun in task first"; }
"$LBO_BIN" report "$run" > "$SCRATCH/report.log" 2>&1 || { cat "$SCRATCH/report.log"; fail "lbo report of the old run exited $?"; }
[ -s "$run/report.html" ] || fail "no report.html"

"$LBO_BIN" run "$run/job.toml" --sync --run-root "$SCRATCH/runs" > "$SCRATCH/resume.log" 2>&1 \
  || { cat "$SCRATCH/resume.log"; fail "resuming the old run exited $?"; }
grep -q "resuming run old-run: 2 task(s), 18 trials (2 done, 1 interrupted to run again)" "$SCRATCH/resume.log" \
  || { cat "$SCRATCH/resume.log"; fail "the resume did not say what it found"; }
if grep "warning:" "$SCRATCH/resume.log"; then fail "resuming the old run warned"; fi
after=$(committed "$run/results.csv")
[ "$(echo "$after" | wc -l)" -eq 18 ] || { cat "$SCRATCH/resume.log"; fail "expected 18 trials after the resume"; }
keeps "$before" "$after" "the old run's committed results"
# The trial that was running (and those paused) keep their configurations.
python3 - "$HERE/data/old-run-38354a9.whole.csv" "$run/results.csv" <<'PY' || fail "a trial of the old run changed its configuration"
import csv, sys
whole = {r["trial"]: r for r in csv.DictReader(open(sys.argv[1]))}
resumed = {r["trial"]: r for r in csv.DictReader(open(sys.argv[2]))}
for trial in map(str, range(11)):  # the trials the old master had started
    for key in ("task", "x1", "x2", "kind", "proposed_by"):
        assert whole[trial][key] == resumed[trial][key], (trial, key, whole[trial][key], resumed[trial][key])
PY
echo "a run directory of lbo 38354a9 is read, reported and resumed to its end"
