"""lbo_trial: the objective's side of lbo's protocol, in the standard library only.

lbo puts this file's folder on the PYTHONPATH of every trial it starts, so an objective
written in Python can say::

    import lbo_trial

    params = lbo_trial.params()                 # this trial's configuration
    for epoch in range(1, epochs + 1):
        score = train_one_epoch(params)
        lbo_trial.report(epoch, score, loss=loss)   # an intermediate report
        if lbo_trial.should_stop():             # lbo stopped the trial (or the run stops)
            break
    lbo_trial.result(score, loss=loss)          # the final result

With [early_stopping] mode = "promotion" an attempt runs to its rung (target_step()) and
is paused there; a promoted trial starts again with resume_step() the step it reached, and
goes on from what it saved in checkpoint_dir() (kept across its attempts)::

    start = lbo_trial.resume_step()             # 0 for a trial's first attempt
    model = load(lbo_trial.checkpoint_dir()) if start else new_model(params)
    for epoch in range(start + 1, epochs + 1):
        score = train_one_epoch(model)
        save(model, lbo_trial.checkpoint_dir())  # before the report (lbo may pause on it), as a
                                                 # new file renamed over the old one
        lbo_trial.report(epoch, score)
        if lbo_trial.should_stop():             # reached its rung (or stopped)
            break
    lbo_trial.result(score)

Nothing here is needed: an objective in any language prints the same lines (docs/objectives.md,
"Objective protocol"). Outside lbo (no LBO_PARAMS_FILE) params() reads the file it is given,
and report() and result() print as they would under lbo.
"""

import json
import math
import os
import signal
import sys
import tempfile

__all__ = ["params", "report", "should_stop", "result", "resume_step", "target_step", "max_step", "checkpoint_dir"]

REPORT_PREFIX = "lbo:report "

_stop_asked = False
_watching = False
_last_step = 0


def _step_variable(name):
    text = os.environ.get(name, "")
    return int(text) if text.strip() else None


def resume_step():
    """The step this attempt goes on from: the last step the trial's earlier attempts reported
    (promotion mode), else 0."""
    return _step_variable("LBO_RESUME_STEP") or 0


def target_step():
    """The step this attempt runs to: its next rung in promotion mode, else [early_stopping]
    max_step; None without an early-stopping table."""
    return _step_variable("LBO_TARGET_STEP")


def max_step():
    """[early_stopping] max_step: a trial's full run; None without an early-stopping table."""
    return _step_variable("LBO_MAX_STEP")


def checkpoint_dir():
    """The trial's checkpoint folder, kept across its attempts (promotion mode; lbo creates
    it); None in stop mode and outside lbo."""
    path = os.environ.get("LBO_CHECKPOINT_DIR")
    if path:
        os.makedirs(path, exist_ok=True)
    return path or None


def params(path=None):
    """The trial's configuration: the JSON object of LBO_PARAMS_FILE (or of `path`)."""
    path = path or os.environ.get("LBO_PARAMS_FILE")
    if not path:
        raise RuntimeError("no params file: LBO_PARAMS_FILE is unset (run under lbo, or give a path)")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _finite(name, value):
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"lbo_trial: {name} must be a finite number, not {value!r}")
    return value


def report(step, value, **metrics):
    """Reports `value` (in the job's direction) after `step` units of resource (epochs,
    boosting rounds: a positive integer that grows with each report). lbo journals it, writes it
    to reports.csv and may stop the trial on it (its early-stopping table)."""
    if isinstance(step, bool) or int(step) != step or step < 1:
        raise ValueError(f"lbo_trial: step must be a positive integer, not {step!r}")
    global _last_step
    line = {"step": int(step), "value": _finite("value", value)}
    _last_step = int(step)
    if metrics:
        line["metrics"] = {k: v for k, v in metrics.items()}
    sys.stdout.write(REPORT_PREFIX + json.dumps(line, allow_nan=False) + "\n")
    sys.stdout.flush()  # a pipe is block-buffered: lbo must see the line now


def _on_term(signum, frame):
    global _stop_asked
    _stop_asked = True


def should_stop():
    """Whether the trial should end now: its last report reached the attempt's target step
    below max_step (promotion mode: lbo pauses it there), or lbo asked it to stop (SIGTERM:
    the trial was stopped early or paused, timed out, or the run is stopping). From the first
    call on, SIGTERM no longer ends the process
    at once: the objective saves what it needs and returns; lbo kills it after [objective]
    kill_grace_s otherwise."""
    global _watching
    if not _watching:
        _watching = True
        signal.signal(signal.SIGTERM, _on_term)
    target, full = target_step(), max_step()
    reached = target is not None and full is not None and target < full and _last_step >= target
    return _stop_asked or reached


def result(objective, steps=None, **metrics):
    """The final result: written to LBO_RESULT_FILE (atomically) when lbo runs the trial, and
    printed as the last JSON line of stdout."""
    doc = {"objective": _finite("objective", objective)}
    if steps is not None:
        doc["steps"] = [_finite("steps", s) for s in steps]
    if metrics:
        doc["metrics"] = metrics
    text = json.dumps(doc, allow_nan=False)
    target = os.environ.get("LBO_RESULT_FILE")
    if target:
        folder = os.path.dirname(target) or "."
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=".result.")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        os.replace(temporary, target)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
