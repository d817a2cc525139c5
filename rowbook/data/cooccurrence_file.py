"""Counted co-occurrences in a file: count once (on this machine or on Dask), train GloVe later.

glove.c splits its work into ``vocab_count``, ``cooccur``, ``shuffle`` and ``glove``, each
writing a file the next one reads. rowbook's ``GloVe.fit`` does all of it in one call; this
file is the cut between counting and training for when they happen apart: ``rowbook
cooccur CORPUS -o counts.npz`` (or :func:`save_cooccurrence`) writes the matrix with its
vocabulary and how it was counted, and ``rowbook train glove --cooccurrence counts.npz``
(or :func:`load_cooccurrence` and :meth:`GloVe.fit_cooccurrence
<rowbook.models.word_vectors.glove.GloVe.fit_cooccurrence>`) trains on it.

The file is a rowbook ``.npz`` (:func:`rowbook.io.save_state`, no pickle) of kind
``"cooccurrence"``: the words (``keys``) and their corpus ``counts``, the CSR arrays of the
``(V, V)`` float64 matrix (``indptr``, ``indices``, ``data``), and the counting settings
(``window``, ``symmetric``, ``weighted``). Loading checks every field against the others
(sizes, index ranges, sorted rows, finite positive values), so a damaged or hostile file
is refused with the field named before any array is trusted.

Examples
--------
>>> import tempfile, pathlib, scipy.sparse as sp
>>> X = sp.csr_matrix([[0.0, 2.0], [2.0, 0.0]])
>>> path = pathlib.Path(tempfile.mkdtemp()) / "counts.npz"
>>> save_cooccurrence(path, X, ("cat", "sat"), [3, 2], window=10)
>>> counted = load_cooccurrence(path)
>>> counted.keys, counted.counts.tolist(), counted.matrix.toarray().tolist(), counted.window
(('cat', 'sat'), [3, 2], [[0.0, 2.0], [2.0, 0.0]], 10)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from rowbook.io import fields_of, load_state, save_state

__all__ = ["KIND", "CountedCooccurrence", "load_cooccurrence", "save_cooccurrence"]

KIND = "cooccurrence"


@dataclass(frozen=True)
class CountedCooccurrence:
    """A counted co-occurrence matrix, its vocabulary and how it was counted."""

    matrix: sp.csr_matrix  # (V, V) float64
    keys: tuple[str, ...]  # (V,) the word of row and column i
    counts: np.ndarray  # (V,) int64 corpus counts of the words
    window: int
    symmetric: bool
    weighted: bool


def save_cooccurrence(
    path: str | os.PathLike[str],
    matrix: sp.spmatrix,
    keys: Sequence[str],
    counts: Sequence[int] | None = None,
    *,
    window: int,
    symmetric: bool = True,
    weighted: bool = True,
) -> None:
    """Write ``matrix`` (``(V, V)``, row and column ``i`` for ``keys[i]``) atomically."""
    keys = tuple(keys)
    X = sp.csr_matrix(matrix, dtype=np.float64)
    X.sum_duplicates()
    if X.shape != (len(keys), len(keys)):
        raise ValueError(
            f"matrix has shape {X.shape}, but there are {len(keys)} keys; it must be "
            "(V, V) with row and column i for keys[i]"
        )
    counts = np.zeros(len(keys), np.int64) if counts is None else np.asarray(counts, np.int64)
    if counts.shape != (len(keys),):
        raise ValueError(f"counts has shape {counts.shape}, expected ({len(keys)},): one per key")
    state = {
        "keys": list(keys),
        "counts": counts,
        "indptr": X.indptr.astype(np.int64),
        "indices": X.indices.astype(np.int32),
        "data": X.data,
        "window": int(window),
        "symmetric": bool(symmetric),
        "weighted": bool(weighted),
    }
    save_state(path, state, kind=KIND)


def load_cooccurrence(path: str | os.PathLike[str]) -> CountedCooccurrence:
    """The matrix written by :func:`save_cooccurrence`, every field checked."""
    state = load_state(path, kind=KIND)
    what = "co-occurrence file"
    with fields_of(path, what):
        keys = state["keys"]
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise ValueError(f"{what} {path} field 'keys' must be a list of words")
        if len(set(keys)) != len(keys):
            raise ValueError(f"{what} {path} field 'keys' repeats a word")
        V = len(keys)
        counts = _array(state, "counts", np.int64, (V,), path)
        indptr = _array(state, "indptr", np.int64, (V + 1,), path)
        nnz = int(indptr[-1]) if V else 0
        indices = _array(state, "indices", np.int32, (nnz,), path)
        data = _array(state, "data", np.float64, (nnz,), path)
        _check_csr(indptr, indices, data, counts, V, path)
        window, symmetric, weighted = state["window"], state["symmetric"], state["weighted"]
        if not isinstance(window, int) or window < 1:
            raise ValueError(
                f"{what} {path} field 'window' must be an integer >= 1, got {window!r}"
            )
        if not isinstance(symmetric, bool) or not isinstance(weighted, bool):
            raise ValueError(
                f"{what} {path} fields 'symmetric' and 'weighted' must be true or false"
            )
    X = sp.csr_matrix((data, indices, indptr), shape=(V, V))
    return CountedCooccurrence(X, tuple(keys), counts, window, symmetric, weighted)


def _array(state: dict, name: str, dtype: type, shape: tuple[int, ...], path: object) -> np.ndarray:
    a = state[name]
    if not isinstance(a, np.ndarray) or a.dtype != dtype or a.shape != shape:
        got = f"{a.dtype} {a.shape}" if isinstance(a, np.ndarray) else type(a).__name__
        raise ValueError(
            f"co-occurrence file {path} field {name!r} must be {np.dtype(dtype)} {shape}, got {got}"
        )
    return a


def _check_csr(
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    counts: np.ndarray,
    V: int,
    path: object,
) -> None:
    """Rows that start at 0 and never go back, columns in range and sorted within each row,
    finite positive values, counts >= 0; the offending field named."""
    where = f"co-occurrence file {path} field"
    if V and (indptr[0] != 0 or (np.diff(indptr) < 0).any()):
        raise ValueError(f"{where} 'indptr' must start at 0 and never decrease")
    if len(indices) and (indices.min() < 0 or indices.max() >= V):
        raise ValueError(f"{where} 'indices' holds a column outside [0, {V})")
    unsorted = np.diff(indices) <= 0  # (nnz - 1,) True where a column does not grow...
    row_starts = indptr[1:-1][(indptr[1:-1] > 0) & (indptr[1:-1] < len(indices))]
    unsorted[row_starts - 1] = False  # ...except where a new row begins
    if unsorted.any():
        raise ValueError(f"{where} 'indices' must be strictly increasing within each row")
    if not np.isfinite(data).all() or (data <= 0).any():
        raise ValueError(f"{where} 'data' must hold finite counts > 0")
    if (counts < 0).any():
        raise ValueError(f"{where} 'counts' must be >= 0")
