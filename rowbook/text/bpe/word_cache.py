"""The word cache of a byte-level BPE, compiled: the ids of every word met, found by its bytes.

A text's words repeat: of the 2.5 million words of NewsArticles' 3,824 documents, 72,000
are distinct. :class:`WordCache` keeps each word's token ids so a word is encoded by
the merge kernel once. It is an :class:`~rowbook.intern_table.InternTable` of the words'
UTF-8 bytes (ids in first-sighting order) beside one array of token ids that holds the
words' ids one word after another, so word ``k``'s ids are ``ids[bounds[k]:bounds[k + 1]]``.
GPT-2's pre-split interns a text's words straight from its bytes (:meth:`WordCache.scan`,
:mod:`rowbook.text.bpe.presplit`); words already cut in Python go in through
:meth:`WordCache.intern`. Either way the words new to the cache are the last ones: the
caller encodes their bytes (:meth:`WordCache.word_bytes`) and gives their ids
(:meth:`WordCache.set_ids`) before anything else reads the cache, and
:meth:`WordCache.gather` then writes the ids of all the words into one array, no Python
object per word. :meth:`WordCache.since` and :meth:`WordCache.add` carry the words a
worker (a thread with a copy of the cache, or a forked process) encoded back to the calling
process's cache as four arrays.

Examples
--------
>>> cache = WordCache()
>>> words = cache.intern(["ab", "c", "ab"])
>>> words.tolist(), cache.word_bytes(0)[0].tobytes()
([0, 1, 0], b'abc')
>>> cache.set_ids(np.array([7, 8, 9], dtype=np.int32), np.array([2, 3]))
>>> ids, ends = cache.gather(words, np.array([2, 3]))
>>> ids.tolist(), ends.tolist()
([7, 8, 9, 7, 8], [3, 5])
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np

from rowbook.intern_table import InternTable, lookup_ranges
from rowbook.text.bpe.presplit import scan_utf8, unknown_bytes
from rowbook.text.utf8 import utf8_of

__all__ = ["Learned", "WordCache", "interleave"]

Learned = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""Words and their ids, as :meth:`WordCache.since` gives them: the words' bytes ``(N,)``
uint8, where each word ends in them ``(K,)``, their token ids ``(M,)`` int32, and where each
word's ids end in those ``(K,)``."""


@numba.njit(cache=True, nogil=True)
def _gather(words, group_ends, bounds, ids):  # pragma: no cover - compiled
    """The ids of ``words`` in one array, and where each group of words ends in it."""
    total = 0
    for k in words:
        total += bounds[k + 1] - bounds[k]
    out = np.empty(total, np.int32)  # (N,)
    ends = np.empty(group_ends.shape[0], np.int64)  # (G,)
    o, i = 0, 0
    for g in range(group_ends.shape[0]):
        while i < group_ends[g]:
            k = words[i]
            for j in range(bounds[k], bounds[k + 1]):
                out[o] = ids[j]
                o += 1
            i += 1
        ends[g] = o
    return out, ends


def interleave(
    *parts: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """The ids of words that come in several parts, back in word order: each part is
    ``(positions, ids, ends)``, the place of each of its words ``(K,)``, their ids ``(M,)``
    and where each word's ids end in them ``(K,)``. Returns all ids and where each word's
    end, as :meth:`WordCache.set_ids` takes them.

    Examples
    --------
    >>> ids, ends = interleave(
    ...     (np.array([0, 2]), np.array([7, 8, 9]), np.array([2, 3])),
    ...     (np.array([1]), np.array([5]), np.array([1])),
    ... )
    >>> ids.tolist(), ends.tolist()
    ([7, 8, 5, 9], [2, 3, 4])
    """
    counts = np.zeros(sum(len(positions) for positions, _, _ in parts), dtype=np.int64)  # (K,)
    source = np.zeros_like(counts)  # (K,) where each word's ids start in all the parts' ids
    offset = 0
    for positions, ids, ends in parts:
        lengths = np.diff(ends, prepend=0)
        counts[positions] = lengths
        source[positions] = offset + ends - lengths
        offset += len(ids)
    out_ends = np.cumsum(counts)
    shift = np.repeat(source - (out_ends - counts), counts)  # (M,)
    every = np.concatenate([ids for _, ids, _ in parts])
    return every[shift + np.arange(len(shift))], out_ends


def _starts(ends: np.ndarray) -> np.ndarray:
    """Where consecutive ranges start, given where they end (the first at 0)."""
    return np.concatenate([np.zeros(min(len(ends), 1), dtype=np.int64), ends[:-1]])


class WordCache:
    """Each word's token ids, keyed by the word's UTF-8 bytes (see the module)."""

    def __init__(self) -> None:
        self.words = InternTable()
        self.bounds = np.zeros(257, dtype=np.int64)  # (K + 1,) where each word's ids start
        self.ids = np.zeros(1 << 12, dtype=np.int32)  # the ids of every word, in word order
        self.filled = 0  # words whose ids are set
        self.read = 0  # bytes of text (or words) looked up, ever: the scan's work
        self.looked_up = 0  # words looked up, ever: the regex's work where Python cuts them
        self.merged = 0  # bytes of the words encoded for it, ever: the merge kernel's work
        self.gathered = 0  # token ids gathered, ever: the lists the caller makes of them

    def __len__(self) -> int:
        return int(self.words.state[0])

    def clear(self) -> None:
        """Forget every word."""
        self.words.clear()
        self.filled = 0

    def scan(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """GPT-2's words of ``texts`` ``(W,)``, new ones added, and how many words end
        with each text ``(B,)``, cumulated (:func:`~rowbook.text.bpe.presplit.scan_words`)."""
        data, text_ends = utf8_of(texts)
        self.read += len(data)
        words, ends = scan_utf8(self.words, data, text_ends)
        self.looked_up += len(words)
        return words, ends

    def intern(self, words: Sequence[str]) -> np.ndarray:
        """The cache's id of each of ``words`` ``(W,)``, new ones added."""
        data, ends = utf8_of(words)
        self.read += len(data)
        self.looked_up += len(ends)
        return self.words.intern(data, _starts(ends), ends)

    def lookup(self, data: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """The cache's id of each word ``data[ends[i - 1]:ends[i]]`` ``(K,)``, -1 for a word
        it lacks (the cache is only read)."""
        ids = np.empty(len(ends), dtype=np.int32)  # (K,)
        lookup_ranges(data, _starts(ends), ends, *self.words.arrays[:5], ids)
        return ids

    def unknown(self, texts: Sequence[str]) -> tuple[int, int]:
        """The UTF-8 bytes of ``texts`` and the bytes of their words the cache lacks, each
        time one comes (:func:`~rowbook.text.bpe.presplit.unknown_bytes`: the cache is only
        read, no counter moves)."""
        return unknown_bytes(self.words, texts)

    def word_bytes(self, start: int) -> tuple[np.ndarray, np.ndarray]:
        """The bytes of words ``start`` on ``(N,)`` and where each ends in them ``(K,)``."""
        return self.words.key_bytes(start)

    def set_ids(self, ids: np.ndarray, ends: np.ndarray) -> None:
        """Give the next words without ids theirs: ``ids`` ``(M,)`` and where each word's end
        ``(K,)``."""
        start, used = self.filled, int(self.bounds[self.filled])
        if start + len(ends) + 1 > len(self.bounds):
            self.bounds = np.resize(self.bounds, max(2 * len(self.bounds), start + len(ends) + 1))
        if used + len(ids) > len(self.ids):
            self.ids = np.resize(self.ids, max(2 * len(self.ids), used + len(ids)))
        self.ids[used : used + len(ids)] = ids
        self.bounds[start + 1 : start + 1 + len(ends)] = used + ends
        self.filled += len(ends)

    def gather(self, words: np.ndarray, group_ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The ids of ``words`` ``(W,)`` in one ``int32`` array ``(N,)``, and where the ids of
        each group end ``(G,)``: ``group_ends`` says where each group's words end."""
        assert self.filled == len(self), "every word has its ids before a gather"
        ids, ends = _gather(words, group_ends, self.bounds, self.ids)
        self.gathered += len(ids)
        return ids, ends

    def since(self, start: int) -> Learned:
        """Words ``start`` on with their ids, as arrays (what a worker sends back)."""
        data, ends = self.word_bytes(start)
        first, last = self.bounds[start], self.bounds[len(self)]
        return data, ends, self.ids[first:last], self.bounds[start + 1 : len(self) + 1] - first

    def add(self, learned: Learned) -> None:
        """Add distinct words encoded elsewhere, with their ids (those known are skipped)."""
        data, ends, ids, id_ends = learned
        before = len(self)
        new = self.words.intern(data, _starts(ends), ends) >= before  # (K,)
        if not new.all():
            lengths = np.diff(id_ends, prepend=0)
            ids, id_ends = ids[np.repeat(new, lengths)], np.cumsum(lengths[new])
        self.set_ids(ids, id_ends)

    def keep(self, words: np.ndarray, limit: int) -> None:
        """Keep only the distinct ``words`` if there are at most ``limit``, else none."""
        kept = np.zeros(len(self), dtype=bool)  # (K,)
        kept[words] = True
        if kept.sum() > limit:
            self.clear()
            return
        data, ends = self.word_bytes(0)
        lengths, id_lengths = np.diff(ends, prepend=0), np.diff(self.bounds[: len(self) + 1])
        learned = (
            data[np.repeat(kept, lengths)],
            np.cumsum(lengths[kept]),
            self.ids[: self.bounds[len(self)]][np.repeat(kept, id_lengths)],
            np.cumsum(id_lengths[kept]),
        )
        self.clear()
        self.add(learned)
