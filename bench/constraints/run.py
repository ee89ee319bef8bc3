#!/usr/bin/python3
"""bench/constraints: proposals under a limit on a reported metric (objective.py), in sequence.

Every method in one invocation, on the same tasks and seeds: lbo's models with the limit stated
([[constraints]] name = "radius", max = 4) and blind to it (the same job without the table; the
limit judged afterwards), random search, and Optuna's TPE with the limit as its constraints_func
(Debian's python3-optuna 3.1, run with /usr/bin/python3). Each task is one study for Optuna (it
carries nothing across tasks). Per task: the infeasible trials among the first 10 and among the
rest, and the best feasible value found against the constrained optimum.

  /usr/bin/python3 bench/constraints/run.py [--lbo build/lbo] [--seeds 3] [--trials 40] [--tasks 2]
         [--methods lbo,lbo-blind,gp,gp-blind,random,optuna-tpe] [--slots N] [--async] [--out DIR]
"""
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import objective  # noqa: E402
import sequence  # noqa: E402

JOB = """name = "constraints"
seed = {seed}
[objective]
command = ["python3", "{objective}", "--params", "{{params_file}}", "--task", "{{task}}", "--sleep-s", "{sleep}"]
direction = "minimize"
[policy]
surrogate = "{surrogate}"
[workers]
local_slots = {slots}
[space]
u = {{ type = "float", low = 0.0, high = 1.0 }}
v = {{ type = "float", low = 0.0, high = 1.0 }}
{limit}{tasks}"""

LIMIT = f'[[constraints]]\nname = "radius"\nmax = {objective.LIMIT}\n'


def run_lbo(lbo, method, seed, trials, tasks, out, slots, asynchronous):
    surrogate, _, mode = method.partition("-")
    job = JOB.format(seed=seed, objective=os.path.join(HERE, "objective.py"), surrogate=surrogate, slots=slots,
                     limit="" if mode == "blind" else LIMIT, tasks=sequence.task_tables(tasks, trials),
                     sleep=0.3 if asynchronous else 0)
    rows = {t: [] for t in tasks}
    for r in sequence.run_lbo(lbo, os.path.join(out, f"{method}-{seed}"), job, "constraints", asynchronous):
        # (value, feasible), judged here for the blind runs (and checked against lbo's own label)
        feasible = float(r["metric:radius"]) <= objective.LIMIT
        if "infeasible" in r:
            assert r["infeasible"] == ("0" if feasible else "1"), r
        rows[r["task"]].append((float(r["objective"]), feasible))
    return rows


def run_optuna(seed, trials, tasks):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    rows = {}
    for k, task in enumerate(tasks):
        values = []

        def f(trial):
            u, v = trial.suggest_float("u", 0, 1), trial.suggest_float("v", 0, 1)
            r = objective.radius(u, v)
            trial.set_user_attr("constraint", [r - objective.LIMIT])  # <= 0: feasible
            y = objective.branin(u, v, task)
            values.append((y, r <= objective.LIMIT))
            return y

        sampler = optuna.samplers.TPESampler(seed=seed * 100 + k, constraints_func=lambda t: t.user_attrs["constraint"])
        study = optuna.create_study(sampler=sampler)
        study.optimize(f, n_trials=trials)
        rows[task] = values
    return rows


def main():
    a = sequence.arguments(__doc__, "lbo,lbo-blind,gp,gp-blind,random,optuna-tpe")
    tasks = list(objective.TASKS)[: a.tasks]
    optima = {t: objective.optimum(t) for t in tasks}
    out = sequence.out_folder(a, "lbo-bench-constraints-")
    mode = "asynchronous" if a.asynchronous else "--sync"
    print(f"limit radius <= {objective.LIMIT} (22% of the square, the minima outside); {a.tasks} tasks x {a.trials} trials, "
          f"{mode}, {a.slots} slot(s), {a.seeds} seeds; constrained optima " +
          ", ".join(f"{t} {v:.3f}" for t, v in optima.items()) + f"; raw runs in {out}")
    print(f"{'method':<12} {'task':<7} {'infeasible 1-10':>15} {'infeasible 11+':>14} {'best feasible':>13} {'gap':>7}"
          "   (means over seeds)")
    for method in a.methods.split(","):
        per_task = {t: ([], [], []) for t in tasks}
        for seed in range(1, a.seeds + 1):
            rows = run_optuna(seed, a.trials, tasks) if method == "optuna-tpe" else run_lbo(
                os.path.abspath(a.lbo), method, seed, a.trials, tasks, out, a.slots, a.asynchronous)
            for t in tasks:
                values = rows[t]
                feasible = [y for y, ok in values if ok]
                per_task[t][0].append(sum(not ok for _, ok in values[:10]))
                per_task[t][1].append(sum(not ok for _, ok in values[10:]))
                per_task[t][2].append(min(feasible) if feasible else math.nan)
        for t in tasks:
            early, late, best = per_task[t]
            print(f"{method:<12} {t:<7} {statistics.mean(early):>15.1f} {statistics.mean(late):>14.1f} "
                  f"{statistics.mean(best):>13.3f} {statistics.mean(best) - optima[t]:>7.3f}   late per seed {late}", flush=True)


if __name__ == "__main__":
    main()
