#!/usr/bin/env python3
"""The end of an allocation, simulated: which estimate of a trial's duration should decide
whether a trial still starts before the deadline (lbo's DeadlinePlanner)?

Each repetition: `slots` slots, trial durations i.i.d. log-normal with median 1 and spread
sigma, and an estimate made from 50 earlier durations (the window lbo keeps). Each slot
becomes free at a uniform time in [0, 10) and starts trials while now + estimate <= the
cut-off C = 13 (the deadline less grace_s); a trial still running at C is cancelled: its time
is lost and it runs again in the next allocation. The allocation is charged until the last
slot is done (at C when a trial was cancelled, earlier when every slot stopped by itself).

Prints, per estimator and sigma: idle slot time (charged, not spent on a finished trial) per
slot, in median trial durations, and cancelled trials per allocation.

usage: bench/deadline_estimator.py [--slots 16] [--reps 4000]
"""
import argparse
import math
import random
import statistics

CUTOFF = 13.0


def simulate(sigma, estimate, slots, reps, seed=1):
    rng = random.Random(seed)
    idle = cancelled = 0.0
    for _ in range(reps):
        window = sorted(math.exp(rng.gauss(0, sigma)) for _ in range(50))
        est = estimate(window)
        run_end, useful, free_at = 0.0, 0.0, []
        for _ in range(slots):
            t = rng.uniform(0, 10)
            free_at.append(t)
            while t + est <= CUTOFF:
                d = math.exp(rng.gauss(0, sigma))
                if t + d > CUTOFF:
                    cancelled += 1
                    t = CUTOFF
                    break
                t += d
                useful += d
            run_end = max(run_end, t)
        idle += (sum(run_end - f for f in free_at) - useful) / slots
    return idle / reps, cancelled / reps


def nearest_rank(q):
    return lambda window: window[math.ceil(q * len(window)) - 1]


ESTIMATORS = {
    "mean": statistics.fmean,
    "median": nearest_rank(0.5),
    "p90 (lbo)": nearest_rank(0.9),
    "max": lambda window: window[-1],
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--slots", type=int, default=16)
    parser.add_argument("--reps", type=int, default=4000)
    args = parser.parse_args()
    print(f"{args.slots} slots, {args.reps} allocations per cell; idle slot time per slot (median trial "
          f"durations) / cancelled trials per allocation")
    sigmas = (0.1, 0.3, 0.6, 1.0)
    print(f"{'estimate':12}" + "".join(f"{'sigma = ' + str(s):>18}" for s in sigmas))
    for name, estimate in ESTIMATORS.items():
        cells = (simulate(s, estimate, args.slots, args.reps) for s in sigmas)
        print(f"{name:12}" + "".join(f"{f'{idle:.2f} / {cancel:.2f}':>18}" for idle, cancel in cells))


if __name__ == "__main__":
    main()
