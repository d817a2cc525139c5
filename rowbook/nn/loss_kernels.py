"""Cross-entropy over integer targets as two fused numba passes, beside its NumPy reference
(:func:`rowbook.nn.loss.cross_entropy`'s general path, which the tests hold these to).

Forward, one parallel pass per row of logits ``z``: the row's maximum, then
``lse = max + log(sum(exp(z - max)))`` and the loss ``lse - z[t]``. Backward, one pass
writing the gradient ``coef * (exp(z - lse) - one_hot(t))``: the softmax is recomputed, not
kept, which saves the ``(N, C)`` buffer the reference holds between the two (131 MB for
4,096 positions over 8,000 classes) and three of its passes. Without class weights and
label smoothing only; :func:`cross_entropy` takes this path for large float inputs.

>>> z = np.array([[0.0, 0.0, np.log(2.0)]], dtype=np.float32)
>>> lse, loss = lse_rows(z, np.array([2]))
>>> loss.round(6), softmax_minus_target(z, np.array([2]), lse, np.ones(1, np.float32)).round(2)
(array([0.693147], dtype=float32), array([[ 0.25,  0.25, -0.5 ]], dtype=float32))
"""

from __future__ import annotations

import math

import numba
import numpy as np

from rowbook._threads import serial_below
from rowbook.kernel_math import FASTMATH, fast_exp

__all__ = ["lse_rows", "softmax_minus_target"]


@numba.njit(parallel=True, cache=True, nogil=True, fastmath=FASTMATH)
def _lse_kernel(z, ids, lse, loss):  # pragma: no cover - compiled
    for i in numba.prange(z.shape[0]):
        top = z[i, 0]
        for c in range(1, z.shape[1]):
            top = max(top, z[i, c])
        total = z.dtype.type(0)
        for c in range(z.shape[1]):
            total += fast_exp(z[i, c] - top)
        lse[i] = top + math.log(total)
        loss[i] = lse[i] - z[i, ids[i]]


@numba.njit(parallel=True, cache=True, nogil=True, fastmath=FASTMATH)
def _grad_kernel(z, ids, lse, coef, out):  # pragma: no cover - compiled
    for i in numba.prange(z.shape[0]):
        a, m = coef[i], lse[i]
        for c in range(z.shape[1]):
            out[i, c] = fast_exp(z[i, c] - m) * a
        out[i, ids[i]] -= a


def lse_rows(z: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(log-sum-exp of each row, lse - z[row, ids[row]])`` of ``(N, C)`` logits."""
    lse, loss = np.empty(len(z), z.dtype), np.empty(len(z), z.dtype)
    with serial_below(z.size):  # one row per task either way: the same numbers
        _lse_kernel(z, ids.astype(np.int64, copy=False), lse, loss)
    return lse, loss


def softmax_minus_target(
    z: np.ndarray, ids: np.ndarray, lse: np.ndarray, coef: np.ndarray
) -> np.ndarray:
    """``coef[:, None] * (softmax(z) - one_hot(ids))`` as ``(N, C)``."""
    out = np.empty_like(z)
    with serial_below(z.size):
        _grad_kernel(
            z, ids.astype(np.int64, copy=False), lse, coef.astype(z.dtype, copy=False), out
        )
    return out
