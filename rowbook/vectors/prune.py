"""Pruning a table: keep the most frequent keys, and the n-gram buckets they use.

A word-vector table is long-tailed: most rows belong to words seen a handful of times.
:func:`prune_vectors` keeps the ``keep`` most frequent keys (by the table's counts; a table
without counts keeps its first rows, which trainers sort by falling frequency).
:func:`prune_subword` does the same for a fastText table and then drops every hash bucket
of n-grams that no kept word's bag uses, as fastText's ``quantize -cutoff`` does: the kept
words' vectors are unchanged, an unseen word's vector uses the n-grams whose buckets were
kept. Both print the bytes before and after.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import numpy as np

from rowbook.checks import check_int

if TYPE_CHECKING:
    from rowbook.vectors.core import Vectors
    from rowbook.vectors.subword import SubwordVectors

__all__ = ["kept_rows", "prune_subword", "prune_vectors"]


def kept_rows(vectors: Vectors, keep: int) -> np.ndarray:
    """Rows of the ``keep`` most frequent keys, most frequent first (ties: row order).

    Examples
    --------
    >>> from rowbook import Vectors
    >>> kept_rows(Vectors(["a", "b", "c"], np.eye(3), counts=[1, 5, 5]), 2)
    array([1, 2])
    """
    keep = check_int("keep", keep, 1)
    if vectors.counts is None:
        return np.arange(min(keep, len(vectors)))
    return np.argsort(-vectors.counts, kind="stable")[:keep]


def prune_vectors(vectors: Vectors, keep: int, *, verbose: bool = True) -> Vectors:
    """``vectors.prune(keep)``: a table of the ``keep`` most frequent keys (see the module)."""
    from rowbook.vectors.core import Vectors
    from rowbook.vectors.quantize.table import QuantizedVectors

    rows = kept_rows(vectors, keep)
    keys = [vectors.index_to_key[i] for i in rows]
    counts = None if vectors.counts is None else vectors.counts[rows]
    if isinstance(vectors, QuantizedVectors):
        pruned = QuantizedVectors(keys, vectors.matrix.take(rows), counts)
        before, after = vectors.matrix.nbytes, pruned.matrix.nbytes
    else:
        table = vectors._rows(rows)  # (keep, d): only the kept rows are read from a mapped file
        pruned = Vectors(keys, table, counts, copy=False, dtype=table.dtype)
        before, after = vectors.vectors.nbytes, table.nbytes
    _say(verbose, len(vectors), len(keys), before, after, "")
    return pruned


def prune_subword(vectors: SubwordVectors, keep: int, *, verbose: bool = True) -> SubwordVectors:
    """``subword_vectors.prune(keep)``: the ``keep`` most frequent words and their buckets."""
    from rowbook.vectors.subword import SubwordVectors

    rows = kept_rows(vectors, keep)
    words = [vectors.index_to_key[i] for i in rows]
    full = vectors.kept_buckets  # the buckets the table holds now (None: all)
    _, ids = vectors._bags(words)  # rows of the current input matrix, for the kept words
    nwords = len(vectors)
    used = np.unique(ids[ids >= len(words)].astype(np.int64) - len(words) + nwords)  # current rows
    buckets = used - nwords if full is None else full[used - nwords]  # bucket numbers kept
    input_rows = np.concatenate([rows, used])
    table = vectors.input_matrix[input_rows]  # (keep + kept buckets, d)
    counts = None if vectors.counts is None else vectors.counts[rows]
    pruned = SubwordVectors(
        words,
        table,
        minn=vectors.minn,
        maxn=vectors.maxn,
        bucket=vectors.bucket,
        counts=counts,
        kept_buckets=buckets,
    )
    detail = f", {len(buckets):,} of {vectors.bucket:,} n-gram buckets"
    _say(verbose, nwords, len(words), vectors.input_matrix.nbytes, table.nbytes, detail)
    return pruned


def _say(
    verbose: bool, before_rows: int, after_rows: int, before: int, after: int, detail: str
) -> None:
    if verbose:
        print(
            f"pruned to {after_rows:,} of {before_rows:,} keys{detail}: {before / 1e6:.1f} MB "
            f"-> {after / 1e6:.1f} MB ({(before - after) / 1e6:.1f} MB saved)",
            file=sys.stderr,
        )
