"""Numba kernel of byte-level BPE encoding: apply merges inside each word, lowest rank first.

One file over 400 lines on purpose: the two merge paths (the short word's scan, the long
word's heap), the pair table both probe and the reference both are held to stay side by
side.

The merges are found by pair in an open-addressing hash table (:func:`pair_table`: one
or two probes, where a binary search over 32,000 sorted pairs made fifteen; the kernel ran 2.2x
faster on NewsArticles' 72,000 distinct words). A word of up to :data:`SHORT` bytes (nearly
every word of text) is merged as tiktoken does it: an array of the ranks of its adjacent
pairs, scanned for the lowest (the leftmost on ties), the merged pair's neighbours looked up
again. A longer word is a linked list of symbols with a min-heap of ``(rank, position)``
entries for the adjacent pairs that have a merge, the order ``tokenizers`` uses: pop the
lowest rank (leftmost on ties), skip the entry if its pair changed since it was pushed,
merge, push the two new neighbouring pairs. That is ``O(n log n)`` per word of ``n``
bytes, so even a very long run of one character stays fast, where the scan would be
quadratic. The reference is :func:`encode_word_reference`: merge the leftmost lowest-rank
pair, repeat; both paths are held to it.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Mapping, Sequence

import numba
import numpy as np

from rowbook.text.batches import length_ends

__all__ = [
    "SHORT",
    "PairTable",
    "encode_symbols",
    "encode_word_bytes",
    "encode_word_dropout",
    "encode_word_reference",
    "encode_words",
    "merge_steps",
    "pair_key",
    "pair_table",
]

_LOW = np.int64(0xFFFFFFFF)
_NONE = np.int64(1) << 62  # the rank of a pair without a merge: above every real one
SHORT = 48  # words of up to this many bytes are merged by scanning, longer ones with a heap

PairTable = tuple[np.ndarray, np.ndarray]
"""The merges by pair, hashed (:func:`pair_table`): ``slot_keys`` ``(S,)`` int64 (a
:func:`pair_key`, or -1 for an empty slot) and ``slot_values`` ``(S,)`` int64
(``rank << 32 | new id``)."""


def pair_key(left: int, right: int) -> int:
    """The int64 key of a pair: ordering keys orders pairs by ``(left, right)``.

    Examples
    --------
    >>> pair_key(1, 2) < pair_key(1, 3) < pair_key(2, 0)
    True
    """
    return (int(left) << 32) | int(right)


@numba.njit(cache=True, inline="always")
def _slot(key, mask):  # pragma: no cover - compiled
    """The first slot a pair key probes: Fibonacci hashing of the key."""
    return np.int64((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) & mask


@numba.njit(cache=True)
def _fill(slot_keys, slot_values, keys, ranks, new_ids):  # pragma: no cover - compiled
    mask = slot_keys.size - 1
    for i in range(keys.size):
        s = _slot(keys[i], mask)
        while slot_keys[s] >= 0:
            s = (s + 1) & mask
        slot_keys[s], slot_values[s] = keys[i], (ranks[i] << 32) | new_ids[i]


def pair_table(keys: np.ndarray, ranks: np.ndarray, new_ids: np.ndarray) -> PairTable:
    """The merges ``(keys, ranks, new_ids)`` (distinct :func:`pair_key` keys, each with its
    rank and the id it makes) hashed for the kernels: a table at most half full, so a
    lookup costs one or two probes. A quarter full (one probe nearly always) was slower:
    on NewsArticles' 72,000 distinct words and 32,000 merges the kernel took 39 ms with
    2 MB of table against 34 ms with 1 MB, which stays in the core's cache.

    Examples
    --------
    >>> slot_keys, slot_values = pair_table(np.array([pair_key(1, 2)]), np.array([0]), np.array([7]))
    >>> int((slot_keys >= 0).sum()), int(slot_values[slot_keys >= 0][0])
    (1, 7)
    """
    size = 1 << max(4, (2 * len(keys)).bit_length())  # (S,) a power of two >= 2 M
    slot_keys = np.full(size, -1, dtype=np.int64)
    slot_values = np.zeros(size, dtype=np.int64)
    _fill(
        slot_keys,
        slot_values,
        np.asarray(keys, dtype=np.int64),
        np.asarray(ranks, dtype=np.int64),
        np.asarray(new_ids, dtype=np.int64),
    )
    return slot_keys, slot_values


@numba.njit(cache=True, nogil=True, inline="always")
def _lookup(slot_keys, slot_values, left, right):  # pragma: no cover - compiled
    """``(rank, new id)`` of the merge of ``(left, right)``, or ``(-1, -1)``."""
    key = (np.int64(left) << 32) | np.int64(right)
    mask = slot_keys.size - 1
    s = _slot(key, mask)
    while True:
        k = slot_keys[s]
        if k == key:
            v = slot_values[s]
            return v >> 32, v & _LOW
        if k < 0:
            return -1, -1
        s = (s + 1) & mask


@numba.njit(cache=True, nogil=True)
def _merge_short(sym, n, slot_keys, slot_values, rank, made, start):  # pragma: no cover
    """Merge one short word ``sym[:n]`` in place by scanning the ranks of its adjacent
    pairs (``rank``, ``made``: scratch of ``n`` entries), ``start`` (where each symbol
    starts in the word) shifted with the symbols; returns the word's new length."""
    for i in range(n - 1):
        r, m = _lookup(slot_keys, slot_values, sym[i], sym[i + 1])
        rank[i], made[i] = (r, m) if r >= 0 else (_NONE, -1)
    while n > 1:
        best, at = _NONE, -1
        for i in range(n - 1):
            if rank[i] < best:  # strict: the leftmost of equal ranks
                best, at = rank[i], i
        if at < 0:
            break
        sym[at] = made[at]
        for i in range(at + 1, n - 1):
            sym[i], rank[i], made[i] = sym[i + 1], rank[i + 1], made[i + 1]
            start[i] = start[i + 1]
        n -= 1
        for i in (at - 1, at):
            if 0 <= i < n - 1:
                r, m = _lookup(slot_keys, slot_values, sym[i], sym[i + 1])
                rank[i], made[i] = (r, m) if r >= 0 else (_NONE, -1)
    return n


@numba.njit(cache=True)
def _min_push(hk, hn, size, key, new):
    i = size
    while i > 0 and key < hk[(i - 1) // 2]:
        hk[i], hn[i] = hk[(i - 1) // 2], hn[(i - 1) // 2]
        i = (i - 1) // 2
    hk[i], hn[i] = key, new
    return size + 1


@numba.njit(cache=True)
def _min_pop(hk, hn, size):
    key, new = hk[0], hn[0]
    size -= 1
    last_k, last_n = hk[size], hn[size]
    i = 0
    while 2 * i + 1 < size:
        c = 2 * i + 1
        if c + 1 < size and hk[c + 1] < hk[c]:
            c += 1
        if hk[c] >= last_k:
            break
        hk[i], hn[i] = hk[c], hn[c]
        i = c
    if size > 0:
        hk[i], hn[i] = last_k, last_n
    return key, new, size


@numba.njit(cache=True)
def _merge_all(sym, prv, nxt, n, slot_keys, slot_values, hk, hn):
    """Merge one word in place (a linked list over ``sym[:n]``), lowest rank first; returns
    the number of heap operations (pushes and pops), at most ``6 (n - 1)``."""
    size = pushes = pops = 0
    for i in range(n - 1):
        rank, new = _lookup(slot_keys, slot_values, sym[i], sym[i + 1])
        if rank >= 0:
            size = _min_push(hk, hn, size, (rank << 32) | i, new)
            pushes += 1
    while size > 0:
        key, new, size = _min_pop(hk, hn, size)
        pops += 1
        pos = key & _LOW
        j = nxt[pos]
        if sym[pos] < 0 or j < 0:  # merged away, or the last symbol
            continue
        rank, current = _lookup(slot_keys, slot_values, sym[pos], sym[j])
        if rank < 0 or current != new:  # an expired entry
            continue
        sym[pos], sym[j] = new, -1
        nxt[pos] = nxt[j]
        if nxt[j] >= 0:
            prv[nxt[j]] = pos
        if prv[pos] >= 0:
            rank, new = _lookup(slot_keys, slot_values, sym[prv[pos]], sym[pos])
            if rank >= 0:
                size = _min_push(hk, hn, size, (rank << 32) | prv[pos], new)
                pushes += 1
        if nxt[pos] >= 0:
            rank, new = _lookup(slot_keys, slot_values, sym[pos], sym[nxt[pos]])
            if rank >= 0:
                size = _min_push(hk, hn, size, (rank << 32) | pos, new)
                pushes += 1
    return pushes + pops


@numba.njit(cache=True)
def _steps_kernel(data, byte_ids, slot_keys, slot_values):  # pragma: no cover - compiled
    n = data.size
    sym = np.empty(n, np.int64)
    prv = np.arange(-1, n - 1)
    nxt = np.arange(1, n + 1)
    for i in range(n):
        sym[i] = byte_ids[data[i]]
    if n > 0:
        nxt[n - 1] = -1
    hk, hn = np.empty(3 * n, np.int64), np.empty(3 * n, np.int64)
    return _merge_all(sym, prv, nxt, n, slot_keys, slot_values, hk, hn)


def merge_steps(word: bytes, byte_ids: np.ndarray, pairs: PairTable) -> int:
    """The heap operations (pushes and pops) the heap path makes on one word: the measure
    of its work that the tests hold to a linear bound (each costs ``O(log n)``).

    Examples
    --------
    >>> byte_ids = np.arange(256, dtype=np.int64)
    >>> pairs = pair_table(np.array([pair_key(97, 97)]), np.array([0]), np.array([256]))
    >>> merge_steps(b"aaaa", byte_ids, pairs)  # 3 pairs pushed and popped, one of them stale
    6
    """
    data = np.frombuffer(word, dtype=np.uint8)
    return int(_steps_kernel(data, byte_ids, *pairs))


@numba.njit(cache=True, nogil=True)
def _scratch(offsets):  # pragma: no cover - compiled
    """The work arrays of :func:`_merge_into` for words up to the longest of ``offsets``."""
    longest = 1
    for w in range(offsets.size - 1):
        longest = max(longest, offsets[w + 1] - offsets[w])
    short = min(longest, SHORT)
    return (
        np.empty(longest, np.int64),  # (L,) symbol ids (heap path: -1 once merged away)
        np.empty(longest, np.int64),  # (L,) previous symbol (heap) / first byte (scan)
        np.empty(longest, np.int64),  # (L,) next symbol
        np.empty(3 * longest, np.int64),  # heap of (rank << 32 | position)
        np.empty(3 * longest, np.int64),  # the id each heap entry would create
        np.empty(short, np.int64),  # (S,) rank of each adjacent pair (scan)
        np.empty(short, np.int64),  # (S,) the id each pair makes (scan)
    )


@numba.njit(cache=True, nogil=True)
def _merge_into(init, s, n, slot_keys, slot_values, work, out, first, o):  # pragma: no cover
    """Merge the word ``init[s:s + n]`` and write its ids to ``out[o:]`` and the place in
    the word of each one's first symbol to ``first[o:]``; returns the next ``o``."""
    sym, prv, nxt, hk, hn, rank, made = work
    for i in range(n):
        sym[i] = init[s + i]
    if n <= SHORT:
        for i in range(n):
            prv[i] = i  # where each symbol starts in the word: shifted with it
        m = _merge_short(sym, n, slot_keys, slot_values, rank, made, prv)
        for i in range(m):
            out[o + i], first[o + i] = sym[i], prv[i]
        return o + m
    for i in range(n):
        prv[i], nxt[i] = i - 1, i + 1
    nxt[n - 1] = -1
    _merge_all(sym, prv, nxt, n, slot_keys, slot_values, hk, hn)
    i = 0
    while i >= 0:
        out[o], first[o] = sym[i], i
        o += 1
        i = nxt[i]
    return o


@numba.njit(cache=True, nogil=True)
def _encode_kernel(data, offsets, byte_ids, slot_keys, slot_values):  # pragma: no cover
    init = np.empty(data.size, np.int64)  # (N,) the byte symbols
    for i in range(data.size):
        init[i] = byte_ids[data[i]]
    return _symbols_kernel(init, offsets, slot_keys, slot_values)


@numba.njit(cache=True, nogil=True)
def _symbols_kernel(init, offsets, slot_keys, slot_values):  # pragma: no cover - compiled
    n_words = offsets.size - 1
    work = _scratch(offsets)
    out = np.empty(init.size, np.int64)  # (N,) at most one token per symbol
    first = np.empty(init.size, np.int64)  # (N,) the first initial symbol of each token
    out_offsets = np.zeros(n_words + 1, np.int64)
    o = 0
    for w in range(n_words):
        s, n = offsets[w], offsets[w + 1] - offsets[w]
        o = _merge_into(init, s, n, slot_keys, slot_values, work, out, first, o)
        out_offsets[w + 1] = o
    return out[:o], first[:o], out_offsets


def encode_symbols(
    init: np.ndarray, ends: np.ndarray, pairs: PairTable
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`encode_word_bytes` for words already spelled in symbol ids: ``init[ends[i - 1]:
    ends[i]]`` ``(N,)`` (a character-level BPE's characters and byte pieces). Returns the
    ids ``(M,)``, the place in its word of each id's first symbol ``(M,)``, and where each
    word's ids end ``(W,)``.

    Examples
    --------
    >>> pairs = pair_table(np.array([pair_key(1, 2)]), np.array([0]), np.array([7]))
    >>> ids, first, ends = encode_symbols(np.array([1, 2, 3, 1, 2]), np.array([3, 5]), pairs)
    >>> ids.tolist(), first.tolist(), ends.tolist()
    ([7, 3, 7], [0, 2, 0], [2, 3])
    """
    offsets = np.zeros(len(ends) + 1, dtype=np.int64)  # (W + 1,)
    offsets[1:] = ends
    ids, first, bounds = _symbols_kernel(init.astype(np.int64), offsets, *pairs)
    return ids, first, bounds[1:]


def encode_word_bytes(
    data: np.ndarray, ends: np.ndarray, byte_ids: np.ndarray, pairs: PairTable
) -> tuple[np.ndarray, np.ndarray]:
    """Token ids of the words ``data[ends[i - 1]:ends[i]]`` (UTF-8 bytes ``(N,)``, the first
    word from 0), merges applied lowest rank first: all ids in one array, and where each
    word's ids end ``(W,)``. ``pairs`` is the :func:`pair_table` of the merges.
    """
    offsets = np.zeros(len(ends) + 1, dtype=np.int64)  # (W + 1,)
    offsets[1:] = ends
    ids, _, bounds = _encode_kernel(data, offsets, byte_ids, *pairs)
    return ids, bounds[1:]


def encode_words(words: Sequence[bytes], byte_ids: np.ndarray, pairs: PairTable) -> list[list[int]]:
    """Token ids of each word (UTF-8 bytes), as :func:`encode_word_bytes` gives them."""
    ends = length_ends(words)  # (W,)
    data = np.frombuffer(b"".join(words), dtype=np.uint8)  # (N,)
    ids, bounds = encode_word_bytes(data, ends, byte_ids, pairs)
    ids, bounds = ids.tolist(), [0, *bounds.tolist()]
    return [ids[bounds[i] : bounds[i + 1]] for i in range(len(words))]


def encode_word_reference(
    symbols: Sequence[int], ranks: Mapping[tuple[int, int], tuple[int, int]]
) -> list[int]:
    """Apply merges to one word: merge the leftmost lowest-rank pair until none is left.

    ``ranks[(left, right)] = (rank, new_id)``.

    Examples
    --------
    >>> encode_word_reference([0, 1, 2], {(1, 2): (0, 3), (0, 3): (1, 4)})
    [4]
    """
    symbols = list(symbols)
    while len(symbols) > 1:
        found = [(ranks[p][0], i) for i, p in enumerate(itertools.pairwise(symbols)) if p in ranks]
        if not found:
            break
        _, i = min(found)
        symbols[i : i + 2] = [ranks[(symbols[i], symbols[i + 1])][1]]
    return symbols


def encode_word_dropout(
    symbols: Sequence[int],
    ranks: Mapping[tuple[int, int], tuple[int, int]],
    dropout: float,
    rng: np.random.Generator,
) -> list[int]:
    """Apply merges with BPE-dropout (Provilkov et al. 2020), in ``tokenizers``' order.

    The heap of the kernel above, in Python: each popped merge is skipped with probability
    ``dropout``; skipped merges go back on the heap after the next merge that is made,
    and are lost if none is. ``dropout=0`` gives :func:`encode_word_reference`'s result.

    Examples
    --------
    >>> ranks = {(1, 2): (0, 3), (0, 3): (1, 4)}
    >>> rng = np.random.default_rng(0)
    >>> encode_word_dropout([0, 1, 2], ranks, 0.0, rng), encode_word_dropout([0, 1, 2], ranks, 1.0, rng)
    ([4], [0, 1, 2])
    """
    sym = list(symbols)
    nxt = [*range(1, len(sym)), -1]  # linked list over sym; a merged-away slot is None
    prv = list(range(-1, len(sym) - 1))
    heap = [
        (ranks[p][0], i, ranks[p][1]) for i, p in enumerate(itertools.pairwise(sym)) if p in ranks
    ]
    heapq.heapify(heap)
    skipped: list[tuple[int, int, int]] = []
    while heap:
        top = heapq.heappop(heap)
        if rng.random() < dropout:
            skipped.append(top)
            continue
        for item in skipped:
            heapq.heappush(heap, item)
        skipped.clear()
        _, pos, new = top
        right = nxt[pos] if sym[pos] is not None else -1
        if right < 0 or ranks.get((sym[pos], sym[right]), (0, None))[1] != new:
            continue  # merged away, or the pair changed since the entry was pushed
        sym[pos], sym[right], nxt[pos] = new, None, nxt[right]
        if nxt[pos] >= 0:
            prv[nxt[pos]] = pos
        for left in (prv[pos], pos):
            if left >= 0 and nxt[left] >= 0 and (sym[left], sym[nxt[left]]) in ranks:
                rank, made = ranks[(sym[left], sym[nxt[left]])]
                heapq.heappush(heap, (rank, left, made))
    return [s for s in sym if s is not None]
