"""What bench/failures, bench/constraints and bench/objectives share: a job of tasks in sequence, run by lbo once per
method and seed, read back from its results.csv, and the command line of both. Standard library."""
import argparse
import csv
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run_lbo(lbo, folder, job_text, name, asynchronous):
    """Runs `job_text` (a job named `name`) in `folder` (--sync unless `asynchronous`); its rows."""
    os.makedirs(folder, exist_ok=True)
    job = os.path.join(folder, "job.toml")
    with open(job, "w") as f:
        f.write(job_text)
    with open(os.path.join(folder, "log.txt"), "w") as log:
        subprocess.run([lbo, "run", job, "--fresh", "--run-root", os.path.join(folder, "runs")] +
                       ([] if asynchronous else ["--sync"]), stdout=log, stderr=subprocess.STDOUT, check=True)
    with open(os.path.join(folder, "runs", name, "results.csv")) as f:
        return list(csv.DictReader(f))


def task_tables(tasks, trials):
    return "".join(f'[[tasks]]\nname = "{t}"\nbudget = {trials}\n' for t in tasks)


def arguments(description, methods, extra=None):
    """The command line the benchmarks take; `methods` is the default list; `extra(parser)` adds
    a benchmark's own options."""
    p = argparse.ArgumentParser(description=description)
    if extra:
        extra(p)
    p.add_argument("--lbo", default=os.path.join(HERE, "..", "build", "lbo"))
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--trials", type=int, default=40)
    p.add_argument("--tasks", type=int, default=2)
    p.add_argument("--methods", default=methods)
    p.add_argument("--out", default=None)
    p.add_argument("--slots", type=int, default=1, help="lbo's local slots (Optuna runs one trial at a time)")
    p.add_argument("--async", dest="asynchronous", action="store_true",
                   help="lbo without --sync, each trial 0.3 s, so that slots overlap")
    return p.parse_args()


def out_folder(args, prefix):
    return args.out or tempfile.mkdtemp(prefix=prefix)
