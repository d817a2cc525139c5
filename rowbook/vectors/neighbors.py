"""The arithmetic of neighbour queries, on plain arrays.

:class:`~rowbook.vectors.Vectors` holds the table; these stateless functions do the
math, on unit rows ``U`` (V, d) of the table:

* one norm, :func:`row_norms` (float64 accumulation), behind every unit row and cosine;
* cosine similarity of every row with a query ``q``: ``U @ q / |q|``;
* **3CosAdd** (Mikolov et al. 2013): the answer to "a is to b as c is to ?" is the row
  nearest to ``b - a + c`` (unit vectors), i.e. ``argmax_x cos(x, b) - cos(x, a) + cos(x, c)``;
* **3CosMul** (Levy & Goldberg 2014, eq. 4): ``argmax_x cos'(x, b) cos'(x, c) / (cos'(x, a) + eps)``
  with cosines shifted to ``cos' = (1 + cos) / 2`` in [0, 1] and ``eps = 1e-6``;
* the top k of a score vector by ``np.argpartition`` (linear time), then a sort of those k;
  for many rows at once, :func:`top_k_rows` keeps the k best in one numba pass per row,
  held equal to :func:`top_k` by the tests.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numba
import numpy as np

from rowbook.checks import check_int

__all__ = [
    "EPSILON",
    "cos_add_direction",
    "cos_mul_combine",
    "cos_mul_scores",
    "pair_cosines",
    "restrict_stop",
    "row_norms",
    "top_k",
    "top_k_rows",
    "unit_rows",
]

EPSILON = 1e-6  # 3CosMul's guard against division by zero, as in gensim
_ROWS_PER_BLOCK = 1 << 15  # rows converted to float64 at a time (a bounded scratch array)


def restrict_stop(restrict_vocab: int | None, n_keys: int) -> int:
    """Number of leading rows a ``restrict_vocab`` argument lets a query search.

    Examples
    --------
    >>> restrict_stop(None, 50), restrict_stop(10, 50), restrict_stop(300_000, 50)
    (50, 10, 50)
    """
    if restrict_vocab is None:
        return n_keys
    return min(check_int("restrict_vocab", restrict_vocab, 1), n_keys)


def row_norms(vectors: np.ndarray) -> np.ndarray:
    """Euclidean norm of each row, accumulated in float64: the one norm of ``rowbook.vectors``.

    Every norm, unit row and cosine in the package goes through this routine, so a key's
    similarity with itself is exactly 1.0. It equals BLAS ``dnrm2`` on the float64 row,
    gensim's ``matutils.unitvec`` norm, to the last float32 digit.

    Examples
    --------
    >>> row_norms(np.array([[3.0, 4.0], [0.0, 0.0]], dtype=np.float32))
    array([5., 0.])
    """
    vectors = np.asarray(vectors)
    if vectors.ndim == 2 and vectors.dtype == np.float32 and vectors.flags.c_contiguous:
        norms = np.empty(len(vectors), dtype=np.float64)  # one pass, no float64 copy
        _squared_norms_kernel(vectors, norms)
        return np.sqrt(norms)
    if vectors.ndim == 2 and len(vectors) > _ROWS_PER_BLOCK:  # a bounded float64 scratch
        blocks = range(0, len(vectors), _ROWS_PER_BLOCK)
        return np.concatenate([row_norms(vectors[i : i + _ROWS_PER_BLOCK]) for i in blocks])
    rows = vectors.astype(np.float64, copy=False)
    return np.sqrt(np.einsum("...d,...d->...", rows, rows))


@numba.njit(cache=True, nogil=True)
def _squared_norms_kernel(vectors, out):  # pragma: no cover - compiled
    """``out[i] = sum_j float64(vectors[i, j]) ** 2``: the float64 sums of :func:`row_norms`
    without a float64 copy of the rows (a mapped table is read once, in place)."""
    for i in range(vectors.shape[0]):
        total = 0.0
        for j in range(vectors.shape[1]):
            v = np.float64(vectors[i, j])
            total += v * v
        out[i] = total


def unit_rows(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Euclidean norm of each row and the rows scaled to unit length.

    Each row is scaled in float64 by the reciprocal of its :func:`row_norms` norm and
    rounded once to float32 (float64 input stays float64), which is what gensim's
    ``matutils.unitvec`` (BLAS ``nrm2`` then ``scal``) computes, bit for bit. A zero row
    keeps norm 0 and stays zero, so its cosine with anything is 0 (gensim divides by the
    zero norm and gets NaN). Large tables are scaled in blocks of rows. The norms are
    float64. A row holding ``inf`` or ``nan`` (read with ``allow_nonfinite=True``) becomes a
    zero unit row too, so no score is ``nan``.

    Examples
    --------
    >>> norms, unit = unit_rows(np.array([[3.0, 4.0], [0.0, 0.0]], dtype=np.float32))
    >>> norms
    array([5., 0.])
    >>> unit
    array([[0.6, 0.8],
           [0. , 0. ]], dtype=float32)
    """
    vectors = np.asarray(vectors)
    dtype = np.result_type(vectors.dtype, np.float32)  # float16 tables get float32 unit rows
    if vectors.ndim == 1:  # one query: the same arithmetic, without the blocks' machinery
        row = vectors.astype(np.float64)  # (d,)
        norm = math.sqrt(np.einsum("...d,...d->...", row, row))
        if not (norm > 0 and math.isfinite(norm)):
            return np.float64(norm), np.zeros(vectors.shape, dtype)
        return np.float64(norm), (row * (1.0 / norm)).astype(dtype)
    flat = vectors.reshape(-1, vectors.shape[-1])  # (V, d)
    norms = np.empty(len(flat), dtype=np.float64)  # (V,)
    unit = np.empty(flat.shape, dtype=dtype)  # (V, d)
    for start in range(0, len(flat), _ROWS_PER_BLOCK):
        block = flat[start : start + _ROWS_PER_BLOCK].astype(np.float64)  # (b, d)
        norm = norms[start : start + len(block)] = row_norms(block)
        usable = (norm > 0) & np.isfinite(norm)  # (b,) zero and non-finite rows stay zero
        scale = np.divide(1.0, norm, out=np.zeros_like(norm), where=usable)  # (b,)
        with np.errstate(invalid="ignore"):  # inf * 0 in rows that are zeroed anyway
            unit[start : start + len(block)] = np.where(
                usable[:, None], block * scale[:, None], 0.0
            )
    return norms.reshape(vectors.shape[:-1]), unit.reshape(vectors.shape)


def pair_cosines(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Cosine of each row of ``first`` with the same row of ``second`` (n, d): (n,) float32.

    Computed in float64 from the raw rows with :func:`row_norms`, then rounded once, so a
    row with itself gives exactly 1.0 (and a distance of exactly 0.0); a zero row gives 0.

    Examples
    --------
    >>> a = np.array([[0.1, 0.7, -0.3], [1.0, 0.0, 0.0]], dtype=np.float32)
    >>> pair_cosines(a, a)
    array([1., 1.], dtype=float32)
    >>> pair_cosines(np.array([[3.0, 4.0]]), np.array([[4.0, 3.0]]))  # 24 / 25
    array([0.96], dtype=float32)
    """
    first, second = np.asarray(first, np.float64), np.asarray(second, np.float64)
    dots = np.einsum("...d,...d->...", first, second)  # (n,)
    scale = row_norms(first) * row_norms(second)  # (n,)
    cosines = np.divide(dots, scale, out=np.zeros_like(dots), where=scale > 0)
    return np.clip(cosines, -1.0, 1.0).astype(np.float32)


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest scores along the last axis, largest first (NaN last).

    Equal scores straddling the k-th place may be chosen either way (as in gensim).

    Examples
    --------
    >>> top_k(np.array([0.1, 0.9, 0.5, 0.7]), 2)
    array([1, 3])
    >>> top_k(np.array([[0.1, 0.9, 0.5], [0.3, 0.2, 0.1]]), 5)
    array([[1, 2, 0],
           [0, 1, 2]])
    """
    negated = -scores  # ascending order of -s is descending order of s; NaN sorts last
    if k < scores.shape[-1]:
        part = np.argpartition(negated, k - 1, axis=-1)[..., :k]  # the k best, unordered
    else:
        part = np.broadcast_to(np.arange(scores.shape[-1]), scores.shape)
    order = np.argsort(np.take_along_axis(negated, part, axis=-1), axis=-1, kind="stable")
    return np.take_along_axis(part, order, axis=-1)


def top_k_rows(scores: np.ndarray, k: int) -> np.ndarray:
    """:func:`top_k` of every row of ``scores`` (Q, V): (Q, min(k, V)) indices, best first.

    One pass per row keeping the k best in a sorted buffer: the order of a stable sort of
    ``-scores`` (ties to the lower index, NaN last).

    Examples
    --------
    >>> top_k_rows(np.array([[0.1, 0.9, 0.5], [0.3, np.nan, 0.1]]), 2)
    array([[1, 2],
           [0, 2]])
    """
    out = np.empty((scores.shape[0], min(k, scores.shape[1])), dtype=np.int64)  # (Q, k)
    _top_k_rows_kernel(np.ascontiguousarray(scores), out)
    return out


@numba.njit(cache=True)
def _better(a: float, b: float) -> bool:
    return a > b or (b != b and a == a)  # NaN loses to every number


@numba.njit(cache=True)
def _top_k_rows_kernel(scores: np.ndarray, out: np.ndarray) -> None:
    k = out.shape[1]
    values = np.empty(k, dtype=scores.dtype)
    for row in range(scores.shape[0]):
        filled = 0
        for j in range(scores.shape[1]):
            s = scores[row, j]
            if filled == k and not _better(s, values[k - 1]):
                continue  # the common case: not among the k best so far
            pos = filled if filled < k else k - 1
            while pos > 0 and _better(s, values[pos - 1]):  # shift worse entries down
                values[pos] = values[pos - 1]
                out[row, pos] = out[row, pos - 1]
                pos -= 1
            values[pos] = s
            out[row, pos] = j
            filled = min(filled + 1, k)


def cos_add_direction(terms: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Unit-length weighted sum of ``terms`` (n, d): the 3CosAdd query direction.

    With unit ``terms`` (b, c, a) and ``weights`` (1, 1, -1) this is ``b + c - a``
    normalised; ranking rows by cosine with it is ranking by
    ``cos(x, b) - cos(x, a) + cos(x, c)``.

    Examples
    --------
    >>> cos_add_direction(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1.0, -1.0]))
    array([ 0.70710678, -0.70710678])
    """
    direction = np.zeros(terms.shape[-1], dtype=terms.dtype)  # (d,)
    for term, weight in zip(terms, weights, strict=True):  # in order, as gensim accumulates
        direction += weight * term
    return unit_rows(direction)[1]


def cos_mul_scores(
    unit: np.ndarray, positive: Sequence[np.ndarray], negative: Sequence[np.ndarray]
) -> np.ndarray:
    """3CosMul score of every row of ``unit`` (V, d) for each of Q queries.

    ``positive`` and ``negative`` hold (Q, d) arrays, one per term. Returns (Q, V):
    ``prod_p cos'(x, p) / (prod_n cos'(x, n) + EPSILON)`` with ``cos' = (1 + cos) / 2``.

    Examples
    --------
    >>> unit = np.eye(2, dtype=np.float32)
    >>> cos_mul_scores(unit, [np.array([[1.0, 0.0]], np.float32)], [])
    array([[0.999999, 0.4999995]], dtype=float32)
    """

    return cos_mul_combine([t @ unit.T for t in positive], [t @ unit.T for t in negative])


def cos_mul_combine(positive: Sequence[np.ndarray], negative: Sequence[np.ndarray]) -> np.ndarray:
    """3CosMul from the cosines of every row with each term: ``positive`` and ``negative`` hold
    (Q, V) cosine arrays; the result is :func:`cos_mul_scores`'s, in their dtype.

    Examples
    --------
    >>> cos_mul_combine([np.array([[1.0, 0.0]], np.float32)], [])
    array([[0.999999, 0.4999995]], dtype=float32)
    """
    numerator = np.prod([(1 + c) / 2 for c in positive], axis=0)  # (Q, V)
    denominator = np.prod([(1 + c) / 2 for c in negative], axis=0) if negative else 1.0
    return (numerator / (denominator + EPSILON)).astype(positive[0].dtype, copy=False)
