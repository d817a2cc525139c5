"""EditableTable: building and editing a keyed table, as gensim's ``KeyedVectors`` does.

``add_vectors(keys, weights, replace=False)``, ``table[key] = row`` and
``vectors_for_all(keys)``. Every edit installs a table this object owns (the caller's
array given with ``copy=False`` is never written) and drops the cached norms and unit
rows, which the next query computes again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Self

import numpy as np

from rowbook.checks import check_finite_rows
from rowbook.vectors.table import KeyedTable, _check_counts, _index_keys, _read_only

__all__ = ["EditableTable"]


class EditableTable(KeyedTable):
    """A :class:`~rowbook.vectors.table.KeyedTable` that keys and rows can be added to.

    Examples
    --------
    >>> grown = EditableTable(2)
    >>> grown.add_vectors(["a", "b"], [[1.0, 0.0], [0.0, 1.0]])
    >>> grown["b"] = [0.5, 0.5]
    >>> grown.index_to_key, grown["b"]
    (('a', 'b'), array([0.5, 0.5], dtype=float32))
    """

    def add_vectors(
        self,
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
        keys, rows = _as_rows(keys, weights, self.vector_size)
        allow = self._allow_nonfinite if allow_nonfinite is None else allow_nonfinite
        check_finite_rows("weights", rows, keys, allow_nonfinite=allow)
        new_counts = None if counts is None else _check_counts(counts, len(keys))
        rows_of = [self._key_to_index.get(key) for key in keys]
        fresh = [i for i, row in enumerate(rows_of) if row is None]
        stale = [i for i, row in enumerate(rows_of) if row is not None] if replace else []
        table = self._owned
        if fresh:  # a new array: the old one (perhaps shared) is never grown in place
            table = np.concatenate([self._vectors, rows[fresh].astype(self._vectors.dtype)])
        elif stale and table is None:
            table = self._vectors.copy()
        if stale:
            table[[rows_of[i] for i in stale]] = rows[stale]
        if fresh or stale:
            self._set_table(table, [keys[i] for i in fresh])
        if (fresh or stale) and (new_counts is not None or self._counts is not None):
            self._update_counts(rows_of, fresh, stale, new_counts)

    def __setitem__(self, keys: str | Sequence[str], weights: np.ndarray) -> None:
        """``table[key] = row`` or ``table[[k1, k2]] = rows``: add, or replace, as gensim
        (``inf`` / ``nan`` refused unless the table was made with ``allow_nonfinite=True``)."""
        self.add_vectors(keys, weights, replace=True)

    def vectors_for_all(self, keys: Iterable[str]) -> Self:
        """A new table of the given keys that this one has a vector for, deduplicated, in order.

        As gensim's ``vectors_for_all``; a table that builds vectors for unseen keys (from
        subwords) answers ``key in table`` and ``table[key]`` for them, and they are
        included. Counts are carried over when the table has them.
        """
        chosen = list(dict.fromkeys(key for key in keys if key in self))
        rows = np.stack([self[key] for key in chosen]) if chosen else None
        table = type(self)(
            self.vector_size, dtype=self._vectors.dtype, allow_nonfinite=self._allow_nonfinite
        )
        if chosen:
            counts = None
            if self._counts is not None:
                counts = [self._counts[i] if i >= 0 else 0 for i in self._rows_or(chosen)]
            table.add_vectors(chosen, rows, counts=counts)
        return table

    def _rows_or(self, keys: Sequence[str]) -> list[int]:
        return [self._key_to_index.get(key, -1) for key in keys]

    def _update_counts(
        self, rows_of: list, fresh: list[int], stale: list[int], new: np.ndarray | None
    ) -> None:
        counts = np.zeros(len(self), dtype=np.int64)
        if self._counts is not None:
            counts[: len(self._counts)] = self._counts
        if new is not None:
            n_old = len(self) - len(fresh)
            counts[n_old:] = new[fresh]
            counts[[rows_of[i] for i in stale]] = new[stale]
        self._counts = _read_only(counts)


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
    _index_keys(tuple(keys))  # str keys, no key twice
    return keys, rows
