#!/usr/bin/env python3
"""bench/failures objective: Branin on the unit square whose corner runs "out of memory".

A point fails (exit 1, "CUDA out of memory" on stderr, as a network too wide for the GPU) when
it lies within 0.65 of the corner (1, 1): a quarter disc, a third of the square, with none of
Branin's three minima inside. The tasks are Branin with its parameters perturbed by task (the
first is Branin itself); the failure region is the same on every task. Standard library only.

  objective.py --params params.json --task task-2 [--sleep-s S]   (prints {"objective": value})
  objective.py --check u v task                       (prints value or "fail": for run.py)
"""
import json
import math
import sys
import time

FAIL_RADIUS = 0.65

# Per task: (a, b, c, r, s, t) of a·(x2 − b x1² + c x1 − r)² + s(1 − t) cos x1 + s.
TASKS = {
    "task-1": (1.0, 5.1 / (4 * math.pi ** 2), 5 / math.pi, 6.0, 10.0, 1 / (8 * math.pi)),
    "task-2": (1.05, 5.1 / (4 * math.pi ** 2) * 1.04, 5 / math.pi * 0.97, 6.2, 10.5, 1 / (8 * math.pi) * 1.1),
    "task-3": (0.95, 5.1 / (4 * math.pi ** 2) * 0.97, 5 / math.pi * 1.03, 5.8, 9.5, 1 / (8 * math.pi) * 0.9),
}


def fails(u, v):
    return (1 - u) ** 2 + (1 - v) ** 2 < FAIL_RADIUS ** 2


def branin(u, v, task):
    a, b, c, r, s, t = TASKS[task]
    x1, x2 = 15 * u - 5, 15 * v
    return a * (x2 - b * x1 * x1 + c * x1 - r) ** 2 + s * (1 - t) * math.cos(x1) + s


def main(argv):
    if argv[:1] == ["--check"]:
        u, v, task = float(argv[1]), float(argv[2]), argv[3]
        print("fail" if fails(u, v) else repr(branin(u, v, task)))
        return 0
    args = dict(zip(argv[0::2], argv[1::2]))
    with open(args["--params"]) as f:
        p = json.load(f)
    time.sleep(float(args.get("--sleep-s", 0)))  # a trial that takes time: slots overlap
    if fails(p["u"], p["v"]):
        print("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB", file=sys.stderr)
        return 1
    print(json.dumps({"objective": branin(p["u"], p["v"], args["--task"])}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
