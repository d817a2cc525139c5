"""Per-row telemetry of a word-vector model: which rows trained, how hard, and when.

With ``row_stats=True`` a model of the family records, for every row of its word table
(``W_in`` for word2vec and fastText, bucket rows included; the words for GloVe), the updates
it received, the sum of their gradients' norms, the last job that updated it and its value
before its first update (:mod:`~rowbook.models.word_vectors.telemetry_kernels`: a job
records by position in its own buffer and adds it to the rows' counters when it ends; the
kernels compile it away when off). ``model.row_stats_`` reads it as a
:class:`rowbook.optim.RowStats`, the record the sparse optimizers keep, so the same pictures
draw it (:mod:`rowbook.viz.row_stats`).

A *step* here is one job (about ``batch_words`` corpus words, or ``2**16`` GloVe records),
counted over the model's life: ``last_step`` is the job, ``steps`` the jobs run. A row is
updated many times in a job (once per example that touches it), so ``updates`` counts
examples, not steps. The record is part of the saved state: a checkpoint resumes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rowbook._memory import untouched_zeros

if TYPE_CHECKING:
    from rowbook.optim.row_stats import RowStats

__all__ = [
    "grown",
    "job_stats",
    "new_telemetry",
    "row_stats",
    "telemetry_from_state",
    "telemetry_state",
]

_ARRAYS = ("counters", "start")


def new_telemetry(rows: int, width: int, dtype: Any) -> dict[str, Any]:
    """Empty telemetry of a ``(rows, width)`` table; rows never updated cost no memory.

    ``counters`` is ``(V, 3)`` float64: a row's updates, summed gradient norm and last job
    side by side (the counts are exact integers up to 2**53); ``start`` the rows' values
    before their first update.
    """
    return {
        "steps": 0,
        "counters": untouched_zeros((rows, 3), np.float64),  # (V, 3)
        "start": untouched_zeros((rows, width), dtype),  # (V, d)
    }


def job_stats(
    telemetry: dict[str, Any], n_jobs: int
) -> tuple[Callable[[int], tuple], Callable[[], None]]:
    """``(stats_for, end_epoch)``: the kernels' ``stats`` tuple for job ``j`` of an epoch of
    ``n_jobs`` jobs (its step: the jobs before the epoch in the model's life, plus
    ``j + 1``), and what adds the epoch's jobs to ``steps`` once it ends."""
    arrays = tuple(telemetry[name] for name in _ARRAYS)

    def stats_for(j: int) -> tuple:
        return (*arrays, np.int64(telemetry["steps"] + j + 1))

    def end_epoch() -> None:
        telemetry["steps"] += n_jobs

    return stats_for, end_epoch


def grown(telemetry: dict[str, Any], old_V: int, rows: int) -> dict[str, Any]:
    """The telemetry of a table grown to ``rows`` rows by new word rows inserted at ``old_V``
    (after the old words; before fastText's bucket rows), the new rows never updated."""
    new = new_telemetry(rows, telemetry["start"].shape[1], telemetry["start"].dtype)
    added = rows - len(telemetry["counters"])
    for name in _ARRAYS:
        old = telemetry[name]
        new[name][:old_V] = old[:old_V]
        new[name][old_V + added :] = old[old_V:]
    new["steps"] = telemetry["steps"]
    return new


def telemetry_state(telemetry: dict[str, Any] | None) -> dict[str, Any] | None:
    """The telemetry as saved values (arrays and an integer)."""
    if telemetry is None:
        return None
    return {"steps": telemetry["steps"], **{name: np.asarray(telemetry[name]) for name in _ARRAYS}}


def telemetry_from_state(saved: Any, rows: int, width: int, dtype: Any) -> dict[str, Any] | None:
    """Saved telemetry, checked against a ``(rows, width)`` table (the file may be hostile)."""
    if saved is None:
        return None
    steps = saved.get("steps") if isinstance(saved, dict) else None
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        raise ValueError(f"saved row_stats must hold 'steps', an integer >= 0; got {steps!r}")
    telemetry = new_telemetry(rows, width, dtype)
    for name in _ARRAYS:
        value = np.asarray(saved.get(name))
        if value.shape != telemetry[name].shape:
            raise ValueError(
                f"saved row_stats {name!r} has shape {value.shape}, expected "
                f"{telemetry[name].shape} for a table of {rows} rows"
            )
        telemetry[name][...] = value
    counters = telemetry["counters"]
    if (counters < 0).any() or counters[:, 2].max(initial=0) > steps:
        raise ValueError(
            "saved row_stats are damaged: a negative count, or a last step past the steps run"
        )
    telemetry["steps"] = steps
    return telemetry


def row_stats(
    telemetry: dict[str, Any],
    table: np.ndarray,
    keys: Sequence[str],
    counts: np.ndarray,
) -> RowStats:
    """The record as :class:`~rowbook.optim.RowStats`, ``distance`` measured against ``table``
    (the rows now); ``keys`` and ``counts`` name the first ``len(keys)`` rows (the words), and
    rows past them (fastText's buckets) are named ``#bucket N`` with count 0."""
    from rowbook.optim.row_stats import RowStats  # the optimizers' package: only when read

    counters = telemetry["counters"]
    updates = counters[:, 0].astype(np.int64)  # (V,)
    touched = np.flatnonzero(updates)  # (T,)
    delta = table[touched].astype(np.float64) - telemetry["start"][touched]  # (T, d)
    distance = np.zeros(len(updates))
    distance[touched] = np.sqrt(np.einsum("ij,ij->i", delta, delta))
    extra = len(updates) - len(keys)
    names = (*keys, *(f"#bucket {k}" for k in range(extra)))
    all_counts = np.concatenate([np.asarray(counts, dtype=np.int64), np.zeros(extra, np.int64)])
    return RowStats(
        updates,
        counters[:, 1].copy(),
        counters[:, 2].astype(np.int64),
        distance,
        telemetry["steps"],
        names,
        all_counts,
    )
