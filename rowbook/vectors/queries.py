"""Neighbour queries over a keyed table: 3CosAdd and 3CosMul neighbours, analogies, the odd
one out, one query or a batch, exact or from an index.

Functions over a :class:`~rowbook.vectors.table.KeyedTable`, which the methods of the same
names on :class:`~rowbook.vectors.Vectors` call (their docstrings say what each answers, and
how it follows gensim's ``KeyedVectors``). A table answers them through the rows it reads
(:meth:`~rowbook.vectors.table.KeyedTable.cosines`, ``unit_rows_at``, ``term_rows``,
``rerank_pool``), so a mapped, quantised or subword table needs no query code of its own.

One file over 400 lines on purpose: the queries share the terms' parsing, the index path
and the exact re-scoring (the helpers at its bottom); apart, each would import those
private helpers from another file.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from rowbook.checks import InputTypeError, check_finite, check_int, check_number
from rowbook.vectors.index import ApproximateAnswer, VectorIndex
from rowbook.vectors.neighbors import (
    cos_add_direction,
    cos_mul_combine,
    restrict_stop,
    top_k,
    top_k_rows,
    unit_rows,
)
from rowbook.vectors.pairs import similarity
from rowbook.vectors.table import KeyedTable, Term

__all__ = [
    "analogy",
    "built_index",
    "doesnt_match",
    "most_similar",
    "most_similar_cosmul",
    "relative_cosine_similarity",
    "similar_by_key",
    "similar_by_vector",
]

Weighted = Term | tuple[Term, float]
Method = Literal["3cosadd", "3cosmul"]
_SCORES_PER_BLOCK = 1 << 24  # scores of a block of batch queries: 64 MB of float32


def built_index(table: KeyedTable) -> VectorIndex:
    """The index :meth:`~rowbook.vectors.Vectors.build_index` (or ``load_index``) gave ``table``."""
    if table.vector_index is None:
        raise ValueError(
            "no index: call build_index() (or load_index(path)) before approximate queries"
        )
    return table.vector_index


def most_similar(
    table: KeyedTable,
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
    >>> from rowbook import Vectors
    >>> table = Vectors(["a", "b", "c"], [[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]])
    >>> table.most_similar(batch=["a", "c"], topn=1)
    [[('b', 0.99388)], [('b', 0.11043)]]
    """
    topn, stop = _check_topn(topn), restrict_stop(restrict_vocab, len(table))
    if approximate and topn is None:
        raise ValueError("approximate=True ranks candidates; give topn (an int), not None")
    if batch is not None:
        return _batch(table, batch, positive, negative, topn, stop, approximate)
    if topn == 0:
        return []
    if approximate and isinstance(positive, str) and not negative:
        row = table.get_index(positive)  # one key: its unit row is the query, as it is
        return _approximate(table, table.unit_rows_at(row), topn, [row], stop, start=row)
    terms = _as_terms(positive, 1.0, "positive") + _as_terms(negative, -1.0, "negative")
    if not terms:
        raise ValueError("most_similar needs at least one key or vector in positive or negative")
    vectors, exclude = table.term_rows([t for t, _ in terms], normalise_keys=True)
    query = cos_add_direction(vectors, np.array([w for _, w in terms]))  # (d,)
    if approximate:
        return _approximate(table, query.astype(np.float32), topn, exclude, stop)
    query = query.astype(np.float32)
    scores = table.cosines(query, stop)  # (stop,)
    if topn is None:
        return scores
    return _ranked(table, scores, topn, exclude, lambda rows: table.unit_rows_at(rows) @ query)


def _approximate(
    table: KeyedTable,
    query: np.ndarray,
    topn: int,
    exclude: list[int],
    stop: int,
    start: int | None = None,
) -> list[tuple[str, float]]:
    """Candidates from the index, re-scored exactly, inputs and rows past ``stop`` left out;
    ``start``: the query's own row, for a query by key (the index's search starts there)."""
    index = built_index(table)
    rows = None if start is None else np.array([start])
    found = index.search_batch(query[None, :], _wanted(table, topn, exclude, stop), rows)
    answer = _rescored(table, found[0], query, topn, exclude, stop)
    return ApproximateAnswer(answer, index, by_key=start is not None)


def _wanted(table: KeyedTable, topn: int, exclude: list[int], stop: int) -> int:
    """Candidates to ask the index for: ``topn`` past the inputs, four times that when
    only the first ``stop`` rows may answer."""
    wanted = topn + len(exclude)
    return wanted if stop == len(table) else 4 * wanted


def _rescored(
    table: KeyedTable,
    candidates: np.ndarray,
    query: np.ndarray,
    topn: int,
    exclude: list[int],
    stop: int,
) -> list[tuple[str, float]]:
    """The ``topn`` best of ``candidates`` by exact cosine with ``query`` (d,), the rows of
    ``exclude`` and past ``stop`` left out. (Measured per query on 1M rows: the old path,
    a key lookup per candidate and a list of every ranked pair, cost as much as the HNSW
    search itself.)"""
    keep = candidates < stop
    for row in exclude:
        keep &= candidates != row
    candidates = candidates[keep]  # (C,)
    scores = table.unit_rows_at(candidates) @ query  # (C,) exact cosines
    order = np.argsort(-scores, kind="stable")[:topn]
    keys = table.index_to_key
    return [
        (keys[c], s)
        for c, s in zip(candidates[order].tolist(), scores[order].tolist(), strict=True)
    ]


def _batch(
    table: KeyedTable,
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
        vectors, exclude = table.term_rows([item], normalise_keys=True)
        terms.append(vectors[0])
        excludes.append(exclude)
    queries = unit_rows(np.stack(terms))[1].astype(np.float32, copy=False)  # (n, d)
    if topn == 0:
        return [[] for _ in items]
    if approximate:
        wanted = max(_wanted(table, topn, exclude, stop) for exclude in excludes)
        index = built_index(table)
        keys = all(isinstance(item, str) for item in items)  # each search from its own row
        found = index.search_batch(queries, wanted, [e[0] for e in excludes] if keys else None)
        answers = [
            _rescored(table, f, q, topn, e, stop)
            for f, q, e in zip(found, queries, excludes, strict=True)
        ]
        answers = [ApproximateAnswer(a, index, by_key=keys) for a in answers]
        return ApproximateAnswer(answers, index, by_key=keys)
    return _exact_batch(table, queries, excludes, topn, stop)


def _exact_batch(
    table: KeyedTable, queries: np.ndarray, excludes: list[list[int]], topn: int, stop: int
) -> list[list[tuple[str, float]]]:
    """The exact scan for many queries: a block of queries times the table (one
    matrix-matrix product), each query's inputs masked, the top ``topn`` of each row.
    (Estimated scores, a quantised table's, are re-ranked query by query as
    :meth:`_ranked` does.)"""
    block = max(1, _SCORES_PER_BLOCK // max(stop, 1))
    estimated = table.rerank_pool(topn) is not None
    answers = []
    for start in range(0, len(queries), block):
        chunk, masks = queries[start : start + block], excludes[start : start + block]
        scores = table.cosines(chunk, stop)  # (b, stop)
        if estimated:
            answers += [
                _ranked(table, row, topn, exclude, lambda rows, q=q: table.unit_rows_at(rows) @ q)
                for row, q, exclude in zip(scores, chunk, masks, strict=True)
            ]
            continue
        for i, exclude in enumerate(masks):
            scores[i, [row for row in exclude if row < stop]] = -np.inf
        best = top_k_rows(scores, topn)  # (b, topn)
        for i, rows in enumerate(best):
            kept = rows[np.isfinite(scores[i, rows])]  # never a masked input
            pairs = zip(kept.tolist(), scores[i, kept].tolist(), strict=True)
            answers.append([(table.index_to_key[r], s) for r, s in pairs])
    return answers


def similar_by_vector(
    table: KeyedTable, vector: np.ndarray, topn: int | None = 10, restrict_vocab: int | None = None
) -> list[tuple[str, float]] | np.ndarray:
    """``table.similar_by_vector(...)`` for any keyed table: see :meth:`rowbook.vectors.Vectors.similar_by_vector`."""
    check_finite("vector", vector)
    return most_similar(
        table, positive=[np.asarray(vector)], topn=topn, restrict_vocab=restrict_vocab
    )


def similar_by_key(
    table: KeyedTable, key: str, topn: int | None = 10, restrict_vocab: int | None = None
) -> list[tuple[str, float]] | np.ndarray:
    """``table.similar_by_key(...)`` for any keyed table: see :meth:`rowbook.vectors.Vectors.similar_by_key`."""
    return most_similar(table, positive=[key], topn=topn, restrict_vocab=restrict_vocab)


def most_similar_cosmul(
    table: KeyedTable,
    positive: Term | Sequence[Term] | None = (),
    negative: Term | Sequence[Term] | None = (),
    topn: int | None = 10,
    restrict_vocab: int | None = None,
) -> list[tuple[str, float]] | np.ndarray:
    """``table.most_similar_cosmul(...)`` for any keyed table: see :meth:`rowbook.vectors.Vectors.most_similar_cosmul`."""
    topn, stop = _check_topn(topn), restrict_stop(restrict_vocab, len(table))
    if topn == 0:
        return []
    plus, minus = _as_plain_terms(positive, "positive"), _as_plain_terms(negative, "negative")
    if not plus:
        raise ValueError("most_similar_cosmul needs at least one key or vector in positive")
    vectors, exclude = table.term_rows(plus + minus, normalise_keys=True)
    cosines = [table.cosines(v[None, :], stop) for v in vectors]  # each (1, stop)
    scores = cos_mul_combine(cosines[: len(plus)], cosines[len(plus) :])[0]
    if topn is None:
        return scores

    def rescore(rows: np.ndarray) -> np.ndarray:
        exact = [(table.unit_rows_at(rows) @ v)[None] for v in vectors]  # each (1, C)
        return cos_mul_combine(exact[: len(plus)], exact[len(plus) :])[0]

    return _ranked(table, scores, topn, exclude, rescore)


def analogy(
    table: KeyedTable,
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
    >>> from rowbook import Vectors
    >>> table = Vectors(["man", "woman", "king", "queen"],
    ...                 [[1.0, 0.0, 0.1], [1.0, 1.0, 0.1], [0.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    >>> table.analogy("man", "woman", "king")
    'queen'
    """
    if method not in ("3cosadd", "3cosmul"):
        raise ValueError(f"method must be '3cosadd' or '3cosmul', got {method!r}")
    query = most_similar if method == "3cosadd" else most_similar_cosmul
    best = query(table, positive=[b, c], negative=[a], topn=1, restrict_vocab=restrict_vocab)
    if not best:
        raise ValueError(f"no key other than {a!r}, {b!r}, {c!r} to answer with")
    return best[0][0]


def relative_cosine_similarity(table: KeyedTable, wa: str, wb: str, topn: int = 10) -> float:
    """``table.relative_cosine_similarity(...)`` for any keyed table: see :meth:`rowbook.vectors.Vectors.relative_cosine_similarity`."""
    nearest = similar_by_key(table, wa, topn=topn)
    if not nearest:
        raise ValueError(f"relative_cosine_similarity needs topn >= 1 neighbors, got {topn!r}")
    return similarity(table, wa, wb) / sum(score for _, score in nearest)


def doesnt_match(table: KeyedTable, keys: Sequence[str]) -> str:
    """``table.doesnt_match(...)`` for any keyed table: see :meth:`rowbook.vectors.Vectors.doesnt_match`."""
    present = [k for k in keys if k in table]
    if len(present) != len(keys):
        warnings.warn(
            f"doesnt_match ignores keys not in the table: {sorted(set(keys) - set(present))}",
            UserWarning,
            stacklevel=2,
        )
    if not present:
        raise ValueError(f"doesnt_match needs at least one known key, got {list(keys)!r}")
    unit = table.unit_rows_at([table.get_index(k) for k in present])  # (n, d)
    centre = cos_add_direction(unit, np.ones(len(present)))  # (d,)
    return min(zip((unit @ centre).tolist(), present, strict=True))[1]


def _ranked(
    table: KeyedTable,
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
    pool = table.rerank_pool(topn + len(exclude))
    if pool is None or rescore is None:
        best = top_k(scores, topn + len(exclude))
        return [(table.index_to_key[i], float(scores[i])) for i in best if i not in exclude][:topn]
    candidates = top_k(scores, pool)
    candidates = candidates[~np.isin(candidates, exclude)]  # (C,)
    exact = rescore(candidates)  # (C,)
    order = np.argsort(-exact, kind="stable")[:topn]
    return [(table.index_to_key[candidates[i]], float(exact[i])) for i in order]


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
