#!/usr/bin/env python3
"""bench/objectives objectives: two minimized objectives with a known front, on tasks in sequence.

- "branin" (u, v in the unit square): "value" is bench/failures' Branin of the task (its
  parameters perturbed by task); "size" the squared distance of (u, v) from the corner (0, 0),
  like a model's size against its loss. Branin's minima lie away from the corner, so the front
  runs from the corner to the nearest minimum, on every task alike (its hypervolume from a grid).
- "zdt1", "zdt2" (Zitzler, Deb & Thiele, Evolutionary Computation 2000) and "dtlz2" (Deb,
  Thiele, Laumanns & Zitzler 2002), two objectives over x1..x4 in the unit cube. A task moves
  the optimum of g (ZDT: g = 1 + 9/(n-1) Σ|x_i - c|; DTLZ2: g = Σ(x_i - c)², i >= 2) to
  c = 0.5, 0.6, 0.4 (tasks 1, 2, 3): alike tasks, each with the same front, whose hypervolume
  from (1.1, 1.1) is closed: 1.21 - 1/3 (ZDT1, f2 = 1 - sqrt f1), 1.21 - 2/3 (ZDT2,
  f2 = 1 - f1²), 1.21 - π/4 (DTLZ2, the quarter circle).

Standard library only.

  objective.py --params params.json --task task-2 [--problem zdt1]   prints {"value": f1, "size": f2}
"""
import importlib.util
import json
import math
import os
import sys

_spec = importlib.util.spec_from_file_location(
    "failures_objective", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "failures", "objective.py"))
_failures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_failures)
TASKS, branin = _failures.TASKS, _failures.branin

# The hypervolume's reference point (value, size) per problem: worse than every point that matters.
REFERENCE = {"branin": (60.0, 2.0), "zdt1": (1.1, 1.1), "zdt2": (1.1, 1.1), "dtlz2": (1.1, 1.1)}
# The front's hypervolume from REFERENCE, closed form (branin: None, from a grid in run.py).
FRONT = {"branin": None, "zdt1": 1.21 - 1 / 3, "zdt2": 1.21 - 2 / 3, "dtlz2": 1.21 - math.pi / 4}
DIMENSION = 4  # of the synthetic problems
SHIFT = {"task-1": 0.5, "task-2": 0.6, "task-3": 0.4}


def size(u, v):
    return u * u + v * v


def parameters(problem):
    """The problem's parameter names, in order."""
    return ["u", "v"] if problem == "branin" else [f"x{i}" for i in range(1, DIMENSION + 1)]


def evaluate(problem, x, task):
    """(value, size) of the parameters `x` (a list in parameters() order) on `task`."""
    if problem == "branin":
        return branin(x[0], x[1], task), size(x[0], x[1])
    c, rest = SHIFT[task], x[1:]
    if problem == "dtlz2":
        g = sum((xi - c) ** 2 for xi in rest)
        return (1 + g) * math.cos(x[0] * math.pi / 2), (1 + g) * math.sin(x[0] * math.pi / 2)
    g = 1 + 9 / len(rest) * sum(abs(xi - c) for xi in rest)
    ratio = x[0] / g
    return x[0], g * (1 - (math.sqrt(ratio) if problem == "zdt1" else ratio * ratio))


def main(argv):
    params = json.load(open(argv[argv.index("--params") + 1]))
    task = argv[argv.index("--task") + 1]
    problem = argv[argv.index("--problem") + 1] if "--problem" in argv else "branin"
    value, s = evaluate(problem, [params[k] for k in parameters(problem)], task)
    print(json.dumps({"value": value, "size": s}))


if __name__ == "__main__":
    main(sys.argv[1:])
