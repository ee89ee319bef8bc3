"""Objective for lbo's early-stopping example: a small neural network trained epoch by epoch.

Invocation::

    train_epochs.py --data PATH --epochs N

The trial's parameters come from lbo (``lbo_trial.params()``):

    {"hidden": 32, "lr": 0.003, "alpha": 1e-4}

``--data`` is a CSV file as in the quickstart (numeric columns, ``death`` the 0/1 target; see
``jobs/examples/data/README.md``). A stratified quarter of the rows (random_state=0) is held
out; the rest trains scikit-learn's MLPClassifier one epoch per ``partial_fit`` (Adam, batches
of 64). After each epoch the held-out ROC AUC is reported to lbo (``lbo_trial.report``), which
may stop the trial there ([early_stopping] in early_stopping.toml); the result is the AUC after
the last epoch run. With mode = "promotion", lbo pauses the trial at a rung and may resume it
later: the network, its shuffling generator and the epoch are pickled to
``lbo_trial.checkpoint_dir()`` before each report, and a resumed attempt
(``lbo_trial.resume_step()`` > 0) goes on from there. Single-threaded, as lbo runs several
trials at once.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import pickle  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.impute import SimpleImputer  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import lbo_trial  # noqa: E402  (on the PYTHONPATH lbo gives every trial)

TARGET = "death"


def load(path):
    with open(path, encoding="utf-8") as f:
        header = f.readline().strip().split(",")
    data = np.genfromtxt(path, delimiter=",", skip_header=1)
    target = header.index(TARGET)
    y = data[:, target].astype(int)
    x = np.delete(data, target, axis=1)
    return x, y


def checkpoint_file():
    folder = lbo_trial.checkpoint_dir()  # promotion mode only
    return os.path.join(folder, "state.pickle") if folder else None


def save(state):
    path = checkpoint_file()
    if path:
        with open(path + ".tmp", "wb") as f:
            pickle.dump(state, f)
        os.replace(path + ".tmp", path)


def resumed():
    """(model, rng, epoch) of the checkpoint this attempt resumes from, or None."""
    path = checkpoint_file()
    if lbo_trial.resume_step() == 0 or not path or not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return pickle.load(f)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--epochs", type=int, required=True)
    args = parser.parse_args()
    params = lbo_trial.params()
    x, y = load(args.data)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.25, stratify=y, random_state=0)
    impute = SimpleImputer().fit(x_train)
    scale = StandardScaler().fit(impute.transform(x_train))
    x_train = scale.transform(impute.transform(x_train))
    x_test = scale.transform(impute.transform(x_test))
    model = MLPClassifier(hidden_layer_sizes=(int(params["hidden"]),), learning_rate_init=float(params["lr"]),
                          alpha=float(params["alpha"]), batch_size=64, random_state=0)
    classes = np.unique(y)
    rng = np.random.default_rng(0)
    auc, first = 0.5, 1
    state = resumed()
    if state is not None:
        model, rng, done = state
        first = done + 1
    epoch = first - 1
    for epoch in range(first, args.epochs + 1):
        order = rng.permutation(len(y_train))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.partial_fit(x_train[order], y_train[order], classes=classes)
        auc = float(roc_auc_score(y_test, model.predict_proba(x_test)[:, 1]))
        save((model, rng, epoch))  # before the report: lbo may pause the trial on it
        lbo_trial.report(epoch, auc, loss=float(model.loss_))
        if lbo_trial.should_stop():
            break
    lbo_trial.result(auc, epochs=epoch)


if __name__ == "__main__":
    main()
