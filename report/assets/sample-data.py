#!/usr/bin/python3
"""Prints a realistic window.LBO_DATA document (report/README.md) for developing and testing
report.js without a real run: two runs ("lbo" and "gp") over the same tasks and a conditional
space, with failures and their reasons, retries, a cancelled and an interrupted attempt, two allocations (local
slots, then MPI ranks), GP-Hedge rows and per-trial metrics.

  sample-data.py [--trials N] [--tasks T] [--old] [--seed S] > data.json

--trials N  trials per run (default 96), split evenly over the tasks
--tasks T   number of tasks (default 4)
--old       like a run directory from an older lbo: no trial times, workers, reasons, metrics,
            attempts, hedge rows or usage, and notes that say so
"""
import argparse
import json
import math
import random

SPACE = [
    {"name": "model", "type": "categorical", "choices": ["xgboost", "logreg", "mlp"]},
    {"name": "lr", "type": "float", "low": 0.001, "high": 0.5, "log": True, "when": "model = xgboost"},
    {"name": "depth", "type": "int", "low": 2, "high": 10, "when": "model = xgboost"},
    {"name": "C", "type": "float", "low": 0.001, "high": 100.0, "log": True, "when": "model = logreg"},
    {"name": "penalty", "type": "categorical", "choices": ["l1", "l2"], "when": "model = logreg"},
    {"name": "hidden", "type": "int", "low": 8, "high": 256, "log": True, "when": "model = mlp"},
    {"name": "scaler", "type": "categorical", "choices": ["none", "standard", "minmax"]},
    {"name": "subsample", "type": "float", "low": 0.5, "high": 1.0},
]
VERSION = "0.1.0+3f2c9ab"
T0 = 1764000000.0


def sample(rng):
    c = {"model": rng.choice(["xgboost", "logreg", "mlp"])}
    if c["model"] == "xgboost":
        c["lr"] = math.exp(rng.uniform(math.log(0.001), math.log(0.5)))
        c["depth"] = rng.randint(2, 10)
    elif c["model"] == "logreg":
        c["C"] = math.exp(rng.uniform(math.log(0.001), math.log(100)))
        c["penalty"] = rng.choice(["l1", "l2"])
    else:
        c["hidden"] = int(round(math.exp(rng.uniform(math.log(8), math.log(256)))))
    c["scaler"] = rng.choice(["none", "standard", "minmax"])
    c["subsample"] = rng.uniform(0.5, 1.0)
    return c


def perturb(rng, best):
    """A model-like proposal: near the incumbent, sometimes a fresh point."""
    if best is None or rng.random() < 0.15:
        return sample(rng)
    c = dict(best)
    if "lr" in c:
        c["lr"] = min(0.5, max(0.001, c["lr"] * math.exp(rng.gauss(0, 0.4))))
        c["depth"] = min(10, max(2, c["depth"] + rng.choice([-1, 0, 0, 1])))
    if "C" in c:
        c["C"] = min(100, max(0.001, c["C"] * math.exp(rng.gauss(0, 0.6))))
    if "hidden" in c:
        c["hidden"] = min(256, max(8, int(c["hidden"] * math.exp(rng.gauss(0, 0.3)))))
    c["subsample"] = min(1.0, max(0.5, c["subsample"] + rng.gauss(0, 0.05)))
    if rng.random() < 0.1:
        c["scaler"] = rng.choice(["none", "standard", "minmax"])
    return c


def objective(rng, task, c):
    shift = 0.02 * math.sin(task)
    if c["model"] == "xgboost":
        v = 0.86 - 0.02 * (math.log10(c["lr"]) + 1.3) ** 2 - 0.004 * (c["depth"] - 6) ** 2
    elif c["model"] == "logreg":
        v = 0.79 - 0.01 * (math.log10(c["C"])) ** 2 - (0.01 if c["penalty"] == "l1" else 0)
    else:
        v = 0.82 - 0.03 * (math.log2(c["hidden"]) - 7) ** 2 / 4
    v -= {"none": 0.015, "standard": 0.0, "minmax": 0.005}[c["scaler"]]
    v -= 0.05 * (1 - c["subsample"]) ** 2
    return round(v + shift + rng.gauss(0, 0.006), 5)


def failure(rng, c, n_failures):
    """(status, reason) of a failing configuration, or None."""
    if c["model"] == "xgboost" and c["depth"] >= 9 and c["lr"] > 0.15:
        return "failed", "MemoryError: xgboost ran out of memory (depth >= 9)"
    if c["model"] == "logreg" and c.get("C", 0) > 30 and c["penalty"] == "l1":
        return "failed", "ValueError: liblinear did not converge (objective is nan)"
    r = rng.random()
    if r < 0.025:
        return "timeout", "timeout: no result after 120 s"
    if r < 0.045:
        return "crashed", "worker exited with signal 9 (killed)"
    if r < 0.07 and c["scaler"] == "minmax":
        return "failed", "ValueError: Input contains NaN after scaling"
    if n_failures == 0 and r < 0.1:
        return "lbo_error", "lbo: the objective printed no number on its last line"
    return None


def make_run(name, surrogate, acquisition, n_tasks, n_trials, rng, running):
    budget = max(1, n_trials // n_tasks)
    tasks = [{"name": "year-%d" % (1995 + i), "budget": budget,
              "origin": "job file" if i < 2 else ("add-task" if i % 2 == 0 else "watch")} for i in range(n_tasks)]
    # Tasks 0..T-3 run one after the other; the last two are open together, so the lbo run's
    # Hedge across open tasks has something to show.
    order = []
    for t in range(max(0, n_tasks - 2)):
        order += [t] * budget
    tail = [t for t in range(max(0, n_tasks - 2), n_tasks) for _ in range(budget)]
    rng.shuffle(tail)
    order += tail
    slots1, slots2 = 2, 4
    workers1 = [("local:%d" % s, 0, s) for s in range(slots1)]
    workers2 = [("rank%d:%d" % (r, s), r, s) for r in (1, 2) for s in range(2)]
    stop_at = int(len(order) * 0.45)
    alloc2 = None
    free = {w[0]: T0 + 2.0 for w in workers1}
    trials, attempts, hedge = [], [], []
    best_cfg, best_val, ok_in_task, seen_in_task = {}, {}, [0] * n_tasks, [0] * n_tasks
    gains = [[0.0, 0.0, 0.0] for _ in range(n_tasks)]
    n_failures = 0
    workers = workers1
    pending_retry = None
    for tid, task in enumerate(order):
        n_in = seen_in_task[task]
        seen_in_task[task] += 1
        if n_in < 4 and (task == 0 or surrogate != "lbo"):
            by, c = "initial", sample(rng)
        elif surrogate == "lbo" and n_in < 2:
            by = "earlier-best"
            c = dict(best_cfg.get(task - 1) or sample(rng))
        elif surrogate == "lbo" and ok_in_task[task] < 3:
            by, c = "model-prior", perturb(rng, best_cfg.get(task - 1))
        else:
            by, c = "model", perturb(rng, best_cfg.get(task))
            if rng.random() < 0.04:
                by, c = "random-fallback", sample(rng)
        note = "model fit failed: Cholesky not positive definite" if by == "random-fallback" else ""
        w = min(workers, key=lambda w: free[w[0]])
        start = free[w[0]] + rng.uniform(0.05, 0.4)
        dur = rng.lognormvariate(math.log(25 if c["model"] != "mlp" else 60), 0.4)
        fail = failure(rng, c, n_failures)
        n_att = 1
        if tid == stop_at - 1:
            # In flight at the stop (a kill): interrupted in allocation 1, rerun first in the
            # second allocation, which starts 15 minutes later on two MPI ranks.
            stop = max(max(free.values()), start + 0.5 * dur)
            attempts.append({"trial": tid, "attempt": 1, "rank": w[1], "slot": w[2], "worker": w[0],
                             "start": round(start, 3), "end": round(stop, 3), "status": "interrupted", "final": False})
            alloc2 = stop + 900.0
            free = {w[0]: alloc2 + 3.0 for w in workers2}
            workers = workers2
            pending_retry = tid
            n_att = 2
        elif tid == stop_at + 5:
            # Cancelled after a while (its worker was needed elsewhere) and run again at once.
            attempts.append({"trial": tid, "attempt": 1, "rank": w[1], "slot": w[2], "worker": w[0],
                             "start": round(start, 3), "end": round(start + dur * 0.4, 3), "status": "cancelled", "final": False})
            start += dur * 0.4 + 0.5
            n_att = 2
        elif fail and fail[0] == "crashed" and rng.random() < 0.7:
            # A crash is retried; the retry succeeds.
            attempts.append({"trial": tid, "attempt": 1, "rank": w[1], "slot": w[2], "worker": w[0],
                             "start": start, "end": start + dur * 0.3, "status": "crashed", "final": False})
            start += dur * 0.3 + 1.0
            fail = None
            n_att = 2
        if pending_retry == tid:
            w = workers2[0]
            start = alloc2 + 3.5
        is_last = tid == len(order) - 1
        status = "running" if running and is_last else (fail[0] if fail else "ok")
        end = start + (120.0 if status == "timeout" else dur)
        free[w[0]] = end
        t = {"id": tid, "task": task, "status": status, "attempts": n_att, "proposed_by": by,
             "note": note, "config": c, "started": round(start, 3), "worker": w[0], "rank": w[1],
             "slot": w[2], "reason": fail[1] if fail and status != "running" else ""}
        if status != "running":
            t["finished"] = round(end, 3)
        if status == "ok":
            t["objective"] = objective(rng, task, c)
            t["metrics"] = {"auc_std": round(abs(rng.gauss(0.012, 0.004)), 5),
                            "fit_seconds": round(dur * 0.8, 2),
                            "n_features": rng.choice([12, 18, 24])}
            ok_in_task[task] += 1
            if task not in best_val or t["objective"] > best_val[task]:
                best_val[task], best_cfg[task] = t["objective"], c
        elif status != "running":
            n_failures += 1
        trials.append(t)
        a = {"trial": tid, "attempt": n_att, "rank": w[1], "slot": w[2], "worker": w[0],
             "start": round(start, 3), "status": status if status != "ok" else "ok", "final": True}
        if status != "running":
            a["end"] = round(end, 3)
        attempts.append(a)
        if acquisition == "hedge" and by in ("model", "model-prior"):
            g = gains[task]
            for k in range(3):
                g[k] += rng.gauss([0.3, 0.5, 0.1][k], 0.3)
            m = max(g)
            e = [math.exp(x - m) for x in g]
            p = [round(x / sum(e), 4) for x in e]
            hedge.append({"trial": tid, "over": "acquisition", "task_name": tasks[task]["name"], "task": task,
                          "options": ["ucb", "ei", "pi"],
                          "probabilities": p, "chosen": max(range(3), key=lambda k: p[k] + rng.random() * 0.3)})
        if surrogate == "lbo" and task >= n_tasks - 2 and n_tasks >= 2:
            names = [tasks[n_tasks - 2]["name"], tasks[n_tasks - 1]["name"]]
            q = 0.5 + 0.3 * math.sin(tid / 7.0)
            hedge.append({"trial": tid, "over": "tasks", "task_name": "", "options": names,
                          "probabilities": [round(q, 4), round(1 - q, 4)], "chosen": 0 if task == n_tasks - 2 else 1})
    # A queued trial at the end of a running run.
    if running:
        trials.append({"id": len(order), "task": n_tasks - 1, "status": "queued", "attempts": 0,
                       "proposed_by": "model", "note": "", "config": perturb(rng, best_cfg.get(n_tasks - 1))})
    last = max(a.get("end", a["start"]) for a in attempts) + 5.0
    summaries = []
    for ti in range(n_tasks):
        oks = [t for t in trials if t["task"] == ti and t["status"] == "ok"]
        s = {"name": tasks[ti]["name"], "ok": len(oks)}
        if oks:
            best = max(oks, key=lambda t: t["objective"])
            s["best"], s["best_trial"] = best["objective"], best["id"]
            first = oks[0]["objective"]
            target = first + 0.95 * (best["objective"] - first)
            run_best = -1e9
            for n, t in enumerate(t for t in trials if t["task"] == ti and t["status"] not in ("running", "queued")):
                if t["status"] == "ok":
                    run_best = max(run_best, t["objective"])
                if run_best >= target:
                    s["trials_to_95"] = n + 1
                    break
        if surrogate == "lbo":
            s["similarity"] = [round(1.0 if i == ti else math.cos(0.9 * (i - ti)) * 0.95, 3) for i in range(n_tasks)]
            u = [math.exp(-((ti - k * (n_tasks - 1) / 2.0) ** 2) / 2.0) for k in range(3)]
            s["usage"] = [round(x / sum(u), 3) for x in u]
        summaries.append(s)
    return {
        "dir": "runs/" + name, "name": name,
        "state": "running" if running else "done",
        "state_note": "running: last activity 5 s before the report" if running else "done: every task used its budget",
        "lbo_version": VERSION,
        "job": {"surrogate": surrogate, "acquisition": acquisition, "direction": "maximize",
                "initial_random": 4, "stepwise": 0, "slots": slots2, "seed": 7, "space": SPACE, "tasks": tasks},
        "allocations": [{"started": T0, "slots": slots1, "lbo_version": "0.0.9+1a2b3c4"},
                        {"started": alloc2 if alloc2 else T0 + 3600, "slots": slots2, "lbo_version": VERSION}],
        "started": T0, "last_activity": round(last, 3),
        "trials": trials, "attempts": attempts, "tasks": summaries, "hedge": hedge, "notes": [],
    }


def add_utilization(run):
    """Each allocation's end (its last record) and the slot time the run used, as lbo computes
    them (report/src/utilization.cpp)."""
    allocs, attempts = run["allocations"], run.get("attempts", [])
    starts = [a["started"] for a in allocs]
    index = lambda t: max(i for i, s in enumerate(starts) if s <= t) if t >= starts[0] else 0
    ends = list(starts)
    for a in attempts:
        ends[index(a["start"])] = max(ends[index(a["start"])], a.get("end", run["last_activity"]))
    busy, groups = [0.0] * len(allocs), {}
    for a in attempts:
        i = index(a["start"])
        t = max(0.0, min(a.get("end", run["last_activity"]), ends[i]) - a["start"])
        busy[i] += t
        g = groups.setdefault(a["worker"].split(":")[0], {"busy": 0.0, "slots": [set() for _ in allocs]})
        g["busy"] += t
        g["slots"][i].add(a["worker"])
    for i, a in enumerate(allocs):
        a["ended"], a["busy"] = round(ends[i], 3), round(busy[i], 3)
    available = sum(a["slots"] * (a["ended"] - a["started"]) for a in allocs)
    run["utilization"] = {
        "busy": sum(busy), "available": available, "share": sum(busy) / available if available else None,
        "wall": sum(a["ended"] - a["started"] for a in allocs),
        "ranks": [{"rank": k, "slots": max(len(s) for s in g["slots"]), "busy": g["busy"],
                   "available": sum(len(s) * (allocs[i]["ended"] - allocs[i]["started"]) for i, s in enumerate(g["slots"]))}
                  for k, g in sorted(groups.items())]}


def transfer(runs, gap=0.05):
    """The cross-run comparison lbo puts beside the runs (report/src/transfer.hpp), maximizing."""
    out = {"gap": gap, "tasks": [], "notes": []}
    for ti, task in enumerate(runs[0]["job"]["tasks"]):
        seqs = [[t.get("objective") for t in sorted(r["trials"], key=lambda t: t["id"])
                 if t["task"] == ti and t["status"] not in ("running", "queued")] for r in runs]
        pooled = sorted(v for s in seqs for v in s if v is not None)
        if not pooled:
            continue
        best, n = pooled[-1], len(pooled)
        typical = pooled[n // 2] if n % 2 else 0.5 * (pooled[n // 2 - 1] + pooled[n // 2])
        if typical >= best:
            typical = pooled[0]
        fewest = min(len(s) for s in seqs if s)
        entry = {"name": task["name"], "best": best, "typical": typical, "target": best - gap * (best - typical),
                 "compared": fewest, "runs": []}
        for s in seqs:
            regret, so_far = [], None
            for v in s:
                so_far = v if v is not None and (so_far is None or v > so_far) else so_far
                regret.append(1.0 if so_far is None else min(1.0, max(0.0, (best - so_far) / (best - typical))) if best > typical else 0.0)
            reached = next((k + 1 for k, r in enumerate(regret) if r <= gap), None)
            entry["runs"].append({"finished": len(s), "trials_to_target": reached,
                                  "mean_regret": sum(regret[:fewest]) / fewest if s else None,
                                  "first_regret": regret[0] if s else None})
        out["tasks"].append(entry)
    return out


def make_old(run):
    for t in run["trials"]:
        for k in ("started", "finished", "rank", "slot", "reason", "metrics", "worker"):
            t.pop(k, None)
    for k in ("attempts", "hedge", "started"):
        run.pop(k, None)
    for s in run["tasks"]:
        s.pop("usage", None)
    run["allocations"] = [{"started": a["started"], "slots": a["slots"]} for a in run["allocations"]]
    run["notes"] = ["journal from lbo 0.0.9: trial and attempt times unknown; the worker timeline and the wall-time axis are left out",
                    "no hedge.csv: GP-Hedge probabilities are left out",
                    "no per-trial metrics or failure reasons in this journal version"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=96)
    ap.add_argument("--tasks", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--old", action="store_true")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    runs = [make_run("lbo", "lbo", "hedge", a.tasks, a.trials, rng, running=True),
            make_run("gp", "gp", "ei", a.tasks, a.trials, rng, running=False)]
    doc = {"generated": T0 + 86400.5, "generator": VERSION, "chart_library": "Apache ECharts 6.1.0", "runs": runs}
    if a.old:
        for r in runs:
            make_old(r)
    else:
        for r in runs:
            add_utilization(r)
        doc["transfer"] = transfer(runs)
    print(json.dumps(doc, separators=(",", ":")))


if __name__ == "__main__":
    main()
