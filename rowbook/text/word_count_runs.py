"""Word counts within a memory budget, compiled: held in an interning table, spilled by hash, summed back.

The counts of :func:`rowbook.text.word_counts.sum_counts` under ``memory=``: each batch of
counts arrives as :class:`WordBytes` (the words' UTF-8 bytes one after another, where each
ends, their counts; byte-level BPE's compiled pre-split makes them directly, a ``Counter``
is converted by :func:`word_bytes`) and is added to a :class:`HeldWords`, an
:class:`~rowbook.intern_table.InternTable` of the words with a 64-bit count and the
position of its first sighting per word: about ``len(word) + 60`` bytes a word, no Python
object per word. When the held words fill a quarter of the budget (the arrays, grown by
doubling, hold up to twice that, and three times while they grow) they are appended to one
of 16 partition files by a hash of the word (:func:`spill`). At the end each partition is summed alone in a table of its own
(:func:`sum_partition`; one still too large is split again by other bits of the hash),
and the partitions are put back in first-sighting order (:func:`in_first_order`). The
counts and their order are those of a count in RAM.

Examples
--------
>>> held = HeldWords()
>>> held.add(word_bytes({"the": 2, "cat": 1}))
>>> held.add(word_bytes({"hat": 1, "the": 3}))
>>> data, ends, counts, _ = held.arrays()
>>> data.tobytes(), ends.tolist(), counts.tolist()
(b'thecathat', [3, 6, 9], [5, 1, 1])
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

import numba
import numpy as np

from rowbook.intern_table import InternTable
from rowbook.text.utf8 import utf8_of

__all__ = [
    "PARTITIONS",
    "HeldWords",
    "WordBytes",
    "in_first_order",
    "spill",
    "sum_partition",
    "word_bytes",
]

PARTITIONS = 16
_NEVER = np.iinfo(np.int64).max


class WordBytes(NamedTuple):
    """Distinct words and their counts: ``data`` ``(N,)`` uint8, their UTF-8 bytes one after
    another, ``ends`` ``(W,)`` int64 where each ends in it, ``counts`` ``(W,)`` int64."""

    data: np.ndarray
    ends: np.ndarray
    counts: np.ndarray


def word_bytes(counts: Mapping[str, int]) -> WordBytes:
    """``counts`` (distinct ``str`` words) as :class:`WordBytes`, in their order.

    Examples
    --------
    >>> word_bytes({"né": 2, "a": 1})
    WordBytes(data=array([110, 195, 169,  97], dtype=uint8), ends=array([3, 4]), counts=array([2, 1]))
    """
    words = list(counts)
    if not words:
        return WordBytes(np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64))
    data, ends = utf8_of(words)
    return WordBytes(data, ends, np.fromiter(counts.values(), dtype=np.int64, count=len(words)))


@numba.njit(cache=True)
def _accumulate(ids, counts, firsts, total, first):  # pragma: no cover - compiled
    """Add ``counts[i]`` to ``total[ids[i]]``, keep the earliest ``firsts[i]`` in ``first``."""
    for i in range(ids.shape[0]):
        k = ids[i]
        total[k] += counts[i]
        first[k] = min(first[k], firsts[i])


@numba.njit(cache=True)
def _gather(arena, starts, lengths, order):  # pragma: no cover - compiled
    """The bytes of keys ``order`` one after another: ``arena[starts[k]:starts[k] + lengths[k]]``."""
    size = 0
    for k in order:
        size += lengths[k]
    out = np.empty(size, np.uint8)
    o = 0
    for k in order:
        out[o : o + lengths[k]] = arena[starts[k] : starts[k] + lengths[k]]
        o += lengths[k]
    return out


@numba.njit(cache=True)
def _partition(key_hash, depth, parts):  # pragma: no cover - compiled
    """The partition of each key at split ``depth`` of ``parts``: a byte of a mix of its hash,
    another byte at each depth (the table probes with the low bits of the hash itself)."""
    out = np.empty(key_hash.shape[0], np.int64)
    for k in range(key_hash.shape[0]):
        mixed = np.uint64(key_hash[k]) * np.uint64(0x9E3779B97F4A7C15)
        out[k] = (np.int64(mixed >> np.uint64(56 - 8 * depth)) & 0xFF) % parts
    return out


class HeldWords:
    """Words interned in first-sighting order, each with its total count and the position
    (across every batch added) where it was first seen."""

    def __init__(self) -> None:
        self.words = InternTable()
        self.total = np.zeros(0, dtype=np.int64)  # (K,) counts
        self.first = np.zeros(0, dtype=np.int64)  # (K,) first sightings
        self.seen = 0  # words added so far, over all batches

    def __len__(self) -> int:
        return len(self.words)

    @property
    def nbytes(self) -> int:
        """The bytes the held words fill: their UTF-8 bytes, and per word its hash, start,
        length, count and first sighting (36) and two slots of the table (8). The arrays,
        which double as they grow and keep their size when cleared, hold up to twice that."""
        return 44 * len(self) + int(self.words.state[1])

    def add(self, batch: WordBytes, firsts: np.ndarray | None = None) -> None:
        """Add a batch of distinct words; ``firsts`` (each word's first sighting) defaults to
        the batch's place after every word added before."""
        data, ends, counts = batch
        starts = np.zeros_like(ends)
        starts[1:] = ends[:-1]
        ids = self.words.intern(data, starts, ends)
        if len(self.words) > self.total.size:  # grown as the table's key arrays
            size = self.words.key_hash.size
            self.total = np.concatenate([self.total, np.zeros(size - self.total.size, np.int64)])
            self.first = np.concatenate([self.first, np.full(size - self.first.size, _NEVER)])
        if firsts is None:
            firsts = np.arange(self.seen, self.seen + ids.size, dtype=np.int64)
        _accumulate(ids, counts, firsts, self.total, self.first)
        self.seen += ids.size

    def arrays(self, order: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
        """``(data, ends, counts, firsts)`` of the held words in ``order`` (default: id order,
        which is first-sighting order)."""
        n = len(self)
        lengths = self.words.key_len[:n]
        if order is None:
            data, ends = self.words.key_bytes()
            return data.copy(), ends, self.total[:n].copy(), self.first[:n].copy()
        data = _gather(self.words.arena, self.words.key_start, lengths, order)
        return data, np.cumsum(lengths[order]), self.total[order], self.first[order]

    def clear(self) -> None:
        """Forget the words (the arrays keep their size)."""
        self.words.clear()
        self.total.fill(0)
        self.first.fill(_NEVER)


def spill(held: HeldWords, files: list[Path], depth: int) -> None:
    """Append the held words to the partition ``files``, by a hash of each word."""
    n = len(held)
    part = _partition(held.words.key_hash[:n], depth, len(files))  # (K,)
    order = np.argsort(part, kind="stable")
    bounds = np.searchsorted(part[order], np.arange(len(files) + 1))
    for p, path in enumerate(files):
        pick = order[bounds[p] : bounds[p + 1]]
        if pick.size:
            data, ends, counts, firsts = held.arrays(pick)
            with open(path, "ab") as f:
                np.array([pick.size, data.size], dtype=np.int64).tofile(f)
                for array in (ends, counts, firsts):
                    array.tofile(f)
                data.tofile(f)


def _chunks(path: Path) -> Iterator[tuple[WordBytes, np.ndarray]]:
    """The chunks :func:`spill` appended to ``path``: the words and their first sightings."""
    with open(path, "rb") as f:
        while header := f.read(16):
            n, size = np.frombuffer(header, dtype=np.int64).tolist()
            ends, counts, firsts = (np.fromfile(f, dtype=np.int64, count=n) for _ in range(3))
            yield WordBytes(np.fromfile(f, dtype=np.uint8, count=size), ends, counts), firsts


def sum_partition(path: Path, memory: int, depth: int) -> Iterator[tuple[np.ndarray, ...]]:
    """The summed words of one partition file ``(data, ends, counts, firsts)``; a file too
    large to sum in half the budget is split again by other bits of the hash."""
    if not path.exists():
        return
    split = path.stat().st_size * 3 > memory and depth < 4
    files = [path.with_name(f"{path.name}.{p}") for p in range(PARTITIONS)]
    table = HeldWords()
    for words, firsts in _chunks(path):
        if split:
            table.clear()
        table.add(words, firsts)
        if split:
            spill(table, files, depth + 1)
    path.unlink()
    if split:
        for sub in files:
            yield from sum_partition(sub, memory, depth + 1)
    elif len(table):
        yield table.arrays()


@numba.njit(cache=True)
def _merge_runs(data, ends, counts, firsts, run_ends):  # pragma: no cover - compiled
    """The words of runs ``[run_ends[r - 1], run_ends[r])``, each in increasing ``firsts``,
    merged into one increasing order: ``(data, ends, counts)``, a min-heap of the runs'
    heads."""
    k, n = run_ends.shape[0], firsts.shape[0]
    out_data = np.empty(data.shape[0], np.uint8)
    out_ends, out_counts = np.empty(n, np.int64), np.empty(n, np.int64)
    at = np.zeros(k, np.int64)  # (k,) the next word of each run
    at[1:] = run_ends[:-1]
    heap = np.empty(k, np.int64)  # runs, ordered by the first sighting of their next word
    size = 0
    for r in range(k):
        if at[r] < run_ends[r]:
            i = size
            while i > 0 and firsts[at[heap[(i - 1) // 2]]] > firsts[at[r]]:
                heap[i] = heap[(i - 1) // 2]
                i = (i - 1) // 2
            heap[i] = r
            size += 1
    o, b, last = 0, 0, -1
    while size > 0:
        r = heap[0]
        w = at[r]
        if firsts[w] <= last:
            raise AssertionError("a partition's words are not in first-sighting order")
        last = firsts[w]
        start = ends[w - 1] if w > 0 else 0
        out_data[b : b + ends[w] - start] = data[start : ends[w]]
        b += ends[w] - start
        out_ends[o], out_counts[o] = b, counts[w]
        o += 1
        at[r] += 1
        if at[r] == run_ends[r]:  # the run is done: its place goes to the last run
            size -= 1
            r = heap[size]
        i = 0  # sift the run r down from the top
        while 2 * i + 1 < size:
            c = 2 * i + 1
            if c + 1 < size and firsts[at[heap[c + 1]]] < firsts[at[heap[c]]]:
                c += 1
            if firsts[at[heap[c]]] >= firsts[at[r]]:
                break
            heap[i] = heap[c]
            i = c
        if size > 0:
            heap[i] = r
    return out_data, out_ends, out_counts


def in_first_order(parts: list[tuple[np.ndarray, ...]]) -> WordBytes:
    """The words of ``parts`` (each ``(data, ends, counts, firsts)``) in first-sighting order,
    the parts emptied as they are read.

    Each part is already in that order: a partition's words get their ids chunk by chunk,
    each chunk one period of held counts (a range of sightings) in id order, so a word new
    in a later chunk was first seen after every word of the earlier ones. So the parts are
    merged, not sorted (the merge checks the order).
    """
    if not parts:
        return word_bytes({})
    run_ends = np.cumsum([part[1].size for part in parts])  # (k,)
    offsets = np.cumsum([0] + [part[0].size for part in parts[:-1]])
    ends = np.concatenate([part[1] + offset for part, offset in zip(parts, offsets, strict=True)])
    counts = np.concatenate([part[2] for part in parts])
    firsts = np.concatenate([part[3] for part in parts])
    data = np.concatenate([part[0] for part in parts])
    parts.clear()
    return WordBytes(*_merge_runs(data, ends, counts, firsts, run_ends))
