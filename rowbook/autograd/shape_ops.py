"""Differentiable shape operations: reshape, transpose, concatenate, stack, indexing.

None of them computes anything: each moves values around, and its backward moves the
gradient back (a reshape undone, a transpose inverted, a slice scattered into zeros,
repeated positions added up). Re-exported by :mod:`rowbook.autograd.ops`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rowbook.autograd.tensor import Tensor, as_tensor
from rowbook.checks import InputIndexError, InputTypeError

__all__ = ["concatenate", "gather", "getitem", "reshape", "stack", "transpose"]


# -- shape ------------------------------------------------------------------------------


def reshape(a: Any, shape: Sequence[int]) -> Tensor:
    a = as_tensor(a)
    try:
        out = a.data.reshape(shape)
    except ValueError:
        raise ValueError(
            f"cannot reshape a tensor of shape {a.shape} into {tuple(shape)}"
        ) from None
    return Tensor._make(out, (a,), lambda g: (g.reshape(a.shape),), "reshape")


def transpose(a: Any, axes: Sequence[int] | None = None) -> Tensor:
    a = as_tensor(a)
    out = np.transpose(a.data, axes)
    inverse = None if axes is None else np.argsort([ax % max(a.ndim, 1) for ax in axes])
    return Tensor._make(out, (a,), lambda g: (np.transpose(g, inverse),), "transpose")


def concatenate(tensors: Sequence[Any], axis: int = 0) -> Tensor:
    ts = [as_tensor(t) for t in tensors]
    if not ts:
        raise ValueError("concatenate needs at least one tensor")
    try:
        out = np.concatenate([t.data for t in ts], axis=axis)
    except ValueError as err:
        shapes = [t.shape for t in ts]
        raise ValueError(f"concatenate along axis {axis}: incompatible shapes {shapes}") from err
    bounds = np.cumsum([t.shape[axis] for t in ts])[:-1]

    def backward(g: np.ndarray) -> list[np.ndarray]:
        return np.split(g, bounds, axis=axis)

    return Tensor._make(out, tuple(ts), backward, "concatenate")


def stack(tensors: Sequence[Any], axis: int = 0) -> Tensor:
    ts = [as_tensor(t) for t in tensors]
    if not ts:
        raise ValueError("stack needs at least one tensor")
    if len({t.shape for t in ts}) != 1:
        raise ValueError(f"stack needs tensors of one shape, got {[t.shape for t in ts]}")
    out = np.stack([t.data for t in ts], axis=axis)

    def backward(g: np.ndarray) -> list[np.ndarray]:
        return list(np.moveaxis(g, axis, 0))  # views, no copies

    return Tensor._make(out, tuple(ts), backward, "stack")


def getitem(a: Any, index: Any) -> Tensor:
    """``a[index]`` for basic slicing and NumPy integer-array indexing.

    Backward scatters the gradient into zeros of ``a``'s shape; with integer arrays
    it uses ``np.add.at`` so repeated positions add up.
    """
    a = as_tensor(a)
    if isinstance(index, Tensor):
        index = index.data
    if isinstance(index, tuple):
        index = tuple(i.data if isinstance(i, Tensor) else i for i in index)
    try:
        out = a.data[index]
    except IndexError as err:
        raise InputIndexError(
            f"index {index!r} is invalid for a tensor of shape {a.shape}: {err}"
        ) from None
    advanced = _is_advanced(index)

    def backward(g: np.ndarray) -> tuple[np.ndarray]:
        grad = np.zeros(a.shape, dtype=g.dtype)
        if advanced:
            np.add.at(grad, index, g)
        else:
            grad[index] = g
        return (grad,)

    out = out if isinstance(out, np.ndarray) else np.asarray(out)
    return Tensor._make(out, (a,), backward, "getitem")


def _is_advanced(index: Any) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, list | np.ndarray) for p in parts)


def gather(a: Any, ids: Any) -> Tensor:
    """Rows ``a[ids]`` for integer ``ids`` of any shape: ``(V, *rest)`` -> ``(*ids.shape, *rest)``.

    The plain row lookup (``one_hot(ids) @ a``) with a scatter-add backward into a dense
    gradient; :func:`rowbook.nn.functional.embedding` is the full-featured version.
    """
    from rowbook.autograd.sparse import gather_rows, scatter_add_rows

    a = as_tensor(a)
    ids = np.asarray(ids.data if isinstance(ids, Tensor) else ids)
    if ids.dtype.kind not in "iu":
        raise InputTypeError(f"gather: ids must be integers, got dtype {ids.dtype}")
    flat = ids.reshape(-1)  # range checked in its own dtype: a uint64 2**64-1 must not wrap to -1
    if flat.size and (flat.min() < 0 or flat.max() >= a.shape[0]):
        bad = flat[(flat < 0) | (flat >= a.shape[0])][0]
        raise InputIndexError(
            f"gather: id {bad} is out of range for {a.shape[0]} rows (valid: 0..{a.shape[0] - 1})"
        )
    flat = flat.astype(np.int64, copy=False)
    out = gather_rows(a.data, flat).reshape(*ids.shape, *a.shape[1:])

    def backward(g: np.ndarray) -> tuple[np.ndarray]:
        rows = g.reshape(flat.size, *a.shape[1:])
        return (scatter_add_rows(flat, rows, a.shape[0]).to_dense(),)

    return Tensor._make(out, (a,), backward, "gather")
