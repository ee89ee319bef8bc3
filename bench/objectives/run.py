#!/usr/bin/python3
"""bench/objectives: two objectives (objective.py: Branin against the distance from a corner), in
sequence. Every method in one invocation, on the same tasks and seeds: lbo's models with
[objective] objectives (ParEGO's scalarization), random search, and Optuna 3.1's NSGA-II and
multi-objective TPE (Debian's python3-optuna, run with /usr/bin/python3; each task one study, as
Optuna carries nothing across tasks). Per task: the hypervolume of the trials so far at 10, 20
and all trials, from objective.REFERENCE, exact (2-d staircase), and as a share of the
hypervolume of the front on a 400 × 400 grid.

  /usr/bin/python3 bench/objectives/run.py [--lbo build/lbo] [--seeds 3] [--trials 40] [--tasks 2]
         [--methods lbo,gp,random,optuna-nsga2,optuna-tpe] [--out DIR]
"""
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import objective  # noqa: E402
import sequence  # noqa: E402

JOB = """name = "objectives"
seed = {seed}
[objective]
command = ["python3", "{objective}", "--params", "{{params_file}}", "--task", "{{task}}"]
objectives = [{{ name = "value", direction = "minimize" }}, {{ name = "size", direction = "minimize" }}]
[policy]
surrogate = "{surrogate}"
[workers]
local_slots = {slots}
[space]
u = {{ type = "float", low = 0.0, high = 1.0 }}
v = {{ type = "float", low = 0.0, high = 1.0 }}
{tasks}"""


def hypervolume(points, reference=objective.REFERENCE):
    """Of minimized 2-d points below the reference: the staircase's area."""
    area, last = 0.0, reference[1]
    for value, size in sorted(p for p in points if p[0] < reference[0] and p[1] < reference[1]):
        if size < last:
            area += (reference[0] - value) * (last - size)
            last = size
    return area


def grid_front(task, n=400):
    return hypervolume([(objective.branin(i / n, j / n, task), objective.size(i / n, j / n))
                        for i in range(n + 1) for j in range(n + 1)])


def run_lbo(lbo, method, seed, trials, tasks, out, slots):
    job = JOB.format(seed=seed, objective=os.path.join(HERE, "objective.py"), surrogate=method, slots=slots,
                     tasks=sequence.task_tables(tasks, trials))
    rows = {t: [] for t in tasks}
    for r in sequence.run_lbo(lbo, os.path.join(out, f"{method}-{seed}"), job, "objectives", False):
        rows[r["task"]].append((float(r["objective"]), float(r["objective:size"])) if r["status"] == "ok" else None)
    return rows


def run_optuna(sampler_name, seed, trials, tasks):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    rows = {}
    for k, task in enumerate(tasks):
        values = []

        def f(trial):
            u, v = trial.suggest_float("u", 0, 1), trial.suggest_float("v", 0, 1)
            values.append((objective.branin(u, v, task), objective.size(u, v)))
            return values[-1]

        sampler = (optuna.samplers.NSGAIISampler(seed=seed * 100 + k) if sampler_name == "nsga2"
                   else optuna.samplers.TPESampler(seed=seed * 100 + k))
        study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
        study.optimize(f, n_trials=trials)
        rows[task] = values
    return rows


def main():
    a = sequence.arguments(__doc__, "lbo,gp,random,optuna-nsga2,optuna-tpe")
    out = sequence.out_folder(a, "lbo-bench-objectives-")
    tasks = list(objective.TASKS)[:a.tasks]
    best = {t: grid_front(t) for t in tasks}
    marks = [10, 20, a.trials]
    print(f"# {a.tasks} tasks x {a.trials} trials, {a.seeds} seeds; hypervolume share of the grid front's at {marks}")
    for method in a.methods.split(","):
        shares = {(t, m): [] for t in tasks for m in marks}
        for seed in range(1, a.seeds + 1):
            if method.startswith("optuna-"):
                rows = run_optuna(method.split("-")[1], seed, a.trials, tasks)
            else:
                rows = run_lbo(a.lbo, method, seed, a.trials, tasks, out, a.slots)
            for t in tasks:
                for m in marks:
                    shares[(t, m)].append(hypervolume([p for p in rows[t][:m] if p]) / best[t])
        cells = "  ".join(f"{t}: " + "/".join(f"{statistics.mean(shares[(t, m)]):.4f}" for m in marks) for t in tasks)
        print(f"{method:14s} {cells}", flush=True)


if __name__ == "__main__":
    main()
