#!/usr/bin/python3
"""bench/failures: proposals where a third of the space fails (objective.py), in sequence.

Every method in one invocation, on the same tasks and seeds: lbo's models with failures learned
(the default) and ignored ([objective] failures = "ignore", lbo's behaviour before), random
search, and Optuna's TPE (Debian's python3-optuna, run with /usr/bin/python3; a failed trial is
a FAIL trial, which TPE leaves out as lbo did). Each task is one study for Optuna (it carries
nothing across tasks). Per task: the failures among its first 10 trials and among the rest, and
the best value found (Branin's minimum is 0.398 on task 1).

  /usr/bin/python3 bench/failures/run.py [--lbo build/lbo] [--seeds 3] [--trials 40] [--tasks 2]
         [--methods lbo,lbo-ignore,gp,gp-ignore,random,optuna-tpe] [--slots N] [--async] [--out DIR]
"""
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import objective  # noqa: E402
import sequence  # noqa: E402

JOB = """name = "failures"
seed = {seed}
[objective]
command = ["python3", "{objective}", "--params", "{{params_file}}", "--task", "{{task}}", "--sleep-s", "{sleep}"]
direction = "minimize"
failures = "{failures}"
[policy]
surrogate = "{surrogate}"
[workers]
local_slots = {slots}
[space]
u = {{ type = "float", low = 0.0, high = 1.0 }}
v = {{ type = "float", low = 0.0, high = 1.0 }}
{tasks}"""


def run_lbo(lbo, method, seed, trials, tasks, out, slots, asynchronous):
    surrogate, _, mode = method.partition("-")
    job = JOB.format(seed=seed, objective=os.path.join(HERE, "objective.py"), failures=mode or "learn",
                     surrogate=surrogate, tasks=sequence.task_tables(tasks, trials), slots=slots,
                     sleep=0.3 if asynchronous else 0)
    rows = {t: [] for t in tasks}
    for r in sequence.run_lbo(lbo, os.path.join(out, f"{method}-{seed}"), job, "failures", asynchronous):
        rows[r["task"]].append(None if r["status"] != "ok" else float(r["objective"]))
    return rows


def run_optuna(seed, trials, tasks):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    rows = {}
    for k, task in enumerate(tasks):
        values = []

        def f(trial):
            u, v = trial.suggest_float("u", 0, 1), trial.suggest_float("v", 0, 1)
            if objective.fails(u, v):
                values.append(None)
                raise RuntimeError("CUDA out of memory")
            y = objective.branin(u, v, task)
            values.append(y)
            return y

        study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed * 100 + k))
        study.optimize(f, n_trials=trials, catch=(RuntimeError,))
        rows[task] = values
    return rows


def main():
    a = sequence.arguments(__doc__, "lbo,lbo-ignore,gp,gp-ignore,random,optuna-tpe")
    tasks = list(objective.TASKS)[: a.tasks]
    out = sequence.out_folder(a, "lbo-bench-failures-")
    mode = "asynchronous" if a.asynchronous else "--sync"
    print(f"failure region: a third of the square; {a.tasks} tasks x {a.trials} trials, {mode}, {a.slots} slot(s), "
          f"{a.seeds} seeds; raw runs in {out}")
    print(f"{'method':<12} {'task':<7} {'failed 1-10':>11} {'failed 11+':>11} {'best':>8}   (means over seeds)")
    for method in a.methods.split(","):
        per_task = {t: ([], [], []) for t in tasks}
        for seed in range(1, a.seeds + 1):
            rows = run_optuna(seed, a.trials, tasks) if method == "optuna-tpe" else run_lbo(
                os.path.abspath(a.lbo), method, seed, a.trials, tasks, out, a.slots, a.asynchronous)
            for t in tasks:
                values = rows[t]
                first, rest = values[:10], values[10:]
                ok = [v for v in values if v is not None]
                per_task[t][0].append(sum(v is None for v in first))
                per_task[t][1].append(sum(v is None for v in rest))
                per_task[t][2].append(min(ok) if ok else float("nan"))
        for t in tasks:
            early, late, best = per_task[t]
            print(f"{method:<12} {t:<7} {statistics.mean(early):>11.1f} {statistics.mean(late):>11.1f} "
                  f"{statistics.mean(best):>8.3f}   late per seed {late}", flush=True)


if __name__ == "__main__":
    main()
