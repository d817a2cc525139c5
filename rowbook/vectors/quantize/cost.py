"""What quantising costs, measured: bytes before and after, and the loss of the answers.

:func:`quantize_vectors` is ``Vectors.quantize``: it builds the quantised rows, keeps the
cost in ``QuantizedVectors.cost`` and prints it (``verbose``). The bytes are always
counted. With ``report=True`` the loss is measured against the float table:

* **recall@10**: for ``queries`` rows drawn at random (seeded), the share of the float
  table's 10 nearest keys (by cosine, the row itself left out) that the quantised table
  also returns in its 10 nearest; with a link to the float table (``rerank=``), also the
  recall of the re-ranked answers;
* the **analogy accuracy** on a questions-words file (``analogies=``) and the **Spearman
  correlation** on each word-pairs file (``pairs=``: WordSim353, SimLex-999, ...), before
  and after. gensim ships these files (``gensim.test.utils.datapath("questions-words.txt")``,
  ``"wordsim353.tsv"``, ``"simlex999.txt"``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from rowbook.checks import ParameterError, check_choice, check_int
from rowbook.vectors.calibrate import check_recall
from rowbook.vectors.neighbors import top_k_rows
from rowbook.vectors.quantize.int8 import Int8Matrix
from rowbook.vectors.quantize.matrix import QuantizedMatrix
from rowbook.vectors.quantize.pqmatrix import PQMatrix
from rowbook.vectors.quantize.table import QuantizedSubwordVectors, QuantizedVectors
from rowbook.vectors.searchable import SearchableTable
from rowbook.vectors.subword_bags import SubwordBags

__all__ = [
    "QuantizationCost",
    "finish_quantized",
    "measure_cost",
    "nearest",
    "quantize_matrix",
    "quantize_subword",
    "quantize_vectors",
    "recall",
]

PathLike = str | os.PathLike[str]
Method = Literal["int8", "pq"]
_QUERIES_PER_BLOCK = 16  # queries scored against every row at once: a (16, V) scratch


@dataclass
class QuantizationCost:
    """Bytes before and after quantising, and (with ``report=True``) the measured loss.

    ``scores`` maps a measure (``"analogy accuracy (questions-words.txt)"``, ``"Spearman
    (wordsim353.tsv)"``) to its value on the float table and on the quantised one.
    """

    method: str
    rows: int
    dim: int
    bytes_before: int
    bytes_after: int
    recall_at_10: float | None = None
    reranked_recall_at_10: float | None = None
    queries: int = 0
    scores: dict[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        """``bytes_after / bytes_before``."""
        return self.bytes_after / self.bytes_before if self.bytes_before else 0.0

    def __str__(self) -> str:
        lines = [
            f"quantised {self.rows:,} x {self.dim} float32 ({_size(self.bytes_before)}) to "
            f"{self.method}: {_size(self.bytes_after)}, 1/{1 / self.ratio:.1f} of the bytes"
        ]
        if self.recall_at_10 is not None:
            lines.append(
                f"  recall@10 against the float table: {self.recall_at_10:.3f} "
                f"({self.queries} queries)"
            )
        if self.reranked_recall_at_10 is not None:
            lines.append(
                f"  recall@10 re-ranked against the float table: {self.reranked_recall_at_10:.3f}"
            )
        for name, (before, after) in self.scores.items():
            lines.append(f"  {name}: {before:.4f} -> {after:.4f} ({after - before:+.4f})")
        return "\n".join(lines)


def quantize_matrix(
    rows: np.ndarray,
    method: Method,
    *,
    m: int | None,
    dsub: int | None,
    nbits: int,
    qnorm: bool,
    niter: int,
    seed: int,
) -> QuantizedMatrix:
    """The quantised form of ``rows`` (V, d); ``m=None`` and ``dsub=None`` give one tenth of
    the float32 bytes (``m = 0.4 d`` one-byte codes). The options and their defaults are
    :meth:`rowbook.vectors.Vectors.quantize`'s, which passes them all."""
    check_choice("method", method, ("int8", "pq"))
    if method == "int8":
        return Int8Matrix.from_rows(rows)
    if m is None and dsub is None:
        m = max(1, round(0.4 * rows.shape[1]))
    return PQMatrix.from_rows(
        rows, m=m, dsub=dsub, nbits=nbits, qnorm=qnorm, niter=niter, seed=seed
    )


def quantize_vectors(
    vectors: SearchableTable, method: Method, options: dict, finish: dict
) -> QuantizedVectors:
    """``vectors.quantize(...)`` (see :meth:`rowbook.vectors.Vectors.quantize`): ``options``
    for :func:`quantize_matrix`, ``finish`` for :func:`finish_quantized`."""
    matrix = quantize_matrix(vectors.vectors, method, **options)
    quantized = QuantizedVectors(vectors.index_to_key, matrix, vectors.counts)
    return finish_quantized(
        quantized, vectors, _describe(matrix), 4 * matrix.dim * len(matrix), **finish
    )


def quantize_subword(
    vectors: SubwordBags, method: str, options: dict, finish: dict
) -> QuantizedSubwordVectors:
    """``subword_vectors.quantize(...)``: the word rows and the input matrix quantised apart
    (``options`` and ``finish`` as in :func:`~rowbook.vectors.quantize.cost.quantize_vectors`)."""
    words = quantize_matrix(vectors.vectors, method, **options)
    input_ = quantize_matrix(vectors.input_matrix, method, **options)
    quantized = QuantizedSubwordVectors(
        vectors.index_to_key,
        words,
        input_,
        minn=vectors.minn,
        maxn=vectors.maxn,
        bucket=vectors.bucket,
        counts=vectors.counts,
        kept_buckets=vectors.kept_buckets,
    )
    before = vectors.vectors.nbytes + vectors.input_matrix.nbytes
    return finish_quantized(
        quantized, vectors, f"{method} (word rows and input matrix)", before, **finish
    )


def finish_quantized(
    quantized: QuantizedVectors,
    vectors: SearchableTable,
    description: str,
    bytes_before: int,
    *,
    rerank: int | None,
    recall: float | None,
    report: bool,
    analogies: PathLike | None,
    pairs: Sequence[PathLike],
    queries: int,
    verbose: bool,
) -> QuantizedVectors:
    """Link ``quantized`` to ``vectors`` (a fixed ``rerank`` pool, or one measured for
    ``recall``), count its cost (measured with ``report``), print it (``verbose``); returns it.
    The options and their defaults are :meth:`rowbook.vectors.Vectors.quantize`'s."""
    if rerank is not None and recall is not None:
        raise ParameterError(
            "recall",
            recall,
            "None when rerank is given",
            owner="quantize",
            fix="give rerank= (a fixed pool) or recall= (a pool measured for it), not both",
        )
    if rerank is not None:
        quantized.link(vectors, rerank=check_int("rerank", rerank, 0))
    elif recall is not None:
        quantized.link(vectors, recall=check_recall(recall, allow_none=False), verbose=verbose)
    quantized.cost = QuantizationCost(
        description, len(vectors), vectors.vector_size, bytes_before, quantized.nbytes
    )
    if report:
        measure_cost(
            quantized.cost, vectors, quantized, analogies=analogies, pairs=pairs, queries=queries
        )
    if verbose:
        print(quantized.cost, file=sys.stderr)
    return quantized


def measure_cost(
    cost: QuantizationCost,
    vectors: SearchableTable,
    quantized: SearchableTable,
    *,
    analogies: PathLike | None = None,
    pairs: Sequence[PathLike] = (),
    queries: int = 200,
    seed: int = 0,
) -> QuantizationCost:
    """Fill ``cost`` with recall@10 and the evaluation changes of ``quantized`` against ``vectors``."""
    check_int("queries", queries, 1)
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(len(vectors), min(queries, len(vectors)), replace=False))
    truth = nearest(vectors, vectors, rows, 10)
    cost.queries = len(rows)
    cost.recall_at_10 = recall(nearest(quantized, vectors, rows, 10), truth)
    float_table, rerank = (
        getattr(quantized, "float_table", None),
        getattr(quantized, "rerank", None),
    )
    if float_table is not None and rerank:
        found = [
            [
                quantized.get_index(k)
                for k, _ in quantized.most_similar(quantized.index_to_key[r], topn=10)
            ]
            for r in rows
        ]
        cost.reranked_recall_at_10 = recall(found, truth)
    measures = []
    if analogies is not None:
        measures.append(
            (
                f"analogy accuracy ({Path(analogies).name})",
                lambda table: table.evaluate_analogies(analogies)[0],
            )
        )
    for path in pairs:
        measures.append(
            (
                f"Spearman ({Path(path).name})",
                lambda table, path=path: table.evaluate_word_pairs(path)[1][0],
            )
        )
    for name, measure in measures:
        before = measure(vectors)
        if float_table is not None:  # the codes alone, then re-ranked against the float table
            quantized.unlink()
            try:
                cost.scores[name] = (before, measure(quantized))
            finally:
                quantized.link(float_table, rerank=rerank)
            if rerank:
                cost.scores[f"{name}, re-ranked"] = (before, measure(quantized))
        else:
            cost.scores[name] = (before, measure(quantized))
    return cost


def nearest(
    scanned: SearchableTable, asking: SearchableTable, rows: np.ndarray, k: int
) -> list[list[int]]:
    """The ``k`` rows of ``scanned`` nearest (by cosine, from a scan of every row, a quantised
    table's codes not re-ranked) to the unit rows ``rows`` of ``asking``, the row itself left out."""
    found = []
    for start in range(0, len(rows), _QUERIES_PER_BLOCK):
        block = rows[start : start + _QUERIES_PER_BLOCK]
        units = asking.unit_rows_at(block)  # (q, d)
        scores = np.array(scanned.cosines(units, len(scanned)))  # (q, V)
        scores[np.arange(len(block)), block] = -np.inf  # not the row itself
        found += top_k_rows(scores, k).tolist()
    return found


def recall(found: Sequence[Sequence[int]], truth: Sequence[Sequence[int]]) -> float:
    """Mean share of each true list found.

    >>> recall([[1, 2], [3, 9]], [[2, 1], [3, 4]])
    0.75
    """
    return float(
        np.mean([len(set(f) & set(t)) / len(t) for f, t in zip(found, truth, strict=True)])
    )


def _describe(matrix: QuantizedMatrix) -> str:
    if isinstance(matrix, PQMatrix):
        q = matrix.quantizer
        norms = ", norms in 1 byte" if matrix.qnorm else ""
        return f"pq (m={q.nsubq} x {q.nbits} bits{norms})"
    return "int8 (a float32 scale a row)"


def _size(n_bytes: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= size:
            return f"{n_bytes / size:.1f} {unit}"
    return f"{n_bytes} bytes"
