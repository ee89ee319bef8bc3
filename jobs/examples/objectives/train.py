"""Objective for the lbo quickstart: cross-validated ROC AUC on a CSV data set.

Protocol
--------
Invocation::

    train.py --data PATH --params PATH [--result tradeoff]

``--data`` is a CSV file with a header row and numeric columns only; an empty
field is a missing value. The column ``death`` (0/1) is the target, every
other column is a feature (see ``jobs/examples/data/README.md``).

``--params`` is a JSON object holding only the active hyperparameters:

    {"model": "logreg", "C": 0.3}
    {"model": "xgboost", "lr": 0.05, "depth": 4}            # n_estimators optional, default 100
    {"model": "random_forest", "depth": 6}                  # n_estimators optional, default 200

The model is scored by stratified 5-fold cross-validation (shuffled,
random_state=0) with ROC AUC. One progress line per fold goes to stdout,
followed by the result as a single JSON line (always the last line)::

    {"objective": <mean AUC>, "metrics": {"auc_std": ..., "fit_time_s": ..., "n_rows": ...}}

``fit_time_s`` is the wall time spent fitting, summed over the folds. With
``--result tradeoff`` (jobs/examples/tradeoff.toml: two objectives and a
limit) the result names two objectives and the fitted model's size::

    {"auc": <mean AUC>, "fit_s": <fit seconds>, "metrics": {"auc_std": ..., "model_kb": ..., "n_rows": ...}}

``model_kb`` is the size of the model fitted on the last fold, pickled, in KiB
(what a deployment stores). If the environment variable ``LBO_RESULT_FILE`` is
set, the same JSON is also written to that file.

Exit status: 0 on success, 2 on invalid parameters (message on stderr), 1 on
any other failure. Everything runs single-threaded, since lbo runs several
trials in parallel.
"""

import os

# Keep numerical libraries single-threaded; must happen before numpy is loaded.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import pickle  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402
from sklearn.impute import SimpleImputer  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from xgboost import XGBClassifier  # noqa: E402

TARGET = "death"
N_FOLDS = 5
SEED = 0

# Per model: required parameters, and optional parameters with their defaults.
MODEL_PARAMS = {
    "logreg": ({"C"}, {}),
    "xgboost": ({"lr", "depth"}, {"n_estimators": 100}),
    "random_forest": ({"depth"}, {"n_estimators": 200}),
}


class ParamError(ValueError):
    """The params file does not describe a valid model configuration."""


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="CSV file with a 'death' column")
    parser.add_argument("--params", required=True, help="JSON file with hyperparameters")
    parser.add_argument("--result", choices=["auc", "tradeoff"], default="auc",
                        help="auc: {\"objective\": AUC}; tradeoff: {\"auc\", \"fit_s\"} and metrics.model_kb")
    return parser.parse_args()


def load_params(path):
    """Read the params JSON and return it with defaults filled in."""
    try:
        with open(path) as f:
            params = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ParamError(f"cannot read params file {path}: {e}") from e
    if not isinstance(params, dict):
        raise ParamError("params file must hold a JSON object")

    model = params.get("model")
    if model not in MODEL_PARAMS:
        known = ", ".join(sorted(MODEL_PARAMS))
        raise ParamError(f"unknown or missing 'model': {model!r} (expected one of: {known})")

    required, defaults = MODEL_PARAMS[model]
    missing = required - params.keys()
    if missing:
        raise ParamError(f"model {model!r} needs parameter(s): {', '.join(sorted(missing))}")
    unexpected = params.keys() - required - defaults.keys() - {"model"}
    if unexpected:
        raise ParamError(f"model {model!r} does not take parameter(s): {', '.join(sorted(unexpected))}")
    return {**params, **{k: v for k, v in defaults.items() if k not in params}}


def is_finite_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def positive_number(params, key):
    value = params[key]
    if not (is_finite_number(value) and value > 0):
        raise ParamError(f"'{key}' must be a positive number, got {value!r}")
    return float(value)


def positive_int(params, key):
    """Accept 4 or 4.0 (optimizers may emit integers as floats), not 4.5."""
    value = params[key]
    if not (is_finite_number(value) and value == int(value) and value >= 1):
        raise ParamError(f"'{key}' must be a positive integer, got {value!r}")
    return int(value)


def build_model(params):
    model = params["model"]
    if model == "logreg":
        return make_pipeline(
            SimpleImputer(strategy="median"),
            StandardScaler(),
            LogisticRegression(C=positive_number(params, "C"), max_iter=1000),
        )
    if model == "xgboost":
        return XGBClassifier(
            learning_rate=positive_number(params, "lr"),
            max_depth=positive_int(params, "depth"),
            n_estimators=positive_int(params, "n_estimators"),
            n_jobs=1,
            tree_method="hist",
            eval_metric="logloss",
            verbosity=0,
        )
    # random_forest (load_params has already rejected unknown models)
    return make_pipeline(
        SimpleImputer(strategy="median"),
        RandomForestClassifier(
            max_depth=positive_int(params, "depth"),
            n_estimators=positive_int(params, "n_estimators"),
            n_jobs=1,
            random_state=SEED,
        ),
    )


def load_data(path):
    """Return (features, target); empty fields become NaN."""
    table = np.genfromtxt(path, delimiter=",", names=True, dtype=float)
    columns = table.dtype.names
    if TARGET not in columns:
        raise ValueError(f"{path} has no '{TARGET}' column (columns: {', '.join(columns)})")
    features = [c for c in columns if c != TARGET]
    x = np.column_stack([table[c] for c in features])
    y = table[TARGET].astype(int)
    return x, y


def cross_validate(model, x, y):
    """Return (per-fold AUCs, total fit seconds), printing one line per fold."""
    folds = StratifiedKFold(n_splits=N_FOLDS, shuffle=True, random_state=SEED)
    aucs, fit_time = [], 0.0
    for i, (train, test) in enumerate(folds.split(x, y), start=1):
        start = time.perf_counter()
        model.fit(x[train], y[train])
        elapsed = time.perf_counter() - start
        auc = roc_auc_score(y[test], model.predict_proba(x[test])[:, 1])
        print(f"fold {i}/{N_FOLDS}: auc={auc:.4f} fit={elapsed:.3f}s", flush=True)
        aucs.append(auc)
        fit_time += elapsed
    return np.array(aucs), fit_time


def report(result):
    line = json.dumps(result)
    result_file = os.environ.get("LBO_RESULT_FILE")
    if result_file:
        with open(result_file, "w") as f:
            f.write(line + "\n")
    print(line, flush=True)


def main():
    args = parse_args()
    try:
        params = load_params(args.params)
        model = build_model(params)
    except ParamError as e:
        print(f"train.py: invalid params: {e}", file=sys.stderr)
        return 2

    x, y = load_data(args.data)
    print(f"data: {args.data} ({len(y)} rows, {x.shape[1]} features, "
          f"{y.mean():.1%} positive); params: {json.dumps(params)}", flush=True)
    aucs, fit_time = cross_validate(model, x, y)
    if args.result == "tradeoff":
        report({
            "auc": float(aucs.mean()),
            "fit_s": round(fit_time, 4),
            "metrics": {
                "auc_std": float(aucs.std()),
                "model_kb": round(len(pickle.dumps(model)) / 1024, 1),
                "n_rows": int(len(y)),
            },
        })
        return 0
    report({
        "objective": float(aucs.mean()),
        "metrics": {
            "auc_std": float(aucs.std()),
            "fit_time_s": round(fit_time, 4),
            "n_rows": int(len(y)),
        },
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
