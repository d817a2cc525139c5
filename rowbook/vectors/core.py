"""Vectors: a table of keyed vectors that answers similarity queries.

Trainers produce one, loaders read one from word2vec, GloVe or rowbook ``.npz`` files,
and users query it. Conventions follow gensim's ``KeyedVectors`` (4.x), so the same
vectors give the same answers; the few deliberate differences are listed in the
docstrings (search for "gensim").
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from rowbook.checks import InputTypeError, check_finite, check_int, check_number
from rowbook.vectors import evaluate
from rowbook.vectors.index import ApproximateAnswer, IndexKind, VectorIndex
from rowbook.vectors.neighbors import (
    cos_add_direction,
    cos_mul_combine,
    restrict_stop,
    top_k,
    top_k_rows,
    unit_rows,
)
from rowbook.vectors.pairs import PairQueries, Term

if TYPE_CHECKING:
    from rowbook.vectors.quantize.table import QuantizedVectors

__all__ = ["Vectors"]

Weighted = Term | tuple[Term, float]
_SCORES_PER_BLOCK = 1 << 24  # scores of a block of batch queries: 64 MB of float32
Method = Literal["3cosadd", "3cosmul"]
PathLike = str | os.PathLike[str]


class Vectors(PairQueries):
    """Keyed vectors that answer similarity queries, the way gensim's ``KeyedVectors`` do.

    Construction, lookups and files come from :class:`~rowbook.vectors.table.KeyedTable`:
    ``Vectors(keys, vectors, counts=None, *, copy=True)``, ``Vectors.load_word2vec_format``,
    ``Vectors.load_glove``, ``Vectors.load``. Queries use cached unit rows: one
    matrix-vector product and an ``argpartition`` per query.

    Examples
    --------
    >>> table = Vectors(["king", "queen", "apple"], [[1.0, 0.1], [0.9, 0.2], [-0.2, 1.0]])
    >>> table.most_similar("king", topn=1)
    [('queen', 0.99293)]
    >>> table["apple"]
    array([-0.2,  1. ], dtype=float32)
    """

    # -- neighbors ----------------------------------------------------------------

    def most_similar(
        self,
        positive: Weighted | Sequence[Weighted] | None = (),
        negative: Weighted | Sequence[Weighted] | None = (),
        topn: int | None = 10,
        restrict_vocab: int | None = None,
        *,
        approximate: bool = False,
        batch: Sequence[Term] | np.ndarray | None = None,
    ) -> list[tuple[str, float]] | list[list[tuple[str, float]]] | np.ndarray:
        """Keys nearest (by cosine) to the weighted mean of the inputs: 3CosAdd.

        Each input is a key (its unit vector is used), a (d,) vector (used as given), or a
        ``(key_or_vector, weight)`` pair; bare inputs weigh +1 in ``positive`` and -1 in
        ``negative``, and a pair's weight is used as given in either list (as in gensim).
        The query is ``q = sum_i w_i t_i`` made unit length; every row ``x`` scores
        ``cos(x, q)``. Keys given as inputs are never returned.

        Parameters
        ----------
        positive, negative : key, vector, (term, weight), or a sequence of these
        topn : int or None
            Number of ``(key, cosine)`` pairs to return, best first (``0`` gives ``[]``). With
            ``None``, the (V,) array of all cosines, inputs included.
        restrict_vocab : int, optional
            Search only the first ``restrict_vocab`` rows.
        approximate : bool
            Take candidates from the index of :meth:`build_index` instead of scanning every
            row; the scores returned are still exact cosines, only a true neighbour the
            index misses can be absent. The answer is then an
            :class:`~rowbook.vectors.index.ApproximateAnswer`: the same list, with
            ``.recall``, the recall@10 the index measured when it was built.
        batch : sequence of keys or (d,) vectors, or an (n, d) array, optional
            Many queries at once, each on its own (not summed): one list of ``topn``
            ``(key, cosine)`` pairs per query, each the answer of ``most_similar(query)``
            (a key is never its own neighbour), in one call to the index (or one
            matrix-matrix product per block of queries for the exact scan). Instead of
            ``positive`` and ``negative``.

        Examples
        --------
        >>> table = Vectors(["a", "b", "c"], [[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]])
        >>> table.most_similar(batch=["a", "c"], topn=1)
        [[('b', 0.99388)], [('b', 0.11043)]]
        """
        topn, stop = _check_topn(topn), self._stop(restrict_vocab)
        if approximate and topn is None:
            raise ValueError("approximate=True ranks candidates; give topn (an int), not None")
        if batch is not None:
            return self._batch(batch, positive, negative, topn, stop, approximate)
        if topn == 0:
            return []
        if approximate and isinstance(positive, str) and not negative and self._unit is not None:
            row = self.get_index(positive)  # one key: its unit row is the query, as it is
            return self._approximate(self._unit[row], topn, [row], stop)
        terms = _as_terms(positive, 1.0, "positive") + _as_terms(negative, -1.0, "negative")
        if not terms:
            raise ValueError(
                "most_similar needs at least one key or vector in positive or negative"
            )
        vectors, exclude = self._resolve([t for t, _ in terms], normalise_keys=True)
        query = cos_add_direction(vectors, np.array([w for _, w in terms]))  # (d,)
        if approximate:
            return self._approximate(query.astype(np.float32), topn, exclude, stop)
        query = query.astype(np.float32)
        scores = self._cosines(query, stop)  # (stop,)
        if topn is None:
            return scores
        return self._ranked(scores, topn, exclude, lambda rows: self._unit_rows(rows) @ query)

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
        self._index = VectorIndex.build(self.get_normed_vectors(), kind, **options)
        return self._index

    def save_index(self, path: PathLike) -> None:
        """Write the index built by :meth:`build_index` beside the vectors' own file."""
        self._built_index().save(path)

    def load_index(self, path: PathLike) -> VectorIndex:
        """Read an index written by :meth:`save_index` for these vectors (only your own files)."""
        self._index = VectorIndex.load(path, rows=len(self), dim=self.vector_size)
        return self._index

    def _built_index(self) -> VectorIndex:
        if self._index is None:
            raise ValueError(
                "no index: call build_index() (or load_index(path)) before approximate queries"
            )
        return self._index

    def _approximate(
        self, query: np.ndarray, topn: int, exclude: list[int], stop: int
    ) -> list[tuple[str, float]]:
        """Candidates from the index, re-scored exactly, inputs and rows past ``stop`` left out."""
        index = self._built_index()
        found = index.search_batch(query[None, :], self._wanted(topn, exclude, stop))
        return ApproximateAnswer(self._rescored(found[0], query, topn, exclude, stop), index)

    def _wanted(self, topn: int, exclude: list[int], stop: int) -> int:
        """Candidates to ask the index for: ``topn`` past the inputs, four times that when
        only the first ``stop`` rows may answer."""
        wanted = topn + len(exclude)
        return wanted if stop == len(self) else 4 * wanted

    def _rescored(
        self, candidates: np.ndarray, query: np.ndarray, topn: int, exclude: list[int], stop: int
    ) -> list[tuple[str, float]]:
        """The ``topn`` best of ``candidates`` by exact cosine with ``query`` (d,), the rows of
        ``exclude`` and past ``stop`` left out. (Measured per query on 1M rows: the old path,
        a key lookup per candidate and a list of every ranked pair, cost as much as the HNSW
        search itself.)"""
        keep = candidates < stop
        for row in exclude:
            keep &= candidates != row
        candidates = candidates[keep]  # (C,)
        scores = self._unit_rows(candidates) @ query  # (C,) exact cosines
        order = np.argsort(-scores, kind="stable")[:topn]
        keys = self._keys
        return [
            (keys[c], s)
            for c, s in zip(candidates[order].tolist(), scores[order].tolist(), strict=True)
        ]

    def _batch(
        self,
        batch: Sequence[Term] | np.ndarray,
        positive: Any,
        negative: Any,
        topn: int | None,
        stop: int,
        approximate: bool,
    ) -> list[list[tuple[str, float]]]:
        """``most_similar(batch=...)``: each query answered on its own, all at once."""
        if _as_terms(positive, 1.0, "positive") or _as_terms(negative, -1.0, "negative"):
            raise ValueError(
                "most_similar takes batch= (queries answered one by one) or positive / "
                "negative (one query, their weighted mean), not both"
            )
        if topn is None:
            raise ValueError("batch= ranks each query's neighbours; give topn (an int), not None")
        items = list(batch) if not isinstance(batch, np.ndarray) or batch.ndim == 2 else [batch]
        for i, item in enumerate(items):
            if not isinstance(item, str):
                check_finite(f"batch[{i}]", item)
        if not items:
            return []
        terms, excludes = [], []
        for item in items:
            vectors, exclude = self._resolve([item], normalise_keys=True)
            terms.append(vectors[0])
            excludes.append(exclude)
        queries = unit_rows(np.stack(terms))[1].astype(np.float32, copy=False)  # (n, d)
        if topn == 0:
            return [[] for _ in items]
        if approximate:
            wanted = max(self._wanted(topn, exclude, stop) for exclude in excludes)
            index = self._built_index()
            found = index.search_batch(queries, wanted)
            answers = [
                self._rescored(f, q, topn, e, stop)
                for f, q, e in zip(found, queries, excludes, strict=True)
            ]
            return ApproximateAnswer([ApproximateAnswer(a, index) for a in answers], index)
        return self._exact_batch(queries, excludes, topn, stop)

    def _exact_batch(
        self, queries: np.ndarray, excludes: list[list[int]], topn: int, stop: int
    ) -> list[list[tuple[str, float]]]:
        """The exact scan for many queries: a block of queries times the table (one
        matrix-matrix product), each query's inputs masked, the top ``topn`` of each row.
        (Estimated scores, a quantised table's, are re-ranked query by query as
        :meth:`_ranked` does.)"""
        block = max(1, _SCORES_PER_BLOCK // max(stop, 1))
        estimated = self._rerank_pool(topn) is not None
        answers = []
        for start in range(0, len(queries), block):
            chunk, masks = queries[start : start + block], excludes[start : start + block]
            scores = self._cosines(chunk, stop)  # (b, stop)
            if estimated:
                answers += [
                    self._ranked(row, topn, exclude, lambda rows, q=q: self._unit_rows(rows) @ q)
                    for row, q, exclude in zip(scores, chunk, masks, strict=True)
                ]
                continue
            for i, exclude in enumerate(masks):
                scores[i, [row for row in exclude if row < stop]] = -np.inf
            best = top_k_rows(scores, topn)  # (b, topn)
            for i, rows in enumerate(best):
                kept = rows[np.isfinite(scores[i, rows])]  # never a masked input
                pairs = zip(kept.tolist(), scores[i, kept].tolist(), strict=True)
                answers.append([(self._keys[r], s) for r, s in pairs])
        return answers

    def similar_by_vector(
        self, vector: np.ndarray, topn: int | None = 10, restrict_vocab: int | None = None
    ) -> list[tuple[str, float]] | np.ndarray:
        """Keys nearest (by cosine) to ``vector`` (d,); ``most_similar(positive=[vector])``."""
        check_finite("vector", vector)
        return self.most_similar(
            positive=[np.asarray(vector)], topn=topn, restrict_vocab=restrict_vocab
        )

    def similar_by_key(
        self, key: str, topn: int | None = 10, restrict_vocab: int | None = None
    ) -> list[tuple[str, float]] | np.ndarray:
        """Keys nearest (by cosine) to ``key``, itself excluded; ``most_similar(positive=[key])``."""
        return self.most_similar(positive=[key], topn=topn, restrict_vocab=restrict_vocab)

    def similar_by_word(
        self, word: str, topn: int | None = 10, restrict_vocab: int | None = None
    ) -> list[tuple[str, float]] | np.ndarray:
        """gensim's name for :meth:`similar_by_key`."""
        return self.similar_by_key(word, topn=topn, restrict_vocab=restrict_vocab)

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
        topn, stop = _check_topn(topn), self._stop(restrict_vocab)
        if topn == 0:
            return []
        plus, minus = _as_plain_terms(positive, "positive"), _as_plain_terms(negative, "negative")
        if not plus:
            raise ValueError("most_similar_cosmul needs at least one key or vector in positive")
        vectors, exclude = self._resolve(plus + minus, normalise_keys=True)
        cosines = [self._cosines(v[None, :], stop) for v in vectors]  # each (1, stop)
        scores = cos_mul_combine(cosines[: len(plus)], cosines[len(plus) :])[0]
        if topn is None:
            return scores

        def rescore(rows: np.ndarray) -> np.ndarray:
            exact = [(self._unit_rows(rows) @ v)[None] for v in vectors]  # each (1, C)
            return cos_mul_combine(exact[: len(plus)], exact[len(plus) :])[0]

        return self._ranked(scores, topn, exclude, rescore)

    def analogy(
        self,
        a: str,
        b: str,
        c: str,
        *,
        method: Method = "3cosadd",
        restrict_vocab: int | None = None,
    ) -> str:
        """Answer "``a`` is to ``b`` as ``c`` is to ?": the best key other than a, b, c.

        ``method="3cosadd"`` is ``most_similar(positive=[b, c], negative=[a])``;
        ``"3cosmul"`` is the same call to :meth:`most_similar_cosmul`.

        Examples
        --------
        >>> table = Vectors(["man", "woman", "king", "queen"],
        ...                 [[1.0, 0.0, 0.1], [1.0, 1.0, 0.1], [0.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
        >>> table.analogy("man", "woman", "king")
        'queen'
        """
        if method not in ("3cosadd", "3cosmul"):
            raise ValueError(f"method must be '3cosadd' or '3cosmul', got {method!r}")
        query = self.most_similar if method == "3cosadd" else self.most_similar_cosmul
        best = query(positive=[b, c], negative=[a], topn=1, restrict_vocab=restrict_vocab)
        if not best:
            raise ValueError(f"no key other than {a!r}, {b!r}, {c!r} to answer with")
        return best[0][0]

    # -- pairwise ------------------------------------------------------------------

    def relative_cosine_similarity(self, wa: str, wb: str, topn: int = 10) -> float:
        """``cos(wa, wb)`` over the sum of the cosines of ``wa``'s ``topn`` nearest keys.

        Leeuwenberg et al. (2016), eq. 1, as gensim: above about 0.1 (``topn=10``), ``wb``
        is closer to ``wa`` than an arbitrary neighbour.
        """
        nearest = self.similar_by_key(wa, topn=topn)
        if not nearest:
            raise ValueError(f"relative_cosine_similarity needs topn >= 1 neighbors, got {topn!r}")
        return self.similarity(wa, wb) / sum(score for _, score in nearest)

    def doesnt_match(self, keys: Sequence[str]) -> str:
        """The key farthest (by cosine) from the normalised mean of the keys' unit vectors.

        Absent keys are skipped with a warning, as gensim does; ties go to the
        alphabetically smallest key.
        """
        present = [k for k in keys if k in self]
        if len(present) != len(keys):
            warnings.warn(
                f"doesnt_match ignores keys not in the table: {sorted(set(keys) - set(present))}",
                UserWarning,
                stacklevel=2,
            )
        if not present:
            raise ValueError(f"doesnt_match needs at least one known key, got {list(keys)!r}")
        unit = self._unit_rows([self.get_index(k) for k in present])  # (n, d)
        centre = cos_add_direction(unit, np.ones(len(present)))  # (d,)
        return min(zip((unit @ centre).tolist(), present, strict=True))[1]

    # -- evaluation ----------------------------------------------------------------

    def evaluate_analogies(
        self,
        path: PathLike,
        restrict_vocab: int | None = 300_000,
        case_insensitive: bool = True,
        dummy4unknown: bool = False,
        method: Method = "3cosadd",
    ) -> tuple[float, list[dict]]:
        """Accuracy on a questions-words file; see :func:`rowbook.vectors.evaluate.evaluate_analogies`."""
        return evaluate.evaluate_analogies(
            self,
            path,
            restrict_vocab=restrict_vocab,
            case_insensitive=case_insensitive,
            dummy4unknown=dummy4unknown,
            method=method,
        )

    def evaluate_word_pairs(
        self,
        path: PathLike,
        delimiter: str = "\t",
        encoding: str = "utf8",
        restrict_vocab: int | None = 300_000,
        case_insensitive: bool = True,
        dummy4unknown: bool = False,
    ) -> tuple[tuple[float, float], tuple[float, float], float]:
        """Correlation with human similarity scores; see :func:`rowbook.vectors.evaluate.evaluate_word_pairs`."""
        return evaluate.evaluate_word_pairs(
            self,
            path,
            delimiter=delimiter,
            encoding=encoding,
            restrict_vocab=restrict_vocab,
            case_insensitive=case_insensitive,
            dummy4unknown=dummy4unknown,
        )

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
            Link the result to this table (:meth:`QuantizedVectors.link`): scans re-score
            their ``rerank`` best candidates exactly. Map this table first
            (``Vectors.load(path, mmap=True)``) so that only the rows read stay in memory.
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
            "report": report,
            "analogies": analogies,
            "pairs": pairs,
            "queries": queries,
            "verbose": verbose,
        }
        return self._quantized(method, options, finish)

    def _quantized(self, method: str, options: dict, finish: dict) -> QuantizedVectors:
        from rowbook.vectors.quantize.cost import quantize_vectors

        return quantize_vectors(self, method, options, finish)

    def prune(self, keep: int, *, verbose: bool = True) -> Vectors:
        """The ``keep`` most frequent keys: by ``counts`` (ties in row order), or the first
        ``keep`` rows of a table without counts (a trainer's rows are in falling frequency).

        Returns a new table in memory, rows in falling count; prints the bytes saved to
        standard error unless ``verbose=False``.
        """
        from rowbook.vectors.prune import prune_vectors

        return prune_vectors(self, keep, verbose=verbose)

    # -- helpers -------------------------------------------------------------------

    def _stop(self, restrict_vocab: int | None) -> int:
        return restrict_stop(restrict_vocab, len(self))

    def _ranked(
        self,
        scores: np.ndarray,
        topn: int,
        exclude: list[int],
        rescore: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> list[tuple[str, float]]:
        """The ``topn`` best rows not in ``exclude``, as ``(key, score)``, best first.

        A table whose ``scores`` are estimates (a quantised one linked to its float table)
        has a pool (:meth:`_rerank_pool`): that many best rows are re-scored exactly by
        ``rescore(rows)`` and ranked by the exact scores.
        """
        pool = self._rerank_pool(topn + len(exclude))
        if pool is None or rescore is None:
            best = top_k(scores, topn + len(exclude))
            return [(self._keys[i], float(scores[i])) for i in best if i not in exclude][:topn]
        candidates = top_k(scores, pool)
        candidates = candidates[~np.isin(candidates, exclude)]  # (C,)
        exact = rescore(candidates)  # (C,)
        order = np.argsort(-exact, kind="stable")[:topn]
        return [(self._keys[candidates[i]], float(exact[i])) for i in order]

    def _rerank_pool(self, wanted: int) -> int | None:
        """How many candidates to re-score exactly (None: the scores are exact already)."""
        return None


def _check_topn(topn: int | None) -> int | None:
    """``topn`` as an int, or None (every key, by score)."""
    return None if topn is None else check_int("topn", topn, 0)


def _as_terms(
    value: Weighted | Sequence[Weighted] | None, sign: float, name: str
) -> list[tuple[Term, float]]:
    """Inputs of most_similar as (term, weight) pairs: bare terms weigh ``sign``; a vector
    or weight holding inf or nan is refused (``name``: the argument, for the message)."""
    if value is None:
        return []
    if isinstance(value, str) or (isinstance(value, np.ndarray) and value.ndim == 1):
        value = [value]
    pairs = []
    for i, item in enumerate(value):
        if isinstance(item, tuple) and len(item) == 2 and not isinstance(item[1], str):
            term = item[0] if isinstance(item[0], str) else np.asarray(item[0])
            pairs.append((term, check_number(f"{name}[{i}] weight", float(item[1]))))
        else:
            term = item if isinstance(item, str) else np.asarray(item)
            pairs.append((term, sign))
        if not isinstance(term, str):
            check_finite(f"{name}[{i}]", term)
    return pairs


def _as_plain_terms(value: Term | Sequence[Term] | None, name: str) -> list[Term]:
    """Inputs of most_similar_cosmul: keys or vectors, no weights."""
    if value is None:
        return []
    if isinstance(value, str) or (isinstance(value, np.ndarray) and value.ndim == 1):
        value = [value]
    items = list(value)
    if any(isinstance(item, tuple) for item in items):
        raise InputTypeError(
            f"most_similar_cosmul takes keys or vectors in {name}, not (term, weight) pairs"
        )
    for i, item in enumerate(items):
        if not isinstance(item, str):
            check_finite(f"{name}[{i}]", item)
    return [item if isinstance(item, str) else np.asarray(item) for item in items]
