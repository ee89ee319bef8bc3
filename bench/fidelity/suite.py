"""bench/fidelity: early stopping on learning curves, lbo's rules against Optuna's pruners.

    suite.py --lbo build/lbo --out DIR [--problem rotterdam] [--seeds 3] [--trials 20] [--slots 2]
             [--methods ...] [--sync]

The objective (curves.py) trains a model step by step on each task of a bench/real problem
(bench/real/data/README.md) and reports the held-out AUC after every step, up to R = 81 steps:
`rotterdam` (the default; 7 windows by year of surgery) and `nwtco` (8 trials and stages) with
XGBoost boosting round by round, `rotterdam-mlp` with a multilayer perceptron trained epoch by
epoch. Every method sees the same tasks in the same order, the same resource per task and 2
trials at a time (--slots). "Round" below is one step (a boosting round or an epoch).

Equal resource (the default): a method that stops trials early spends the resource of --trials
full trials (trials × 81 rounds) on as many trials as fit: lbo's early-stopping methods get
`budget_steps = trials × 81` and a trial budget of 10 × trials, Optuna's pruned studies stop once
they spent trials × 81 rounds (or ran 10 × trials trials: a method that stops nearly every trial
at its first rungs runs out of trials first, and its resource column shows less than 1). `--equal-trials` gives every method --trials trials instead (the
protocol before issue 59).

- lbo methods run one lbo job per seed over all tasks (a later task learns from the earlier
  ones): `lbo` runs every trial to R; `lbo+asha`, `lbo+hyperband`, `lbo+median`, `gp+asha`,
  `random+asha` add an [early_stopping] table with rungs 1, 3, 9, 27 (r = 1, eta = 3), where
  a later task's first trials are earlier tasks' bests whose values at each rung are hurdles
  (RUSH); `lbo+asha+notransfer` turns the hurdles off, `+r<N>` starts the rungs at
  round N (`lbo+asha+r9`: rungs 9 and 27), and `+promotion` pauses every trial at its rungs and
  resumes the best third from its saved booster (mode = "promotion"). The model learns a
  stopped trial's last value (model = "last") unless a variant says otherwise: `+highest` (each
  rung a task of the model, proposals at the highest rung with d + 1 results, BOHB's rule),
  `+rungs` (the same tasks, proposals at R). `lbo+predictive` stops a trial when the forecast
  of its final value from earlier curves gives it less than min_probability (0.05) to beat its
  task's best (issue 59); `+p<digits>` sets min_probability (`+p2`: 0.2), `+eta<N>` eta,
  `+forecast` and `+last` the model.
- `one-step`: the baseline of Egele et al. 2023 (DeepHyper): each task's trials are random
  configurations run to round 1, and the best 3 of them are continued to R from their saved
  checkpoints.
- Optuna 3.1 (one study per task, n_jobs = --slots), reporting each round through trial.report and
  pruning on should_prune: `optuna-tpe` (no pruner), `optuna-tpe-hyperband`
  (HyperbandPruner(1, 81, 3)), `optuna-tpe-median` (MedianPruner()), `optuna-random-sha`
  (RandomSampler + SuccessiveHalvingPruner(1, 3)).

`--sync`: lbo methods run with `lbo run --sync` and their rounds are counted in the run's own
order (lbo_curves; their raw results get an `-exact` suffix: the `-sync` files of before
2026-12-07's fix were counted in time order). The objective is deterministic (a fixed split,
seeded models, one thread), so an lbo run and its figures are exact whatever the machine's load,
and two lbo methods of one seed differ by the methods alone: the same first trials, the same
brackets, until their first differing decision. Without it lbo runs
asynchronously, as a user's job does, and what the model and the rules have seen at a decision
depends on which trial ended first. Optuna's studies stay asynchronous (n_jobs = --slots).

Resource is counted in rounds: a full trial costs 81, a stopped or pruned one the last round it
reported (under --sync, an lbo trial the round it was judged at, as budget_steps counts it). A
task's best is the best value of a trial run to R (a stopped trial's partial value is no result
a user would deploy). Printed per method, over tasks 2+ and seeds: the resource
used (share of the 20 × 81 of full fidelity), the best found within 25%, 50% and 100% of that
resource, the resource at which the best reached lbo's final best (no early stopping, same
seed and task), and "mean reach": the least share of the resource at which the method's mean best
over tasks and seeds reaches lbo's mean final best.
"""

import argparse
import csv
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import build_stamp  # noqa: E402  (bench/build_stamp.py)

REPO = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(REPO, "bench", "real", "data")
ROTTERDAM = [os.path.join(DATA, f"rotterdam-{y}.csv") for y in
             ("1978-1985", "1986-1987", "1988", "1989", "1990", "1991", "1992-1993")]
NWTCO = [os.path.join(DATA, f"nwtco-study{s}-stage{g}.csv") for s in (3, 4) for g in (1, 2, 3, 4)]
XGBOOST_SPACE = [("lr", "float", 0.01, 0.5, True), ("depth", "int", 1, 8, False),
                 ("min_child_weight", "float", 0.5, 20.0, True), ("subsample", "float", 0.5, 1.0, False),
                 ("colsample", "float", 0.5, 1.0, False), ("lambda", "float", 1e-3, 10.0, True)]
MLP_SPACE = [("lr", "float", 1e-4, 0.1, True), ("units", "int", 4, 128, True), ("layers", "int", 1, 3, False),
             ("alpha", "float", 1e-6, 1.0, True), ("batch", "int", 16, 256, True)]
# --problem: (tasks in arrival order, the model curves.py trains, its space)
PROBLEMS = {"rotterdam": (ROTTERDAM, "xgboost", XGBOOST_SPACE), "nwtco": (NWTCO, "xgboost", XGBOOST_SPACE),
            "rotterdam-mlp": (ROTTERDAM, "mlp", MLP_SPACE)}
PROBLEM = "rotterdam"
TASKS, MODEL, SPACE = PROBLEMS[PROBLEM]
ROUNDS = 81
SLOTS = 2
EARLY = {"asha": 'rule = "asha"', "hyperband": 'rule = "hyperband"', "median": 'rule = "median"',
         "predictive": 'rule = "predictive"'}
# --equal-resource (the default): a method that stops trials early has the resource of --trials
# full trials (budget_steps; Optuna: its study stops once that many rounds are spent) and runs as
# many trials as fit in it, up to EQUAL_TRIAL_CAP times --trials.
EQUAL = True
EQUAL_TRIAL_CAP = 10
# --sync: lbo runs with `lbo run --sync`, exact whatever the machine's load (the objective is
# deterministic), so that two lbo methods' runs of a seed differ by the methods alone.
SYNC = False
LBO_METHODS = ("lbo", "lbo+predictive", "lbo+asha", "lbo+asha+highest", "lbo+asha+rungs", "lbo+asha+notransfer", "lbo+asha+notransfer+highest",
               "lbo+asha+promotion", "lbo+asha+promotion+highest", "lbo+hyperband", "lbo+hyperband+highest",
               "lbo+hyperband+promotion", "lbo+hyperband+promotion+highest", "lbo+median", "lbo+median+highest",
               "lbo+median+rungs", "gp+asha", "gp+asha+highest", "random+asha")
# What the model learns from curves ([early_stopping] model): the default (last values) against
# BOHB's rule and the rung tasks proposing at R.
PAIRS = ("lbo:lbo+predictive", "lbo:lbo+hyperband", "lbo+hyperband:lbo+predictive", "optuna-tpe-median:lbo+predictive",
         "optuna-tpe-hyperband:lbo+predictive", "lbo+asha:lbo+asha+highest", "lbo+asha:lbo+asha+rungs", "lbo+asha+notransfer:lbo+asha+notransfer+highest",
         "lbo+asha+promotion:lbo+asha+promotion+highest", "lbo+hyperband:lbo+hyperband+highest",
         "lbo+hyperband+promotion:lbo+hyperband+promotion+highest", "gp+asha:gp+asha+highest",
         "lbo+median:lbo+median+highest", "lbo+median:lbo+median+rungs")
ONE_STEP_KEPT = 3
OPTUNA_METHODS = ("optuna-tpe", "optuna-tpe-hyperband", "optuna-tpe-median", "optuna-random-sha")
OTHER_METHODS = ("one-step",)


def task_name(path):
    return os.path.splitext(os.path.basename(path))[0]


def command(socket_path, dataset, params_file):
    return ["/usr/bin/python3", "-S", "-E", os.path.join(HERE, "curves.py"), "ask", "--socket", socket_path,
            "--data", dataset, "--params", params_file, "--rounds", str(ROUNDS), "--model", MODEL]


def stops_early(method):
    return "+" in method or method.startswith("optuna-") and method != "optuna-tpe" or method == "one-step"


def job_toml(method, seed, trials, socket_path):
    surrogate, _, rule = method.partition("+")
    rule, *variants = rule.split("+") if rule else [""]
    # Variants: "notransfer" (no hurdles from earlier tasks' bests), "r<N>" (min_step = N),
    # "eta<N>" (eta = N), "p<digits>" (predictive: min_probability = 0.<digits>).
    min_step = next((int(v[1:]) for v in variants if v.startswith("r") and v[1:].isdigit()), 1)
    eta = next((int(v[3:]) for v in variants if v.startswith("eta") and v[3:].isdigit()), 3)
    probability = next((f"0.{v[1:]}" for v in variants if v.startswith("p") and v[1:].isdigit()), None)
    lines = [f'name = "{method.replace("+", "_")}-seed{seed}"', f"seed = {seed}", "", "[objective]",
             f"command = {json.dumps(command(socket_path, '{dataset}', '{params_file}'))}",
             'direction = "maximize"', "timeout_s = 120", "", "[policy]", f'surrogate = "{surrogate}"', "",
             "[workers]", f"local_slots = {SLOTS}", ""]
    if rule:
        lines += ["[early_stopping]", EARLY[rule], f'step_name = "{"epoch" if MODEL == "mlp" else "round"}"', f"min_step = {min_step}",
                  f"max_step = {ROUNDS}", f"eta = {eta}"] + (["transfer = false"] if "notransfer" in variants else []) + \
                 ([f"min_probability = {probability}"] if probability else []) + \
                 (['mode = "promotion"'] if "promotion" in variants else []) + \
                 (['model = "rungs"'] if "rungs" in variants else []) + \
                 (['model = "highest_rung"'] if "highest" in variants else []) + \
                 (['model = "forecast"'] if "forecast" in variants else []) + \
                 (['model = "last"'] if "last" in variants else []) + [""]
    lines.append("[space]")
    for name, kind, low, high, log in SPACE:
        lines.append(f'{name} = {{ type = "{kind}", low = {low!r}, high = {high!r}{", log = true" if log else ""} }}')
    equal = EQUAL and rule
    for path in TASKS:
        lines += ["", "[[tasks]]", f'name = "{task_name(path)}"', f'dataset = "{path}"',
                  f"budget = {trials * EQUAL_TRIAL_CAP if equal else trials}"] + \
                 ([f"budget_steps = {trials * ROUNDS}"] if equal else [])
    return "\n".join(lines) + "\n"


def run_lbo(method, seed, trials, socket_path, work, lbo):
    """Per task: [(resource, full-fidelity value or None)] in the order the trials ended."""
    job = os.path.join(work, "job.toml")
    with open(job, "w") as f:
        f.write(job_toml(method, seed, trials, socket_path))
    with open(os.path.join(work, "lbo.log"), "w") as log:
        status = subprocess.run([lbo, "run", job, "--run-root", work, "--fresh"] + (["--sync"] if SYNC else []), stdout=log,
                                stderr=subprocess.STDOUT).returncode
    if status != 0:
        raise RuntimeError(f"lbo exited {status}; see {work}/lbo.log")
    return lbo_curves(os.path.join(work, f'{method.replace("+", "_")}-seed{seed}'), SYNC)


def lbo_curves(run_dir, sync=False):
    """Per task: [(resource, full-fidelity value or None)] in time order. An attempt's rounds are
    spent when it last reported (a paused attempt's when it was paused; a promoted attempt's
    rounds are those past the last one before it, a retry's all of its own); a full-fidelity
    value comes when its trial finished ok.

    sync (an `lbo run --sync` run): in the run's own order instead, exact whatever the load. The
    trials in the order lbo proposed them (their ids), a trial's value right after its last
    attempt; a trial stopped for good spends rounds up to the step it was judged at (its reason's
    "at round N (rung"), as lbo's budget_steps counts it. In time order two trials of one round
    end in either order, and a stopped trial's reports that left before the stop reached its
    process are counted: both depend on the machine's load (2026-12-07: two runs of one seed gave
    the same trials and different best@x). A trial's later attempts (a promotion, a retry) are
    counted at its place: exact, and in promotion mode only near the order they ran in."""
    attempts = {}  # (trial, attempt) -> [task, first step, last step, last time]
    with open(os.path.join(run_dir, "reports.csv")) as f:
        for r in csv.DictReader(f):
            a = attempts.setdefault((int(r["trial"]), int(r["attempt"])), [r["task"], int(r["step"]), 0, ""])
            a[2], a[3] = max(a[2], int(r["step"])), max(a[3], r["time"])
    with open(os.path.join(run_dir, "results.csv")) as f:
        results = list(csv.DictReader(f))
    if sync:
        for r in results:
            key = (int(r["trial"]), int(r["attempts"]))
            judged = re.search(r" at \S+ (\d+) \(rung ", r["reason"]) if r["status"] == "stopped" else None
            if judged and key in attempts:
                attempts[key][2] = min(attempts[key][2], int(judged.group(1)))
    events, reached = [], {}
    for (trial, attempt), (task, first, last, time_) in sorted(attempts.items()):
        before = reached.get(trial, 0)
        events.append(((trial, attempt, 0) if sync else time_, 0, task, last - before if first > before else last, None))
        reached[trial] = last
    for r in results:
        if r["status"] == "ok":
            order = (int(r["trial"]), int(r["attempts"]), 1) if sync else r["finished"]
            events.append((order, 1, r["task"], 0, float(r["objective"])))
    curves = {task_name(p): [] for p in TASKS}
    for _, _, task, resource, value in sorted(events, key=lambda e: (e[0], e[1])):
        curves[task].append((resource, value))
    return [curves[task_name(p)] for p in TASKS]


def stream_evaluate(socket_path, path, params, on_report, **request):
    """Runs one trial through the server as lbo does; on_report(step, value) -> False stops it.
    `request`: resume, target, checkpoint (curves.py)."""
    import socket
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(socket_path)
        with connection.makefile("rw") as stream:
            stream.write(json.dumps(dict(data=path, params=params, rounds=ROUNDS, model=MODEL, **request)) + "\n")
            stream.flush()
            for line in stream:
                if line.startswith("lbo:report "):
                    report = json.loads(line[len("lbo:report "):])
                    if on_report(report["step"], report["value"]) is False:
                        return None  # the socket closes: the server's child ends
                else:
                    doc = json.loads(line)
                    if "error" in doc:
                        raise RuntimeError(doc["error"])
                    return doc["objective"]
    raise RuntimeError("the server's child ended without a result")


def run_optuna(method, seed, trials, socket_path):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    tasks = []
    for index, path in enumerate(TASKS):
        sampler_seed = seed * 1000 + index
        sampler = (optuna.samplers.RandomSampler(seed=sampler_seed) if method == "optuna-random-sha"
                   else optuna.samplers.TPESampler(seed=sampler_seed))
        pruner = {"optuna-tpe": optuna.pruners.NopPruner(),
                  "optuna-tpe-hyperband": optuna.pruners.HyperbandPruner(min_resource=1, max_resource=ROUNDS,
                                                                         reduction_factor=3),
                  "optuna-tpe-median": optuna.pruners.MedianPruner(),
                  "optuna-random-sha": optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3)}[method]
        ended, lock = [], threading.Lock()
        pruning = method != "optuna-tpe"

        def objective(trial):
            params = {}
            for name, kind, low, high, log in SPACE:
                params[name] = (trial.suggest_int(name, low, high, log=log) if kind == "int"
                                else trial.suggest_float(name, low, high, log=log))
            last = [0]

            def on_report(step, value):
                last[0] = step
                trial.report(value, step)
                return not trial.should_prune()

            value = stream_evaluate(socket_path, path, params, on_report)
            with lock:
                ended.append((ROUNDS if value is not None else last[0], value))
            if value is None:
                raise optuna.TrialPruned()
            return value

        study = optuna.create_study(direction="maximize", sampler=sampler, pruner=pruner)

        def spent_budget(study, _):
            # --equal-resource: no trial starts once the rounds of --trials full trials are spent
            # (those running go on to their end, as in lbo's budget_steps).
            with lock:
                if sum(r for r, _ in ended) >= trials * ROUNDS:
                    study.stop()

        equal = EQUAL and pruning
        study.optimize(objective, n_trials=trials * EQUAL_TRIAL_CAP if equal else trials, n_jobs=SLOTS,
                       callbacks=[spent_budget] if equal else [])
        tasks.append(ended)
    return tasks


def run_one_step(seed, trials, socket_path, work):
    """Egele et al. 2023's baseline: random configurations to round 1, the best few to R."""
    import random
    from concurrent.futures import ThreadPoolExecutor
    tasks = []
    for index, path in enumerate(TASKS):
        rng = random.Random(seed * 1000 + index)
        configs = []
        for _ in range(trials):
            params = {}
            for name, kind, low, high, log in SPACE:
                if log:
                    params[name] = math.exp(rng.uniform(math.log(low), math.log(high)))
                else:
                    params[name] = rng.randint(low, high) if kind == "int" else rng.uniform(low, high)
            configs.append(params)
        folder = tempfile.mkdtemp(prefix=f"one-step-{seed}-{index}-", dir=work)
        files = [os.path.join(folder, f"{i}.json") for i in range(trials)]

        def first_round(i):
            return stream_evaluate(socket_path, path, configs[i], lambda s, v: None, target=1, checkpoint=files[i])

        with ThreadPoolExecutor(SLOTS) as pool:
            values = list(pool.map(first_round, range(trials)))
        kept = sorted(range(trials), key=lambda i: -values[i])[:ONE_STEP_KEPT]

        def to_the_end(i):
            return stream_evaluate(socket_path, path, configs[i], lambda s, v: None, resume=1, checkpoint=files[i])

        with ThreadPoolExecutor(SLOTS) as pool:
            finals = list(pool.map(to_the_end, kept))
        tasks.append([(1, None)] * trials + [(ROUNDS - 1, v) for v in finals])
    return tasks


def best_within(curve, budget):
    """The best full-fidelity value among the trials that ended within `budget` rounds in all."""
    spent, best = 0, None
    for resource, value in curve:
        spent += resource
        if spent > budget:
            break
        if value is not None and (best is None or value > best):
            best = value
    return best


def resource_to_reach(curve, target):
    spent = 0
    for resource, value in curve:
        spent += resource
        if value is not None and value >= target - 1e-12:
            return spent
    return None


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")


def share_to_reach(results, method, trials, seeds):
    """The least share x of trials × R rounds (a grid of 1%) at which the method's mean best@x,
    over tasks 2+ and seeds, reaches the mean final best of lbo without early stopping (the
    compute it needs for lbo's quality); a task run with no full trial within x counts with the
    worst full value any method found there. None when it never does."""
    full = trials * ROUNDS
    runs = [(seed, t) for seed in seeds for t in range(1, len(TASKS))
            if (method, seed) in results and ("lbo", seed) in results]
    if not runs:
        return None
    target = mean([best_within(results[("lbo", seed)][t], math.inf) for seed, t in runs])
    floors = {(seed, t): min(v for (m, s), tasks in results.items() if s == seed for _, v in tasks[t] if v is not None)
              for seed, t in runs}
    most = max(sum(r for r, _ in results[(method, seed)][t]) for seed, t in runs) / full
    for percent in range(1, int(100 * most) + 2):
        at = [best_within(results[(method, seed)][t], percent / 100 * full) for seed, t in runs]
        if mean([floors[run] if v is None else v for run, v in zip(runs, at)]) >= target - 1e-12:
            return percent / 100
    return None


def report(results, methods, trials, seeds, times):
    full = trials * ROUNDS
    print(f"bench/fidelity: {PROBLEM} ({MODEL}), {len(TASKS)} tasks, {trials} trials per task, R = {ROUNDS} rounds, "
          f"{SLOTS} slots, seeds {', '.join(map(str, seeds))}; figures over tasks 2+ and seeds")
    print(f"{'method':24s} {'resource':>9s} {'best@25%':>9s} {'best@50%':>9s} {'best@100%':>10s} {'final':>8s} "
          f"{'to lbo final':>13s} {'reached':>8s} {'mean reach':>10s} {'wall_s':>7s}")
    for method in methods:
        used, at25, at50, at100, final, to_target, reached, total = [], [], [], [], [], [], 0, 0
        for seed in seeds:
            tasks = results.get((method, seed))
            baseline = results.get(("lbo", seed))
            if tasks is None:
                continue
            for t in range(1, len(TASKS)):
                curve = tasks[t]
                used.append(sum(r for r, _ in curve) / full)
                at25.append(best_within(curve, 0.25 * full))
                at50.append(best_within(curve, 0.5 * full))
                at100.append(best_within(curve, full))
                final.append(best_within(curve, math.inf))
                if baseline is not None:
                    target = best_within(baseline[t], math.inf)
                    spent = resource_to_reach(curve, target) if target is not None else None
                    total += 1
                    if spent is not None:
                        reached += 1
                        to_target.append(spent / full)
        wall = mean([next((times[k] for k in (f"{method}-seed{seed}{suffix}" for suffix in ("", "-equal", "-exact", "-equal-exact"))
                           if k in times), None) for seed in seeds])
        reach = share_to_reach(results, method, trials, seeds)
        print(f"{method:24s} {mean(used):9.3f} {mean(at25):9.4f} {mean(at50):9.4f} {mean(at100):10.4f} "
              f"{mean(final):8.4f} {mean(to_target):13.3f} {reached:>3d}/{total:<3d} "
              f"{'never' if reach is None else f'{reach:.2f}':>10s} {wall:7.0f}")
    print("resource: rounds used / (trials × 81); best@x: best full-fidelity AUC within x of trials × 81 rounds; "
          "to lbo final: rounds (share of trials × 81) until the best reached lbo's final best, over the tasks that did; "
          "mean reach: the least share at which the mean best reaches lbo's mean final best (share_to_reach); "
          f"{'equal resource: a method that stops early spends trials × 81 rounds on as many trials as fit; ' if EQUAL else ''}"
          "wall_s: seconds per seed for all tasks (nan: not recorded)")


def per_task(results, methods, trials, seeds):
    """Each task's best at 25%, 50% and 100% of the resource, averaged over the seeds."""
    full = trials * ROUNDS
    print(f"{'per task: best@25% / @50% / @100%':28s} " + " ".join(f"{task_name(p)[-22:]:>22s}" for p in TASKS[1:]))
    for method in methods:
        cells = []
        for t in range(1, len(TASKS)):
            runs = [results[(method, seed)][t] for seed in seeds if (method, seed) in results]
            cells.append("/".join(f"{mean([best_within(c, share * full) for c in runs]):.3f}"[1:] for share in (0.25, 0.5, 1.0)))
        print(f"{method:28s} " + " ".join(f"{c:>22s}" for c in cells))


def paired(results, pairs, trials, seeds):
    """Per pair "A:B": B's best minus A's at 25%, 50% and 100% of the resource, averaged over the
    task runs (tasks 2+, seeds) both have a value for, with its standard error."""
    full = trials * ROUNDS
    if pairs:
        print(f"{'paired difference (B - A)':48s} {'@25%':>16s} {'@50%':>16s} {'@100%':>16s}  runs")
    for pair in pairs:
        a, b = pair.split(":")
        cells, runs = [], 0
        for share in (0.25, 0.5, 1.0):
            diffs = []
            for seed in seeds:
                ta, tb = results.get((a, seed)), results.get((b, seed))
                if ta is None or tb is None:
                    continue
                for t in range(1, len(TASKS)):
                    va, vb = best_within(ta[t], share * full), best_within(tb[t], share * full)
                    if va is not None and vb is not None:
                        diffs.append(vb - va)
            runs = len(diffs)
            if len(diffs) < 2:
                cells.append(f"{'–':>16s}")
                continue
            m = sum(diffs) / len(diffs)
            se = math.sqrt(sum((d - m) ** 2 for d in diffs) / (len(diffs) - 1) / len(diffs))
            cells.append(f"{m:+8.4f} ± {se:.4f}")
        print(f"{a + ' → ' + b:48s} {' '.join(cells)}  {runs}")


def start_server(out):
    socket_path = os.path.join(tempfile.mkdtemp(prefix="lbo-fidelity-"), "curves.sock")
    server = subprocess.Popen(["/usr/bin/python3", os.path.join(HERE, "curves.py"), "serve", "--socket", socket_path],
                              stdout=open(os.path.join(out, "server.log"), "a"), stderr=subprocess.STDOUT)
    for _ in range(600):
        if os.path.exists(socket_path):
            return server, socket_path
        time.sleep(0.1)
    server.kill()
    raise SystemExit("suite.py: curves.py serve did not start")


def main():
    global SLOTS, PROBLEM, TASKS, MODEL, SPACE, EQUAL, SYNC
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lbo", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--slots", type=int, default=SLOTS, help="trials at a time (lbo's local slots, Optuna's n_jobs)")
    parser.add_argument("--problem", default=PROBLEM, choices=sorted(PROBLEMS),
                        help="rotterdam or nwtco (XGBoost round by round), rotterdam-mlp (an MLP epoch by epoch)")
    parser.add_argument("--methods", nargs="+", default=list(LBO_METHODS + OPTUNA_METHODS + OTHER_METHODS))
    parser.add_argument("--equal-trials", action="store_true",
                        help="every method runs --trials trials (as before 2026-12-06), not the resource of --trials full trials")
    parser.add_argument("--sync", action="store_true",
                        help="lbo methods run with lbo run --sync and counted in the run's order (exact; raw results kept apart, with an -exact suffix)")
    parser.add_argument("--per-task", action="store_true", help="also print each task's best at 25%%, 50%% and 100%%")
    parser.add_argument("--paired", nargs="*", default=list(PAIRS), metavar="A:B",
                        help="print B's best minus A's per task run, with its standard error")
    args = parser.parse_args()
    SLOTS, PROBLEM, EQUAL, SYNC = args.slots, args.problem, not args.equal_trials, args.sync
    TASKS, MODEL, SPACE = PROBLEMS[PROBLEM]
    os.makedirs(args.out, exist_ok=True)
    build_stamp.claim(args.out, args.lbo)  # the raw results below are cached by method and seed only
    # Each method's wall time per seed (all tasks), kept beside the raw results.
    times_path = os.path.join(args.out, "times.json")
    times = json.load(open(times_path)) if os.path.exists(times_path) else {}
    server, socket_path = start_server(args.out)
    results = {}
    seeds = list(range(1, args.seeds + 1))
    try:
        for seed in seeds:
            for method in args.methods:
                suffix = "-equal" if EQUAL and stops_early(method) and method != "one-step" else ""
                suffix += "-exact" if SYNC and not method.startswith("optuna") and method != "one-step" else ""
                raw = os.path.join(args.out, f"{method}-seed{seed}{suffix}.json")
                if os.path.exists(raw):
                    with open(raw) as f:
                        results[(method, seed)] = json.load(f)
                    continue
                start = time.time()
                if method.startswith("optuna"):
                    tasks = run_optuna(method, seed, args.trials, socket_path)
                elif method == "one-step":
                    tasks = run_one_step(seed, args.trials, socket_path, args.out)
                else:
                    work = tempfile.mkdtemp(prefix=f"{method}-{seed}-", dir=args.out)
                    tasks = run_lbo(method, seed, args.trials, socket_path, work, args.lbo)
                with open(raw, "w") as f:
                    json.dump(tasks, f)
                results[(method, seed)] = tasks
                times[f"{method}-seed{seed}{suffix}"] = time.time() - start
                with open(times_path, "w") as f:
                    json.dump(times, f, indent=1)
                print(f"{method} seed {seed}: {time.time() - start:.0f} s", file=sys.stderr, flush=True)
    finally:
        server.terminate()
    report(results, args.methods, args.trials, seeds, times)
    if args.per_task:
        per_task(results, args.methods, args.trials, seeds)
    paired(results, [p for p in args.paired if all(m in args.methods for m in p.split(":"))], args.trials, seeds)


if __name__ == "__main__":
    main()
