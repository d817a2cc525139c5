"""Vectors: a table of keyed vectors that answers similarity queries, and can be edited,
quantised and pruned.

Trainers produce one, loaders read one from word2vec, GloVe or rowbook ``.npz`` files,
and users query it. Conventions follow gensim's ``KeyedVectors`` (4.x), so the same
vectors give the same answers; the few deliberate differences are listed in the
docstrings (search for "gensim"). The store is :mod:`rowbook.vectors.table`, the queries
:mod:`rowbook.vectors.searchable`; each method here is a call into a module of functions.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Literal, Self

import numpy as np

from rowbook.vectors import edit, prune
from rowbook.vectors.quantize.cost import quantize_vectors
from rowbook.vectors.quantize.table import QuantizedVectors
from rowbook.vectors.searchable import SearchableTable

__all__ = ["Vectors"]

PathLike = str | os.PathLike[str]


class Vectors(SearchableTable):
    """Keyed vectors that answer similarity queries, the way gensim's ``KeyedVectors`` do.

    Construction, lookups and files come from :class:`~rowbook.vectors.table.KeyedTable`:
    ``Vectors(keys, vectors, counts=None, *, copy=True)``, ``Vectors.load_word2vec_format``,
    ``Vectors.load_glove``, ``Vectors.load``; the queries from
    :class:`~rowbook.vectors.searchable.SearchableTable`. A ``Vectors`` adds what a float
    table can do that a quantised one cannot: editing (:mod:`rowbook.vectors.edit`),
    quantising (:mod:`rowbook.vectors.quantize`) and pruning (:mod:`rowbook.vectors.prune`).

    Examples
    --------
    >>> table = Vectors(["king", "queen", "apple"], [[1.0, 0.1], [0.9, 0.2], [-0.2, 1.0]])
    >>> table.most_similar("king", topn=1)
    [('queen', 0.99293)]
    >>> table["apple"]
    array([-0.2,  1. ], dtype=float32)
    """

    # -- editing ---------------------------------------------------------------------

    add_vectors = edit.add_vectors

    def __setitem__(self, keys: str | Sequence[str], weights: np.ndarray) -> None:
        """``table[key] = row`` or ``table[[k1, k2]] = rows``: add, or replace, as gensim
        (``inf`` / ``nan`` refused unless the table was made with ``allow_nonfinite=True``)."""
        edit.add_vectors(self, keys, weights, replace=True)

    def vectors_for_all(self, keys: Iterable[str]) -> Self:
        """A new table of the given keys that this one has a vector for, deduplicated, in order.

        As gensim's ``vectors_for_all``; a table that builds vectors for unseen keys (from
        subwords) answers ``key in table`` and ``table[key]`` for them, and they are
        included. Counts are carried over when the table has them.
        """
        return edit.vectors_for_all(self, keys)

    def unit_normalize_all(self) -> None:
        """Replace the table by its unit rows (a new array in memory; the old one, or the file
        a mapped table reads, is left untouched)."""
        edit.unit_normalize_all(self)

    # -- smaller tables --------------------------------------------------------------

    def quantize(
        self,
        method: Literal["int8", "pq"] = "pq",
        *,
        m: int | None = None,
        dsub: int | None = None,
        nbits: int = 8,
        qnorm: bool = True,
        niter: int = 25,
        seed: int = 1234,
        rerank: int | None = None,
        recall: float | None = None,
        report: bool = False,
        analogies: PathLike | None = None,
        pairs: Sequence[PathLike] = (),
        queries: int = 200,
        verbose: bool = True,
    ) -> QuantizedVectors:
        """A quantised copy of this table that answers the same queries, with its cost.

        Parameters
        ----------
        method : "pq" or "int8"
            ``"int8"``: a float32 scale and ``d`` int8 codes a row (about 1/4 of the bytes).
            ``"pq"``: product quantisation, ``m`` one-byte codes a row and a codebook of
            ``2**nbits`` centroids per sub-space (see :mod:`rowbook.vectors.quantize`).
        m, dsub, nbits, niter, seed
            The product quantiser's sub-spaces (``m`` of them, or of width ``dsub`` as
            fastText's ``-dsub``), bits per code, k-means rounds and seed. By default ``m``
            is ``0.4 d``: one tenth of the float32 bytes.
        qnorm : bool, default True
            Quantise the rows' directions, and their norms apart in one byte each
            (fastText's ``-qnorm``); False quantises the raw rows.
        rerank : int, optional
            Link the result to this table (:meth:`QuantizedVectors.link
            <rowbook.vectors.quantize.QuantizedVectors.link>`): scans re-score their
            ``rerank`` best candidates exactly. Map this table first
            (``Vectors.load(path, mmap=True)``) so that only the rows read stay in memory.
        recall : float, optional
            Link the result to this table with the pool measured instead of given: the
            fewest best code-scored rows whose exact re-scoring reaches this recall@10
            (``link(recall=)``, printed once, saved with the link). Instead of ``rerank``.
        report : bool
            Measure the loss (recall@10 on ``queries`` random keys, and the change on the
            ``analogies`` and ``pairs`` files) besides the bytes.
        verbose : bool
            Print the cost to standard error (bytes always; the loss with ``report``).

        Returns
        -------
        QuantizedVectors
            With the cost in ``.cost`` (:class:`~rowbook.vectors.quantize.cost.QuantizationCost`).
        """
        options = {
            "m": m,
            "dsub": dsub,
            "nbits": nbits,
            "qnorm": qnorm,
            "niter": niter,
            "seed": seed,
        }
        finish = {
            "rerank": rerank,
            "recall": recall,
            "report": report,
            "analogies": analogies,
            "pairs": pairs,
            "queries": queries,
            "verbose": verbose,
        }
        return self._quantized(method, options, finish)

    def _quantized(self, method: str, options: dict, finish: dict) -> QuantizedVectors:
        """Quantise with the options :meth:`quantize` gathered (a subword table quantises its
        input matrix too)."""
        return quantize_vectors(self, method, options, finish)

    def prune(self, keep: int, *, verbose: bool = True) -> Vectors:
        """The ``keep`` most frequent keys: by ``counts`` (ties in row order), or the first
        ``keep`` rows of a table without counts (a trainer's rows are in falling frequency).

        Returns a new table in memory, rows in falling count; prints the bytes saved to
        standard error unless ``verbose=False``.
        """
        return prune.prune_vectors(self, keep, verbose=verbose)

    # -- files -------------------------------------------------------------------------

    @classmethod
    def _load_quantized(cls, path: PathLike, mmap: bool) -> QuantizedVectors:
        """:meth:`load <rowbook.vectors.table.KeyedTable.load>` of a quantised file
        (``QuantizedVectors.save``): a :class:`~rowbook.vectors.quantize.QuantizedVectors`."""
        return QuantizedVectors.load(path, mmap=mmap)
