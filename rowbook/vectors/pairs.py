"""The pairwise questions about keys of a table, one cosine routine behind them.

``similarity``, ``distance(s)``, ``closer_than`` / ``rank``, ``n_similarity``,
``most_similar_to_given`` and ``get_mean_vector``, as gensim's ``KeyedVectors`` answer
them: functions over a :class:`~rowbook.vectors.table.KeyedTable`, which
:class:`~rowbook.vectors.Vectors`' methods of the same names call. Every cosine here is
:func:`~rowbook.vectors.neighbors.pair_cosines` (float64, one rounding), so a key's
similarity with itself is exactly 1.0 and its distance exactly 0.0.

Examples
--------
>>> from rowbook import Vectors
>>> table = Vectors(["war", "peace"], [[0.3, 0.1, 0.7], [0.2, 0.9, 0.1]])
>>> similarity(table, "war", "war"), distance(table, "war", "war")
(1.0, 0.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from rowbook.checks import check_finite
from rowbook.vectors.neighbors import cos_add_direction, pair_cosines, row_norms, unit_rows
from rowbook.vectors.table import KeyedTable, Term

__all__ = [
    "closer_than",
    "distance",
    "distances",
    "get_mean_vector",
    "most_similar_to_given",
    "n_similarity",
    "rank",
    "similarity",
]


def similarity(table: KeyedTable, key1: str, key2: str) -> float:
    """Cosine similarity of two keys; a key with itself gives exactly 1.0.

    Computed in float64 from the two rows (:func:`~rowbook.vectors.neighbors.pair_cosines`)
    and rounded to float32: gensim's value to within one float32 step, and exactly
    1.0 for ``similarity(w, w)``, where gensim's float32 dot product of two unit
    vectors sometimes gives 0.99999994 or 1.0000001. A subword table answers unseen
    words too (their rows are what :meth:`~rowbook.vectors.table.KeyedTable.term_rows` gives).
    """
    rows = table.term_rows([key1, key2], normalise_keys=False)[0]  # (2, d)
    return float(pair_cosines(rows[:1], rows[1:])[0])


def n_similarity(table: KeyedTable, keys1: Sequence[str], keys2: Sequence[str]) -> float:
    """Cosine of the means of two key lists (raw, not unit, vectors are averaged).

    Unlike gensim (which skips absent keys silently), an absent key raises ``KeyError``.
    """
    if not len(keys1) or not len(keys2):
        raise ValueError("n_similarity needs two non-empty key lists")
    means = [table[list(keys)].astype(np.float32).mean(axis=0)[None, :] for keys in (keys1, keys2)]
    return float(pair_cosines(*means)[0])


def distance(
    table: KeyedTable, key1: str, key2: str, metric: Literal["cosine", "euclidean"] = "cosine"
) -> float:
    """``1 - similarity`` (default; exactly 0.0 from a key to itself) or the Euclidean distance."""
    if metric == "cosine":
        return float(np.float32(1) - np.float32(similarity(table, key1, key2)))
    return float(distances(table, key1, [key2], metric=metric)[0])


def distances(
    table: KeyedTable,
    key_or_vector: Term,
    other_keys: Sequence[str] = (),
    metric: Literal["cosine", "euclidean"] = "cosine",
) -> np.ndarray:
    """``table.distances(...)`` for any keyed table: see
    :meth:`rowbook.vectors.searchable.SearchableTable.distances`."""
    if metric not in ("cosine", "euclidean"):
        raise ValueError(f"metric must be 'cosine' or 'euclidean', got {metric!r}")
    if not isinstance(key_or_vector, str):
        check_finite("key_or_vector", key_or_vector)
    point = table.term_rows([key_or_vector], normalise_keys=False)[0][0]  # (d,)
    index = (
        np.arange(len(table))
        if not len(other_keys)
        else np.array([table.get_index(k) for k in other_keys], dtype=np.int64)
    )
    if metric == "euclidean":
        return row_norms(table.rows_at(index) - point).astype(np.float32)  # (n,)
    direction = unit_rows(point)[1].astype(np.float32)  # (d,)
    if len(other_keys):
        cosines = table.unit_rows_at(index) @ direction  # (n,)
    else:
        cosines = np.array(table.cosines(direction, len(table)))  # (V,), a writeable copy
    if isinstance(key_or_vector, str):  # the key itself: its exact cosine
        own = index == table.get_index(key_or_vector)
        cosines[own] = pair_cosines(table.rows_at(index[own]), table.rows_at(index[own]))
    return np.float32(1) - cosines


def closer_than(table: KeyedTable, key1: str, key2: str) -> list[str]:
    """Keys (other than ``key1``) at a smaller cosine distance from ``key1`` than ``key2`` is."""
    away, this = distances(table, key1), table.get_index(key1)
    closer = np.flatnonzero(away < away[table.get_index(key2)])
    return [table.index_to_key[i] for i in closer if i != this]


def rank(table: KeyedTable, key1: str, key2: str) -> int:
    """Rank of ``key2`` among the neighbors of ``key1`` (1 = nearest)."""
    return len(closer_than(table, key1, key2)) + 1


def most_similar_to_given(table: KeyedTable, key1: str, keys_list: Sequence[str]) -> str:
    """The key of ``keys_list`` most similar (by cosine) to ``key1``; the first on ties."""
    if not len(keys_list):
        raise ValueError("most_similar_to_given needs a non-empty keys_list")
    rows = [table.get_index(key) for key in keys_list]
    cosines = pair_cosines(table.rows_at([table.get_index(key1)] * len(rows)), table.rows_at(rows))
    return keys_list[int(np.argmax(cosines))]


def get_mean_vector(
    table: KeyedTable,
    keys: Sequence[Term],
    weights: Sequence[float] | np.ndarray | None = None,
    pre_normalize: bool = True,
    post_normalize: bool = False,
    ignore_missing: bool = True,
) -> np.ndarray:
    """Weighted mean (d,) float32 of keys' vectors (unit rows if ``pre_normalize``) or vectors.

    As gensim: ``sum_i w_i t_i / sum_i |w_i|`` over the terms found (a (d,) array is used
    as given); absent keys are skipped, or raise ``KeyError`` with
    ``ignore_missing=False``; ``post_normalize`` makes the mean unit length.
    """
    if not len(keys):
        raise ValueError("get_mean_vector needs at least one key or vector")
    weights = np.ones(len(keys)) if weights is None else np.asarray(weights, np.float32)
    check_finite("weights", weights)
    for i, term in enumerate(keys):
        if not isinstance(term, str):
            check_finite(f"keys[{i}]", term)
    if weights.shape != (len(keys),):
        raise ValueError(
            f"weights must hold one number per key ({len(keys)}), got shape {weights.shape}"
        )
    mean, total = np.zeros(table.vector_size, dtype=np.float32), 0.0  # (d,)
    for term, weight in zip(keys, weights, strict=True):
        if isinstance(term, str) and term not in table:
            if not ignore_missing:
                table.get_index(term)  # raises the KeyError
            continue
        mean += weight * table.term_rows([term], normalise_keys=pre_normalize)[0][0]
        total += abs(float(weight))
    if total > 0:
        mean = (mean / np.float32(total)).astype(np.float32)
    return cos_add_direction(mean[None, :], np.ones(1)) if post_normalize else mean
