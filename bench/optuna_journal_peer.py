#!/usr/bin/python3
"""Optuna peer for bench/throughput.sh: trials/s of Optuna's JournalFileStorage.

The issue asks lbo to reach at least 2x the throughput of Optuna with a JournalFileStorage and
the same subprocess objective, measured in the same run on the same machine. This script is
that peer. For a fair comparison, each trial does what lbo does per trial: it creates a trial
folder, writes params.json, runs the objective binary as a subprocess with stdout and stderr
captured to files in the trial folder, and parses the JSON result from the last stdout line.
Trials run on threads (study.optimize(n_jobs=K)), all sharing one journal file.

Run with the system interpreter, which has python3-optuna (3.1):
    /usr/bin/python3 bench/optuna_journal_peer.py --trials 1000 --jobs 2 \
        --objective build/bench/lbo-noop-objective --storage-dir /tmp/optuna-peer
Prints one line: trials=<N> seconds=<wall time of study.optimize> trials_per_s=<rate>
"""

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import optuna


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, required=True, help="number of trials")
    parser.add_argument("--jobs", type=int, default=1, help="concurrent trials (threads)")
    parser.add_argument("--objective", required=True, help="objective binary to run per trial")
    parser.add_argument("--storage-dir", required=True, help="folder for the journal and trials")
    args = parser.parse_args()

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # JournalStorage is marked experimental in Optuna 3.1; the warning is noise here.
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)

    trials_dir = os.path.join(args.storage_dir, "trials")
    os.makedirs(trials_dir, exist_ok=True)
    storage = optuna.storages.JournalStorage(
        optuna.storages.JournalFileStorage(os.path.join(args.storage_dir, "journal.log"))
    )
    study = optuna.create_study(
        study_name="noop",
        storage=storage,
        sampler=optuna.samplers.RandomSampler(seed=0),
        direction="minimize",
    )
    command = [os.path.abspath(args.objective)]  # trials run with the trial folder as cwd

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        trial_dir = os.path.join(trials_dir, str(trial.number))
        os.makedirs(trial_dir)
        with open(os.path.join(trial_dir, "params.json"), "w") as f:
            json.dump({"x": x}, f)
        stdout_path = os.path.join(trial_dir, "stdout")
        with open(stdout_path, "wb") as out, open(os.path.join(trial_dir, "stderr"), "wb") as err:
            subprocess.run(command, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                           cwd=trial_dir, check=True)
        with open(stdout_path, "rb") as f:
            lines = f.read().decode().strip().splitlines()
        return float(json.loads(lines[-1])["objective"])

    start = time.monotonic()
    study.optimize(objective, n_trials=args.trials, n_jobs=args.jobs)
    seconds = time.monotonic() - start

    finished = sum(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)
    if finished != args.trials:
        print(f"error: {finished} of {args.trials} trials completed", file=sys.stderr)
        return 1
    print(f"trials={args.trials} seconds={seconds:.3f} trials_per_s={args.trials / seconds:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
