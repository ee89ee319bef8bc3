#!/usr/bin/env python3
"""bench/objectives objective: two objectives on the unit square, a trade-off with a known front.

"value" is bench/failures' Branin of the task (its parameters perturbed by task); "size" is the
squared distance of (u, v) from the corner (0, 0), like a model's size against its loss. Both
minimized. Branin's minima lie away from the corner, so the Pareto front runs from the corner to
the nearest minimum, on every task alike. Standard library only.

  objective.py --params params.json --task task-2     prints {"value": v, "size": s}
"""
import importlib.util
import json
import os
import sys

_spec = importlib.util.spec_from_file_location(
    "failures_objective", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "failures", "objective.py"))
_failures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_failures)
TASKS, branin = _failures.TASKS, _failures.branin

# The hypervolume's reference point (value, size): worse than every point that matters.
REFERENCE = (60.0, 2.0)


def size(u, v):
    return u * u + v * v


def main(argv):
    params = json.load(open(argv[argv.index("--params") + 1]))
    task = argv[argv.index("--task") + 1]
    u, v = params["u"], params["v"]
    print(json.dumps({"value": branin(u, v, task), "size": size(u, v)}))


if __name__ == "__main__":
    main(sys.argv[1:])
