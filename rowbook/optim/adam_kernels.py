"""The Adam update, as plain NumPy (the math) and as fused numba kernels (the fast path).

Each ``*_reference`` function is the update written one array operation at a time, in
the order PyTorch 2.13's CPU code performs them; its fused twin does the same
arithmetic element by element in one pass over memory (one read of the parameter,
gradient and moments, one write back) instead of a dozen whole-array temporaries.
All scalars are cast to the parameter's dtype first, as PyTorch does, so a float32
table is updated in float32 arithmetic; the tests hold each kernel to its reference.

Dense Adam (``torch.optim.Adam``, single-tensor path), for step ``t``::

    m <- lerp(m, g, 1 - beta1)                   # m + (1 - beta1) (g - m)
    v <- beta2 v + (1 - beta2) g g
    p <- p - (lr / (1 - beta1^t)) m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

SparseAdam (``torch.optim.SparseAdam``), on the rows ``r`` of a row-sparse gradient
only, with ``t`` the number of steps this parameter has taken (not per row)::

    m[r] <- m[r] + (1 - beta1) (g - m[r])
    v[r] <- v[r] + (1 - beta2) (g g - v[r])
    p[r] <- p[r] - (lr sqrt(1 - beta2^t) / (1 - beta1^t)) m[r] / (sqrt(v[r]) + eps)
"""

from __future__ import annotations

import math

import numba
import numpy as np

from rowbook._threads import serial_below

__all__ = [
    "adam_dense",
    "adam_dense_reference",
    "adam_rows",
    "adam_rows_reference",
]


def _lerp_weight(beta1: float, dtype: np.dtype) -> tuple[bool, np.floating, np.floating]:
    """torch.lerp's formulas: ``a + w (b - a)`` if ``|w| < 0.5``, else ``b - (b - a)(1 - w)``."""
    t = dtype.type
    w = t(1 - beta1)
    return bool(abs(w) < 0.5), w, t(1) - w


# -- dense ----------------------------------------------------------------------------


def adam_dense_reference(
    param: np.ndarray,
    grad: np.ndarray,
    exp_avg: np.ndarray,
    exp_avg_sq: np.ndarray,
    max_exp_avg_sq: np.ndarray | None,
    *,
    step: int,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    decoupled: bool,
) -> None:
    """One Adam / AdamW step on whole arrays, in place (``max_exp_avg_sq``: AMSGrad)."""
    t = param.dtype.type
    if weight_decay != 0:
        if decoupled:
            param *= t(1 - lr * weight_decay)
        else:
            grad = grad + t(weight_decay) * param
    small, w, one_minus_w = _lerp_weight(beta1, param.dtype)
    if small:
        exp_avg += w * (grad - exp_avg)
    else:
        exp_avg[...] = grad - (grad - exp_avg) * one_minus_w
    exp_avg_sq *= t(beta2)
    exp_avg_sq += (t(1 - beta2) * grad) * grad
    second = exp_avg_sq
    if max_exp_avg_sq is not None:
        np.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        second = max_exp_avg_sq
    step_size = lr / (1 - beta1**step)
    denom = np.sqrt(second) / t((1 - beta2**step) ** 0.5) + t(eps)
    param += (t(-step_size) * exp_avg) / denom


# Below this many values waking the second thread costs more than it saves (small
# models such as the NPLM step many small tensors), so NumPy does the update.
PARALLEL_MIN_SIZE = 1 << 16


@numba.njit(parallel=True, cache=True, nogil=True)
def _adam_dense_kernel(
    p,
    g,
    m,
    v,
    vmax,
    amsgrad,
    small,
    w,
    one_minus_w,
    b2,
    one_minus_b2,
    decay,
    l2,
    neg_step_size,
    bc2_sqrt,
    eps,
):  # pragma: no cover - compiled
    for i in numba.prange(p.shape[0]):
        pi = p[i] * decay
        gi = g[i]
        if l2 != 0:
            gi = gi + l2 * p[i]
        mi = m[i]
        mi = mi + w * (gi - mi) if small else gi - (gi - mi) * one_minus_w
        m[i] = mi
        vi = v[i] * b2 + (one_minus_b2 * gi) * gi
        v[i] = vi
        if amsgrad:
            vi = vmax[i] if vmax[i] >= vi else vi
            vmax[i] = vi
        p[i] = pi + (neg_step_size * mi) / (math.sqrt(vi) / bc2_sqrt + eps)


def adam_dense(
    param: np.ndarray,
    grad: np.ndarray,
    exp_avg: np.ndarray,
    exp_avg_sq: np.ndarray,
    max_exp_avg_sq: np.ndarray | None,
    *,
    step: int,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    decoupled: bool,
) -> None:
    """:func:`adam_dense_reference` fused into one parallel pass (contiguous arrays)."""
    arrays = [param, grad, exp_avg, exp_avg_sq]
    arrays += [max_exp_avg_sq] if max_exp_avg_sq is not None else []
    if not all(a.flags.c_contiguous for a in arrays) or param.size < PARALLEL_MIN_SIZE:
        adam_dense_reference(
            param,
            grad,
            exp_avg,
            exp_avg_sq,
            max_exp_avg_sq,
            step=step,
            lr=lr,
            beta1=beta1,
            beta2=beta2,
            eps=eps,
            weight_decay=weight_decay,
            decoupled=decoupled,
        )
        return
    t = param.dtype.type
    small, w, one_minus_w = _lerp_weight(beta1, param.dtype)
    decay = t(1 - lr * weight_decay) if decoupled and weight_decay != 0 else t(1)
    l2 = t(weight_decay) if not decoupled else t(0)
    vmax = max_exp_avg_sq if max_exp_avg_sq is not None else exp_avg_sq
    with serial_below(param.size):  # the same kernel on one thread: the same numbers
        _adam_dense_kernel(
            param.reshape(-1),
            grad.reshape(-1),
            exp_avg.reshape(-1),
            exp_avg_sq.reshape(-1),
            vmax.reshape(-1),
            max_exp_avg_sq is not None,
            small,
            w,
            one_minus_w,
            t(beta2),
            t(1 - beta2),
            decay,
            l2,
            t(-(lr / (1 - beta1**step))),
            t((1 - beta2**step) ** 0.5),
            t(eps),
        )


# -- row-sparse (SparseAdam) ----------------------------------------------------------


def _sparse_step_size(step: int, lr: float, beta1: float, beta2: float) -> float:
    return lr * math.sqrt(1 - beta2**step) / (1 - beta1**step)


def adam_rows_reference(
    param: np.ndarray,
    rows: np.ndarray,
    grad_rows: np.ndarray,
    exp_avg: np.ndarray,
    exp_avg_sq: np.ndarray,
    *,
    step: int,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
) -> None:
    """SparseAdam on unique ``rows`` (U,) with gradient ``grad_rows`` (U, ...), in place."""
    t = param.dtype.type
    m_old, v_old = exp_avg[rows], exp_avg_sq[rows]  # (U, d)
    m_update = (grad_rows - m_old) * t(1 - beta1)
    v_update = (grad_rows * grad_rows - v_old) * t(1 - beta2)
    exp_avg[rows] = m_old + m_update
    exp_avg_sq[rows] = v_old + v_update
    denom = np.sqrt(v_update + v_old) + t(eps)
    param[rows] += t(-_sparse_step_size(step, lr, beta1, beta2)) * ((m_update + m_old) / denom)


@numba.njit(cache=True, nogil=True)
def _adam_rows_kernel(
    p, rows, g, m, v, one_minus_b1, one_minus_b2, eps, neg_step_size
):  # pragma: no cover - compiled
    # Serial on purpose: a few thousand rows are a few milliseconds of memory traffic, and
    # on this 2-core machine a prange split measured slower (1.3-5x) whenever the other
    # core was busy; the dense kernel, 10-50x more work per call, does gain from it.
    for k in range(rows.shape[0]):
        r = rows[k]
        for j in range(p.shape[1]):
            gj = g[k, j]
            m_old = m[r, j]
            v_old = v[r, j]
            m_update = (gj - m_old) * one_minus_b1
            v_update = (gj * gj - v_old) * one_minus_b2
            m[r, j] = m_old + m_update
            v[r, j] = v_old + v_update
            p[r, j] += neg_step_size * ((m_update + m_old) / (math.sqrt(v_update + v_old) + eps))


def adam_rows(
    param: np.ndarray,
    rows: np.ndarray,
    grad_rows: np.ndarray,
    exp_avg: np.ndarray,
    exp_avg_sq: np.ndarray,
    *,
    step: int,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
) -> None:
    """:func:`adam_rows_reference` fused: one pass over the touched rows.

    Time and memory traffic are proportional to the rows present, never to the table.
    """
    arrays = (param, exp_avg, exp_avg_sq)
    if not all(a.flags.c_contiguous for a in arrays) or param.ndim == 0 or len(rows) < 8:
        adam_rows_reference(
            param,
            rows,
            grad_rows,
            exp_avg,
            exp_avg_sq,
            step=step,
            lr=lr,
            beta1=beta1,
            beta2=beta2,
            eps=eps,
        )
        return
    t = param.dtype.type
    width = param[:1].size  # elements per row
    g = np.ascontiguousarray(grad_rows).reshape(len(rows), width)  # (U, d)
    _adam_rows_kernel(
        param.reshape(len(param), width),
        rows,
        g,
        exp_avg.reshape(len(param), width),
        exp_avg_sq.reshape(len(param), width),
        t(1 - beta1),
        t(1 - beta2),
        t(eps),
        t(-_sparse_step_size(step, lr, beta1, beta2)),
    )
