"""Prints a results.csv without the columns that depend on timing and placement (attempts,
duration_s, worker, started, finished, rank, slot, cores, gpus, and last_step: the steps a stopped
trial ran before the stop reached it), sorted by trial unless --keep-order: what two runs that
made the same trials must agree on.

usage: comparable.py RESULTS_CSV [--keep-attempts] [--keep-order] [--no-header]
"""
import csv
import sys

TIMING = ["attempts", "duration_s", "worker", "started", "finished", "rank", "slot", "cores", "gpus", "last_step"]


def main(argv):
    path, *flags = argv
    drop = [c for c in TIMING if not (c == "attempts" and "--keep-attempts" in flags)]
    try:
        with open(path, newline="") as f:
            text = f.read()
    except FileNotFoundError:
        return 0
    # An lbo killed outright while it appended may leave the last row torn (no newline): not a
    # row of the file yet (the journal holds the result; the next run rewrites the file).
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    rows = list(csv.reader(text.splitlines(keepends=True)))
    if not rows:
        return 0
    header, body = rows[0], rows[1:]
    keep = [i for i, name in enumerate(header) if name not in drop]
    if "--keep-order" not in flags:
        body.sort(key=lambda r: int(r[0]))
    out = csv.writer(sys.stdout, lineterminator="\n")
    if "--no-header" not in flags:
        out.writerow([header[i] for i in keep])
    for r in body:
        out.writerow([r[i] if i < len(r) else "" for i in keep])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
