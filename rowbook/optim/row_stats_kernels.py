"""Recording one step of per-row telemetry: a NumPy reference and its numba twin.

For the rows ``r`` a step gave a gradient ``g_r`` (sorted, unique), *before* the step moves
them::

    start[r] <- table[r]            if updates[r] == 0 (the row's value before its first update)
    grad_norm_sum[r] += ||g_r||     (accumulated in float64)
    updates[r] += 1
    last_step[r] = step

:func:`record_rows_reference` writes it one array operation at a time;
:func:`record_rows` does it in one pass over the touched rows. The tests hold them equal.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["record_rows", "record_rows_reference"]


def record_rows_reference(
    updates: np.ndarray,
    grad_norm_sum: np.ndarray,
    last_step: np.ndarray,
    start: np.ndarray,
    table: np.ndarray,
    rows: np.ndarray,
    grad_rows: np.ndarray,
    step: int,
) -> None:
    """Record one step that gave ``rows`` (U,) sorted unique the gradient ``grad_rows`` (U, D).

    ``table`` (V, D) is read *before* the step updates it: a row seen for the first time
    has its value copied into ``start``. Norms accumulate in float64.

    >>> upd, norm, last = np.zeros(3, np.int64), np.zeros(3), np.zeros(3, np.int64)
    >>> start, table = np.zeros((3, 2)), np.arange(6.0).reshape(3, 2)
    >>> record_rows_reference(upd, norm, last, start, table, np.array([2]),
    ...                       np.array([[3.0, 4.0]]), step=1)
    >>> upd.tolist(), norm.tolist(), last.tolist(), start[2].tolist()
    ([0, 0, 1], [0.0, 0.0, 5.0], [0, 0, 1], [4.0, 5.0])
    """
    fresh = rows[updates[rows] == 0]  # (F,) rows never updated before this step
    start[fresh] = table[fresh]
    g = grad_rows.astype(np.float64)  # (U, D)
    grad_norm_sum[rows] += np.sqrt(np.einsum("ij,ij->i", g, g))
    updates[rows] += 1
    last_step[rows] = step


# reassoc: the sum of squares may be split into SIMD lanes (2x faster, memory-bound after);
# NaN and inf still propagate
@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _record_rows_kernel(
    updates, grad_norm_sum, last_step, start, table, rows, g, step
):  # pragma: no cover - compiled
    for k in range(rows.shape[0]):
        r = rows[k]
        if updates[r] == 0:
            for j in range(table.shape[1]):
                start[r, j] = table[r, j]
        total = 0.0
        for j in range(g.shape[1]):
            value = np.float64(g[k, j])
            total += value * value
        grad_norm_sum[r] += np.sqrt(total)
        updates[r] += 1
        last_step[r] = step


def record_rows(
    updates: np.ndarray,
    grad_norm_sum: np.ndarray,
    last_step: np.ndarray,
    start: np.ndarray,
    table: np.ndarray,
    rows: np.ndarray,
    grad_rows: np.ndarray,
    step: int,
) -> None:
    """:func:`record_rows_reference` in one pass over the touched rows (numba).

    The NumPy reference makes six fancy-indexed passes and a float64 copy of the gradient;
    this kernel reads each gradient row once (``benchmarks/bench_telemetry.py`` measures it
    beside the optimizer step it accompanies).
    """
    if not (table.flags.c_contiguous and start.flags.c_contiguous) or len(rows) < 8:
        record_rows_reference(
            updates, grad_norm_sum, last_step, start, table, rows, grad_rows, step
        )
        return
    g = np.ascontiguousarray(grad_rows).reshape(len(rows), table.shape[1])  # (U, D)
    _record_rows_kernel(updates, grad_norm_sum, last_step, start, table, rows, g, step)
