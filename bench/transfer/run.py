#!/usr/bin/python3
"""bench/transfer: the transfer benchmarks of Salinas, Shen and Perrone (ICML 2020) on their published
evaluations (MIT): DeepAR (jobs/examples/data/deepar/DeepAR.csv, 2,510 evaluations over 11 data
sets), leave-one-task-out, and, with --blackbox xgboost, XGBoost (../shared/data/xgboost-evaluations/
XGBoost.csv, read where it is: 5,000 configurations on each of 10 unlike LIBSVM data sets), in
arrival order by default.

DeepAR: each of the 11 tasks in turn is the new one; the other ten are earlier tasks, given to the
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

XGBoost (--blackbox xgboost): the objective is metric_error (minimized), the space the 8 hp_
columns with the table's bounds (hp_max_depth_index an integer), the tasks in the order a6a,
australian, german.numer, heart, ijcnn1, madelon, skin_nonskin, spambase, svmguide1, w6a, each
restricted to its own 5,000 rows and warm-started with every earlier task's rows (--order arrival,
the default here), or with the other nine (--order loo, the paper's protocol).

Figures, after k = 1, 3, 5, 10, 15 (20 for XGBoost) and 25 evaluations, over tasks and seeds:
  ndist   the paper's normalized distance to the minimum: (best so far - the task's minimum) /
          (the task's maximum - its minimum), over the task's rows. A few CRPS values up to 52
          put most of a task's range in one outlier, so ndist is small for every method.
  pct     the share of the task's rows better than the best so far (a robust companion).
  rank    the average rank among the methods at k (1 = best; ties share their mean rank).
  ADTM improvement over random search, the paper's Table 2 figure: dtm(t, i), the normalized
          distance to the minimum after i evaluations (ndist) averaged over seeds, of task t;
          (dtm_random - dtm_method) / dtm_random, averaged over the tasks and the iterations
          i = 1..budget (Salinas et al.'s own script: per blackbox, task and iteration, then the
          mean; iterations where random's dtm is 0 have no ratio and are left out). The paper's
          figures are over 100 iterations (CTS 0.015, GCP+prior 0.372 on XGBoost; 0.378 and 0.734
          on DeepAR); these are over the budget's. Needs the method random in --methods.

usage: bench/transfer/run.py [--blackbox deepar|xgboost] [--out DIR] [--seeds N] [--budget 25]
                             [--tasks T1,T2,...] [--methods lbo,ablr,libo,jumbo,gp,random,earlier-best,tpe]
                             [--log] [--pairs lbo+copula:lbo,...] [--order loo|arrival] [--per-task]
  --order arrival  the tasks as they arrive instead of leave-one-task-out: in the table's order
          (m4-Daily, exchange-rate, ..., wiki-rolling; XGBoost's in the order above), each task
          warm-started with the tasks before it only; --tasks picks which of them are scored
          (default: all but the first, which has nothing to learn from)
  --per-task  also print pct at each k per task and method
  --nearest  lbo's methods propose any point of the space and take the task's nearest row,
          repeats allowed (table_restrict = false): TPE's lookup, a piecewise-constant objective;
          give it its own --out
  --warm-rows N  each earlier task's warm start is N of its rows, drawn once for all methods and
          seeds (default: all; XGBoost's 5,000 rows a task make every lbo fit take minutes:
          lbo logs that each fit takes all of them)
  --log   lbo's methods minimize ln CRPS instead of CRPS (a table and warm start of ln values;
          the figures are of CRPS): a hypothesis about CRPS's heavy tail (a few values up to 52
          among values of 0.01-0.5), which standardization alone leaves to dominate the models
  --pairs A:B,...  also print the paired difference of pct, A's less B's, at each k; a method
          "lbo+copula" is lbo with [policy] output_warping = "copula" (any method + a warping), and
          "gp+max_fit_results=20" gp with that [policy] key
Runs are cached in DIR (default bench/transfer/out, bench/transfer/out/xgboost for XGBoost): a
second call prints from what is there and runs only what is missing. The cache does not know the
build: DIR/lbo-build.txt ties it to the first lbo binary that used it, and another one is
refused (exit 2): give each build its own DIR.
LBO_BUILD_DIR names the build (default <repo>/build).
"""
import argparse
import csv
import json
import math
import os
import random
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "bench"))
import build_stamp  # noqa: E402


class Blackbox:
    """A table of published evaluations: its file, objective column, space and task order.
    space: name -> (low, high, type), type "float" or "int"; order: the tasks as they arrive."""

    def __init__(self, name, table, objective, space, order=None):
        self.name, self.table, self.objective = name, table, objective
        rows = list(csv.DictReader(open(table)))
        self.by_task = {}
        for r in rows:
            self.by_task.setdefault(r["task"], []).append(r)
        if order:
            missing = [t for t in order if t not in self.by_task]
            if missing:
                sys.exit(f"{table}: no rows of task(s) {', '.join(missing)}")
            self.by_task = {t: self.by_task[t] for t in order}
        if space is None:
            # The table's bounds: every row inside; an hp_..._index column is an integer.
            space = {}
            for c in rows[0]:
                if c.startswith("hp_"):
                    v = [float(r[c]) for r in rows]
                    space[c] = (min(v), max(v), "int" if c.endswith("_index") else "float")
        self.space = space


def deepar():
    # As jobs/examples/deepar_table.toml: the table's columns are ln of the hyperparameters.
    space = {
        "hp_num_layers": (0.69, 1.39, "float"),
        "hp_num_cells": (3.4, 4.79, "float"),
        "hp_dropout_rate_log": (-4.61, -0.69, "float"),
        "hp_learning_rate_log": (-9.21, -2.3, "float"),
        "hp_num_batches_per_epoch_log": (2.3, 9.22, "float"),
        "hp_context_length_ratio_log": (-2.9, 1.38, "float"),
    }
    return Blackbox("DeepAR", os.path.join(REPO, "jobs", "examples", "data", "deepar", "DeepAR.csv"), "metric_CRPS",
                    space)


def xgboost():
    # Read where it is (8.5 MB; its README says so): ../shared/data from the repository, or
    # $LBO_XGBOOST_TABLE.
    table = os.environ.get("LBO_XGBOOST_TABLE", os.path.join(os.path.dirname(REPO), "shared", "data",
                                                             "xgboost-evaluations", "XGBoost.csv"))
    if not os.path.exists(table):
        sys.exit(f"{table}: no such file; set LBO_XGBOOST_TABLE to the XGBoost evaluations' XGBoost.csv")
    order = ["a6a", "australian", "german.numer", "heart", "ijcnn1", "madelon", "skin_nonskin", "spambase",
             "svmguide1", "w6a"]
    return Blackbox("XGBoost", table, "metric_error", None, order)


BLACKBOXES = {"deepar": deepar, "xgboost": xgboost}
METHODS = ["lbo", "ablr", "libo", "jumbo", "gp", "random", "earlier-best", "tpe"]
CHECKPOINTS = [1, 3, 5, 10, 15, 20, 25, 40, 60, 100]


def objective_of(bb, row, log):
    y = float(row[bb.objective])
    return repr(math.log(y)) if log else row[bb.objective]


def write_table(bb, out, log):
    """The table the runs look up: the blackbox's, or a copy with ln of the objective."""
    if not log:
        return bb.table
    path = os.path.join(out, os.path.basename(bb.table).replace(".csv", "-ln.csv"))
    if not os.path.exists(path):
        rows = list(csv.DictReader(open(bb.table)))
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            for r in rows:
                w.writerow({**r, bb.objective: objective_of(bb, r, True)})
    return path


def write_others(bb, out, task, log, arrival, warm_rows):
    """The warm start of `task`: every other task's rows (leave-one-task-out), or, in arrival
    order, those of the tasks before it (None for the first); with warm_rows, that many of each
    task's rows, drawn once (the same for every method and seed)."""
    by_task = bb.by_task
    earlier = list(by_task)[:list(by_task).index(task)] if arrival else [t for t in by_task if t != task]
    if not earlier:
        return None
    rows_tag = f"-{warm_rows}rows" if warm_rows else ""
    path = os.path.join(out, f"others-{task}{'-arrival' if arrival else ''}{rows_tag}{'-ln' if log else ''}.csv")
    if not os.path.exists(path):
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(list(bb.space) + ["task", "objective"])
            for t, rows in by_task.items():
                if t in earlier:
                    if warm_rows and warm_rows < len(rows):
                        rows = random.Random(f"{bb.name}-{t}").sample(rows, warm_rows)
                    for r in rows:
                        w.writerow([r[p] for p in bb.space] + [t, objective_of(bb, r, log)])
    return path


def space_line(p, lo, hi, kind):
    if kind == "int":
        return f'{p} = {{ type = "int", low = {int(lo)}, high = {int(hi)} }}'
    return f'{p} = {{ type = "float", low = {lo!r}, high = {hi!r} }}'


def job_text(bb, method, task, seed, budget, others, table, restrict=True):
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
    lines = [f'name = "t"', f"seed = {seed}", "[objective]", f'table = "{table}"',
             f'table_objective = "{bb.objective}"', f"table_restrict = {'true' if restrict else 'false'}", 'direction = "minimize"', "[policy]",
             *policy, "[workers]", "local_slots = 1", "[space]"]
    lines += [space_line(p, *bounds) for p, bounds in bb.space.items()]
    lines += ["[[tasks]]", f'name = "{task}"', f"budget = {budget}"]
    return "\n".join(lines) + "\n"


def run_lbo(bb, out, build, method, task, seed, budget, others, table, log, order, restrict=True):
    folder = os.path.join(out, "runs", f"{task}-{method}-{seed}{order}{'-ln' if log else ''}")
    os.makedirs(folder, exist_ok=True)
    job = os.path.join(folder, "job.toml")
    open(job, "w").write(job_text(bb, method, task, seed, budget, others, table, restrict))
    with open(os.path.join(folder, "lbo.log"), "w") as lbo_log:
        subprocess.run([os.path.join(build, "lbo"), "run", job, "--sync", "--run-root", folder], stderr=lbo_log, check=True)
    results = sorted(csv.DictReader(open(os.path.join(folder, "t", "results.csv"))), key=lambda r: int(r["trial"]))
    values = [float(r["objective"]) if r["status"] == "ok" else math.inf for r in results]
    return [math.exp(v) for v in values] if log else values


def run_tpe(bb, seed, budget, rows):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    space = bb.space
    scale = [hi - lo for lo, hi, _ in space.values()]
    points = [([float(r[p]) for p in space], float(r[bb.objective])) for r in rows]

    def objective(trial):
        x = [trial.suggest_int(p, int(lo), int(hi)) if kind == "int" else trial.suggest_float(p, lo, hi)
             for p, (lo, hi, kind) in space.items()]
        # The nearest row in the unit box, as lbo's lookup (ties: the first row).
        best, best_d = None, math.inf
        for values, y in points:
            d = sum(((a - b) / s) ** 2 for a, b, s in zip(x, values, scale))
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


def adtm_improvement(bb, tasks, seeds, methods, sequences, budget):
    """Salinas et al.'s Table 2 figure over iterations 1..budget: per task and iteration, the
    distance to the minimum averaged over seeds, dtm; then (dtm_random - dtm_m) / dtm_random,
    averaged over tasks and iterations (their src/experiments/table2.py, adtm_scores). Also the
    ADTM itself (dtm averaged over tasks and iterations) and the per-task improvement."""
    dtm = {}
    for task in tasks:
        ys = [float(r[bb.objective]) for r in bb.by_task[task]]
        lo, hi = min(ys), max(ys)
        for m in methods:
            for i in range(budget):
                dtm[(task, m, i)] = statistics.mean((sequences[(task, s, m)][i] - lo) / (hi - lo)
                                                    for s in range(1, seeds + 1))
    adtm = {m: statistics.mean(dtm[(t, m, i)] for t in tasks for i in range(budget)) for m in methods}
    # The ratio of the ADTMs themselves (averaged over iterations), per task, then over tasks: the
    # paper's words ("relative improvement in ADTM"); the per-iteration ratios of its script
    # explode where random comes near a task's minimum (XGBoost's skin_nonskin: a range of 0.053
    # whose best 1% of rows are within 1e-5 of the minimum).
    of_adtm = {m: statistics.mean(
        1 - statistics.mean(dtm[(t, m, i)] for i in range(budget)) / statistics.mean(dtm[(t, "random", i)] for i in range(budget))
        for t in tasks) for m in methods}
    improvement, per_task, skipped = {}, {}, 0
    for m in methods:
        ratios = []
        for t in tasks:
            rt = [(dtm[(t, "random", i)] - dtm[(t, m, i)]) / dtm[(t, "random", i)]
                  for i in range(budget) if dtm[(t, "random", i)] > 0]
            skipped += budget - len(rt)
            per_task[(m, t)] = statistics.mean(rt) if rt else math.nan
            ratios += rt
        improvement[m] = statistics.mean(ratios)
    return adtm, improvement, of_adtm, per_task, skipped // len(methods)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--blackbox", choices=list(BLACKBOXES), default="deepar")
    ap.add_argument("--out", default="")
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--budget", type=int, default=25)
    ap.add_argument("--tasks", default="")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--log", action="store_true")
    ap.add_argument("--pairs", default="", help="A:B,...: the paired differences of pct, A's less B's")
    ap.add_argument("--order", choices=["loo", "arrival"], default=None,
                    help="default: loo for deepar, arrival for xgboost")
    ap.add_argument("--per-task", action="store_true")
    ap.add_argument("--nearest", action="store_true",
                    help="a trial takes the task's nearest row, repeats allowed (table_restrict = false), as TPE")
    ap.add_argument("--warm-rows", type=int, default=0,
                    help="each earlier task's warm start: that many of its rows, drawn once (default: all)")
    args = ap.parse_args()
    bb = BLACKBOXES[args.blackbox]()
    arrival = (args.order or ("arrival" if args.blackbox == "xgboost" else "loo")) == "arrival"
    out = args.out or os.path.join(REPO, "bench", "transfer", "out", *(["xgboost"] if args.blackbox == "xgboost" else []))
    build = os.environ.get("LBO_BUILD_DIR", os.path.join(REPO, "build"))
    by_task = bb.by_task
    # In arrival order the first task has nothing to learn from: it is not scored by default.
    tasks = args.tasks.split(",") if args.tasks else list(by_task)[1:] if arrival else sorted(by_task)
    methods = args.methods.split(",")
    pairs = [pair.split(":") for pair in filter(None, args.pairs.split(","))]
    for pair in pairs:
        if len(pair) != 2 or not all(m in methods for m in pair):
            ap.error(f"--pairs {':'.join(pair)}: a pair is A:B of two methods of --methods ({','.join(methods)})")
    os.makedirs(os.path.join(out, "seq"), exist_ok=True)
    if any(m != "tpe" for m in methods):  # every method but TPE runs lbo
        build_stamp.claim(out, os.path.join(build, "lbo"))
    sequences = {}
    for task in tasks:
        others = write_others(bb, out, task, args.log, arrival, args.warm_rows)
        table = write_table(bb, out, args.log)
        for seed in range(1, args.seeds + 1):
            for method in methods:
                # tpe and random do not depend on the objective's scale: one cache for both, and
                # neither they nor gp on the earlier tasks: one cache for both orders.
                ln = "-ln" if args.log and method not in ("tpe", "random") else ""
                order = "-arrival" if arrival and method not in ("tpe", "random", "gp") else ""
                if args.warm_rows and method not in ("tpe", "random", "gp"):
                    order += f"-{args.warm_rows}rows"
                cache = os.path.join(out, "seq", f"{task}-{method}-{seed}-{args.budget}{order}{ln}.json")
                if not os.path.exists(cache):
                    if method == "tpe":
                        values = run_tpe(bb, seed, args.budget, by_task[task])
                    else:
                        values = run_lbo(bb, out, build, method, task, seed, args.budget, others, table, args.log,
                                         order, not args.nearest)
                    json.dump(values, open(cache, "w"))
                    print(f"  {task} {method} seed {seed}: best {min(values):.4f}", file=sys.stderr, flush=True)
                sequences[(task, seed, method)] = best_so_far(json.load(open(cache)))

    ks = [k for k in CHECKPOINTS if k <= args.budget]
    figures = {m: {k: {"ndist": [], "pct": [], "rank": []} for k in ks} for m in methods}
    per_task = {}
    for task in tasks:
        ys = [float(r[bb.objective]) for r in by_task[task]]
        lo, hi = min(ys), max(ys)
        for seed in range(1, args.seeds + 1):
            for k in ks:
                at = [sequences[(task, seed, m)][k - 1] for m in methods]
                for m, b, r in zip(methods, at, ranks(at)):
                    pct = sum(y < b for y in ys) / len(ys)
                    figures[m][k]["ndist"].append((b - lo) / (hi - lo))
                    figures[m][k]["pct"].append(pct)
                    figures[m][k]["rank"].append(r)
                    per_task.setdefault((m, task, k), []).append(pct)
    n = len(tasks) * args.seeds
    print(f"{bb.name} {'in arrival order' if arrival else 'leave-one-task-out'}: {len(tasks)} task(s) x {args.seeds} "
          f"seed(s) = {n} runs per method, budget {args.budget}"
          f"{', warm start ' + str(args.warm_rows) + ' rows a task' if args.warm_rows else ''}{', lbo methods on ln of the objective' if args.log else ''}; "
          f"mean over runs (± standard error)")
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
    if "random" in methods:
        adtm, improvement, of_adtm, adtm_task, skipped = adtm_improvement(bb, tasks, args.seeds, methods, sequences, args.budget)
        print(f"\nADTM over iterations 1..{args.budget} (x 1000) and its relative improvement over random "
              f"(Salinas et al. 2020, Table 2{'; ' + str(skipped) + ' task-iterations where random is at the minimum left out' if skipped else ''})")
        print(f"{'method':<13}{'ADTM':>10}{'improv.':>10}{'of ADTM':>10}   (improv.: the paper's script, the mean of "
              f"per-iteration ratios; of ADTM: 1 - ADTM_m / ADTM_random per task, mean over tasks)")
        for m in methods:
            print(f"{m:<13}{1000 * adtm[m]:10.3f}{improvement[m]:10.3f}{of_adtm[m]:10.3f}")
        if args.per_task:
            print("\nADTM improvement over random per task")
            print(f"{'method':<13}" + "".join(f"{t[:12]:>13}" for t in tasks))
            for m in methods:
                print(f"{m:<13}" + "".join(f"{adtm_task[(m, t)]:13.3f}" for t in tasks))
    if args.per_task:
        for k in ks:
            print(f"\npct at k={k} per task (mean over seeds)")
            print(f"{'method':<13}" + "".join(f"{t[:12]:>13}" for t in tasks))
            for m in methods:
                print(f"{m:<13}" + "".join(f"{100 * statistics.mean(per_task[(m, t, k)]):13.2f}" for t in tasks))
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
