"""Per-row telemetry of a table being trained: which rows learned, how hard, and when.

An embedding table learns one row at a time: a step moves only the rows its batch looked
up. :class:`RowStats` is the record of that, one entry per row of a ``(V, ...)`` table:

* ``updates[r]`` -- the updates of row ``r``: the steps on which it had a gradient (was
  looked up) for an optimizer; a trainer that moves a row once per example, several times
  in one step (the word-vector models, whose step is a job), counts each;
* ``grad_norm_sum[r]`` -- the sum over those steps of ``||g_r||``, the Euclidean norm of
  the row's (summed) gradient;
* ``last_step[r]`` -- the last such step, counted from 1 (0: never);
* ``distance[r]`` -- ``||row now - row before its first update||``: how far it travelled;
* ``steps`` -- the steps the table took; ``keys`` and ``counts`` optionally name the rows
  and give their corpus frequency (rows without counts are taken to be in frequency
  order, as rowbook's vocabularies and trainers number them).

:class:`RowStatsRecorder` fills one during training. The sparse optimizers use it when
built with ``row_stats=True`` (:meth:`rowbook.optim.Optimizer.row_stats`), and any
trainer that knows which rows a step touched can feed it the same way. Recording a step
costs one pass over the touched rows' gradient
(:func:`~rowbook.optim.row_stats_kernels.record_rows`, a numba kernel held to its NumPy
reference), so it is proportional to the rows a step touches,
never to ``V``. The arrays are :func:`~rowbook.optim.state.lazy_zeros`: rows never
touched cost no memory, and neither does the copy of a row's starting value, which is
taken only when the row is first updated.

The pictures of a record are in :mod:`rowbook.viz.row_stats`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rowbook.optim.row_stats_kernels import record_rows
from rowbook.optim.state import lazy_zeros

__all__ = ["RowStats", "RowStatsRecorder"]


@dataclass(frozen=True, eq=False)
class RowStats:
    """Per-row training telemetry of a ``(V, ...)`` table; see the module docstring.

    Attributes
    ----------
    updates : (V,) int64
    grad_norm_sum : (V,) float64
    last_step : (V,) int64, 0 for a row never updated
    distance : (V,) float64, 0 for a row never updated
    steps : int
    keys : tuple of str, optional
    counts : (V,) int64, optional

    Examples
    --------
    >>> stats = RowStats(updates=[2, 0, 1], grad_norm_sum=[0.5, 0.0, 0.25],
    ...                  last_step=[2, 0, 1], distance=[0.1, 0.0, 0.05], steps=2,
    ...                  keys=("the", "zebra", "cat"))
    >>> stats.never_touched(), stats.mean_grad_norm.tolist()
    (['zebra'], [0.25, 0.0, 0.25])
    """

    updates: np.ndarray
    grad_norm_sum: np.ndarray
    last_step: np.ndarray
    distance: np.ndarray
    steps: int
    keys: tuple[str, ...] | None = None
    counts: np.ndarray | None = None

    def __post_init__(self) -> None:
        arrays = {
            "updates": np.int64,
            "grad_norm_sum": np.float64,
            "last_step": np.int64,
            "distance": np.float64,
        }
        rows = None
        for name, dtype in arrays.items():
            value = np.array(getattr(self, name), dtype=dtype)
            if value.ndim != 1 or (rows is not None and len(value) != rows):
                raise ValueError(
                    f"RowStats: {name} must be a 1-D array with one entry per row "
                    f"({rows if rows is not None else 'as updates'}), got shape {value.shape}"
                )
            rows = len(value)
            value.flags.writeable = False
            object.__setattr__(self, name, value)
        if (self.updates < 0).any() or (self.last_step < 0).any():
            raise ValueError("RowStats: updates and last_step must be >= 0 (0: never updated)")
        steps = int(self.steps)
        if steps < 0 or (rows and self.last_step.max() > steps):
            raise ValueError(
                f"RowStats: steps={self.steps!r} must be >= 0 and >= every last_step entry "
                "(a row cannot be updated on a step that was not taken)"
            )
        object.__setattr__(self, "steps", steps)
        if self.keys is not None:
            keys = tuple(self.keys)
            if len(keys) != rows:
                raise ValueError(f"RowStats: keys must name every row ({rows}), got {len(keys)}")
            object.__setattr__(self, "keys", keys)
        if self.counts is not None:
            counts = np.array(self.counts, dtype=np.int64)
            if counts.shape != (rows,) or (counts < 0).any():
                raise ValueError(
                    f"RowStats: counts must be {rows} non-negative integers, got shape {counts.shape}"
                )
            counts.flags.writeable = False
            object.__setattr__(self, "counts", counts)

    def __len__(self) -> int:
        return len(self.updates)

    def __repr__(self) -> str:
        touched = int((self.updates > 0).sum())
        return f"RowStats(rows={len(self)}, steps={self.steps}, touched={touched})"

    def with_keys(
        self, keys: Sequence[str] | None, counts: Sequence[int] | None = None
    ) -> RowStats:
        """The same record with the rows named (and their corpus ``counts``, if given)."""
        return replace(
            self,
            keys=None if keys is None else tuple(keys),
            counts=self.counts if counts is None else np.asarray(counts),
        )

    @property
    def mean_grad_norm(self) -> np.ndarray:
        """(V,) mean gradient norm per update (0 for a row never updated)."""
        return self.grad_norm_sum / np.maximum(self.updates, 1)

    def labels(self) -> list[str]:
        """The row names: ``keys``, or the row numbers as strings."""
        return list(self.keys) if self.keys is not None else [str(i) for i in range(len(self))]

    def never_touched(self) -> list[str] | list[int]:
        """The rows that never had a gradient: their keys, or their row numbers."""
        rows = np.flatnonzero(self.updates == 0)
        return [self.keys[i] for i in rows] if self.keys is not None else rows.tolist()

    def frequency_rank(self) -> np.ndarray:
        """(V,) each row's rank by corpus frequency, 1 for the most frequent.

        From ``counts`` (ties keep row order) when given, else the row number + 1: rowbook's
        vocabularies number tokens by descending count.

        >>> RowStats([1, 1, 1], [0, 0, 0], [1, 1, 1], [0, 0, 0], 1, counts=[5, 9, 5]).frequency_rank()
        array([2, 1, 3])
        """
        if self.counts is None:
            return np.arange(1, len(self) + 1)
        order = np.argsort(-self.counts, kind="stable")
        rank = np.empty(len(self), dtype=np.int64)
        rank[order] = np.arange(1, len(self) + 1)
        return rank

    def summary(self) -> dict[str, Any]:
        """Plain numbers: rows, steps, rows touched and never touched, update counts."""
        touched = self.updates > 0
        return {
            "rows": len(self),
            "steps": self.steps,
            "touched": int(touched.sum()),
            "never_touched": int((~touched).sum()),
            "median_updates": float(np.median(self.updates)) if len(self) else 0.0,
            "max_updates": int(self.updates.max(initial=0)),
            "mean_distance_touched": float(self.distance[touched].mean()) if touched.any() else 0.0,
        }


class RowStatsRecorder:
    """Fills a :class:`RowStats` for one table, step by step (what the optimizers use).

    Call :meth:`record` once per step, *before* the step changes the table, with the rows
    that have a gradient; :meth:`stats` reads the record at any time.

    Parameters
    ----------
    shape : tuple of int
        The table's shape ``(V, ...)``; each of the ``V`` leading entries is a row.
    dtype : numpy dtype
        The table's dtype (the starting values are kept in it).

    Examples
    --------
    >>> table = np.zeros((4, 2), dtype=np.float32)
    >>> recorder = RowStatsRecorder(table.shape, table.dtype)
    >>> recorder.record(table, rows=np.array([1, 3]), grad_rows=np.ones((2, 2), np.float32))
    >>> table[[1, 3]] -= 0.5                      # the step itself
    >>> recorder.record(table, rows=np.array([1]), grad_rows=np.ones((1, 2), np.float32))
    >>> stats = recorder.stats(table)
    >>> stats.updates.tolist(), stats.last_step.tolist(), stats.never_touched()
    ([0, 2, 0, 1], [0, 2, 0, 1], [0, 2])
    >>> stats.distance.round(4).tolist()          # rows 1 and 3 moved by (0.5, 0.5)
    [0.0, 0.7071, 0.0, 0.7071]
    """

    def __init__(self, shape: tuple[int, ...], dtype: Any) -> None:
        rows = int(shape[0]) if len(shape) else 1
        width = int(np.prod(shape[1:], dtype=np.int64)) if len(shape) > 1 else 1
        self.shape, self.steps = tuple(int(s) for s in shape), 0
        self.updates = lazy_zeros("row_updates", (rows,), np.int64)  # (V,)
        self.grad_norm_sum = lazy_zeros("row_grad_norm_sum", (rows,), np.float64)  # (V,)
        self.last_step = lazy_zeros("row_last_step", (rows,), np.int64)  # (V,)
        self.start = lazy_zeros("row_start", (rows, width), np.dtype(dtype))  # (V, D)

    def _rows_view(self, table: np.ndarray) -> np.ndarray:
        return table.reshape(self.start.shape)  # (V, D)

    def record(self, table: np.ndarray, rows: np.ndarray | None, grad_rows: np.ndarray) -> None:
        """Record a step: ``rows`` (U,) sorted unique with gradient ``grad_rows`` (U, ...), or
        ``rows=None`` and a dense gradient of the table's shape (its non-zero rows count)."""
        self.steps += 1
        view = self._rows_view(table)
        if rows is None:  # dense: the rows whose gradient is not zero were touched
            g = np.asarray(grad_rows).reshape(view.shape)  # (V, D)
            rows = np.flatnonzero(np.any(g != 0, axis=1))
            grad_rows = g[rows]  # (U, D)
        elif not len(rows):
            return
        record_rows(
            self.updates,
            self.grad_norm_sum,
            self.last_step,
            self.start,
            view,
            np.asarray(rows, dtype=np.int64),
            grad_rows,
            self.steps,
        )

    def stats(
        self,
        table: np.ndarray,
        keys: Sequence[str] | None = None,
        counts: Sequence[int] | None = None,
    ) -> RowStats:
        """The record now, with ``distance`` measured against ``table``'s current rows."""
        view = self._rows_view(table)
        touched = np.flatnonzero(self.updates)  # (T,)
        distance = np.zeros(len(self.updates))
        delta = view[touched].astype(np.float64) - self.start[touched]  # (T, D)
        distance[touched] = np.sqrt(np.einsum("ij,ij->i", delta, delta))
        return RowStats(
            np.array(self.updates),
            np.array(self.grad_norm_sum),
            np.array(self.last_step),
            distance,
            self.steps,
            None if keys is None else tuple(keys),
            counts,
        )

    # -- state ------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Copies of the arrays and the step count (plain data, for checkpoints)."""
        return {
            "steps": self.steps,
            "updates": np.array(self.updates),
            "grad_norm_sum": np.array(self.grad_norm_sum),
            "last_step": np.array(self.last_step),
            "start": np.array(self.start),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`state_dict` gave; shapes are checked against this table."""
        steps = state.get("steps")
        if not isinstance(steps, int | np.integer) or isinstance(steps, bool) or steps < 0:
            raise ValueError(f"row_stats: 'steps' must be an integer >= 0, got {steps!r}")
        for name in ("updates", "grad_norm_sum", "last_step", "start"):
            mine, saved = getattr(self, name), np.asarray(state.get(name))
            if saved.shape != mine.shape:
                raise ValueError(
                    f"row_stats: {name!r} has shape {saved.shape}, expected {mine.shape} for a "
                    f"table of shape {self.shape}"
                )
            mine[...] = saved
        self.steps = int(steps)
