"""fastText's autotune: a random search around the best parameters so far, narrowing as it goes.

``FastTextClassifier.fit(train, validation=valid)`` searches as fastText's ``Autotune``
(``src/autotune.cc``) does: the first trial is the parameters given; each later trial
starts from the best so far and moves each searched parameter by a Gaussian step whose
spread shrinks from its start to its end value between a quarter and three quarters of the
budget (``getArgGauss``):

=================  ============  ==============  ==========  =====================
parameter          range         sigma           step        fastText's name
=================  ============  ==============  ==========  =====================
``epochs``         1 .. 100      2.8 -> 2.5      x 2**N      ``epoch``
``lr``             0.01 .. 5     1.9 -> 1.0      x 2**N      ``lr``
``vector_size``    1 .. 1000     1.4 -> 0.3      x 2**N      ``dim``
``word_ngrams``    1 .. 5        4.3 -> 2.4      + N         ``wordNgrams``
``minn``           0, 2, 3       4.0 -> 1.4      + N (index) ``minn`` (``maxn`` = minn + 3)
``bucket``         10^4 .. 10^7  2.0 -> 1.5      x 2**N      ``bucket``
=================  ============  ==============  ==========  =====================

and ``loss`` is ``softmax`` (fastText's ``AutotuneStrategy::ask`` sets it, searching no
other loss). A parameter given a value other than its default is not
searched (fastText: a parameter set on the command line). Each trial trains a model and
scores it on the validation lines by the metric (``f1``, ``f1:LABEL``,
``precisionAtRecall:R[:LABEL]``, ``recallAtPrecision:P[:LABEL]``, R and P in percent,
over ``autotune_predictions`` labels a line); the best parameters are then set on the
model, which is trained with them once more. fastText's model-size constraint
(``-autotune-modelsize``, a search over ``dsub`` and ``cutoff``) is not carried over:
quantise the result with :meth:`~rowbook.models.FastTextClassifier.quantize`.

**Reproducible.** The steps come from a generator seeded by ``seed``; with a budget in
trials (``autotune_trials``) the spread narrows by trial, not by time, so one worker and a
seed give the same trials, the same best and the same model on any machine. With a budget
in seconds, as fastText's, how many trials fit depends on the machine.

**Progress.** With ``progress=True`` a bar counts the budget spent (seconds, or trials) with
the best score beside it, as fastText's ``Progress: ... Best score: ...`` line does, and
each trial's parameters and score are printed above it.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from rowbook._progress import ProgressBar
from rowbook.checks import ParameterError, check_int, check_number

__all__ = ["SEARCHED", "autotune", "parse_metric"]

#: parameter -> (low, high, start sigma, end sigma, linear step)
SEARCHED: dict[str, tuple[float, float, float, float, bool]] = {
    "epochs": (1, 100, 2.8, 2.5, False),
    "lr": (0.01, 5.0, 1.9, 1.0, False),
    "vector_size": (1, 1000, 1.4, 0.3, False),
    "word_ngrams": (1, 5, 4.3, 2.4, True),
    "minn": (0, 2, 4.0, 1.4, True),  # an index into _MINN
    "bucket": (10_000, 10_000_000, 2.0, 1.5, False),
}
_MINN = (0, 2, 3)


class _OutOfTime(Exception):
    """Raised by a trial's epoch callback when the budget is spent (the trial is dropped)."""


def parse_metric(metric: str, labels: tuple[str, ...]) -> tuple[str, float, int | None]:
    """``(kind, value, label id)`` of an autotune metric (fastText's ``getAutotuneMetric``).

    >>> parse_metric("precisionAtRecall:30:__label__b", ("__label__a", "__label__b"))
    ('precisionAtRecall', 0.3, 1)
    """

    def label_id(name: str) -> int:
        if name not in labels:
            raise ParameterError(
                "autotune_metric", metric, f"a metric of a known label ({', '.join(labels[:5])}...)"
            )
        return labels.index(name)

    if metric == "f1":
        return "f1", 0.0, None
    if metric.startswith("f1:") and len(metric) > 3:
        return "f1", 0.0, label_id(metric[3:])
    for kind in ("precisionAtRecall", "recallAtPrecision"):
        if metric.startswith(kind + ":"):
            value, _, label = metric[len(kind) + 1 :].partition(":")
            try:
                share = float(value) / 100.0
            except ValueError:
                share = math.nan
            if math.isfinite(share):
                return kind, share, label_id(label) if label else None
    raise ParameterError(
        "autotune_metric",
        metric,
        "f1, f1:LABEL, precisionAtRecall:R[:LABEL] or recallAtPrecision:P[:LABEL]",
    )


def _step(value: float, spec: tuple, rng: np.random.Generator, t: float, integer: bool) -> Any:
    low, high, start, end, linear = spec
    sigma = start - ((start - end) / 0.5) * min(0.5, max(t - 0.25, 0.0))
    coeff = rng.normal(0.0, sigma)
    moved = value + coeff if linear else value * 2.0**coeff
    moved = int(moved) if integer else moved  # static_cast<int>: toward zero
    return min(max(moved, low), high)


def _ask(
    best: dict[str, Any], fixed: set[str], rng: np.random.Generator, t: float
) -> dict[str, Any]:
    """The next trial's parameters, stepped from ``best`` (``AutotuneStrategy::ask``)."""
    params = dict(best)
    for name in ("epochs", "lr", "vector_size", "word_ngrams"):
        if name not in fixed:
            params[name] = _step(params[name], SEARCHED[name], rng, t, name != "lr")
    if "minn" not in fixed:
        index = _MINN.index(best["minn"]) if best["minn"] in _MINN else 0
        params["minn"] = _MINN[_step(index, SEARCHED["minn"], rng, t, True)]
        if "maxn" not in fixed:
            params["maxn"] = 0 if params["minn"] == 0 else params["minn"] + 3
    if "bucket" not in fixed:
        params["bucket"] = _step(best["bucket"], SEARCHED["bucket"], rng, t, True)
    if "loss" not in fixed:
        params["loss"] = "softmax"
    return params


def autotune(
    model: Any,
    train: Any,
    validation: Any,
    *,
    seconds: float | None,
    trials: int | None,
    metric: str,
    predictions: int,
) -> dict[str, Any]:
    """Search ``model``'s parameters on ``train`` / ``validation`` (read lines), set the best
    on ``model`` and return the record of the search (the model is not trained here)."""
    check_number("autotune_seconds", seconds, 0.0, low_open=True, allow_none=True)
    check_int("autotune_trials", trials, 1, allow_none=True)
    check_int("autotune_predictions", predictions, 1)
    if seconds is None and trials is None:
        raise ParameterError(
            "autotune_seconds", None, "a number of seconds when autotune_trials is None"
        )
    cls = type(model)
    defaults = cls().get_params()
    start = model.get_params()
    fixed = {k for k in SEARCHED if start[k] != defaults[k]} | (
        {"loss"} if start["loss"] != defaults["loss"] else set()
    )
    fixed |= {"maxn"} if start["maxn"] != defaults["maxn"] else set()
    rng = np.random.default_rng([model.seed, 5])
    began = time.perf_counter()
    best: dict[str, Any] | None = None
    best_score, history = -math.inf, []
    trial = 0
    by_time = trials is None
    bar = ProgressBar(
        round(seconds) if by_time else trials,
        unit="s" if by_time else "trial",
        unit_scale=False,
        show=model.progress,
    )
    shown_seconds = 0
    while True:
        elapsed = time.perf_counter() - began
        if (trials is not None and trial >= trials) or (
            seconds is not None and elapsed >= seconds and trial > 0
        ):
            break
        t = trial / trials if trials is not None else elapsed / seconds
        params = start if trial == 0 else _ask(best or start, fixed, rng, min(t, 1.0))
        trial += 1
        score, took = _trial(cls, params, train, validation, metric, predictions, seconds, began)
        history.append({"params": _searched(params), "score": score, "seconds": took})
        if score is not None and (best is None or score > best_score):
            best, best_score = params, score
        shown = "timed out" if score is None else f"{score:.4f}"
        values = " ".join(f"{k}={_short(v)}" for k, v in _searched(params).items())
        bar.note(f"autotune trial {trial}: {metric} {shown} (best {best_score:.4f}) {values}")
        if by_time:  # the bar counts the seconds of the budget spent, fastText's "Progress"
            spent = min(round(time.perf_counter() - began), round(seconds))
            bar.update(spent - shown_seconds, {"trials": trial, "best": f"{best_score:.4f}"})
            shown_seconds = spent
        else:
            bar.update(1, {"best": f"{best_score:.4f}"})
    bar.close()
    if best is None:
        raise ValueError(
            f"autotune had no time to train once in {seconds} seconds: raise autotune_seconds"
        )
    for name, value in best.items():
        setattr(model, name, value)
    model._check_params()
    return {
        "metric": metric,
        "best_score": best_score,
        "best_params": _searched(best),
        "trials": history,
        "seconds": time.perf_counter() - began,
    }


def _short(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _searched(params: dict[str, Any]) -> dict[str, Any]:
    return {k: params[k] for k in (*SEARCHED, "maxn", "loss")}


def _trial(cls, params, train, validation, metric, predictions, seconds, began):
    """One trial's score on the validation lines, or None when the budget ran out in it."""
    started = time.perf_counter()

    def stop_when_spent(_progress: Any) -> None:
        if seconds is not None and time.perf_counter() - began > seconds:
            raise _OutOfTime

    trial = cls(**(params | {"progress": False}))
    try:
        trial.fit(train, callback=stop_when_spent)
    except _OutOfTime:
        return None, time.perf_counter() - started
    kind, value, label = parse_metric(metric, trial.labels_)
    meter = trial._meter(validation, None, predictions, 0.0, false_negatives=label is not None)
    if kind == "f1":
        score = meter.f1(label)
    elif kind == "precisionAtRecall":
        score = meter.precision_at_recall(value, label)
    else:
        score = meter.recall_at_precision(value, label)
    score = 0.0 if math.isnan(score) else score
    return score, time.perf_counter() - started
