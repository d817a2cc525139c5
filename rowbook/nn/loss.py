"""Loss functions, each one fused op with its closed-form backward beside the forward.

One file over 400 lines on purpose: the losses share the reduction and class-axis helpers at
its top, and each keeps its backward right under its forward.

Fusing matters for cross-entropy: composing ``log_softmax`` with a one-hot product
would build a ``(N, C)`` one-hot matrix and two more graph nodes; here the forward
is one log-sum-exp and the backward is ``softmax - indicator``, with the indicator
subtracted at the target positions only. The semantics (weights, ``ignore_index``,
label smoothing, reductions, NaN for an all-ignored mean) are PyTorch 2.13's.

``weight`` and ``pos_weight`` are constants: PyTorch does not differentiate these
losses with respect to them either.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from scipy import special

from rowbook.autograd.ops import unbroadcast
from rowbook.autograd.tensor import Tensor, as_tensor
from rowbook.checks import InputIndexError, InputTypeError

__all__ = ["binary_cross_entropy_with_logits", "cross_entropy", "mse_loss"]

Reduction = Literal["mean", "sum", "none"]


# -- shared helpers ---------------------------------------------------------------------


def _check_reduction(reduction: str) -> None:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _float_tensor(x: Any, name: str) -> Tensor:
    t = as_tensor(x)
    if t.dtype.kind != "f":
        raise InputTypeError(f"{name} must be a floating tensor, got dtype {t.dtype}")
    return t


def _constant(x: Any, name: str, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray | None:
    """A per-element or per-class weight, cast to ``dtype``; it must broadcast to ``shape``."""
    if x is None:
        return None
    if isinstance(x, Tensor) and x.requires_grad:
        raise ValueError(
            f"{name} has requires_grad=True, but the loss is not differentiable with respect to "
            f"{name} (nor is PyTorch's); pass {name}.detach()"
        )
    array = np.asarray(x.data if isinstance(x, Tensor) else x, dtype=dtype)
    try:
        fits = np.broadcast_shapes(array.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{name} has shape {array.shape}, which does not broadcast to {shape}")
    return array


def _reduce(loss: np.ndarray, reduction: str, denominator: Any) -> np.ndarray:
    if reduction == "none":
        return loss
    total = loss.sum()
    if reduction == "mean":
        with np.errstate(divide="ignore", invalid="ignore"):  # empty or all ignored: NaN
            total = total / denominator
    return np.asarray(total, dtype=loss.dtype)


def _upstream(g: np.ndarray, shape: tuple[int, ...], reduction: str, denominator: Any):
    """The output gradient spread over the loss elements: ``g``, ``g`` or ``g / denominator``."""
    if reduction == "none":
        return g.reshape(shape)
    if reduction == "mean":
        with np.errstate(divide="ignore", invalid="ignore"):
            g = g / np.asarray(denominator, dtype=g.dtype)
    return np.broadcast_to(g, shape)


# -- cross-entropy ----------------------------------------------------------------------


def _classes_last(a: np.ndarray) -> np.ndarray:
    """``(N, C, d1, ...)`` -> ``(N * d1 * ..., C)``; ``(C,)`` -> ``(1, C)``; ``(N, C)`` as is."""
    if a.ndim == 1:
        return a[None, :]
    if a.ndim == 2:
        return a
    return np.moveaxis(a, 1, -1).reshape(-1, a.shape[1])


def _classes_back(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Inverse of :func:`_classes_last` for a gradient of the logits."""
    if len(shape) <= 2:
        return g if g.shape == shape else g.reshape(shape)
    return np.moveaxis(g.reshape(shape[0], *shape[2:], shape[1]), -1, 1)


def _log_softmax_rows(z: np.ndarray) -> np.ndarray:
    """``z - logsumexp(z)`` along the last axis, in a new ``(M, C)`` array."""
    out = z - z.max(axis=1, keepdims=True)  # (M, C), every row's max is 0
    lse = np.log(np.exp(out).sum(axis=1, keepdims=True))  # (M, 1)
    out -= lse
    return out


def cross_entropy(
    logits: Any,
    targets: Any,
    *,
    weight: Any = None,
    ignore_index: int = -100,
    reduction: Reduction = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross-entropy between class scores and targets, as ``torch.nn.functional.cross_entropy``.

    With integer targets ``t`` and ``logp = log_softmax(logits)`` over the class axis,
    each position contributes ``(1 - eps) w[t] (-logp[t]) + eps / C * sum_c w[c] (-logp[c])``
    (0 where ``t == ignore_index``). ``"mean"`` divides the sum by ``sum w[t]`` over the
    positions not ignored (NaN if all are ignored). Float targets with the logits' shape
    are class probabilities: ``-sum_c w[c] y[c] logp[c]``, mean over positions.

    Parameters
    ----------
    logits
        Unnormalised scores, floating.
    targets
        Integer class ids in ``0..C-1`` (or ``ignore_index``), or float probabilities.
    weight
        Optional ``(C,)`` rescaling of each class.
    ignore_index
        Target value that contributes neither loss nor gradient (integer targets only).
    reduction
        ``"mean"``, ``"sum"`` or ``"none"`` (per position, the targets' shape).
    label_smoothing
        ``eps`` in ``[0, 1]``: the target mixes ``1 - eps`` of the label with a uniform ``eps``.

    Shape
    -----
    - logits: ``(N, C)``, ``(C,)`` or ``(N, C, d1, ..., dk)``
    - targets: ``(N,)``, ``()`` or ``(N, d1, ..., dk)``; probabilities: the logits' shape
    - output: scalar, or the targets' shape (class axis removed) with ``reduction="none"``

    Examples
    --------
    >>> logits = Tensor(np.log(np.array([[1.0, 1.0, 2.0]])), requires_grad=True)
    >>> loss = cross_entropy(logits, np.array([2]))
    >>> round(loss.item(), 6)  # -log(2 / 4)
    0.693147
    >>> loss.backward()
    >>> logits.grad  # softmax minus the indicator of class 2
    array([[ 0.25,  0.25, -0.5 ]])
    """
    _check_reduction(reduction)
    x = _float_tensor(logits, "logits")
    if x.ndim == 0:
        raise ValueError("logits must have at least one dimension (the classes), got a scalar")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be in [0, 1], got {label_smoothing}")
    C = x.shape[1] if x.ndim >= 2 else x.shape[0]
    w = _constant(weight, "weight", x.dtype, (C,))
    if w is not None and w.shape != (C,):
        raise ValueError(f"weight must have shape ({C},), one value per class; got {w.shape}")
    t = targets if isinstance(targets, Tensor) else as_tensor(np.asarray(targets))
    if t.dtype.kind == "f":
        return _cross_entropy_probs(x, t, w, ignore_index, reduction, label_smoothing)
    return _cross_entropy_ids(x, t.data, w, ignore_index, reduction, label_smoothing)


def _checked_ids(x: Tensor, t: np.ndarray, ignore_index: int) -> np.ndarray:
    """Flat int64 targets after checking their dtype, shape and range."""
    expected = x.shape[:1] + x.shape[2:] if x.ndim >= 2 else ()
    if t.dtype.kind not in "iu":
        raise InputTypeError(
            f"targets must hold integer class ids (or float class probabilities shaped like the "
            f"logits), got dtype {t.dtype}"
        )
    if t.shape != expected:
        raise ValueError(
            f"targets has shape {t.shape}, expected {expected} for logits of shape {x.shape} "
            "(the logits' shape without the class axis)"
        )
    ids = t.reshape(-1)  # range checked in its own dtype: a uint64 2**64-1 must not wrap to -1
    C = x.shape[1] if x.ndim >= 2 else x.shape[0]
    bad = (ids != ignore_index) & ((ids < 0) | (ids >= C))
    if bad.any():
        raise InputIndexError(
            f"target {ids[bad][0]} is out of range: class ids must be in 0..{C - 1} "
            f"(or ignore_index={ignore_index})"
        )
    return ids.astype(np.int64, copy=False)


#: Logits with at least this many values take the fused kernels (no weights, no smoothing).
FUSED_MIN_SIZE = 1 << 15


def _cross_entropy_ids(x, t, w, ignore_index, reduction, eps) -> Tensor:
    ids = _checked_ids(x, t, ignore_index)
    valid = ids != ignore_index  # (M,)
    safe = np.where(valid, ids, 0)
    fused = w is None and eps == 0 and x.ndim == 2 and x.data.flags.c_contiguous
    if fused and x.size >= FUSED_MIN_SIZE and x.dtype in (np.float32, np.float64):
        return _cross_entropy_fused(x, t.shape, safe, valid, reduction)
    e = _classes_last(x.data)
    e = e - e.max(axis=1, keepdims=True)  # (M, C) shifted logits z: the only (M, C) buffer
    M, C = e.shape
    rows = np.arange(M)
    zero = np.zeros((), dtype=x.dtype)
    z_t = e[rows, safe]  # (M,)
    z_w = (e @ w if w is not None else e.sum(axis=1)) if eps > 0 else None  # sum_c w_c z_c
    np.exp(e, out=e)  # exp(z), kept for the backward: softmax = e / s
    s = e.sum(axis=1)  # (M,)
    lse = np.log(s)  # -logp[c] = lse - z[c]
    w_t = np.where(valid, w[safe] if w is not None else np.ones((), x.dtype), zero)  # (M,)
    w_sum = x.dtype.type(w.sum() if w is not None else C)  # a scalar of the logits' dtype
    loss = np.where(valid, (lse - z_t) * w_t, zero)  # (M,)
    if eps > 0:
        loss = (1 - eps) * loss + (eps / C) * np.where(valid, lse * w_sum - z_w, zero)
    denominator = w_t.sum()
    out = _reduce(loss.reshape(t.shape), reduction, denominator)

    def backward(g: np.ndarray) -> tuple[np.ndarray]:
        coef = np.where(valid, _upstream(g, t.shape, reduction, denominator).reshape(M), zero)
        total = coef * ((1 - eps) * w_t + (eps / C) * w_sum * valid)  # (M,) sum of the targets
        grad = e * (total / s)[:, None]  # (M, C) softmax times the total target mass
        grad[rows, safe] -= (1 - eps) * coef * w_t  # the indicator, at the targets only
        if eps > 0:
            grad -= np.multiply.outer((eps / C) * coef, w if w is not None else np.ones(C, e.dtype))
        return (_classes_back(grad, x.shape),)

    return Tensor._make(out, (x,), backward, "cross_entropy")


def _cross_entropy_fused(x, shape, safe, valid, reduction) -> Tensor:
    """The same loss and gradient, unweighted and unsmoothed, by :mod:`rowbook.nn.loss_kernels`."""
    from rowbook.nn import loss_kernels

    zero = np.zeros((), dtype=x.dtype)
    lse, loss = loss_kernels.lse_rows(x.data, safe)  # (M,), (M,)
    loss = np.where(valid, loss, zero)
    denominator = valid.sum(dtype=x.dtype)
    out = _reduce(loss.reshape(shape), reduction, denominator)

    def backward(g: np.ndarray) -> tuple[np.ndarray]:
        coef = np.where(valid, _upstream(g, shape, reduction, denominator).reshape(-1), zero)
        return (loss_kernels.softmax_minus_target(x.data, safe, lse, coef),)

    return Tensor._make(out, (x,), backward, "cross_entropy")


def _cross_entropy_probs(x, y, w, ignore_index, reduction, eps) -> Tensor:
    if y.shape != x.shape:
        raise ValueError(
            f"float targets are class probabilities and must have the logits' shape {x.shape}, "
            f"got {y.shape}; class ids must be integers"
        )
    if ignore_index >= 0:
        raise ValueError(
            f"ignore_index={ignore_index} is not supported with class-probability targets; "
            "leave it at its default"
        )
    logp = _log_softmax_rows(_classes_last(x.data))  # (M, C)
    M, C = logp.shape
    Y = _classes_last(y.data.astype(x.dtype, copy=False))  # (M, C)
    if eps > 0:
        Y = Y * (1 - eps) + eps / C
    wY = Y * w if w is not None else Y
    loss = -(logp * wY).sum(axis=1)  # (M,)
    shape = x.shape[:1] + x.shape[2:] if x.ndim >= 2 else ()
    out = _reduce(loss.reshape(shape), reduction, M)

    def backward(g: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        coef = _upstream(g, shape, reduction, M).reshape(M, 1)
        gx = gy = None
        if x.requires_grad:
            gx = np.exp(logp)  # (M, C) softmax
            gx *= wY.sum(axis=1, keepdims=True)
            gx -= wY
            gx *= coef
            gx = _classes_back(gx, x.shape)
        if y.requires_grad:
            gy = -(1 - eps) * coef * (logp * w if w is not None else logp)
            gy = _classes_back(gy, y.shape)
        return gx, gy

    return Tensor._make(out, (x, y), backward, "cross_entropy")


# -- binary cross-entropy and squared error ---------------------------------------------


def binary_cross_entropy_with_logits(
    logits: Any,
    targets: Any,
    *,
    weight: Any = None,
    pos_weight: Any = None,
    reduction: Reduction = "mean",
) -> Tensor:
    """``-w [p y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))]``, stable for any ``|x|``.

    Written as ``(1 - y) x - (1 + (p - 1) y) log sigmoid(x)`` with
    ``log sigmoid(x) = min(x, 0) - log1p(exp(-|x|))``, which never overflows.

    Parameters
    ----------
    logits, targets
        Same shape; targets are probabilities in ``[0, 1]`` (differentiable too).
    weight
        Optional per-element rescaling, broadcast to the logits' shape.
    pos_weight
        Optional weight ``p`` of the positive term, broadcast along the last axis (per class).
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

    Shape
    -----
    - logits, targets: ``(*)``; output: scalar, or ``(*)`` with ``reduction="none"``

    Examples
    --------
    >>> x = Tensor([1000.0, -1000.0, 0.0])
    >>> binary_cross_entropy_with_logits(x, [1.0, 0.0, 1.0], reduction="none")
    Tensor([0.    0.    0.6931])
    """
    _check_reduction(reduction)
    x = _float_tensor(logits, "logits")
    y = targets if isinstance(targets, Tensor) else Tensor(np.asarray(targets), dtype=x.dtype)
    if y.shape != x.shape:
        raise ValueError(f"targets has shape {y.shape}, it must equal the logits' shape {x.shape}")
    w = _constant(weight, "weight", x.dtype, x.shape)
    pw = _constant(pos_weight, "pos_weight", x.dtype, x.shape)
    X, Y = x.data, y.data.astype(x.dtype, copy=False)
    log_sig = np.negative(np.abs(X))  # (*) log sigmoid(x) = min(x, 0) - log1p(exp(-|x|))
    np.log1p(np.exp(log_sig, out=log_sig), out=log_sig)
    np.subtract(np.minimum(X, 0), log_sig, out=log_sig)
    lw = None if pw is None else (pw - 1) * Y + 1  # (*) weight of the log sigmoid term
    loss = 1 - Y
    loss *= X
    loss -= log_sig if lw is None else lw * log_sig
    if w is not None:
        loss *= w
    out = _reduce(loss, reduction, loss.size)

    def backward(g: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        coef = _upstream(g, x.shape, reduction, loss.size)
        coef = coef * w if w is not None else coef
        gx = gy = None
        if x.requires_grad:  # sigmoid(x) - y, or lw sigmoid(x) - p y
            gx = special.expit(X)
            if pw is not None:
                gx *= lw
            gx -= Y if pw is None else pw * Y
            gx *= coef
        if y.requires_grad:
            # d/dy: log sigmoid(-x) - p log sigmoid(x), and log sigmoid(-x) = log sigmoid(x) - x
            gy = np.negative(X) if pw is None else (log_sig - X) - pw * log_sig
            gy *= coef
        return gx, gy

    return Tensor._make(out, (x, y), backward, "binary_cross_entropy_with_logits")


def mse_loss(input: Any, target: Any, *, reduction: Reduction = "mean") -> Tensor:
    """Squared error ``(input - target)^2``, reduced; both sides are differentiable.

    Shapes broadcast with NumPy's rules (PyTorch warns but does the same).

    Shape
    -----
    - input, target: broadcastable; output: scalar, or the broadcast shape with
      ``reduction="none"``

    Examples
    --------
    >>> mse_loss(Tensor([1.0, 2.0]), Tensor([0.0, 4.0]))
    Tensor(2.5)
    """
    _check_reduction(reduction)
    x = _float_tensor(input, "input")
    y = target if isinstance(target, Tensor) else Tensor(np.asarray(target), dtype=x.dtype)
    try:
        np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise ValueError(
            f"mse_loss: input {x.shape} and target {y.shape} do not broadcast"
        ) from None
    d = x.data - y.data.astype(x.dtype, copy=False)  # (*)
    loss = d * d
    out = _reduce(loss, reduction, loss.size)

    def backward(g: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        norm = (2.0 / loss.size if loss.size else np.nan) if reduction == "mean" else 2.0
        gd = d * np.asarray(norm, dtype=d.dtype)  # torch's order: (x - y) * norm * g
        gd *= g
        gx = unbroadcast(gd, x.shape) if x.requires_grad else None
        gy = unbroadcast(-gd, y.shape) if y.requires_grad else None
        return gx, gy

    return Tensor._make(out, (x, y), backward, "mse_loss")
