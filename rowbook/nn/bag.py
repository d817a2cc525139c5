"""Bags of ids: the sum, mean or max of their rows, without materialising the rows.

A bag ``b`` is the run of positions ``bounds[b] <= k < bounds[b + 1]`` of a flat id array.
For ``sum`` and ``mean`` the whole layer is one (sparse) matrix product

    out = M @ E,    M[b, v] = sum of c_k over the positions k of bag b with ids[k] == v

where ``c_k`` is 1 (sum), the per-sample weight (weighted sum) or ``1 / size_b`` (mean; the
size counts non-padding ids only). Its gradient is ``dE = M.T @ G``: a scatter-add of
``c_k * G[bag(k)]`` into row ``ids[k]``, so duplicate ids sum. ``max`` keeps, per bag and
column, the first maximal entry (strict ``>``, as PyTorch) and sends the gradient to that row.
Positions holding ``padding_idx`` belong to no bag's reduction and get no gradient.

The kernels add rows in position order, as PyTorch's CPU kernels do; :func:`bag_matrix_reference`
and :func:`embedding_bag_reference` are the plain formulation the tests hold them to.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from rowbook.autograd.sparse import RowSparse, scatter_add_rows
from rowbook.nn.lookup import as_ids

__all__ = [
    "bag_bounds",
    "bag_matrix_reference",
    "bag_max",
    "bag_max_backward",
    "bag_of_positions",
    "bag_scatter_add",
    "bag_sum",
    "embedding_bag_reference",
]


def bag_bounds(
    ids: np.ndarray, offsets: Any, include_last_offset: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Flat ids ``(n,)`` and bag bounds ``(B + 1,)`` from 2-D ids or 1-D ids with offsets.

    ``(B, N)`` ids are B bags of N ids. 1-D ids need ``offsets``, the start of each bag
    (with ``include_last_offset``, one more entry: the end of the last bag, CSR style; ids
    after it belong to no bag and are ignored).

    Examples
    --------
    >>> bag_bounds(np.array([4, 1, 2, 7, 3]), [0, 2, 2], False)[1]
    array([0, 2, 2, 5])
    >>> bag_bounds(np.array([[4, 1], [2, 7]]), None, False)[1]
    array([0, 2, 4])
    """
    if ids.ndim == 2:
        if offsets is not None:
            raise ValueError(
                f"offsets must be None when ids is 2-D {ids.shape}: each row is one bag of "
                f"{ids.shape[1]} ids; pass 1-D ids to use offsets"
            )
        return ids.reshape(-1), np.arange(ids.shape[0] + 1, dtype=np.int64) * ids.shape[1]
    if ids.ndim != 1:
        raise ValueError(
            f"ids must be 1-D (with offsets) or 2-D (B, N) fixed-size bags, got shape "
            f"{ids.shape} ({ids.ndim}-D)"
        )
    if offsets is None:
        raise ValueError(
            "1-D ids need offsets, the position where each bag starts (offsets=[0] for a "
            "single bag), or pass 2-D ids (B, N) of fixed-size bags"
        )
    offsets = as_ids(offsets, "offsets", what="positions in ids")
    if offsets.ndim != 1:
        raise ValueError(f"offsets must be 1-D, got shape {offsets.shape}")
    _check_offsets(offsets, len(ids), include_last_offset)
    bounds = offsets if include_last_offset else np.append(offsets, len(ids))
    return ids, bounds


def _check_offsets(offsets: np.ndarray, n: int, include_last_offset: bool) -> None:
    if include_last_offset and offsets.size == 0:
        raise ValueError(
            "include_last_offset=True needs at least one offset (the end of the last bag), "
            "got empty offsets"
        )
    if offsets.size == 0:
        if n:
            raise ValueError(
                f"offsets is empty, so there are no bags, but ids has {n} entries; "
                "pass offsets=[0] for a single bag"
            )
        return
    if offsets[0] != 0:
        raise ValueError(
            f"offsets[0] must be 0 (the first bag starts at position 0), got {offsets[0]}"
        )
    drops = np.flatnonzero(np.diff(offsets) < 0)
    if drops.size:
        k = int(drops[0]) + 1
        raise ValueError(
            f"offsets must be non-decreasing, but offsets[{k}]={offsets[k]} < "
            f"offsets[{k - 1}]={offsets[k - 1]}"
        )
    if offsets[-1] > n:
        raise ValueError(f"offsets[-1]={offsets[-1]} is greater than the number of ids, {n}")


def bag_of_positions(bounds: np.ndarray, n: int) -> np.ndarray:
    """The bag of each of ``n`` positions, ``-1`` for positions after the last bag.

    Examples
    --------
    >>> bag_of_positions(np.array([0, 2, 2, 3]), 4)
    array([ 0,  0,  2, -1])
    """
    bags = np.full(n, -1, dtype=np.int64)
    bags[: bounds[-1]] = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
    return bags


# -- the walk of every mode ----------------------------------------------------------


# Serial: on two shared cores a prange split over bags measured 4x slower than one pass
# (thread wake-ups dominate, worse still next to torch's own OpenMP pool). One walk for every
# mode: the mode is tested once an id, never once a value.
@numba.njit(cache=True, nogil=True)
def _bag_kernel(
    weight, ids, bounds, padding_idx, psw, use_psw, fused, use_max, out, argmax, sizes
):  # pragma: no cover
    for b in range(bounds.shape[0] - 1):
        size = 0
        for k in range(bounds[b], bounds[b + 1]):
            i = ids[k]
            if i == padding_idx:
                continue
            if use_max:
                for j in range(weight.shape[1]):
                    if size == 0 or weight[i, j] > out[b, j]:
                        out[b, j] = weight[i, j]
                        argmax[b, j] = i
            elif use_psw and fused:  # float32 product exact in float64: one rounding, as an FMA
                c = np.float64(psw[k])
                for j in range(weight.shape[1]):
                    out[b, j] += np.float64(weight[i, j]) * c
            elif use_psw:
                c = psw[k]
                for j in range(weight.shape[1]):
                    out[b, j] += weight[i, j] * c
            else:
                for j in range(weight.shape[1]):
                    out[b, j] += weight[i, j]
            size += 1
        sizes[b] = size


# -- sum / mean -----------------------------------------------------------------------


def bag_sum(
    weight: np.ndarray,
    ids: np.ndarray,
    bounds: np.ndarray,
    padding_idx: int | None = None,
    per_sample_weights: np.ndarray | None = None,
    mean: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """``(out, sizes)``: per-bag (weighted) sums, or means, and each bag's non-padding size.

    Examples
    --------
    >>> E = np.arange(8.0).reshape(4, 2)
    >>> out, sizes = bag_sum(E, np.array([1, 3, 0, 2]), np.array([0, 2, 2, 4]), padding_idx=0)
    >>> out, sizes
    (array([[ 8., 10.],
           [ 0.,  0.],
           [ 4.,  5.]]), array([2, 0, 1]))
    """
    num_bags = len(bounds) - 1
    out = np.zeros((num_bags, weight.shape[1]), dtype=weight.dtype)  # (B, d)
    sizes = np.zeros(num_bags, dtype=np.int64)  # (B,)
    use_psw = per_sample_weights is not None
    psw = per_sample_weights if use_psw else np.zeros(0, dtype=weight.dtype)
    # PyTorch's float32 kernel without padding (FBGEMM) fuses ``out += w * E[i]``; its
    # other kernels round the product first. Doing the same keeps the outputs bit-equal.
    fused = weight.dtype == np.float32 and padding_idx is None
    if num_bags:
        _bag_kernel(
            np.ascontiguousarray(weight),
            ids,
            bounds,
            -1 if padding_idx is None else padding_idx,
            psw.astype(weight.dtype, copy=False),
            use_psw,
            fused,
            False,
            out,
            np.zeros((0, 0), dtype=np.int64),
            sizes,
        )
    if mean:
        out /= np.maximum(sizes, 1).astype(weight.dtype)[:, None]  # empty bags stay zero
    return out, sizes


# -- max ------------------------------------------------------------------------------


def bag_max(
    weight: np.ndarray, ids: np.ndarray, bounds: np.ndarray, padding_idx: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(out, argmax)``: per bag and column the max entry and the row id it came from.

    Ties go to the first position holding the maximum; empty bags give zeros and ``-1``.

    Examples
    --------
    >>> E = np.array([[0.0, 5.0], [3.0, 1.0], [3.0, 2.0]])
    >>> bag_max(E, np.array([1, 2, 0]), np.array([0, 2, 2, 3]))
    (array([[3., 2.],
           [0., 0.],
           [0., 5.]]), array([[ 1,  2],
           [-1, -1],
           [ 0,  0]]))
    """
    num_bags = len(bounds) - 1
    out = np.zeros((num_bags, weight.shape[1]), dtype=weight.dtype)  # (B, d)
    argmax = np.full(out.shape, -1, dtype=np.int64)  # (B, d)
    sizes = np.zeros(num_bags, dtype=np.int64)
    if num_bags:
        pad = -1 if padding_idx is None else padding_idx
        no_psw = np.zeros(0, dtype=weight.dtype)
        _bag_kernel(
            np.ascontiguousarray(weight),
            ids,
            bounds,
            pad,
            no_psw,
            False,
            False,
            True,
            out,
            argmax,
            sizes,
        )
    return out, argmax


@numba.njit(cache=True, nogil=True)
def _bag_max_backward_kernel(argmax, grad, out):  # pragma: no cover - compiled
    for b in range(argmax.shape[0]):  # bag by bag: each cell adds its bags in order
        for j in range(argmax.shape[1]):
            if argmax[b, j] >= 0:
                out[argmax[b, j], j] += grad[b, j]


def bag_max_backward(argmax: np.ndarray, grad: np.ndarray, num_rows: int) -> np.ndarray:
    """Dense ``(num_rows, d)`` gradient: ``grad[b, j]`` goes to row ``argmax[b, j]``, column j.

    Equal to ``np.add.at(out, (argmax[b, j], j), grad[b, j])`` over the non-empty cells.
    """
    out = np.zeros((num_rows, grad.shape[1]), dtype=grad.dtype)  # (V, d)
    _bag_max_backward_kernel(argmax, np.ascontiguousarray(grad), out)
    return out


# -- backward of sum / mean -----------------------------------------------------------


def bag_scatter_add(
    ids: np.ndarray,
    bags: np.ndarray,
    grad: np.ndarray,
    num_rows: int,
    scale: np.ndarray | None = None,
) -> RowSparse:
    """``M.T @ grad`` as a row-sparse gradient: ``grad[bags[k]] * scale[k]`` summed into ``ids[k]``.

    The same sums, in the same order, as ``scatter_add_rows(ids, grad[bags], num_rows,
    scale=scale)``, without materialising the ``(K, d)`` rows ``grad[bags]``.

    Examples
    --------
    >>> g = bag_scatter_add(np.array([4, 1, 4]), np.array([0, 0, 1]), np.eye(2), 6)
    >>> g.indices, g.values
    (array([1, 4]), array([[1., 0.],
           [1., 1.]]))
    """
    return scatter_add_rows(ids, grad, num_rows, scale=scale, take=bags)


# -- the plain formulation ------------------------------------------------------------


def bag_matrix_reference(
    ids: np.ndarray,
    bounds: np.ndarray,
    num_rows: int,
    padding_idx: int | None = None,
    per_sample_weights: np.ndarray | None = None,
    mean: bool = False,
) -> np.ndarray:
    """The dense ``(B, V)`` matrix ``M`` with ``sum/mean bags == M @ E`` and ``dE == M.T @ G``.

    Examples
    --------
    >>> bag_matrix_reference(np.array([1, 1, 2]), np.array([0, 3]), 4, mean=True)
    array([[0.        , 0.66666667, 0.33333333, 0.        ]])
    """
    M = np.zeros((len(bounds) - 1, num_rows))  # (B, V)
    for b in range(len(bounds) - 1):
        positions = [k for k in range(bounds[b], bounds[b + 1]) if ids[k] != padding_idx]
        for k in positions:
            M[b, ids[k]] += 1.0 if per_sample_weights is None else per_sample_weights[k]
        if mean and positions:
            M[b] /= len(positions)
    return M


def embedding_bag_reference(
    weight: np.ndarray,
    ids: np.ndarray,
    bounds: np.ndarray,
    mode: str,
    padding_idx: int | None = None,
    per_sample_weights: np.ndarray | None = None,
) -> np.ndarray:
    """Bag outputs from the plain formulation: ``M @ E`` for sum/mean, a loop for max."""
    if mode != "max":
        M = bag_matrix_reference(
            ids, bounds, len(weight), padding_idx, per_sample_weights, mean=mode == "mean"
        )
        return (M @ weight.astype(np.float64)).astype(weight.dtype)
    out = np.zeros((len(bounds) - 1, weight.shape[1]), dtype=weight.dtype)
    for b in range(len(bounds) - 1):
        rows = [weight[i] for i in ids[bounds[b] : bounds[b + 1]] if i != padding_idx]
        if rows:
            out[b] = np.max(rows, axis=0)
    return out
