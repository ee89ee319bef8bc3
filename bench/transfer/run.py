#!/usr/bin/python3
"""bench/transfer: the DeepAR transfer benchmark of Salinas, Shen and Perrone (ICML 2020),
leave-one-task-out, on its published evaluations (jobs/examples/data/deepar/DeepAR.csv, MIT).

Each of the 11 tasks in turn is the new one; the other ten are earlier tasks, given to the
transfer methods as a CSV warm start of all their evaluations ([policy] warm_start). Every lbo
method runs the new task as a tabulated objective restricted to its own rows
(objective.table_restrict: the paper's protocol, each configuration at most once), with --sync
so that a run depends on its seed only:

  lbo, ablr, libo, jumbo   lbo's transfer models, warm-started with the ten earlier tasks
  gp                       a GP on the task alone (no transfer)
  random                   random rows
  earlier-best             the earlier tasks' bests (the nearest rows of the new task; lbo's
                           transfer_best design alone, a ZeroShot-style baseline), then random rows
  tpe                      Optuna's TPE (Debian's python3-optuna) over the same space, each
                           trial the value of the task's nearest row (TPE cannot be restricted
                           to rows; a repeated row counts again)

Figures, after k = 1, 3, 5, 10, 15 and 25 evaluations, over tasks and seeds:
  ndist   the paper's normalized distance to the minimum: (best so far - the task's minimum) /
          (the task's maximum - its minimum), over the task's rows. A few CRPS values up to 52
          put most of a task's range in one outlier, so ndist is small for every method.
  pct     the share of the task's rows better than the best so far (a robust companion).
  rank    the average rank among the methods at k (1 = best; ties share their mean rank).

usage: bench/transfer/run.py [--out DIR] [--seeds N] [--budget 25] [--tasks T1,T2,...]
                             [--methods lbo,ablr,libo,jumbo,gp,random,earlier-best,tpe] [--log]
                             [--pairs lbo+copula:lbo,...] [--order loo|arrival]
  --order arrival  the tasks as they arrive instead of leave-one-task-out: in the table's order
          (m4-Daily, exchange-rate, ..., wiki-rolling), each task warm-started with the tasks
          before it only; --tasks picks which of them are scored (default: all but the first,
          which has nothing to learn from)
  --log   lbo's methods minimize ln CRPS instead of CRPS (a table and warm start of ln values;
          the figures are of CRPS): a hypothesis about CRPS's heavy tail (a few values up to 52
          among values of 0.01-0.5), which standardization alone leaves to dominate the models
  --pairs A:B,...  also print the paired difference of pct, A's less B's, at each k; a method
          "lbo+copula" is lbo with [policy] output_warping = "copula" (any method + a warping), and
          "gp+max_fit_results=20" gp with that [policy] key
Runs are cached in DIR (default bench/transfer/out): a second call prints from what is there
and runs only what is missing. LBO_BUILD_DIR names the build (default <repo>/build).
"""
import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLE = os.path.join(REPO, "jobs", "examples", "data", "deepar", "DeepAR.csv")
# As jobs/examples/deepar_table.toml: the table's columns are ln of the hyperparameters.
SPACE = {
    "hp_num_layers": (0.69, 1.39),
    "hp_num_cells": (3.4, 4.79),
    "hp_dropout_rate_log": (-4.61, -0.69),
    "hp_learning_rate_log": (-9.21, -2.3),
    "hp_num_batches_per_epoch_log": (2.3, 9.22),
    "hp_context_length_ratio_log": (-2.9, 1.38),
}
METHODS = ["lbo", "ablr", "libo", "jumbo", "gp", "random", "earlier-best", "tpe"]
CHECKPOINTS = [1, 3, 5, 10, 15, 25, 40, 60, 100]


def read_table():
    rows = list(csv.DictReader(open(TABLE)))
    by_task = {}
    for r in rows:
        by_task.setdefault(r["task"], []).append(r)
    return by_task


def objective_of(row, log):
    y = float(row["metric_CRPS"])
    return repr(math.log(y)) if log else row["metric_CRPS"]


def write_table(out, log):
    """The table the runs look up: DeepAR.csv, or a copy with ln CRPS in column metric_CRPS."""
    if not log:
        return TABLE
    path = os.path.join(out, "DeepAR-ln.csv")
    if not os.path.exists(path):
        rows = list(csv.DictReader(open(TABLE)))
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            for r in rows:
                w.writerow({**r, "metric_CRPS": objective_of(r, True)})
    return path


def write_others(out, task, by_task, log, arrival):
    """The warm start of `task`: every other task's rows (leave-one-task-out), or, in arrival
    order, those of the tasks before it in the table (None for the first)."""
    earlier = list(by_task)[:list(by_task).index(task)] if arrival else [t for t in by_task if t != task]
    if not earlier:
        return None
    path = os.path.join(out, f"others-{task}{'-arrival' if arrival else ''}{'-ln' if log else ''}.csv")
    if not os.path.exists(path):
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(list(SPACE) + ["task", "objective"])
            for t, rows in by_task.items():
                if t in earlier:
                    for r in rows:
                        w.writerow([r[p] for p in SPACE] + [t, objective_of(r, log)])
    return path


def job_text(method, task, seed, budget, others, table):
    # "lbo+copula": lbo with [policy] output_warping = "copula"; "gp+max_fit_results=20": gp with
    # that [policy] key.
    method, *variants = method.split("+")
    policy = {
        "lbo": ['surrogate = "lbo"'], "ablr": ['surrogate = "ablr"'], "libo": ['surrogate = "libo"'],
        "jumbo": ['surrogate = "jumbo"'], "gp": ['surrogate = "gp"'], "random": ['surrogate = "random"'],
        "earlier-best": ['surrogate = "gp"', f"initial_random = {budget}", "transfer_best = 10"],
    }[method]
    if method not in ("gp", "random") and others:
        policy.append(f'warm_start = ["{others}"]')
    for variant in variants:
        key, _, value = variant.partition("=")
        policy.append(f"{key} = {value}" if value else f'output_warping = "{variant}"')
    lines = [f'name = "t"', f"seed = {seed}", "[objective]", f'table = "{table}"', 'table_objective = "metric_CRPS"',
             "table_restrict = true", 'direction = "minimize"', "[policy]", *policy, "[workers]", "local_slots = 1",
             "[space]"]
    lines += [f'{p} = {{ type = "float", low = {lo}, high = {hi} }}' for p, (lo, hi) in SPACE.items()]
    lines += ["[[tasks]]", f'name = "{task}"', f"budget = {budget}"]
    return "\n".join(lines) + "\n"


def run_lbo(out, build, method, task, seed, budget, others, table, log, order):
    folder = os.path.join(out, "runs", f"{task}-{method}-{seed}{order}{'-ln' if log else ''}")
    os.makedirs(folder, exist_ok=True)
    job = os.path.join(folder, "job.toml")
    open(job, "w").write(job_text(method, task, seed, budget, others, table))
    with open(os.path.join(folder, "lbo.log"), "w") as lbo_log:
        subprocess.run([os.path.join(build, "lbo"), "run", job, "--sync", "--run-root", folder], stderr=lbo_log, check=True)
    results = sorted(csv.DictReader(open(os.path.join(folder, "t", "results.csv"))), key=lambda r: int(r["trial"]))
    values = [float(r["objective"]) if r["status"] == "ok" else math.inf for r in results]
    return [math.exp(v) for v in values] if log else values


def run_tpe(task, seed, budget, rows):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    scale = {p: hi - lo for p, (lo, hi) in SPACE.items()}
    points = [([float(r[p]) for p in SPACE], float(r["metric_CRPS"])) for r in rows]

    def objective(trial):
        x = [trial.suggest_float(p, lo, hi) for p, (lo, hi) in SPACE.items()]
        # The nearest row in the unit box, as lbo's lookup (ties: the first row).
        best, best_d = None, math.inf
        for values, y in points:
            d = sum(((a - b) / scale[p]) ** 2 for a, b, p in zip(x, values, SPACE))
            if d < best_d:
                best, best_d = y, d
        return best

    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=seed))
    study.optimize(objective, n_trials=budget)
    return [t.value for t in study.trials]


def best_so_far(values):
    out, best = [], math.inf
    for v in values:
        best = min(best, v)
        out.append(best)
    return out


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "transfer", "out"))
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--budget", type=int, default=25)
    ap.add_argument("--tasks", default="")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--log", action="store_true")
    ap.add_argument("--pairs", default="", help="A:B,...: the paired differences of pct, A's less B's")
    ap.add_argument("--order", choices=["loo", "arrival"], default="loo")
    args = ap.parse_args()
    arrival = args.order == "arrival"
    build = os.environ.get("LBO_BUILD_DIR", os.path.join(REPO, "build"))
    by_task = read_table()
    # In arrival order the first task has nothing to learn from: it is not scored by default.
    tasks = args.tasks.split(",") if args.tasks else list(by_task)[1:] if arrival else sorted(by_task)
    methods = args.methods.split(",")
    pairs = [pair.split(":") for pair in filter(None, args.pairs.split(","))]
    for pair in pairs:
        if len(pair) != 2 or not all(m in methods for m in pair):
            ap.error(f"--pairs {':'.join(pair)}: a pair is A:B of two methods of --methods ({','.join(methods)})")
    os.makedirs(os.path.join(args.out, "seq"), exist_ok=True)
    sequences = {}
    for task in tasks:
        others = write_others(args.out, task, by_task, args.log, arrival)
        table = write_table(args.out, args.log)
        for seed in range(1, args.seeds + 1):
            for method in methods:
                # tpe and random do not depend on the objective's scale: one cache for both, and
                # neither they nor gp on the earlier tasks: one cache for both orders.
                ln = "-ln" if args.log and method not in ("tpe", "random") else ""
                order = "-arrival" if arrival and method not in ("tpe", "random", "gp") else ""
                cache = os.path.join(args.out, "seq", f"{task}-{method}-{seed}-{args.budget}{order}{ln}.json")
                if not os.path.exists(cache):
                    if method == "tpe":
                        values = run_tpe(task, seed, args.budget, by_task[task])
                    else:
                        values = run_lbo(args.out, build, method, task, seed, args.budget, others, table, args.log, order)
                    json.dump(values, open(cache, "w"))
                    print(f"  {task} {method} seed {seed}: best {min(values):.4f}", file=sys.stderr, flush=True)
                sequences[(task, seed, method)] = best_so_far(json.load(open(cache)))

    ks = [k for k in CHECKPOINTS if k <= args.budget]
    figures = {m: {k: {"ndist": [], "pct": [], "rank": []} for k in ks} for m in methods}
    for task in tasks:
        ys = [float(r["metric_CRPS"]) for r in by_task[task]]
        lo, hi = min(ys), max(ys)
        for seed in range(1, args.seeds + 1):
            for k in ks:
                at = [sequences[(task, seed, m)][k - 1] for m in methods]
                for m, b, r in zip(methods, at, ranks(at)):
                    figures[m][k]["ndist"].append((b - lo) / (hi - lo))
                    figures[m][k]["pct"].append(sum(y < b for y in ys) / len(ys))
                    figures[m][k]["rank"].append(r)
    n = len(tasks) * args.seeds
    print(f"DeepAR {'in arrival order' if arrival else 'leave-one-task-out'}: {len(tasks)} task(s) x {args.seeds} seed(s) = {n} runs per method, "
          f"budget {args.budget}{', lbo methods on ln CRPS' if args.log else ''}; mean over runs (± standard error)")
    for name, fmt, scale in (("ndist x 1000", "{:8.3f}", 1000), ("pct (% of rows better)", "{:8.2f}", 100),
                             ("rank", "{:8.2f}", 1)):
        print(f"\n{name}")
        print(f"{'method':<13}" + "".join(f"{'k=' + str(k):>16}" for k in ks))
        for m in methods:
            cells = []
            for k in ks:
                v = [x * scale for x in figures[m][k][name.split()[0]]]
                se = statistics.stdev(v) / math.sqrt(len(v)) if len(v) > 1 else 0.0
                cells.append(f"{fmt.format(statistics.mean(v))} ±{se:5.2f}"[:15].rjust(16))
            print(f"{m:<13}" + "".join(cells))
    for a, b in pairs:
        print(f"\npaired pct difference, {a} less {b} (percentage points; < 0: {a} better)")
        cells = []
        for k in ks:
            d = [100 * (x - y) for x, y in zip(figures[a][k]["pct"], figures[b][k]["pct"])]
            se = statistics.stdev(d) / math.sqrt(len(d)) if len(d) > 1 else 0.0
            better = sum(x < 0 for x in d)
            worse = sum(x > 0 for x in d)
            cells.append(f"k={k}: {statistics.mean(d):+.2f} ±{se:.2f} ({better} better, {worse} worse)")
        print("  " + "; ".join(cells))


if __name__ == "__main__":
    main()
