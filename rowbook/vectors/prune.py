"""Pruning a table: keep the most frequent keys, and the n-gram buckets they use.

A word-vector table is long-tailed: most rows belong to words seen a handful of times.
:func:`prune_vectors` keeps the ``keep`` most frequent keys (by the table's counts; a table
without counts keeps its first rows, which trainers sort by falling frequency).
:func:`prune_subword` does the same for a fastText table and then drops every hash bucket
of n-grams that no kept word's bag uses, as fastText's ``quantize -cutoff`` does: the kept
words' vectors are unchanged, an unseen word's vector uses the n-grams whose buckets were
kept. Both print the bytes before and after. A quantised table prunes its codes the same
way (:meth:`rowbook.vectors.quantize.QuantizedVectors.prune`), with :func:`kept_rows` and
:func:`kept_subword_rows`.
"""

from __future__ import annotations

import sys
from typing import NamedTuple, TypeVar

import numpy as np

from rowbook.checks import check_int
from rowbook.vectors.subword_bags import SubwordBags
from rowbook.vectors.table import KeyedTable

__all__ = [
    "KeptSubwords",
    "kept_rows",
    "kept_subword_rows",
    "prune_subword",
    "prune_vectors",
    "say_pruned",
]

T = TypeVar("T", bound=KeyedTable)
S = TypeVar("S", bound=SubwordBags)


def kept_rows(vectors: KeyedTable, keep: int) -> np.ndarray:
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


class KeptSubwords(NamedTuple):
    """What pruning a fastText table keeps: the word rows, their words, the rows of the input
    matrix (kept words, then the buckets their bags use) and those buckets' numbers."""

    rows: np.ndarray
    words: list[str]
    input_rows: np.ndarray
    buckets: np.ndarray


def kept_subword_rows(vectors: SubwordBags, keep: int) -> KeptSubwords:
    """The ``keep`` most frequent words of a fastText table and the buckets their bags use."""
    rows = kept_rows(vectors, keep)
    words = [vectors.index_to_key[i] for i in rows]
    full = vectors.kept_buckets  # the buckets the table holds now (None: all)
    _, ids = vectors.bags(words)  # rows of the current input matrix, for the kept words
    nwords = len(vectors)
    used = np.unique(ids[ids >= len(words)].astype(np.int64) - len(words) + nwords)  # current rows
    buckets = used - nwords if full is None else full[used - nwords]  # bucket numbers kept
    return KeptSubwords(rows, words, np.concatenate([rows, used]), buckets)


def prune_vectors(vectors: T, keep: int, *, verbose: bool = True) -> T:
    """``vectors.prune(keep)``: a table of the ``keep`` most frequent keys (see the module)."""
    rows = kept_rows(vectors, keep)
    keys = [vectors.index_to_key[i] for i in rows]
    counts = None if vectors.counts is None else vectors.counts[rows]
    table = vectors.rows_at(rows)  # (keep, d): only the kept rows are read from a mapped file
    pruned = type(vectors)(keys, table, counts, copy=False, dtype=table.dtype)
    say_pruned(verbose, len(vectors), len(keys), vectors.vectors.nbytes, table.nbytes)
    return pruned


def prune_subword(vectors: S, keep: int, *, verbose: bool = True) -> S:
    """``subword_vectors.prune(keep)``: the ``keep`` most frequent words and their buckets."""
    kept = kept_subword_rows(vectors, keep)
    table = vectors.input_matrix[kept.input_rows]  # (keep + kept buckets, d)
    counts = None if vectors.counts is None else vectors.counts[kept.rows]
    pruned = type(vectors)(
        kept.words,
        table,
        minn=vectors.minn,
        maxn=vectors.maxn,
        bucket=vectors.bucket,
        counts=counts,
        kept_buckets=kept.buckets,
    )
    detail = f", {len(kept.buckets):,} of {vectors.bucket:,} n-gram buckets"
    say_pruned(
        verbose, len(vectors), len(kept.words), vectors.input_matrix.nbytes, table.nbytes, detail
    )
    return pruned


def say_pruned(
    verbose: bool, before_rows: int, after_rows: int, before: int, after: int, detail: str = ""
) -> None:
    """Print what pruning kept and the bytes it saved (unless not ``verbose``)."""
    if verbose:
        print(
            f"pruned to {after_rows:,} of {before_rows:,} keys{detail}: {before / 1e6:.1f} MB "
            f"-> {after / 1e6:.1f} MB ({(before - after) / 1e6:.1f} MB saved)",
            file=sys.stderr,
        )
