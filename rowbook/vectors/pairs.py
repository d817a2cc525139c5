"""PairQueries: the pairwise questions about keys of a table, one cosine routine behind them.

``similarity``, ``distance(s)``, ``closer_than`` / ``rank``, ``n_similarity``,
``most_similar_to_given`` and ``get_mean_vector``, as gensim's ``KeyedVectors`` answer
them. Every cosine here is :func:`~rowbook.vectors.neighbors.pair_cosines` (float64, one
rounding), so a key's similarity with itself is exactly 1.0 and its distance exactly 0.0.
:class:`~rowbook.vectors.Vectors` adds the neighbour searches on top.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from rowbook.checks import InputTypeError, check_finite
from rowbook.vectors.edit import EditableTable
from rowbook.vectors.neighbors import cos_add_direction, pair_cosines, row_norms, unit_rows

__all__ = ["PairQueries", "Term"]

Term = str | np.ndarray  # a key, or a (d,) vector used as given


class PairQueries(EditableTable):
    """Pairwise cosine queries on an :class:`~rowbook.vectors.edit.EditableTable`.

    Examples
    --------
    >>> table = PairQueries(["war", "peace"], [[0.3, 0.1, 0.7], [0.2, 0.9, 0.1]])
    >>> table.similarity("war", "war"), table.distance("war", "war")
    (1.0, 0.0)
    """

    def similarity(self, key1: str, key2: str) -> float:
        """Cosine similarity of two keys; a key with itself gives exactly 1.0.

        Computed in float64 from the two rows (:func:`~rowbook.vectors.neighbors.pair_cosines`)
        and rounded to float32: gensim's value to within one float32 step, and exactly
        1.0 for ``similarity(w, w)``, where gensim's float32 dot product of two unit
        vectors sometimes gives 0.99999994 or 1.0000001.
        """
        rows = [self.get_index(key1)], [self.get_index(key2)]
        return float(pair_cosines(self._rows(rows[0]), self._rows(rows[1]))[0])

    def n_similarity(self, keys1: Sequence[str], keys2: Sequence[str]) -> float:
        """Cosine of the means of two key lists (raw, not unit, vectors are averaged).

        Unlike gensim (which skips absent keys silently), an absent key raises ``KeyError``.
        """
        if not len(keys1) or not len(keys2):
            raise ValueError("n_similarity needs two non-empty key lists")
        means = [
            self[list(keys)].astype(np.float32).mean(axis=0)[None, :] for keys in (keys1, keys2)
        ]
        return float(pair_cosines(*means)[0])

    def distance(
        self, key1: str, key2: str, metric: Literal["cosine", "euclidean"] = "cosine"
    ) -> float:
        """``1 - similarity`` (default; exactly 0.0 from a key to itself) or the Euclidean distance."""
        if metric == "cosine":
            return float(np.float32(1) - np.float32(self.similarity(key1, key2)))
        return float(self.distances(key1, [key2], metric=metric)[0])

    def distances(
        self,
        key_or_vector: Term,
        other_keys: Sequence[str] = (),
        metric: Literal["cosine", "euclidean"] = "cosine",
    ) -> np.ndarray:
        """Distances (n,) float32 from a key or (d,) vector to ``other_keys`` (default: every key).

        Cosine distances are ``1 - cosine``, the cosines from the cached unit rows (one
        float32 matrix-vector product, as gensim); a key's distance to itself is its exact
        value, 0.0 (gensim: ``1 - dot`` of float32 unit vectors, sometimes ``5.96e-08``).
        Euclidean distances are those of the raw vectors.
        """
        if metric not in ("cosine", "euclidean"):
            raise ValueError(f"metric must be 'cosine' or 'euclidean', got {metric!r}")
        if not isinstance(key_or_vector, str):
            check_finite("key_or_vector", key_or_vector)
        point = self._resolve([key_or_vector], normalise_keys=False)[0][0]  # (d,)
        index = (
            np.arange(len(self))
            if not len(other_keys)
            else np.array([self.get_index(k) for k in other_keys], dtype=np.int64)
        )
        if metric == "euclidean":
            return row_norms(self._rows(index) - point).astype(np.float32)  # (n,)
        direction = unit_rows(point)[1].astype(np.float32)  # (d,)
        if len(other_keys):
            cosines = self._unit_rows(index) @ direction  # (n,)
        else:
            cosines = np.array(self._cosines(direction, len(self)))  # (V,), a writeable copy
        if isinstance(key_or_vector, str):  # the key itself: its exact cosine
            own = index == self.get_index(key_or_vector)
            cosines[own] = pair_cosines(self._rows(index[own]), self._rows(index[own]))
        return np.float32(1) - cosines

    def closer_than(self, key1: str, key2: str) -> list[str]:
        """Keys (other than ``key1``) at a smaller cosine distance from ``key1`` than ``key2`` is."""
        distances, this = self.distances(key1), self.get_index(key1)
        closer = np.flatnonzero(distances < distances[self.get_index(key2)])
        return [self._keys[i] for i in closer if i != this]

    def words_closer_than(self, word1: str, word2: str) -> list[str]:
        """gensim's older name for :meth:`closer_than`."""
        return self.closer_than(word1, word2)

    def rank(self, key1: str, key2: str) -> int:
        """Rank of ``key2`` among the neighbors of ``key1`` (1 = nearest)."""
        return len(self.closer_than(key1, key2)) + 1

    def most_similar_to_given(self, key1: str, keys_list: Sequence[str]) -> str:
        """The key of ``keys_list`` most similar (by cosine) to ``key1``; the first on ties."""
        if not len(keys_list):
            raise ValueError("most_similar_to_given needs a non-empty keys_list")
        rows = [self.get_index(key) for key in keys_list]
        cosines = pair_cosines(self._rows([self.get_index(key1)] * len(rows)), self._rows(rows))
        return keys_list[int(np.argmax(cosines))]

    def get_mean_vector(
        self,
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
        mean, total = np.zeros(self.vector_size, dtype=np.float32), 0.0  # (d,)
        for term, weight in zip(keys, weights, strict=True):
            if isinstance(term, str) and term not in self:
                if not ignore_missing:
                    self.get_index(term)  # raises the KeyError
                continue
            mean += weight * self._term_vector(term, pre_normalize)
            total += abs(float(weight))
        if total > 0:
            mean = (mean / np.float32(total)).astype(np.float32)
        return cos_add_direction(mean[None, :], np.ones(1)) if post_normalize else mean

    # -- helpers -------------------------------------------------------------------

    def _resolve(self, terms: Sequence[Term], normalise_keys: bool) -> tuple[np.ndarray, list[int]]:
        """Stack the inputs' vectors (n, d) and list the rows of the inputs that are keys."""
        rows, exclude = [], []
        for term in terms:
            if isinstance(term, str):
                exclude.append(self.get_index(term))
                rows.append(
                    self._unit_rows(exclude[-1]) if normalise_keys else self._rows(exclude[-1])
                )
            elif isinstance(term, np.ndarray) and term.shape == (self.vector_size,):
                check_finite("a query vector", term)  # the doors name it first, when they can
                rows.append(term.astype(np.float32, copy=False))
            else:
                raise InputTypeError(
                    f"expected a key (str) or a ({self.vector_size},) vector, got "
                    f"{type(term).__name__} {getattr(term, 'shape', term)!r}"
                )
        return np.stack(rows), exclude

    def _term_vector(self, term: Term, normalise: bool) -> np.ndarray:
        """A key's row (its unit row if ``normalise``) or a (d,) vector as given."""
        return self._resolve([term], normalise_keys=normalise)[0][0]
