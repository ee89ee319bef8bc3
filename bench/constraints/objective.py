#!/usr/bin/env python3
"""bench/constraints objective: Branin on the unit square under a limit it reports as a metric.

Each result carries "radius", the distance of (x1, x2) from the box's centre (2.5, 7.5), and the
job limits it to at most 5 (a disc, 35% of the box, like a model that must fit in memory or
answer in time). None of Branin's three minima lies inside: the constrained optimum sits on the
disc's edge (1.773 on task 1, `--optimum`). The tasks are Branin with its parameters
perturbed by task, as in bench/failures; the limit is the same on every task. Standard library only.

  objective.py --params params.json --task task-2 [--sleep-s S]
      prints {"objective": value, "metrics": {"radius": r}}
  objective.py --optimum task      prints the best feasible value (a grid of the disc, for run.py)
"""
import importlib.util
import json
import math
import os
import sys
import time

# The same tasks as bench/failures (its objective.py, loaded under another name than this one's).
_spec = importlib.util.spec_from_file_location(
    "failures_objective", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "failures", "objective.py"))
_failures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_failures)
TASKS, branin = _failures.TASKS, _failures.branin

LIMIT = 4.0


def radius(u, v):
    return math.hypot(15 * u - 5 - 2.5, 15 * v - 7.5)


def optimum(task, n=1500):
    """The best value with radius <= LIMIT: the disc's edge on a fine polar grid, and its inside."""
    best = math.inf
    for i in range(n):
        angle = 2 * math.pi * i / n
        for r in (LIMIT * k / 60 for k in range(61)):
            u, v = (2.5 + r * math.cos(angle) + 5) / 15, (7.5 + r * math.sin(angle)) / 15
            best = min(best, branin(u, v, task))
    return best


def main(argv):
    if argv[:1] == ["--optimum"]:
        print(repr(optimum(argv[1])))
        return 0
    args = dict(zip(argv[0::2], argv[1::2]))
    with open(args["--params"]) as f:
        p = json.load(f)
    time.sleep(float(args.get("--sleep-s", 0)))  # a trial that takes time: slots overlap
    print(json.dumps({"objective": branin(p["u"], p["v"], args["--task"]), "metrics": {"radius": radius(p["u"], p["v"])}}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
