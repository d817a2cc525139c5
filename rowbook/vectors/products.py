"""The d x d cross-product ``A^T B`` of two tall tables (n rows, n much larger than d).

Aligning two tables (:mod:`rowbook.vectors.compare`) and the principal axes of a large one
(:class:`rowbook.viz.PCA`) both need it. :func:`cross_product` is a parallel numba kernel,
held to :func:`cross_product_reference` (one BLAS call) by the tests.

Why not BLAS's ``A.T @ B``: for this shape OpenBLAS splits the long axis among its threads
and synchronises them for every panel; on this shared 2-core machine under load that measured
2 to 17 s for 1,000,000 x 100 tables (0.5 s with one thread). The kernel's chunks of rows
never wait for each other: 0.6 to 1.3 s under the same load.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["cross_product", "cross_product_reference"]

_CHUNK = 4096  # rows summed in the table's dtype before the float64 total


def cross_product_reference(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``A^T B`` (da, db) in float64: the sum over rows of ``a_r^T b_r``.

    >>> cross_product_reference(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]))
    array([[3., 4.],
           [6., 8.]])
    """
    return A.T.astype(np.float64) @ B.astype(np.float64)


# Each chunk of rows sums its rank-1 updates in the table's dtype (SIMD along the row); the
# chunks are added in float64.
@numba.njit(parallel=True, cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _cross_product_kernel(A, B, chunk):  # pragma: no cover - compiled
    n, da = A.shape
    db = B.shape[1]
    chunks = (n + chunk - 1) // chunk
    partial = np.zeros((chunks, da, db))
    for c in numba.prange(chunks):
        local = np.zeros((da, db), dtype=A.dtype)
        for r in range(c * chunk, min(n, (c + 1) * chunk)):
            for i in range(da):
                a = A[r, i]
                for j in range(db):
                    local[i, j] += a * B[r, j]
        partial[c] = local
    return partial.sum(axis=0)


def cross_product(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """:func:`cross_product_reference` by a parallel numba kernel: ``A`` (n, da), ``B`` (n, db)
    of one float dtype, C-contiguous (else the reference); (da, db) float64.

    >>> A = np.arange(6.0).reshape(3, 2)
    >>> cross_product(A, A)
    array([[20., 26.],
           [26., 35.]])
    """
    if (
        A.dtype != B.dtype
        or A.dtype.kind != "f"
        or not (A.flags.c_contiguous and B.flags.c_contiguous)
    ):
        return cross_product_reference(A, B)
    return _cross_product_kernel(A, B, _CHUNK)
