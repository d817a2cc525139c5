"""SearchableTable: a keyed table with the queries of gensim's ``KeyedVectors`` as methods.

Each method is one call into a module of functions over the table
(:mod:`~rowbook.vectors.pairs`, :mod:`~rowbook.vectors.queries`,
:mod:`~rowbook.vectors.evaluate`) or the index (:mod:`~rowbook.vectors.index`); what each
answers is documented here, where users look for it, and the work is done there. A function
that takes the table first and the method's parameters as they are *is* the method
(``most_similar = queries.most_similar``), its docstring the one users read. The float
table :class:`~rowbook.vectors.Vectors` (editable, quantisable) and the quantised
:class:`~rowbook.vectors.quantize.QuantizedVectors` are both searchable tables.

This file is long for its docstrings: the methods are one line each.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from rowbook.vectors import evaluate, pairs, queries
from rowbook.vectors.index import IndexKind, VectorIndex
from rowbook.vectors.table import KeyedTable, Term

__all__ = ["SearchableTable"]

PathLike = str | os.PathLike[str]


class SearchableTable(KeyedTable):
    """A :class:`~rowbook.vectors.table.KeyedTable` that answers similarity queries, the way
    gensim's ``KeyedVectors`` do.

    Queries use cached unit rows: one matrix-vector product and an ``argpartition`` per
    query.

    Examples
    --------
    >>> table = SearchableTable(["war", "peace"], [[0.3, 0.1, 0.7], [0.2, 0.9, 0.1]])
    >>> table.similarity("war", "war"), table.distance("war", "war")
    (1.0, 0.0)
    """

    # -- neighbors ----------------------------------------------------------------

    most_similar = queries.most_similar

    def similar_by_vector(
        self, vector: np.ndarray, topn: int | None = 10, restrict_vocab: int | None = None
    ) -> list[tuple[str, float]] | np.ndarray:
        """Keys nearest (by cosine) to ``vector`` (d,); ``most_similar(positive=[vector])``."""
        return queries.similar_by_vector(self, vector, topn, restrict_vocab)

    def similar_by_key(
        self, key: str, topn: int | None = 10, restrict_vocab: int | None = None
    ) -> list[tuple[str, float]] | np.ndarray:
        """Keys nearest (by cosine) to ``key``, itself excluded; ``most_similar(positive=[key])``."""
        return queries.similar_by_key(self, key, topn, restrict_vocab)

    def similar_by_word(
        self, word: str, topn: int | None = 10, restrict_vocab: int | None = None
    ) -> list[tuple[str, float]] | np.ndarray:
        """gensim's name for :meth:`similar_by_key`."""
        return queries.similar_by_key(self, word, topn=topn, restrict_vocab=restrict_vocab)

    def most_similar_cosmul(
        self,
        positive: Term | Sequence[Term] | None = (),
        negative: Term | Sequence[Term] | None = (),
        topn: int | None = 10,
        restrict_vocab: int | None = None,
    ) -> list[tuple[str, float]] | np.ndarray:
        """Keys ranked by 3CosMul (Levy & Goldberg 2014), inputs excluded.

        ``score(x) = prod_p cos'(x, p) / (prod_n cos'(x, n) + 1e-6)`` with
        ``cos' = (1 + cos) / 2``. Keys enter as unit vectors, (d,) vectors as given (as in
        gensim). ``restrict_vocab`` does restrict the search here (gensim 4.4 ignores it).
        ``topn`` as in :meth:`most_similar`.
        """
        return queries.most_similar_cosmul(self, positive, negative, topn, restrict_vocab)

    analogy = queries.analogy

    def relative_cosine_similarity(self, wa: str, wb: str, topn: int = 10) -> float:
        """``cos(wa, wb)`` over the sum of the cosines of ``wa``'s ``topn`` nearest keys.

        Leeuwenberg et al. (2016), eq. 1, as gensim: above about 0.1 (``topn=10``), ``wb``
        is closer to ``wa`` than an arbitrary neighbour.
        """
        return queries.relative_cosine_similarity(self, wa, wb, topn)

    def doesnt_match(self, keys: Sequence[str]) -> str:
        """The key farthest (by cosine) from the normalised mean of the keys' unit vectors.

        Absent keys are skipped with a warning, as gensim does; ties go to the
        alphabetically smallest key.
        """
        return queries.doesnt_match(self, keys)

    # -- approximate neighbors ----------------------------------------------------

    def build_index(self, kind: IndexKind | None = None, **options: Any) -> VectorIndex:
        """Index the unit rows for ``most_similar(..., approximate=True)`` (needs faiss).

        With no arguments the kind and its settings follow the table's size: an IVF index
        below 100,000 rows, an HNSW graph from there (why, and what it measured, in
        :meth:`rowbook.vectors.index.VectorIndex.build`); ``kind`` and ``options`` are
        that method's. Its search setting is measured for ``recall=0.95`` (recall@10
        against the exact scan, on held-out rows; ``recall=None`` keeps a fixed setting),
        printed once and kept in ``index.calibration`` (saved with :meth:`save_index`).
        The index is kept with these vectors (and dropped when they are edited).
        """
        self.vector_index = VectorIndex.build(self.get_normed_vectors(), kind, **options)
        return self.vector_index

    def save_index(self, path: PathLike) -> None:
        """Write the index built by :meth:`build_index` beside the vectors' own file."""
        queries.built_index(self).save(path)

    def load_index(self, path: PathLike) -> VectorIndex:
        """Read an index written by :meth:`save_index` for these vectors (only your own files)."""
        self.vector_index = VectorIndex.load(path, rows=len(self), dim=self.vector_size)
        return self.vector_index

    # -- pairwise ------------------------------------------------------------------

    def similarity(self, key1: str, key2: str) -> float:
        """Cosine similarity of two keys; a key with itself gives exactly 1.0.

        Computed in float64 from the two rows (:func:`~rowbook.vectors.neighbors.pair_cosines`)
        and rounded to float32: gensim's value to within one float32 step, and exactly
        1.0 for ``similarity(w, w)``, where gensim's float32 dot product of two unit
        vectors sometimes gives 0.99999994 or 1.0000001.
        """
        return pairs.similarity(self, key1, key2)

    def n_similarity(self, keys1: Sequence[str], keys2: Sequence[str]) -> float:
        """Cosine of the means of two key lists (raw, not unit, vectors are averaged).

        Unlike gensim (which skips absent keys silently), an absent key raises ``KeyError``.
        """
        return pairs.n_similarity(self, keys1, keys2)

    def distance(
        self, key1: str, key2: str, metric: Literal["cosine", "euclidean"] = "cosine"
    ) -> float:
        """``1 - similarity`` (default; exactly 0.0 from a key to itself) or the Euclidean distance."""
        return pairs.distance(self, key1, key2, metric)

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
        return pairs.distances(self, key_or_vector, other_keys, metric)

    def closer_than(self, key1: str, key2: str) -> list[str]:
        """Keys (other than ``key1``) at a smaller cosine distance from ``key1`` than ``key2`` is."""
        return pairs.closer_than(self, key1, key2)

    def words_closer_than(self, word1: str, word2: str) -> list[str]:
        """gensim's older name for :meth:`closer_than`."""
        return pairs.closer_than(self, word1, word2)

    def rank(self, key1: str, key2: str) -> int:
        """Rank of ``key2`` among the neighbors of ``key1`` (1 = nearest)."""
        return pairs.rank(self, key1, key2)

    def most_similar_to_given(self, key1: str, keys_list: Sequence[str]) -> str:
        """The key of ``keys_list`` most similar (by cosine) to ``key1``; the first on ties."""
        return pairs.most_similar_to_given(self, key1, keys_list)

    get_mean_vector = pairs.get_mean_vector

    # -- evaluation ----------------------------------------------------------------

    evaluate_analogies = evaluate.evaluate_analogies

    evaluate_word_pairs = evaluate.evaluate_word_pairs
