"""Building and editing a keyed table, as gensim's ``KeyedVectors`` does.

Functions over a :class:`~rowbook.vectors.table.KeyedTable` (``Vectors.add_vectors``,
``table[key] = row``, ``vectors_for_all`` and ``unit_normalize_all`` call them). Every edit
installs a table the object owns through :meth:`~rowbook.vectors.table.KeyedTable.replace_rows`
(the caller's array given with ``copy=False`` is never written) and so drops the cached
norms and unit rows, which the next query computes again.

Examples
--------
>>> from rowbook import Vectors
>>> grown = Vectors(2)
>>> add_vectors(grown, ["a", "b"], [[1.0, 0.0], [0.0, 1.0]])
>>> grown["b"] = [0.5, 0.5]
>>> grown.index_to_key, grown["b"]
(('a', 'b'), array([0.5, 0.5], dtype=float32))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

import numpy as np

from rowbook.checks import check_finite_rows
from rowbook.vectors.keys import check_counts, index_keys
from rowbook.vectors.table import KeyedTable

__all__ = ["add_vectors", "unit_normalize_all", "vectors_for_all"]

T = TypeVar("T", bound=KeyedTable)


def add_vectors(
    table: KeyedTable,
    keys: str | Sequence[str],
    weights: np.ndarray | Sequence[float] | Sequence[Sequence[float]],
    replace: bool = False,
    *,
    counts: Sequence[int] | None = None,
    allow_nonfinite: bool | None = None,
) -> None:
    """Append keys and their rows; a key already present keeps its row unless ``replace``.

    As gensim's ``KeyedVectors.add_vectors``: ``keys`` is one key or a list, ``weights``
    one (d,) row or an (n, d) array. New keys go at the end, in the order given.
    ``counts`` (one per key) are stored when the table keeps counts or is given some;
    keys without a count get 0. The cached norms and unit rows are dropped. Rows holding
    ``inf`` or ``nan`` are refused unless ``allow_nonfinite`` (default: as the table was
    made, ``Vectors(..., allow_nonfinite=)``).
    """
    keys, rows = _as_rows(keys, weights, table.vector_size)
    allow = table.allow_nonfinite if allow_nonfinite is None else allow_nonfinite
    check_finite_rows("weights", rows, keys, allow_nonfinite=allow)
    new_counts = None if counts is None else check_counts(counts, len(keys))
    rows_of = [table.key_to_index.get(key) for key in keys]
    fresh = [i for i, row in enumerate(rows_of) if row is None]
    stale = [i for i, row in enumerate(rows_of) if row is not None] if replace else []
    if not (fresh or stale):
        return
    old_counts = table.counts
    if fresh:  # a new array: the old one (perhaps shared) is never grown in place
        rows_now = np.concatenate([table.vectors, rows[fresh].astype(table.vectors.dtype)])
    else:
        rows_now = table.own_rows()
    if stale:
        rows_now[[rows_of[i] for i in stale]] = rows[stale]
    table.replace_rows(rows_now, [keys[i] for i in fresh])
    if new_counts is not None or old_counts is not None:
        table.set_counts(_updated_counts(len(table), old_counts, rows_of, fresh, stale, new_counts))


def vectors_for_all(table: T, keys: Iterable[str]) -> T:
    """A new table of the type of ``table`` holding the given keys it has a vector for,
    deduplicated, in order (see :meth:`rowbook.vectors.Vectors.vectors_for_all`)."""
    chosen = list(dict.fromkeys(key for key in keys if key in table))
    made = type(table)(
        table.vector_size, dtype=table.vectors.dtype, allow_nonfinite=table.allow_nonfinite
    )
    if chosen:
        counts = None
        if table.counts is not None:
            rows = [table.key_to_index.get(key, -1) for key in chosen]
            counts = [table.counts[i] if i >= 0 else 0 for i in rows]
        add_vectors(made, chosen, np.stack([table[key] for key in chosen]), counts=counts)
    return made


def unit_normalize_all(table: KeyedTable) -> None:
    """Replace the rows of ``table`` by its unit rows (a new array in memory; the old one, or
    the file a mapped table reads, is left untouched)."""
    unit = table.get_normed_vectors()
    if unit.dtype == table.vectors.dtype:
        table.replace_rows(unit, unit=True)
    else:  # a float16 table: its unit rows rounded to float16, norms computed again
        table.replace_rows(unit.astype(table.vectors.dtype))


def _updated_counts(
    n_keys: int,
    old: np.ndarray | None,
    rows_of: list[int | None],
    fresh: list[int],
    stale: list[int],
    new: np.ndarray | None,
) -> np.ndarray:
    """The counts after an edit: the old ones, new keys' counts (0 without), replaced ones."""
    counts = np.zeros(n_keys, dtype=np.int64)
    if old is not None:
        counts[: len(old)] = old
    if new is not None:
        counts[n_keys - len(fresh) :] = new[fresh]
        counts[[rows_of[i] for i in stale]] = new[stale]
    return counts


def _as_rows(keys: str | Sequence[str], weights: Any, size: int) -> tuple[list[str], np.ndarray]:
    """Keys as a list and their rows as an (n, d) float32 array, checked against each other."""
    if isinstance(keys, str):
        keys, weights = [keys], np.reshape(np.asarray(weights, dtype=np.float32), (1, -1))
    keys, rows = list(keys), np.asarray(weights, dtype=np.float32)
    if rows.ndim != 2 or rows.shape != (len(keys), size):
        raise ValueError(
            f"weights must be ({len(keys)}, {size}): one row of vector_size {size} per key, "
            f"got shape {rows.shape}"
        )
    index_keys(tuple(keys))  # str keys, no key twice
    return keys, rows
