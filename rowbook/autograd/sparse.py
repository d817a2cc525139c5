"""Row-sparse gradients and the two kernels of an embedding: gather and scatter-add.

Looking up ids in a table ``E`` (V, d) is ``one_hot(ids) @ E``; its gradient is
``one_hot(ids).T @ G``, which is zero except on the rows that were looked up. Those
rows are what :class:`RowSparse` stores: sorted unique row ids and, for each, the
*sum* of the upstream gradient rows of every position that looked it up.

Each fast kernel here has a plain NumPy reference beside it (``*_reference``) that the
tests hold it to:

* :func:`gather_rows` vs ``weight[ids]``;
* :func:`scatter_add_rows` vs ``np.add.at`` into a dense gradient (``grad[ids] += g``
  would silently drop duplicate ids: the bug the reference exists to rule out).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

__all__ = [
    "RowSparse",
    "gather_rows",
    "gather_rows_reference",
    "scatter_add_rows",
    "scatter_add_rows_reference",
    "unique_rows",
]


@dataclass(frozen=True, eq=False)
class RowSparse:
    """A gradient that is zero outside a few rows of a ``shape[0] x ...`` table.

    Attributes
    ----------
    indices : np.ndarray
        ``(nnz,)`` int64, sorted and unique row ids.
    values : np.ndarray
        ``(nnz, *shape[1:])``, the gradient rows for those ids.
    shape : tuple[int, ...]
        Shape of the dense table the gradient belongs to.

    Examples
    --------
    >>> g = RowSparse(np.array([1, 3]), np.array([[1.0, 1.0], [2.0, 2.0]]), (4, 2))
    >>> g.to_dense()
    array([[0., 0.],
           [1., 1.],
           [0., 0.],
           [2., 2.]])
    """

    indices: np.ndarray
    values: np.ndarray
    shape: tuple[int, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "indices", np.asarray(self.indices, dtype=np.int64))
        object.__setattr__(self, "shape", tuple(int(s) for s in self.shape))
        if self.values.shape != (len(self.indices), *self.shape[1:]):
            raise ValueError(
                f"values has shape {self.values.shape}, expected "
                f"{(len(self.indices), *self.shape[1:])} for {len(self.indices)} rows of {self.shape}"
            )

    @property
    def nnz(self) -> int:
        """Number of stored rows."""
        return len(self.indices)

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    def to_dense(self) -> np.ndarray:
        """The full ``shape`` array, zeros outside :attr:`indices`."""
        out = np.zeros(self.shape, dtype=self.values.dtype)
        out[self.indices] = self.values  # indices are unique, so assignment is exact
        return out

    def add_to(self, dense: np.ndarray) -> None:
        """``dense[indices] += values`` in place (safe: indices are unique)."""
        dense[self.indices] += self.values

    def copy(self) -> RowSparse:
        return RowSparse(self.indices.copy(), self.values.copy(), self.shape)

    def __add__(self, other: RowSparse) -> RowSparse:
        """Sum of two row-sparse gradients of the same table (rows present in both add)."""
        if not isinstance(other, RowSparse):
            return NotImplemented
        if other.shape != self.shape:
            raise ValueError(f"cannot add RowSparse of shape {self.shape} and {other.shape}")
        ids = np.concatenate([self.indices, other.indices])
        rows = np.concatenate([self.values, other.values])
        return scatter_add_rows(ids, rows, self.shape[0])

    def __mul__(self, scale: float) -> RowSparse:
        return RowSparse(self.indices, self.values * scale, self.shape)

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return f"RowSparse(shape={self.shape}, nnz={self.nnz}, dtype={self.dtype})"


# -- gather ---------------------------------------------------------------------------


def gather_rows_reference(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Plain NumPy lookup: ``weight[ids]``."""
    return weight[ids]


def gather_rows(weight: np.ndarray, ids: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Rows ``weight[ids]`` for 1-D int64 ``ids`` already checked to lie in range.

    ``np.take`` with ``mode="clip"`` skips NumPy's bounds check (the caller has checked)
    and writes straight into ``out``, which may be a reused ``(len(ids), d)`` buffer: that
    skips the page faults a fresh allocation costs, the larger part of a big lookup. (A
    numba ``prange`` copy was measured too: faster on an idle machine, up to 2x slower
    when another process holds a core, so the plain copy stays.)

    Examples
    --------
    >>> gather_rows(np.arange(6.0).reshape(3, 2), np.array([2, 0, 2]))
    array([[4., 5.],
           [0., 1.],
           [4., 5.]])
    """
    if out is None:
        out = np.empty((ids.shape[0], *weight.shape[1:]), dtype=weight.dtype)  # (N, d)
    np.take(weight, ids, axis=0, out=out, mode="clip")
    return out


# -- scatter-add ----------------------------------------------------------------------


def unique_rows(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted unique ids, the stable order that groups equal ids, and segment starts.

    Examples
    --------
    >>> uniq, order, starts = unique_rows(np.array([5, 2, 5, 7]))
    >>> uniq, order, starts
    (array([2, 5, 7]), array([1, 0, 2, 3]), array([0, 1, 3, 4]))
    """
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    is_start = np.empty(len(ids), dtype=bool)
    if len(ids):
        is_start[0] = True
        np.not_equal(sorted_ids[1:], sorted_ids[:-1], out=is_start[1:])
    starts = np.flatnonzero(is_start)
    return sorted_ids[starts], order, np.append(starts, len(ids))


@numba.njit(cache=True, nogil=True)
def _segment_sum_kernel(rows, take, order, starts, scale, out):  # pragma: no cover - compiled
    # One pass over the gradient, bandwidth bound: on two cores a parallel split
    # (by columns or by segments) measured slower than this serial loop.
    direct = take.shape[0] == 0  # position i adds rows[i], else rows[take[i]]
    for s in range(starts.shape[0] - 1):
        for k in range(starts[s], starts[s + 1]):
            i = order[k]
            r = i if direct else take[i]
            c = scale[i]
            for j in range(rows.shape[1]):
                out[s, j] += rows[r, j] * c


def scatter_add_rows(
    ids: np.ndarray,
    rows: np.ndarray,
    num_rows: int,
    *,
    scale: np.ndarray | None = None,
    take: np.ndarray | None = None,
) -> RowSparse:
    """Sum ``rows[k] * scale[k]`` into row ``ids[k]``; duplicate ids add up.

    This is the backward of a lookup, ``one_hot(ids).T @ rows``, computed only on the
    unique ids. Rows are added in their original order, as ``np.add.at`` adds them.
    With ``take``, position ``k`` adds ``rows[take[k]]`` instead: the same sums as
    ``scatter_add_rows(ids, rows[take], ...)`` without making the ``(N, d)`` rows
    ``rows[take]`` (the backward of a bag, :func:`rowbook.nn.bag.bag_scatter_add`).

    Parameters
    ----------
    ids
        (N,) int64 row ids in ``[0, num_rows)``.
    rows
        (N, d) gradient rows.
    num_rows
        number of rows of the table (V).
    scale
        optional (N,) per-row multipliers (e.g. ``1 / count`` for scale_grad_by_freq).
    take
        optional (N,) int64 row of ``rows`` each position adds; ``rows`` is then (B, d).

    Examples
    --------
    >>> g = scatter_add_rows(np.array([2, 0, 2]), np.ones((3, 2)), 4)
    >>> g.indices, g.values
    (array([0, 2]), array([[1., 1.],
           [2., 2.]]))
    """
    uniq, order, starts = unique_rows(ids)
    rows2 = rows.reshape(len(rows), int(np.prod(rows.shape[1:])))  # -1 is ambiguous for 0 rows
    out = np.zeros((len(uniq), rows2.shape[1]), dtype=rows.dtype)  # (U, d)
    if scale is None:
        scale = np.ones(len(ids), dtype=rows.dtype)
    if take is None:
        take = np.zeros(0, dtype=np.int64)
    if len(ids):
        _segment_sum_kernel(
            np.ascontiguousarray(rows2),
            take,
            order,
            starts,
            scale.astype(rows.dtype, copy=False),
            out,
        )
    return RowSparse(uniq, out.reshape(len(uniq), *rows.shape[1:]), (num_rows, *rows.shape[1:]))


def scatter_add_rows_reference(
    ids: np.ndarray, rows: np.ndarray, num_rows: int, *, scale: np.ndarray | None = None
) -> np.ndarray:
    """Dense reference: ``np.add.at(grad, ids, rows * scale)`` into zeros of (V, d)."""
    grad = np.zeros((num_rows, *rows.shape[1:]), dtype=rows.dtype)
    if scale is not None:
        rows = rows * scale.astype(rows.dtype).reshape(-1, *([1] * (rows.ndim - 1)))
    np.add.at(grad, ids, rows)
    return grad
