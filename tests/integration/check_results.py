"""Checks a run's results.csv: every trial id exactly once, `budget` rows per task, and
statuses consistent with the test objective's `outcome` parameter.

usage: check_results.py RESULTS_CSV TASK=BUDGET [TASK=BUDGET ...] [--workers PREFIX]
"""
import csv
import sys
from collections import Counter

EXPECTED_STATUS = {"ok": "ok", "fail": "failed", "crash": "crashed"}


def main(argv):
    path, *specs = argv
    worker_prefix = None
    if "--workers" in specs:
        i = specs.index("--workers")
        worker_prefix = specs[i + 1]
        del specs[i:i + 2]
    budgets = {name: int(budget) for name, budget in (s.split("=") for s in specs)}
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    ids = [int(r["trial"]) for r in rows]
    problems = []
    if sorted(ids) != list(range(len(ids))):
        problems.append(f"trial ids are not 0..{len(ids) - 1} each once: {sorted(ids)}")
    per_task = Counter(r["task"] for r in rows)
    if dict(per_task) != budgets:
        problems.append(f"rows per task {dict(per_task)} != budgets {budgets}")
    for r in rows:
        outcome = r.get("outcome")
        if outcome and r["status"] != EXPECTED_STATUS[outcome]:
            problems.append(f"trial {r['trial']}: outcome {outcome} but status {r['status']}")
        if outcome and outcome != "ok" and r["attempts"] != "2":
            problems.append(f"trial {r['trial']}: failed with {r['attempts']} attempts, expected 2 (retries = 1)")
        if (r["status"] == "ok") != (r["objective"] != ""):
            problems.append(f"trial {r['trial']}: objective {r['objective']!r} with status {r['status']}")
        if worker_prefix and not r["worker"].startswith(worker_prefix):
            problems.append(f"trial {r['trial']}: worker {r['worker']} is not {worker_prefix}*")
    for p in problems:
        print("FAIL:", p, file=sys.stderr)
    print(f"{path}: {len(rows)} rows, {dict(Counter(r['status'] for r in rows))}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
