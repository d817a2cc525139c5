"""A batch's word cache for the compiled batch pass: what each distinct word of the
normalized text gave, found by its code points.

The batch pass (:mod:`rowbook.text.sentencepiece.batch`) encodes a model whose pieces never
join two words word by word: a BPE's merges of a word depend on its characters alone, and a
Unigram's best path of a word does too, up to 32-bit rounding that the cache keeps a bound
for (:mod:`rowbook.text.sentencepiece.unigram_words`). Each
``encode_batch`` makes one cache (:func:`word_cache`) per thread, kept for that thread's
batches and dropped at the end of the call: no cache is shared between threads, and a cold
run costs what the benchmark times.

The table is open addressing on a 64-bit FNV-1a hash of the code points, probed linearly,
at most half full; a slot holds the hash's high 32 bits and where the word's record starts
in one ``int32`` arena (``int64`` made it 10 MB for 10 MB of news lines, a thread: half the
size, a hit reads half as many cache lines). A record is ``[characters n, results r, a number, the n characters,
r (offset, symbol) pairs]``, one piece of memory: a hit reads the slot and the record, two
places, where arrays per field (what this cache held before) read six and cost a Unigram
more than its lattice. The results are a BPE's symbols left and where they start in the
word, or a Unigram's pieces and where they start; the number is a Unigram's bound on the
path scores its path holds for (a BPE leaves it). A word that finds the cache full is
encoded each time.

Examples
--------
>>> cache = word_cache(8)
>>> word = np.array([0x2581, 97, 98], dtype=np.int32)
>>> record, slot, h = find_word(word, 0, 3, cache)
>>> record
-1
>>> record = add_word(word, 0, 3, slot, h, cache, 1, 7)
>>> first, count = results_of(cache, record)
>>> cache[1][first], cache[1][first + 1] = 1, 42  # the result: offset 1, symbol 42
>>> find_word(word, 0, 3, cache)[0] == record, count, number_of(cache, record)
(True, 1, 7)
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = [
    "CACHE_WORDS",
    "MAX_NUMBER",
    "add_word",
    "find_word",
    "has_room",
    "number_of",
    "results_of",
    "word_cache",
]

#: Most distinct words a batch's word cache keeps.
CACHE_WORDS = 1 << 16
#: The largest number a record keeps (an ``int32`` entry of the arena).
MAX_NUMBER = (1 << 31) - 1
#: Arena entries a word takes on average (3 + characters + 2 per result; the arena's size).
_ARENA_PER_WORD = 24
_HEAD = 3  # characters, results, number
_FNV_OFFSET, _FNV_PRIME = np.uint64(0xCBF29CE484222325), np.uint64(0x100000001B3)
_LOW = np.int64(0xFFFFFFFF)


@numba.njit(cache=True)
def word_cache(words):
    """An empty word cache for up to ``min(words, CACHE_WORDS)`` words: ``(slots (T,) int64,
    arena (24 E,) int32, used (2,): words, arena entries)``, ``T`` a power of two at least
    twice ``E``."""
    size = min(words, CACHE_WORDS)
    slots = 16
    while slots < 2 * size:
        slots *= 2
    return (
        np.zeros(slots, np.int64),
        np.empty(size * _ARENA_PER_WORD, np.int32),
        np.zeros(2, np.int64),
    )


@numba.njit(cache=True, inline="always")
def find_word(norm, c0, c1, cache):
    """``(record, slot, tag)`` of the word ``norm[c0:c1]``: where its record starts, or ``-1``
    and the empty slot where :func:`add_word` puts it. Inlined: call it from functions
    compiled with ``_nrt=False``."""
    slots, arena = cache[0], cache[1]
    h = _FNV_OFFSET
    for k in range(c0, c1):
        h = (h ^ np.uint64(norm[k])) * _FNV_PRIME
    tag = np.int64(h >> np.uint64(32)) << 32
    mask = slots.size - 1
    slot = np.int64(h >> np.uint64(20)) & mask  # FNV's low bits mix least
    while slots[slot] != 0:
        if slots[slot] & ~_LOW == tag:
            record = (slots[slot] & _LOW) - 1
            same = arena[record] == c1 - c0
            k = 0
            while same and k < c1 - c0:
                same = arena[record + _HEAD + k] == norm[c0 + k]
                k += 1
            if same:
                return record, slot, tag
        slot = (slot + 1) & mask
    return -1, slot, tag


@numba.njit(cache=True, inline="always")
def has_room(cache, n_chars, n_results):
    """Whether the cache takes one more word of ``n_chars`` characters and ``n_results``
    results."""
    slots, arena, used = cache
    return used[0] < slots.size // 2 and used[1] + _HEAD + n_chars + 2 * n_results <= arena.size


@numba.njit(cache=True, inline="always")
def add_word(norm, c0, c1, slot, tag, cache, n_results, number):
    """Keep the word ``norm[c0:c1]`` (its empty ``slot`` and ``tag`` from :func:`find_word`)
    with room for ``n_results`` results, which the caller writes (:func:`results_of`), and
    ``number`` (``|number| <=`` :data:`MAX_NUMBER`): where its record starts, or ``-1`` when
    the cache is full."""
    slots, arena, used = cache
    if not has_room(cache, c1 - c0, n_results):
        return -1
    record = used[1]
    arena[record], arena[record + 1], arena[record + 2] = c1 - c0, n_results, number
    for k in range(c0, c1):
        arena[record + _HEAD + k - c0] = norm[k]
    slots[slot] = tag | (record + 1)  # 0 marks an empty slot
    used[0] += 1
    used[1] = record + _HEAD + c1 - c0 + 2 * n_results
    return record


@numba.njit(cache=True, inline="always")
def results_of(cache, record):
    """``(first, count)``: result ``j`` of the record is ``(offset, symbol) =
    (arena[first + 2 j], arena[first + 2 j + 1])``."""
    arena = cache[1]
    return record + _HEAD + arena[record], arena[record + 1]


@numba.njit(cache=True, inline="always")
def number_of(cache, record):
    """The number kept with the record's word."""
    return cache[1][record + 2]
