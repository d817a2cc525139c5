"""Differentiable operations, each forward followed directly by its backward.

One file over 400 lines on purpose: a list of short ops, each forward followed by its
backward (the shape ops are already in shape_ops.py); cutting the list would only scatter
them.

Every op takes Tensors (or array-likes, treated as constants), computes its output
with NumPy, and returns ``Tensor._make(out, parents, backward, name)`` where
``backward(g)`` maps the gradient of the output to one gradient per parent. Binary
ops broadcast as NumPy does; their backward sums the gradient back to each input's
shape (:func:`unbroadcast`). The shape operations (reshape, transpose, concatenate,
stack, indexing, gather) live in :mod:`rowbook.autograd.shape_ops` and are re-exported here.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np
from scipy import special

from rowbook.autograd.shape_ops import concatenate, gather, getitem, reshape, stack, transpose
from rowbook.autograd.tensor import Tensor, as_tensor

__all__ = [
    "add",
    "astype",
    "concatenate",
    "div",
    "exp",
    "gather",
    "getitem",
    "log",
    "log_softmax",
    "logsigmoid",
    "matmul",
    "max",
    "maximum",
    "mean",
    "mul",
    "neg",
    "pow",
    "relu",
    "reshape",
    "sigmoid",
    "softmax",
    "sqrt",
    "stack",
    "sub",
    "sum",
    "tanh",
    "transpose",
    "unbroadcast",
    "where",
]


def unbroadcast(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``g`` over the axes NumPy broadcasting added or stretched to reach its shape.

    Examples
    --------
    >>> unbroadcast(np.ones((2, 3)), (3,))
    array([2., 2., 2.])
    >>> unbroadcast(np.ones((2, 3)), (2, 1))
    array([[3.],
           [3.]])
    """
    if g.shape == shape:
        return g
    g = g.sum(axis=tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    return g.sum(axis=stretched, keepdims=True) if stretched else g


def _scalar_dtype(x: Any, other: Tensor | None) -> np.dtype | None:
    """The dtype a scalar operand takes: the tensor's, unless a float meets integers."""
    if other is None or not np.isscalar(x):
        return None
    if other.dtype.kind == "f" or (isinstance(x, int | np.integer) and other.dtype.kind in "iu"):
        return other.dtype
    return None  # e.g. int tensor * 0.5: the float scalar decides (float32), as in PyTorch


def _pair(a: Any, b: Any) -> tuple[Tensor, Tensor]:
    """Tensors for a binary op; a plain Python number takes the other operand's dtype."""
    ta = a if isinstance(a, Tensor) else None
    tb = b if isinstance(b, Tensor) else None
    if ta is None:
        ta = as_tensor(a, dtype=_scalar_dtype(a, tb))
    if tb is None:
        tb = as_tensor(b, dtype=_scalar_dtype(b, ta))
    # An integer tensor meeting a float constant computes in the constant's dtype (torch:
    # int tensor * 0.5 is float32, where NumPy would promote to float64).
    if ta.dtype.kind in "iub" and tb.dtype.kind == "f" and not isinstance(b, Tensor):
        ta = Tensor(ta.data, dtype=tb.dtype)
    if tb.dtype.kind in "iub" and ta.dtype.kind == "f" and not isinstance(a, Tensor):
        tb = Tensor(tb.data, dtype=ta.dtype)
    return ta, tb


def _needs(t: Tensor) -> bool:
    """Whether a backward should spend work on ``t``'s gradient."""
    return t.requires_grad


def _check_broadcast(a: Tensor, b: Tensor, op: str) -> None:
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(
            f"{op}: shapes {a.shape} and {b.shape} do not broadcast (NumPy rules: trailing "
            "dimensions must be equal or 1)"
        ) from None


# -- arithmetic -------------------------------------------------------------------------


def add(a: Any, b: Any) -> Tensor:
    a, b = _pair(a, b)
    _check_broadcast(a, b, "add")

    def backward(g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return unbroadcast(g, a.shape), unbroadcast(g, b.shape)

    return Tensor._make(a.data + b.data, (a, b), backward, "add")


def sub(a: Any, b: Any) -> Tensor:
    a, b = _pair(a, b)
    _check_broadcast(a, b, "sub")

    def backward(g: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        return unbroadcast(g, a.shape), unbroadcast(-g, b.shape) if _needs(b) else None

    return Tensor._make(a.data - b.data, (a, b), backward, "sub")


def mul(a: Any, b: Any) -> Tensor:
    a, b = _pair(a, b)
    _check_broadcast(a, b, "mul")

    def backward(g: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        ga = unbroadcast(g * b.data, a.shape) if _needs(a) else None
        gb = unbroadcast(g * a.data, b.shape) if _needs(b) else None
        return ga, gb

    return Tensor._make(a.data * b.data, (a, b), backward, "mul")


def div(a: Any, b: Any) -> Tensor:
    a, b = _pair(a, b)
    _check_broadcast(a, b, "div")
    out = a.data / b.data

    def backward(g: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        ga = unbroadcast(g / b.data, a.shape) if _needs(a) else None
        gb = unbroadcast(-g * out / b.data, b.shape) if _needs(b) else None
        return ga, gb

    return Tensor._make(out, (a, b), backward, "div")


def neg(a: Any) -> Tensor:
    a = as_tensor(a)
    return Tensor._make(-a.data, (a,), lambda g: (-g,), "neg")


def pow(a: Any, b: Any) -> Tensor:
    """``a ** b``; backward ``b a^(b-1)`` and ``a^b log(a)``, each only if needed.

    As in PyTorch, the gradient for ``a`` is 0 where ``b == 0`` and the gradient for
    ``b`` is 0 where ``a == 0`` and ``b >= 0`` (instead of ``0 * inf``).
    """
    a, b = _pair(a, b)
    _check_broadcast(a, b, "pow")
    out = a.data**b.data

    def backward(g: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        ga = gb = None
        zero = np.zeros((), dtype=g.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            if _needs(a):
                da = np.where(b.data == 0, zero, b.data * a.data ** (b.data - 1))
                ga = unbroadcast(g * da, a.shape)
            if _needs(b):
                db = np.where((a.data == 0) & (b.data >= 0), zero, out * np.log(a.data))
                gb = unbroadcast(g * db, b.shape)
        return ga, gb

    return Tensor._make(out, (a, b), backward, "pow")


def matmul(a: Any, b: Any) -> Tensor:
    """``a @ b`` with NumPy's rules: 1-D operands are promoted, leading dims broadcast.

    Backward: ``dA = G @ B^T`` and ``dB = A^T @ G``, summed over broadcast batch dims.
    """
    a, b = _pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: operands must have at least one dimension; use mul for scalars")
    if a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
        raise ValueError(
            f"matmul: inner dimensions differ: a has shape {a.shape}, b has shape {b.shape} "
            f"({a.shape[-1]} != {b.shape[-2 if b.ndim > 1 else 0]})"
        )
    try:
        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(
            f"matmul: batch dimensions {a.shape[:-2]} and {b.shape[:-2]} of shapes {a.shape} "
            f"and {b.shape} do not broadcast"
        ) from None

    def backward(g: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        A = a.data[None, :] if a.ndim == 1 else a.data  # (..., n, k)
        B = b.data[:, None] if b.ndim == 1 else b.data  # (..., k, m)
        G = g.reshape(1, 1) if a.ndim == b.ndim == 1 else g  # a dot product gives a 0-d g
        if a.ndim == 1 and b.ndim > 1:
            G = np.expand_dims(G, -2)
        if b.ndim == 1 and a.ndim > 1:
            G = np.expand_dims(G, -1)  # (..., n, m)
        ga = gb = None
        if _needs(a):
            ga = _reshaped(unbroadcast(G @ np.swapaxes(B, -1, -2), A.shape), a.shape)
        if _needs(b):
            gb = _reshaped(unbroadcast(np.swapaxes(A, -1, -2) @ G, B.shape), b.shape)
        return ga, gb

    return Tensor._make(a.data @ b.data, (a, b), backward, "matmul")


def _reshaped(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``g`` itself when it already has ``shape`` (a leaf can then adopt it uncopied)."""
    return g if g.shape == shape else g.reshape(shape)


def maximum(a: Any, b: Any) -> Tensor:
    """Elementwise maximum; ties send half the gradient to each side (as PyTorch)."""
    a, b = _pair(a, b)
    _check_broadcast(a, b, "maximum")

    def backward(g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        one, half, zero = (np.array(v, dtype=g.dtype) for v in (1.0, 0.5, 0.0))
        share = np.where(a.data > b.data, one, np.where(a.data == b.data, half, zero))
        return unbroadcast(g * share, a.shape), unbroadcast(g * (one - share), b.shape)

    return Tensor._make(np.maximum(a.data, b.data), (a, b), backward, "maximum")


def where(condition: Any, a: Any, b: Any) -> Tensor:
    """``a`` where ``condition`` holds, else ``b``; the gradient follows the same choice."""
    cond = np.asarray(condition.data if isinstance(condition, Tensor) else condition, dtype=bool)
    a, b = _pair(a, b)
    try:
        np.broadcast_shapes(cond.shape, a.shape, b.shape)
    except ValueError:
        raise ValueError(
            f"where: condition {cond.shape}, a {a.shape} and b {b.shape} do not broadcast"
        ) from None

    def backward(g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        zero = np.zeros((), dtype=g.dtype)
        return (
            unbroadcast(np.where(cond, g, zero), a.shape),
            unbroadcast(np.where(cond, zero, g), b.shape),
        )

    return Tensor._make(np.where(cond, a.data, b.data), (a, b), backward, "where")


def astype(a: Tensor, dtype: Any) -> Tensor:
    dtype = np.dtype(dtype)
    source = a.dtype
    differentiable = dtype.kind == "f" and source.kind == "f"

    def backward(g: np.ndarray) -> tuple[np.ndarray | None]:
        return (g.astype(source) if differentiable else None,)

    out = Tensor._make(a.data.astype(dtype), (a,), backward, "astype")
    if not differentiable:
        out.requires_grad, out._parents, out._backward = False, (), None
    return out


# -- reductions -------------------------------------------------------------------------


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int | np.integer) else tuple(axis)
    for ax in axes:
        if not -ndim <= ax < builtins.max(ndim, 1):
            raise ValueError(f"axis {ax} is out of range for a tensor with {ndim} dimensions")
    return tuple(ax % builtins.max(ndim, 1) for ax in axes)


def _expand(g: np.ndarray, shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool):
    """Put back reduced axes so ``g`` broadcasts against the input."""
    if not keepdims:
        g = np.expand_dims(g, axes) if axes else g
    return np.broadcast_to(g, shape)


def sum(a: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    a = as_tensor(a)
    axes = _axes(axis, a.ndim)

    def backward(g: np.ndarray) -> tuple[np.ndarray]:
        return (_expand(g, a.shape, axes, keepdims),)

    return Tensor._make(np.sum(a.data, axis=axes, keepdims=keepdims), (a,), backward, "sum")


def mean(a: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    a = as_tensor(a)
    axes = _axes(axis, a.ndim)
    count = int(np.prod([a.shape[ax] for ax in axes])) if axes else 1

    def backward(g: np.ndarray) -> tuple[np.ndarray]:
        return (_expand(g / count, a.shape, axes, keepdims),)

    return Tensor._make(np.mean(a.data, axis=axes, keepdims=keepdims), (a,), backward, "mean")


def max(a: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Largest value over ``axis``; tied maxima share the gradient equally (as torch.amax)."""
    a = as_tensor(a)
    axes = _axes(axis, a.ndim)
    if a.size == 0:
        raise ValueError("max of an empty tensor is undefined")
    out = np.max(a.data, axis=axes, keepdims=True)

    def backward(g: np.ndarray) -> tuple[np.ndarray]:
        hit = a.data == out
        counts = hit.sum(axis=axes, keepdims=True).astype(g.dtype)
        return (_expand(g, a.shape, axes, keepdims) * hit / counts,)

    return Tensor._make(out if keepdims else np.squeeze(out, axes), (a,), backward, "max")


# -- elementwise functions --------------------------------------------------------------


def exp(a: Any) -> Tensor:
    a = as_tensor(a)
    out = np.exp(a.data)
    return Tensor._make(out, (a,), lambda g: (g * out,), "exp")


def log(a: Any) -> Tensor:
    a = as_tensor(a)
    return Tensor._make(np.log(a.data), (a,), lambda g: (g / a.data,), "log")


def sqrt(a: Any) -> Tensor:
    a = as_tensor(a)
    out = np.sqrt(a.data)
    return Tensor._make(out, (a,), lambda g: (g / (2 * out),), "sqrt")


def tanh(a: Any) -> Tensor:
    a = as_tensor(a)
    out = np.tanh(a.data)
    return Tensor._make(out, (a,), lambda g: (g * (1 - out * out),), "tanh")


def sigmoid(a: Any) -> Tensor:
    a = as_tensor(a)
    out = special.expit(a.data)
    return Tensor._make(out, (a,), lambda g: (g * out * (1 - out),), "sigmoid")


def relu(a: Any) -> Tensor:
    a = as_tensor(a)
    positive = a.data > 0
    out = np.where(positive, a.data, np.zeros((), dtype=a.dtype))
    return Tensor._make(out, (a,), lambda g: (g * positive,), "relu")


def logsigmoid(a: Any) -> Tensor:
    """``log(sigmoid(x)) = -softplus(-x)``, computed without overflow for large ``|x|``."""
    a = as_tensor(a)
    x = a.data
    out = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
    return Tensor._make(out, (a,), lambda g: (g * special.expit(-x),), "logsigmoid")


def _shifted(x: np.ndarray, axis: int) -> np.ndarray:
    """``x - max(x)`` along ``axis`` in a new floating array: exp of it cannot overflow."""
    dtype = np.result_type(x.dtype, np.float32)  # integers become float64, as NumPy's exp
    return np.subtract(x, np.max(x, axis=axis, keepdims=True), dtype=dtype)


def softmax(a: Any, axis: int = -1) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``axis``; backward ``y * (g - sum(g * y))``."""
    a = as_tensor(a)
    out = _shifted(a.data, axis)
    np.exp(out, out=out)
    out /= out.sum(axis=axis, keepdims=True)

    def backward(g: np.ndarray) -> tuple[np.ndarray]:
        gy = g * out
        gy -= out * gy.sum(axis=axis, keepdims=True)
        return (gy,)

    return Tensor._make(out, (a,), backward, "softmax")


def log_softmax(a: Any, axis: int = -1) -> Tensor:
    """``x - logsumexp(x)`` along ``axis``; backward ``g - softmax(x) * sum(g)``."""
    a = as_tensor(a)
    out = _shifted(a.data, axis)
    out -= np.log(np.exp(out).sum(axis=axis, keepdims=True))

    def backward(g: np.ndarray) -> tuple[np.ndarray]:
        grad = np.exp(out)
        grad *= -g.sum(axis=axis, keepdims=True)
        grad += g
        return (grad,)

    return Tensor._make(out, (a,), backward, "log_softmax")
