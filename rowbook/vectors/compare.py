r"""Comparing two tables of vectors: what moved between two seeds, checkpoints or models.

Two tables trained apart share no axes: rotate a table and every cosine it answers stays
the same, so its coordinates cannot be compared directly. :func:`compare` works on the keys
the two tables share (in the first table's order) and measures two things:

* **how far each row moved**, after the best rotation of the first table onto the second:
  orthogonal Procrustes (Schönemann 1966; Hamilton, Leskovec & Jurafsky 2016 use it to align
  word vectors across decades). On the unit rows ``A``, ``B`` (n, d) it is

  .. math:: R = \arg\min_{R^\top R = I} \|A R - B\|_F = U V^\top, \quad U S V^\top = A^\top B,

  one SVD of a d x d matrix (what ``scipy.linalg.orthogonal_procrustes`` computes; here
  ``A^T B`` comes from a parallel kernel, :func:`rowbook.vectors.products.cross_product`). A word's
  *cosine after alignment* is ``cos(a_w R, b_w)``: 1 for a row that did not move relative
  to the rest. Tables of different widths are compared in the wider one, the narrower
  padded with zero columns (``R`` stays orthogonal);
* **whether each word kept its neighbours**, with no alignment at all (cosine neighbours do
  not change under rotation): the overlap@k of its ``k`` nearest keys in each table, both
  searched among the shared keys by the exact scan, ``|N_a(w) ∩ N_b(w)| / k``.

The summary is the mean overlap and the share of words whose top-k changed by half
(overlap <= 0.5), the mean and median cosine after alignment, and the alignment error
``||A R - B||_F / ||B||_F``.

**Neighbours of a sample, at scale.** The neighbour lists are exact, but finding them for
every word is an n x n scan: 10^12 multiply-adds for a million words, hours on two cores. So
beyond ``AUTO_ALL`` shared words the overlap is measured on a seeded uniform sample of query
words (``sample="auto"``: about ``AUTO_BUDGET / n`` of them, at least ``MIN_SAMPLE``), each
searched against *all* shared words; the summary gives the standard error that sample size
leaves. An approximate index (:mod:`rowbook.vectors.index`) was the alternative, and it is
the wrong tool here: its misses would be counted as words that changed, and building one
costs more than the whole sampled scan (HNSW takes minutes per million rows; IVF clusters
every row first). The per-word cosines are computed for every shared word: they cost two
passes over the tables.

Examples
--------
>>> import numpy as np
>>> from rowbook.vectors import Vectors
>>> rng = np.random.default_rng(0)
>>> table = rng.standard_normal((200, 8)).astype(np.float32)
>>> rotation = np.linalg.qr(rng.standard_normal((8, 8)))[0]
>>> moved = table @ rotation                      # the same table, turned
>>> moved[7] = rng.standard_normal(8)             # ... and one row changed on purpose
>>> keys = [f"w{i}" for i in range(200)]
>>> result = compare(Vectors(keys, table), Vectors(keys, moved))
>>> result.most_moved(1)[0][0], round(result.summary()["median_cosine"], 4)
('w7', 1.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import scipy.linalg

from rowbook.checks import ParameterError, UnknownKeyError, check_int
from rowbook.vectors.neighbors import top_k_rows
from rowbook.vectors.products import cross_product

if TYPE_CHECKING:
    from rowbook.vectors.core import Vectors

__all__ = [
    "AUTO_ALL",
    "AUTO_BUDGET",
    "MIN_SAMPLE",
    "Comparison",
    "compare",
    "nearest_shared",
    "procrustes",
]

#: ``sample="auto"`` measures the overlap of every word up to this many shared words.
AUTO_ALL = 16_384
#: Beyond ``AUTO_ALL``, ``sample="auto"`` takes about this many (query, word) pairs in all.
AUTO_BUDGET = 100_000_000
#: ... and never fewer query words than this.
MIN_SAMPLE = 100
_ROWS = 1 << 16  # rows of a table scanned at a time
_QUERIES = 256  # query words scored at a time: (256, 65,536) float32 scores, 64 MB


@dataclass(frozen=True, eq=False)
class Comparison:
    """What :func:`compare` found; see :mod:`rowbook.vectors.compare`.

    Attributes
    ----------
    keys : tuple of str
        The shared keys, in the first table's order; every array below follows it.
    cosine : (n,) float32
        Each shared word's cosine after alignment, ``cos(a_w R, b_w)``.
    rotation : (d, d) float64
        The orthogonal ``R`` (d the wider table's width).
    alignment_error : float
        ``||A R - B||_F / ||B||_F`` over the unit rows.
    k : int
        Neighbours compared per word.
    sampled : (m,) int64
        Positions (in ``keys``) of the words whose neighbours were compared.
    overlap : (m,) float64
        Their overlap@k, in [0, 1].
    neighbors_a, neighbors_b : (m, k) int64
        Their k nearest shared words in each table (positions in ``keys``), nearest first.
    only_a, only_b : int
        Keys of one table missing from the other.
    dims : (int, int)
        The two tables' widths.
    """

    keys: tuple[str, ...]
    cosine: np.ndarray
    rotation: np.ndarray
    alignment_error: float
    k: int
    sampled: np.ndarray
    overlap: np.ndarray
    neighbors_a: np.ndarray
    neighbors_b: np.ndarray
    only_a: int
    only_b: int
    dims: tuple[int, int]

    def __len__(self) -> int:
        return len(self.keys)

    def __repr__(self) -> str:
        s = self.summary()
        return (
            f"Comparison(shared={s['shared']}, mean_cosine={s['mean_cosine']:.4f}, "
            f"mean_overlap@{self.k}={s['mean_overlap']:.4f})"
        )

    def most_moved(self, n: int = 20) -> list[tuple[str, float]]:
        """The ``n`` words with the lowest cosine after alignment, lowest first."""
        order = np.argsort(self.cosine, kind="stable")[: check_int("n", n, 0)]
        return [(self.keys[i], float(self.cosine[i])) for i in order]

    def least_moved(self, n: int = 20) -> list[tuple[str, float]]:
        """The ``n`` words with the highest cosine after alignment, highest first."""
        order = np.argsort(-self.cosine, kind="stable")[: check_int("n", n, 0)]
        return [(self.keys[i], float(self.cosine[i])) for i in order]

    def flagged(self, z: float = 5.0) -> list[str]:
        """Words that moved far more than the rest, most moved first.

        A word's movement is ``log(1 - cos)`` (cosine after alignment; ``1 - cos`` floored
        at 1e-6, float32's resolution): a word is flagged when it lies more than ``z``
        robust standard deviations (1.4826 times the median absolute deviation, at least
        0.1) above the median. The logarithm makes the usual spread of small movements
        symmetric, so only outliers pass: with two seeds of one model a few rare words at
        most; with a table against an edited copy of itself, exactly the rows edited.
        """
        movement = np.log(np.maximum(1.0 - self.cosine.astype(np.float64), 1e-6))  # (n,)
        median = float(np.median(movement))
        spread = max(1.4826 * float(np.median(np.abs(movement - median))), 0.1)
        limit = median + z * spread
        return [
            key for key, cos in self.most_moved(len(self)) if math.log(max(1.0 - cos, 1e-6)) > limit
        ]

    def neighbors(self, key: str) -> tuple[list[str], list[str]]:
        """``key``'s k nearest shared words in each table (it must be among the sampled)."""
        position = self.keys.index(key) if key in self.keys else -1
        row = int(np.searchsorted(self.sampled, position))
        if position < 0 or row == len(self.sampled) or self.sampled[row] != position:
            raise UnknownKeyError(
                f"{key!r} is not among the {len(self.sampled)} words whose neighbours were "
                "compared; compare(..., sample=None) compares every shared word"
            )
        return (
            [self.keys[i] for i in self.neighbors_a[row]],
            [self.keys[i] for i in self.neighbors_b[row]],
        )

    def summary(self) -> dict[str, Any]:
        """The numbers of the comparison, as plain Python values."""
        m = len(self.overlap)
        changed = self.overlap <= 0.5
        return {
            "shared": len(self),
            "only_a": self.only_a,
            "only_b": self.only_b,
            "dims": list(self.dims),
            "alignment_error": self.alignment_error,
            "mean_cosine": float(self.cosine.mean()) if len(self) else math.nan,
            "median_cosine": float(np.median(self.cosine)) if len(self) else math.nan,
            "k": self.k,
            "sampled": m,
            "mean_overlap": float(self.overlap.mean()) if m else math.nan,
            "overlap_stderr": float(self.overlap.std(ddof=1) / math.sqrt(m)) if m > 1 else math.nan,
            "changed_by_half": float(changed.mean()) if m else math.nan,
            "flagged": len(self.flagged()),
        }


def procrustes(A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, float]:
    """The orthogonal ``R`` minimising ``||A R - B||_F`` for ``A`` (n, da), ``B`` (n, db), and
    ``trace(R^T A^T B)``, the sum of the singular values (what the residual needs).

    The SVD ``U S V^T`` of ``A^T B`` gives ``R = U V^T``, as ``scipy.linalg.orthogonal_procrustes``
    computes it. Widths that differ are padded with zero columns to the wider: ``R`` is (d, d),
    d = max(da, db).

    >>> A = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> R, _ = procrustes(A, A @ np.array([[0.0, 1.0], [-1.0, 0.0]]))
    >>> R.round(6) + 0.0  # + 0.0 turns the -0.0 some BLAS kernels leave into 0.0
    array([[ 0.,  1.],
           [-1.,  0.]])
    """
    da, db = A.shape[1], B.shape[1]
    d = max(da, db)
    M = np.zeros((d, d))  # A^T B of the zero-padded tables
    M[:da, :db] = cross_product(A, B)
    U, S, Vt = scipy.linalg.svd(M)  # (d, d), (d,), (d, d)
    return U @ Vt, float(S.sum())


def _nonzero(table: Vectors, keys: tuple[str, ...]) -> int:
    """How many of ``keys`` have a non-zero row in ``table`` (their unit rows have length 1)."""
    norms = table.norms  # (V,), cached with the unit rows
    if table.index_to_key == keys:
        return int(np.count_nonzero(norms))
    lookup = table.key_to_index
    return int(np.count_nonzero(norms[[lookup[key] for key in keys]]))


def _sample_size(n: int, sample: int | Literal["auto"] | None) -> int:
    if sample is None:
        return n
    if sample == "auto":
        return n if n <= AUTO_ALL else min(n, max(MIN_SAMPLE, AUTO_BUDGET // n))
    if isinstance(sample, str):
        raise ValueError(f"sample must be an int >= 1, 'auto' or None, got {sample!r}")
    return min(n, check_int("sample", sample, 1))


def _shared_rows(a: Vectors, b: Vectors) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """The shared keys (a's order) and each table's unit rows for them."""
    unit_a, unit_b = a.get_normed_vectors(), b.get_normed_vectors()  # (Va, da), (Vb, db)
    if a.index_to_key == b.index_to_key:
        return a.index_to_key, unit_a, unit_b
    lookup = b.key_to_index
    ia, ib = [], []
    for i, key in enumerate(a.index_to_key):
        j = lookup.get(key)
        if j is not None:
            ia.append(i)
            ib.append(j)
    keys = tuple(a.index_to_key[i] for i in ia)
    return keys, unit_a[np.asarray(ia, dtype=np.int64)], unit_b[np.asarray(ib, dtype=np.int64)]


def _aligned_cosines(A: np.ndarray, B: np.ndarray, R: np.ndarray) -> np.ndarray:
    """``cos(a_w R, b_w)`` for every row of the unit rows ``A``, ``B``: (n,) float32."""
    da, db = A.shape[1], B.shape[1]
    R_ab = R[:da, :db].astype(A.dtype)  # the part of R that meets B's columns
    cos = np.empty(len(A), dtype=np.float32)
    for start in range(0, len(A), _ROWS):
        a, b = A[start : start + _ROWS], B[start : start + _ROWS]  # (r, da), (r, db)
        dots = np.einsum("ij,ij->i", a @ R_ab, b)  # (r,): |a R| = |a| = 1 (or 0)
        cos[start : start + len(a)] = np.clip(dots, -1.0, 1.0)
    return cos


def _alignment_error(na: int, nb: int, singular_sum: float) -> float:
    """``||A R - B||_F / ||B||_F`` for unit rows: ``||A||^2 + ||B||^2 - 2 tr(R^T A^T B)`` over
    ``||B||^2``, with ``||A||^2`` the number of non-zero rows (each of length 1)."""
    return math.sqrt(max(na + nb - 2 * singular_sum, 0.0) / nb) if nb else 0.0


def nearest_shared(table: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` rows of ``table`` (n, d) nearest by dot product to each query row, itself
    left out: (m, k) positions, nearest first (ties to the lower position).

    ``queries`` (m,) are positions in ``table``; the scan goes over blocks of rows and of
    queries, keeping each query's k + 1 best so far.

    >>> unit = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]], dtype=np.float32)
    >>> nearest_shared(unit, np.array([0, 2]), 1).tolist()
    [[1], [3]]
    """
    n, keep = len(table), min(k + 1, len(table))
    out = np.empty((len(queries), min(k, n - 1)), dtype=np.int64)
    for q0 in range(0, len(queries), _QUERIES):
        ids = queries[q0 : q0 + _QUERIES]
        Q = table[ids]  # (q, d)
        best_i = np.empty((len(ids), 0), dtype=np.int64)
        best_s = np.empty((len(ids), 0), dtype=table.dtype)
        for start in range(0, n, _ROWS):
            scores = Q @ table[start : start + _ROWS].T  # (q, r)
            top = top_k_rows(scores, keep)  # (q, keep) positions in the block
            best_i = np.concatenate([best_i, top + start], axis=1)
            best_s = np.concatenate([best_s, np.take_along_axis(scores, top, axis=1)], axis=1)
            order = np.lexsort((best_i, -best_s), axis=1)[:, :keep]  # score, then position
            best_i = np.take_along_axis(best_i, order, axis=1)
            best_s = np.take_along_axis(best_s, order, axis=1)
        for row, query in enumerate(ids):
            others = best_i[row][best_i[row] != query]
            out[q0 + row] = others[: out.shape[1]]
    return out


def compare(
    a: Vectors,
    b: Vectors,
    *,
    k: int = 10,
    sample: int | Literal["auto"] | None = "auto",
    seed: int = 0,
) -> Comparison:
    """Align ``b``'s rows with ``a``'s on their shared keys and say what moved.

    Parameters
    ----------
    a, b
        The two tables (:class:`~rowbook.vectors.Vectors`): two seeds, two checkpoints of
        one run, two models (word2vec and GloVe), a model before and after more training.
    k
        Neighbours compared per word (overlap@k).
    sample
        Words whose neighbours are compared: ``"auto"`` (all up to ``AUTO_ALL`` shared
        words, a sample beyond; see the module docstring), an int, or ``None`` for all.
    seed
        Seed of the sample.

    Returns
    -------
    Comparison
    """
    check_int("k", k, 1)
    check_int("seed", seed, 0)
    keys, A, B = _shared_rows(a, b)
    n = len(keys)
    if n < 2:
        raise ValueError(
            f"the tables share {n} key(s) (of {len(a)} and {len(b)}); comparing needs at least 2 "
            "shared keys: are they tables of the same vocabulary?"
        )
    if k >= n:
        raise ParameterError(
            "k",
            k,
            f"smaller than the {n} shared keys",
            fix="a word is not its own neighbour: ask for fewer neighbours",
        )
    R, singular_sum = procrustes(A, B)
    cos = _aligned_cosines(A, B, R)
    error = _alignment_error(_nonzero(a, keys), _nonzero(b, keys), singular_sum)
    m = _sample_size(n, sample)
    chosen = (
        np.arange(n) if m == n else np.sort(np.random.default_rng(seed).choice(n, m, replace=False))
    )
    near_a, near_b = nearest_shared(A, chosen, k), nearest_shared(B, chosen, k)
    both = np.sort(np.concatenate([near_a, near_b], axis=1), axis=1)  # (m, 2k): shared ones twice
    overlap = (both[:, 1:] == both[:, :-1]).sum(axis=1) / k  # (m,)
    return Comparison(
        keys=keys,
        cosine=cos,
        rotation=R,
        alignment_error=error,
        k=k,
        sampled=chosen,
        overlap=overlap,
        neighbors_a=near_a,
        neighbors_b=near_b,
        only_a=len(a) - n,
        only_b=len(b) - n,
        dims=(a.vector_size, b.vector_size),
    )
