"""GloVe's update: weighted least squares on log co-occurrences, by AdaGrad (numba + reference).

For a co-occurrence record ``(i, j, X_ij)`` the loss (Pennington et al. 2014, eq. 8) is

    J_ij = 1/2 f(X_ij) (w_i . w~_j + b_i + b~_j - log X_ij) ** 2,
    f(x) = min(1, (x / x_max) ** alpha),

and ``glove.c`` takes one AdaGrad step per record: with ``delta = f(X_ij) * diff`` the
gradients are ``delta * w~_j`` for ``w_i``, ``delta * w_i`` for ``w~_j`` and ``delta`` for
each bias; every parameter moves by ``lr * grad / sqrt(G)`` and *then* adds ``(lr *
grad) ** 2`` to its accumulator ``G``, which starts at 1 (so the first step is plain SGD
at rate ``lr``). Both vectors are updated from their values before the step.

``W`` / ``W_tilde`` are ``(V, d)`` embedding tables (the word and context vectors),
``b`` / ``b_tilde`` their ``(V,)`` biases; everything is float64, as in glove.c.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from rowbook.models.word_vectors.telemetry_kernels import count_update

__all__ = ["glove_records", "glove_step_reference", "glove_weight"]

_FAST = {"reassoc", "contract", "arcp", "nsz"}


def glove_weight(x: np.ndarray, x_max: float = 100.0, alpha: float = 0.75) -> np.ndarray:
    """The weighting function ``f(x) = (x / x_max) ** alpha`` capped at 1.

    >>> glove_weight(np.array([1.0, 50.0, 100.0, 300.0]), x_max=100.0, alpha=0.5).round(4)
    array([0.1   , 0.7071, 1.    , 1.    ])
    """
    x = np.asarray(x, dtype=np.float64)
    return np.where(x > x_max, 1.0, (x / x_max) ** alpha)


@numba.njit(nogil=True, fastmath=_FAST, cache=True)
def glove_records(
    params, grads, rows, cols, vals, lo, hi, x_max, alpha, lr, stats=None
):  # pragma: no cover
    """AdaGrad steps on records ``[lo, hi)``; returns their summed loss ``sum J_ij``.

    ``params = (W, W_tilde, b, b_tilde)`` and ``grads`` their squared-gradient sums.
    ``stats`` (None: off, compiled away) records per-word telemetry: a record updates word
    ``i`` (its ``w_i``, gradient ``f diff w~_j``) and word ``j`` (its ``w~_j``, gradient
    ``f diff w_i``), and a word's start is its vector ``w + w~`` before its first update.
    """
    W, W_tilde, b, b_tilde = params
    G, G_tilde, Gb, Gb_tilde = grads
    d = W.shape[1]
    cost = 0.0
    for r in range(lo, hi):
        i, j, x = rows[r], cols[r], vals[r]
        w, wt, g, gt = W[i], W_tilde[j], G[i], G_tilde[j]
        diff = b[i] + b_tilde[j] - math.log(x)
        for c in range(d):
            diff += w[c] * wt[c]
        fdiff = diff if x > x_max else math.pow(x / x_max, alpha) * diff
        cost += 0.5 * fdiff * diff
        if stats is not None:
            _record_pair(stats, W, W_tilde, i, j, abs(fdiff))
        fdiff *= lr
        for c in range(d):
            t1 = fdiff * wt[c]
            t2 = fdiff * w[c]
            w[c] -= t1 / math.sqrt(g[c])
            wt[c] -= t2 / math.sqrt(gt[c])
            g[c] += t1 * t1
            gt[c] += t2 * t2
        b[i] -= fdiff / math.sqrt(Gb[i])
        b_tilde[j] -= fdiff / math.sqrt(Gb_tilde[j])
        Gb[i] += fdiff * fdiff
        Gb_tilde[j] += fdiff * fdiff
    return cost


@numba.njit(nogil=True, cache=True, inline="always")
def _record_pair(stats, W, W_tilde, i, j, scale):  # pragma: no cover - compiled
    """Telemetry of one record, before its step: words ``i`` and ``j``, gradient norms
    ``|f diff| ||w~_j||`` and ``|f diff| ||w_i||``."""
    norm_i, norm_j = 0.0, 0.0
    for c in range(W.shape[1]):
        norm_i += W_tilde[j, c] * W_tilde[j, c]
        norm_j += W[i, c] * W[i, c]
    for row, norm in ((i, norm_i), (j, norm_j)):
        if stats[0][row, 0] == 0.0:
            for c in range(W.shape[1]):
                stats[1][row, c] = W[row, c] + W_tilde[row, c]
        count_update(stats, row, 1.0, scale * math.sqrt(norm))


def glove_step_reference(params, grads, i, j, x, x_max, alpha, lr):
    """One record's update written with NumPy vectors, as the equations read."""
    W, W_tilde, b, b_tilde = params
    G, G_tilde, Gb, Gb_tilde = grads
    w, wt = W[i].copy(), W_tilde[j].copy()  # values before the step
    diff = w @ wt + b[i] + b_tilde[j] - np.log(x)
    delta = float(glove_weight(x, x_max, alpha)) * diff
    step_w, step_wt, step_b = lr * delta * wt, lr * delta * w, lr * delta
    W[i] = w - step_w / np.sqrt(G[i])
    W_tilde[j] = wt - step_wt / np.sqrt(G_tilde[j])
    b[i] -= step_b / np.sqrt(Gb[i])
    b_tilde[j] -= step_b / np.sqrt(Gb_tilde[j])
    G[i] += step_w**2
    G_tilde[j] += step_wt**2
    Gb[i] += step_b**2
    Gb_tilde[j] += step_b**2
    return 0.5 * delta * diff
