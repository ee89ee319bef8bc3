"""The bench/real objective: 5-fold cross-validated ROC AUC of a chosen model on one task's CSV.

The CSV has a header row and numeric columns; the last column is the 0/1 target, an empty
field is a missing value. The params JSON holds the active parameters of the suite's spaces
(see suite.py), e.g. ``{"model": "xgboost", "xgb_lr": 0.05, "xgb_depth": 4, ...}``.

Two ways to run it:

    models.py --data PATH --params PATH        # one evaluation, the lbo objective protocol
    models.py serve --socket PATH              # an evaluation server for ask.py

The server exists because importing numpy, scikit-learn and XGBoost takes about 0.6 s, several
times what a fit on these data sets takes, and the benchmark runs thousands of trials. It
imports them once and forks one child per request; the child reads the data and fits every
fold itself, so nothing that a trial's cost or result depends on is cached between trials.

The result is the last stdout line, ``{"objective": <mean AUC>, "metrics": {...}}``. Exit
status: 0 on success, 2 on invalid parameters, 1 on any other failure.
"""

import os

# Trials run in parallel on single cores; must be set before numpy is loaded.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import pickle  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.impute import SimpleImputer  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402
from sklearn.naive_bayes import BernoulliNB, MultinomialNB  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import FunctionTransformer, MinMaxScaler, StandardScaler  # noqa: E402
from xgboost import XGBClassifier  # noqa: E402

N_FOLDS = 5
SEED = 0


class ParamError(ValueError):
    """The params do not describe a configuration of the suite's spaces."""


def _get(params, key, kind=float):
    if key not in params:
        raise ParamError(f"model {params.get('model')!r} needs '{key}'")
    value = params[key]
    if kind is int:
        if float(value) != int(value):
            raise ParamError(f"'{key}' must be an integer, got {value!r}")
        return int(value)
    return kind(value)


def _shift(x, by):
    return x - by


def build_model(params):
    """The estimator for one configuration; features are imputed (median) first."""
    model = params.get("model")
    impute = SimpleImputer(strategy="median")
    if model == "xgboost":
        return XGBClassifier(
            learning_rate=_get(params, "xgb_lr"),
            max_depth=_get(params, "xgb_depth", int),
            n_estimators=_get(params, "xgb_n_estimators", int),
            subsample=params.get("xgb_subsample", 1.0),
            colsample_bytree=params.get("xgb_colsample", 1.0),
            min_child_weight=params.get("xgb_min_child_weight", 1.0),
            gamma=params.get("xgb_gamma", 0.0),
            reg_lambda=params.get("xgb_lambda", 1.0),
            reg_alpha=params.get("xgb_alpha", 0.0),
            n_jobs=1, tree_method="hist", eval_metric="logloss", verbosity=0,
            random_state=SEED,
        )
    if model == "logreg":
        return make_pipeline(impute, StandardScaler(), LogisticRegression(
            C=_get(params, "lr_C"), penalty=params.get("lr_penalty", "l2"),
            solver="liblinear", max_iter=1000))
    if model == "random_forest":
        return make_pipeline(impute, RandomForestClassifier(
            max_depth=_get(params, "rf_depth", int),
            n_estimators=_get(params, "rf_n_estimators", int),
            max_features=_get(params, "rf_max_features"),
            min_samples_leaf=_get(params, "rf_min_samples_leaf", int),
            n_jobs=1, random_state=SEED))
    if model == "knn":
        return make_pipeline(impute, StandardScaler(), KNeighborsClassifier(
            n_neighbors=_get(params, "knn_k", int),
            weights=_get(params, "knn_weights", str)))
    if model == "bernoulli_nb":
        # Features are standardized and shifted, so the threshold is in standard deviations
        # from the mean (BernoulliNB takes only thresholds >= 0).
        return make_pipeline(impute, StandardScaler(),
                             FunctionTransformer(_shift, kw_args={"by": _get(params, "bnb_binarize")}),
                             BernoulliNB(alpha=_get(params, "bnb_alpha"), binarize=0.0))
    if model == "multinomial_nb":
        return make_pipeline(impute, MinMaxScaler(), MultinomialNB(alpha=_get(params, "mnb_alpha")))
    raise ParamError(f"unknown model {model!r}")


def load_data(path):
    """(features, target): the last column is the target; empty fields become NaN."""
    table = np.genfromtxt(path, delimiter=",", skip_header=1, dtype=float)
    return table[:, :-1], table[:, -1].astype(int)


def too_large(params):
    """The fixed "out of memory" rule of the -oom problems (suite.py): deep boosted ensembles
    of many trees, and deep forests of many trees, as a model too large for its GPU or node."""
    model = params.get("model")
    if model == "xgboost":
        return int(params["xgb_depth"]) >= 5 and int(params["xgb_n_estimators"]) >= 40
    if model == "random_forest":
        return int(params["rf_depth"]) >= 8 and int(params["rf_n_estimators"]) >= 30
    return False


def evaluate(data_path, params, oom=False, result="objective"):
    """The result object for one configuration on one task: {"objective": AUC, "metrics"} or,
    with result "tradeoff", {"auc", "fit_s": seconds fitting the folds, "metrics"}; with `oom`,
    a configuration that too_large() names fails as an out-of-memory error would. The metric
    `model_kb` is the model fitted on the last fold, pickled, in KiB (the -limit problems)."""
    if oom and too_large(params):
        raise MemoryError("CUDA out of memory (bench/real's fixed rule for the -oom problems)")
    model = build_model(params)
    x, y = load_data(data_path)
    if len(x) < N_FOLDS * 2:
        raise ValueError(f"{data_path}: {len(x)} rows are too few for {N_FOLDS}-fold CV")
    k_max = len(x) * (N_FOLDS - 1) // N_FOLDS
    if params.get("model") == "knn" and int(params["knn_k"]) > k_max:
        raise ParamError(f"knn_k = {params['knn_k']} exceeds the {k_max} training rows")
    folds = StratifiedKFold(n_splits=N_FOLDS, shuffle=True, random_state=SEED)
    aucs, fit_time = [], 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for train, test in folds.split(x, y):
            start = time.perf_counter()
            model.fit(x[train], y[train])
            fit_time += time.perf_counter() - start
            aucs.append(roc_auc_score(y[test], model.predict_proba(x[test])[:, 1]))
    metrics = {"auc_std": float(np.std(aucs)), "fit_time_s": round(fit_time, 4),
               "model_kb": round(len(pickle.dumps(model)) / 1024, 1), "n_rows": int(len(y))}
    if result == "tradeoff":
        return {"auc": float(np.mean(aucs)), "fit_s": round(fit_time, 4), "metrics": metrics}
    return {"objective": float(np.mean(aucs)), "metrics": metrics}


def answer(request):
    """(exit status, result or message) for a request {"data": path, "params": {...}}."""
    try:
        return 0, evaluate(request["data"], request["params"], request.get("oom", False),
                           request.get("result", "objective"))
    except ParamError as e:
        return 2, f"invalid params: {e}"
    except Exception as e:  # noqa: BLE001 (any failure is a failed trial with its reason)
        return 1, f"{type(e).__name__}: {e}"


def serve(socket_path):
    """Answer ask.py requests on a Unix socket, one forked child per request, until SIGTERM."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped automatically
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if os.path.exists(socket_path):
        os.unlink(socket_path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    print(f"models.py: serving on {socket_path} (pid {os.getpid()})", flush=True)
    try:
        while True:
            connection, _ = listener.accept()
            if os.fork() == 0:
                listener.close()
                with connection, connection.makefile("rw") as stream:
                    status, result = answer(json.loads(stream.readline()))
                    stream.write(json.dumps({"status": status, "result": result}) + "\n")
                os._exit(0)
            connection.close()
    finally:
        listener.close()
        if os.path.exists(socket_path):
            os.unlink(socket_path)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        parser = argparse.ArgumentParser(description="evaluation server for ask.py")
        parser.add_argument("serve")
        parser.add_argument("--socket", required=True)
        serve(parser.parse_args().socket)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--params", required=True)
    args = parser.parse_args()
    with open(args.params) as f:
        status, result = answer({"data": args.data, "params": json.load(f)})
    if status != 0:
        print(f"models.py: {result}", file=sys.stderr)
        return status
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
