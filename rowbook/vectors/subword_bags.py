"""SubwordBags: what makes a table a fastText table, its words' bags of n-gram rows.

fastText's input table ``W_in`` has ``nwords + bucket`` rows: one per vocabulary word, then
one per hash bucket of character n-grams (:mod:`rowbook.text.char_ngrams`). A word's vector is
the mean of its bag's rows, ``bag(w) = [id(w)] + n-gram rows of "<w>"``, so a word the corpus
never had still gets a vector from its n-grams. :class:`SubwordBags` adds that to a table
whose input matrix is float (:class:`~rowbook.vectors.SubwordVectors`) or quantised
(:class:`~rowbook.vectors.quantize.table.QuantizedSubwordVectors`): the bags, the vector
of any word, and queries that take unseen words (through
:meth:`~rowbook.vectors.table.KeyedTable.term_rows`, which every query reads its inputs from).

A **pruned** table keeps only the buckets its words use, as fastText's quantised models do
(their ``pruneidx``): ``kept_buckets`` lists the kept bucket numbers, row ``nwords + k``
holds bucket ``kept_buckets[k]``, and an n-gram whose bucket was dropped is left out of the
bag (:func:`keep_buckets`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rowbook.vectors.neighbors import unit_rows
from rowbook.vectors.table import KeyedTable, Term

__all__ = ["SubwordBags", "check_kept", "keep_buckets"]


def _ngrams() -> Any:
    """:mod:`rowbook.text.char_ngrams`, imported when a bag is first made: rowbook.text and
    rowbook.nn cost 0.6 s to import, which a table without subwords (and every
    ``import rowbook.vectors``) does not pay."""
    from rowbook.text import char_ngrams

    return char_ngrams


class SubwordBags(KeyedTable):
    """The bags of a fastText table's words (a mixin: put it before the table class).

    The table sets ``_input`` (its input matrix) and calls :meth:`_set_subwords`; a
    quantised input matrix overrides :meth:`_input_rows`.
    """

    _input: Any
    _kept: np.ndarray | None
    minn: int
    maxn: int
    bucket: int

    @property
    def input_matrix(self) -> np.ndarray:
        """The ``(nwords + bucket, d)`` input table (read-only): word rows, then buckets."""
        return self._input

    @property
    def kept_buckets(self) -> np.ndarray | None:
        """The bucket numbers of the n-gram rows of a pruned table (None: every bucket)."""
        return self._kept

    # -- the bag of a word -------------------------------------------------------------

    def bags(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(starts, ids)`` of every word's bag, rows of this table's input matrix."""
        starts, ids = _ngrams().subword_table(
            words, minn=self.minn, maxn=self.maxn, bucket=self.bucket
        )
        if self._kept is None:
            return starts, ids
        rows, kept = keep_buckets(ids.astype(np.int64), len(words), self._kept)
        bag_of = np.repeat(np.arange(len(words)), np.diff(starts))  # (n,)
        counts = np.bincount(bag_of[kept], minlength=len(words))  # (V,) ids kept per bag
        new_starts = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum(counts, out=new_starts[1:])
        return new_starts, rows.astype(np.int32)

    def _set_subwords(self, minn: int, maxn: int, bucket: int, kept_buckets: Any) -> int:
        """Store the n-gram settings; returns the number of bucket rows the table holds."""
        self.minn, self.maxn, self.bucket = int(minn), int(maxn), int(bucket)
        self._kept = check_kept(kept_buckets, self.bucket)
        return self.bucket if self._kept is None else len(self._kept)

    def _full_bag(self, word: str) -> np.ndarray:
        """The bag of ``word`` in the rows of the unpruned table (``nwords + bucket`` rows)."""
        return _ngrams().subword_ids(
            word,
            minn=self.minn,
            maxn=self.maxn,
            bucket=self.bucket,
            nwords=len(self),
            word_id=self.key_to_index.get(word),
        )

    def subword_ids(self, word: str) -> np.ndarray:
        """Rows of ``input_matrix`` in the bag of ``word``: its own id (if known), then n-grams."""
        ids = self._full_bag(word)
        return ids if self._kept is None else keep_buckets(ids, len(self), self._kept)[0]

    def subwords(self, word: str) -> list[tuple[str, int]]:
        """``(piece, row)`` for each member of the bag of ``word``, the word itself first if known.

        The same pieces and ids as ``fasttext``'s ``model.get_subwords(word)``; a pruned
        table leaves out the n-grams whose bucket it dropped.
        """
        ngrams = (
            _ngrams().char_ngrams(word, self.minn, self.maxn)
            if self.maxn > 0 and self.bucket
            else []
        )
        pieces = ([word] if word in self else []) + ngrams
        ids = self._full_bag(word)
        if self._kept is None:
            return list(zip(pieces, ids.tolist(), strict=True))
        rows, kept = keep_buckets(ids, len(self), self._kept)
        return list(
            zip([p for p, k in zip(pieces, kept, strict=True) if k], rows.tolist(), strict=True)
        )

    def vector_for(self, word: str) -> np.ndarray:
        """The ``(d,)`` vector of any word: the mean of its bag's rows (zeros for an empty bag).

        For a vocabulary word this is its row of :attr:`vectors`; for an unseen word, the
        mean of its n-gram rows, as ``fasttext``'s ``get_word_vector``.
        """
        if word in self:
            return self.get_vector(word)
        return self._bag_mean(self.subword_ids(word).astype(np.int32))

    def _bag_mean(self, ids: np.ndarray) -> np.ndarray:
        """The mean of the input rows ``ids`` (zeros for none), summed in order: (d,)."""
        rows = self._input_rows(ids)  # (n, d)
        order = np.arange(len(ids), dtype=np.int32)
        from rowbook.nn.bag import bag_sum  # imported when first used, as _ngrams says

        return bag_sum(rows, order, np.array([0, len(ids)]), mean=True)[0][0]

    def _input_rows(self, ids: np.ndarray) -> np.ndarray:
        """Rows ``ids`` of the input matrix, (n, d) (a quantised matrix decodes them)."""
        return self._input[ids]

    # -- queries that take unseen words ------------------------------------------------

    def term_rows(
        self, terms: Sequence[Term], normalise_keys: bool
    ) -> tuple[np.ndarray, list[int]]:
        """As :meth:`KeyedTable.term_rows <rowbook.vectors.table.KeyedTable.term_rows>`, with an
        unseen word standing for its :meth:`vector_for`."""
        known = [
            t if not isinstance(t, str) or t in self else self._unseen(t, normalise_keys)
            for t in terms
        ]
        return super().term_rows(known, normalise_keys)

    def _unseen(self, word: str, normalise: bool) -> np.ndarray:
        vector = self.vector_for(word)
        return unit_rows(vector)[1] if normalise else vector


def keep_buckets(ids: np.ndarray, nwords: int, kept: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of a pruned table for bag ids of the full one: ``(rows, kept_mask)``.

    Word ids (below ``nwords``) stay; bucket id ``nwords + b`` becomes ``nwords + k`` where
    ``kept[k] == b``, and is dropped (``kept_mask`` False) when ``b`` is not kept.

    Examples
    --------
    >>> keep_buckets(np.array([1, 10, 8 + 2, 13]), 2, np.array([3, 8, 11]))
    (array([1, 3, 3, 4]), array([ True,  True,  True,  True]))
    >>> keep_buckets(np.array([0, 2 + 5]), 2, np.array([3, 8]))
    (array([0]), array([ True, False]))
    """
    buckets = ids - nwords  # (n,), negative for word ids
    at = np.minimum(np.searchsorted(kept, buckets), max(len(kept) - 1, 0))
    found = buckets < 0
    if len(kept):
        found |= kept[at] == buckets
    rows = np.where(buckets < 0, ids, nwords + at)
    return rows[found], found


def check_kept(kept: Any, bucket: int) -> np.ndarray | None:
    if kept is None:
        return None
    kept = np.asarray(kept, dtype=np.int64)
    if kept.ndim != 1 or (
        kept.size and (kept[0] < 0 or kept[-1] >= bucket or (np.diff(kept) <= 0).any())
    ):
        raise ValueError(f"kept_buckets must be increasing bucket numbers in 0..{bucket - 1}")
    return kept
