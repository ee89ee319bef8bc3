#!/usr/bin/python3
"""bench/objectives: two objectives on tasks in sequence (objective.py: Branin against the distance
from a corner; ZDT1, ZDT2 and DTLZ2 over four parameters, the optimum of g moved by task). Every
method in one invocation, on the same tasks and seeds: lbo's models with [objective] objectives
(ParEGO's scalarization), random search, and Optuna 3.1's NSGA-II and multi-objective TPE
(Debian's python3-optuna, run with /usr/bin/python3; each task one study, as Optuna carries
nothing across tasks). Per task: the hypervolume of the trials so far at 10, 20 and all trials,
from objective.REFERENCE, exact (2-d staircase), as a share of the front's hypervolume (closed
form; Branin's from a 400 × 400 grid).

  /usr/bin/python3 bench/objectives/run.py [--lbo build/lbo] [--seeds 3] [--trials 40] [--tasks 2]
         [--problems branin,zdt1,zdt2,dtlz2] [--methods lbo,gp,random,optuna-nsga2,optuna-tpe] [--out DIR]
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
command = ["python3", "{objective}", "--params", "{{params_file}}", "--task", "{{task}}", "--problem", "{problem}"]
objectives = [{{ name = "value", direction = "minimize" }}, {{ name = "size", direction = "minimize" }}]
[policy]
surrogate = "{surrogate}"
[workers]
local_slots = {slots}
[space]
{space}
{tasks}"""


def hypervolume(points, reference):
    """Of minimized 2-d points below the reference: the staircase's area."""
    area, last = 0.0, reference[1]
    for value, size in sorted(p for p in points if p[0] < reference[0] and p[1] < reference[1]):
        if size < last:
            area += (reference[0] - value) * (last - size)
            last = size
    return area


def front(problem, task, n=400):
    if objective.FRONT[problem] is not None:
        return objective.FRONT[problem]
    return hypervolume([objective.evaluate(problem, [i / n, j / n], task) for i in range(n + 1) for j in range(n + 1)],
                       objective.REFERENCE[problem])


def run_lbo(lbo, problem, method, seed, trials, tasks, out, slots):
    space = "\n".join(f"{p} = {{ type = \"float\", low = 0.0, high = 1.0 }}" for p in objective.parameters(problem))
    job = JOB.format(seed=seed, objective=os.path.join(HERE, "objective.py"), problem=problem, surrogate=method, slots=slots,
                     space=space, tasks=sequence.task_tables(tasks, trials))
    rows = {t: [] for t in tasks}
    for r in sequence.run_lbo(lbo, os.path.join(out, f"{problem}-{method}-{seed}"), job, "objectives", False):
        rows[r["task"]].append((float(r["objective"]), float(r["objective:size"])) if r["status"] == "ok" else None)
    return rows


def run_optuna(problem, sampler_name, seed, trials, tasks):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    rows = {}
    for k, task in enumerate(tasks):
        values = []

        def f(trial):
            x = [trial.suggest_float(p, 0, 1) for p in objective.parameters(problem)]
            values.append(objective.evaluate(problem, x, task))
            return values[-1]

        sampler = (optuna.samplers.NSGAIISampler(seed=seed * 100 + k) if sampler_name == "nsga2"
                   else optuna.samplers.TPESampler(seed=seed * 100 + k))
        study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
        study.optimize(f, n_trials=trials)
        rows[task] = values
    return rows


def main():
    a = sequence.arguments(__doc__, "lbo,gp,random,optuna-nsga2,optuna-tpe",
                           lambda p: p.add_argument("--problems", default="branin"))
    out = sequence.out_folder(a, "lbo-bench-objectives-")
    tasks = list(objective.TASKS)[:a.tasks]
    marks = [10, 20, a.trials]
    for problem in a.problems.split(","):
        best = {t: front(problem, t) for t in tasks}
        print(f"# {problem}: {a.tasks} tasks x {a.trials} trials, {a.seeds} seeds; hypervolume share of the front's at {marks}")
        for method in a.methods.split(","):
            shares = {(t, m): [] for t in tasks for m in marks}
            for seed in range(1, a.seeds + 1):
                if method.startswith("optuna-"):
                    rows = run_optuna(problem, method.split("-")[1], seed, a.trials, tasks)
                else:
                    rows = run_lbo(a.lbo, problem, method, seed, a.trials, tasks, out, a.slots)
                for t in tasks:
                    for m in marks:
                        shares[(t, m)].append(hypervolume([p for p in rows[t][:m] if p], objective.REFERENCE[problem]) / best[t])
            cells = "  ".join(f"{t}: " + "/".join(f"{statistics.mean(shares[(t, m)]):.4f}" for m in marks) for t in tasks)
            print(f"{method:14s} {cells}", flush=True)


if __name__ == "__main__":
    main()
