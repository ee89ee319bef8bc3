"""bench/fidelity's objective: a model trained step by step on one task's CSV of bench/real/data,
the held-out ROC AUC reported after every step (a learning curve): XGBoost boosting round by
round (--model xgboost, the default) or a multilayer perceptron epoch by epoch (--model mlp).

    curves.py serve --socket PATH                          # the evaluation server
    python3 -S -E curves.py ask --socket PATH --data PATH --params PATH --rounds R [--model mlp]

`ask` is the lbo objective: it imports only the standard library, sends the request to the
server, and copies what comes back to stdout line by line: one `lbo:report {"step": r,
"value": auc}` per boosting round, then the result `{"objective": auc after the last round}`.
The server forks a child per request that reads the data and trains from scratch, so nothing
a trial's cost or result depends on is cached; a child whose client is gone (lbo stopped the
trial) ends at its next line. `evaluate` is the same curve for the Optuna peer. Under lbo's
promotion mode (LBO_CHECKPOINT_DIR set) the request also carries the round to resume after and
the round to reach (LBO_RESUME_STEP, LBO_TARGET_STEP) and a checkpoint file in that folder: the
booster is saved after every round, before its report, and a resumed attempt goes on from it.

Data: the CSV's last column is the 0/1 target; a stratified 30% (random_state=0) is held out.
Parameters (suite.py's spaces): XGBoost's lr, depth, min_child_weight, subsample, colsample,
lambda; the MLP's lr (Adam's), units, layers, alpha (L2), batch.
"""

import json
import os
import signal
import socket
import sys


def _train_curve(data_path, params, rounds, emit, resume=0, target=None, checkpoint=None):
    """Trains up to `rounds` boosting rounds, calling emit(round, auc) after each; the last AUC.
    Promotion mode: with a `checkpoint` file, the booster is saved there after each round
    (before its report), a `resume` > 0 goes on from it, and training ends after round `target`."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    import numpy as np
    import xgboost as xgb
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import train_test_split

    data = np.genfromtxt(data_path, delimiter=",", skip_header=1)
    x, y = data[:, :-1], data[:, -1].astype(int)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.3, stratify=y, random_state=0)
    train = xgb.DMatrix(x_train, label=y_train)
    test = xgb.DMatrix(x_test)
    booster_params = {"objective": "binary:logistic", "eta": float(params["lr"]), "max_depth": int(params["depth"]),
                      "min_child_weight": float(params["min_child_weight"]), "subsample": float(params["subsample"]),
                      "colsample_bytree": float(params["colsample"]), "lambda": float(params["lambda"]),
                      "nthread": 1, "seed": 0, "verbosity": 0}
    booster = None
    auc = 0.5
    first = 1
    if checkpoint and resume > 0 and os.path.exists(checkpoint):
        booster = xgb.Booster(model_file=checkpoint)
        first = resume + 1
    last = rounds if target is None else min(rounds, target)
    for r in range(first, last + 1):
        booster = xgb.train(booster_params, train, num_boost_round=1, xgb_model=booster)
        auc = float(roc_auc_score(y_test, booster.predict(test)))
        if checkpoint:
            booster.save_model(checkpoint + ".tmp.json")
            os.replace(checkpoint + ".tmp.json", checkpoint)
        if emit(r, auc) is False:
            break
    return auc


def _train_mlp_curve(data_path, params, epochs, emit, resume=0, target=None, checkpoint=None):
    """The same for a multilayer perceptron (scikit-learn's MLPClassifier, Adam) trained epoch by
    epoch on standardized features: one `partial_fit` pass over the training rows per epoch. Its
    checkpoint is the pickled network."""
    import pickle
    import warnings
    import numpy as np
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import train_test_split
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler

    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    data = np.genfromtxt(data_path, delimiter=",", skip_header=1)
    x, y = data[:, :-1], data[:, -1].astype(int)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.3, stratify=y, random_state=0)
    scaler = StandardScaler().fit(x_train)
    x_train, x_test = scaler.transform(x_train), scaler.transform(x_test)
    network, first = None, 1
    if checkpoint and resume > 0 and os.path.exists(checkpoint):
        with open(checkpoint, "rb") as f:
            network = pickle.load(f)
        first = resume + 1
    if network is None:
        network = MLPClassifier(hidden_layer_sizes=(int(params["units"]),) * int(params["layers"]),
                                learning_rate_init=float(params["lr"]), alpha=float(params["alpha"]),
                                batch_size=int(params["batch"]), random_state=0)
    auc = 0.5
    last = epochs if target is None else min(epochs, target)
    for epoch in range(first, last + 1):
        network.partial_fit(x_train, y_train, classes=[0, 1])
        probabilities = network.predict_proba(x_test)[:, 1]
        auc = float(roc_auc_score(y_test, probabilities)) if np.all(np.isfinite(probabilities)) else 0.5
        if checkpoint:
            with open(checkpoint + ".tmp", "wb") as f:
                pickle.dump(network, f)
            os.replace(checkpoint + ".tmp", checkpoint)
        if emit(epoch, auc) is False:
            break
    return auc


def evaluate(data_path, params, rounds, emit, resume=0, target=None, checkpoint=None, model="xgboost"):
    train = _train_mlp_curve if model == "mlp" else _train_curve
    return train(data_path, params, rounds, emit, resume, target, checkpoint)


def serve(socket_path):
    # One thread per trial, set before numpy loads its BLAS (the children are forked from here;
    # _train_curve's setdefault comes too late for a library already loaded).
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    import numpy  # noqa: F401  (imported once, before the forks)
    import sklearn.metrics  # noqa: F401
    import sklearn.model_selection  # noqa: F401
    import sklearn.neural_network  # noqa: F401
    import xgboost  # noqa: F401
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if os.path.exists(socket_path):
        os.unlink(socket_path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    print(f"curves.py: serving on {socket_path} (pid {os.getpid()})", flush=True)
    try:
        while True:
            connection, _ = listener.accept()
            if os.fork() == 0:
                listener.close()
                signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # a gone client ends the child
                with connection, connection.makefile("rw") as stream:
                    request = json.loads(stream.readline())

                    def emit(r, auc):
                        stream.write("lbo:report " + json.dumps({"step": r, "value": auc}) + "\n")
                        stream.flush()

                    try:
                        auc = evaluate(request["data"], request["params"], int(request["rounds"]), emit,
                                       int(request.get("resume", 0)), request.get("target"), request.get("checkpoint"),
                                       request.get("model", "xgboost"))
                        stream.write(json.dumps({"objective": auc}) + "\n")
                    except (BrokenPipeError, ConnectionResetError):
                        os._exit(0)
                    except Exception as e:  # noqa: BLE001 (a failed trial with its reason)
                        stream.write(json.dumps({"error": f"{type(e).__name__}: {e}"}) + "\n")
                os._exit(0)
            connection.close()
    finally:
        listener.close()
        if os.path.exists(socket_path):
            os.unlink(socket_path)


def ask(argv):
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("ask")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--params", required=True)
    parser.add_argument("--rounds", type=int, required=True)
    parser.add_argument("--model", default="xgboost", choices=("xgboost", "mlp"))
    args = parser.parse_args(argv)
    with open(args.params) as f:
        params = json.load(f)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(args.socket)
        with connection.makefile("rw") as stream:
            request = {"data": args.data, "params": params, "rounds": args.rounds, "model": args.model}
            # Promotion mode (lbo's environment): go on from the checkpoint, up to the rung.
            folder = os.environ.get("LBO_CHECKPOINT_DIR")
            if folder:
                request.update(resume=int(os.environ.get("LBO_RESUME_STEP", "0")),
                               target=int(os.environ.get("LBO_TARGET_STEP", str(args.rounds))),
                               checkpoint=os.path.join(folder, "booster.json" if args.model == "xgboost" else "network.pickle"))
            stream.write(json.dumps(request) + "\n")
            stream.flush()
            for line in stream:
                if line.startswith("{\"error\""):
                    print(json.loads(line)["error"], file=sys.stderr)
                    return 1
                sys.stdout.write(line)
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        serve(sys.argv[sys.argv.index("--socket") + 1])
    elif len(sys.argv) > 1 and sys.argv[1] == "ask":
        sys.exit(ask(sys.argv[1:]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
