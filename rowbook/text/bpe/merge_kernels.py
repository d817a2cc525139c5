"""Numba kernel of byte-level BPE encoding: apply merges inside each word, lowest rank first.

Each word is a linked list of symbols with a min-heap of ``(rank, position)`` entries for
the adjacent pairs that have a merge, the order ``tokenizers`` uses: pop the lowest rank
(leftmost on ties), skip the entry if its pair changed since it was pushed, merge, push
the two new neighbouring pairs. That is ``O(n log n)`` per word of ``n`` bytes, so even a
very long run of one character stays fast. The reference is
:func:`encode_word_reference`: merge the leftmost lowest-rank pair, repeat.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Mapping, Sequence

import numba
import numpy as np

__all__ = [
    "encode_symbols",
    "encode_word_bytes",
    "encode_word_dropout",
    "encode_word_reference",
    "encode_words",
    "merge_steps",
    "pair_key",
]

_LOW = np.int64(0xFFFFFFFF)


def pair_key(left: int, right: int) -> int:
    """The int64 key of a pair: ordering keys orders pairs by ``(left, right)``.

    Examples
    --------
    >>> pair_key(1, 2) < pair_key(1, 3) < pair_key(2, 0)
    True
    """
    return (int(left) << 32) | int(right)


@numba.njit(cache=True, inline="always")
def _lookup(mkeys, mrank, mnew, left, right):
    key = (np.int64(left) << 32) | np.int64(right)
    i = np.searchsorted(mkeys, key)
    if i < mkeys.size and mkeys[i] == key:
        return mrank[i], mnew[i]
    return -1, -1


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
def _merge_all(sym, prv, nxt, n, mkeys, mrank, mnew, hk, hn):
    """Merge one word in place (a linked list over ``sym[:n]``), lowest rank first; returns
    the number of heap operations (pushes and pops), at most ``6 (n - 1)``."""
    size = pushes = pops = 0
    for i in range(n - 1):
        rank, new = _lookup(mkeys, mrank, mnew, sym[i], sym[i + 1])
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
        rank, current = _lookup(mkeys, mrank, mnew, sym[pos], sym[j])
        if rank < 0 or current != new:  # an expired entry
            continue
        sym[pos], sym[j] = new, -1
        nxt[pos] = nxt[j]
        if nxt[j] >= 0:
            prv[nxt[j]] = pos
        if prv[pos] >= 0:
            rank, new = _lookup(mkeys, mrank, mnew, sym[prv[pos]], sym[pos])
            if rank >= 0:
                size = _min_push(hk, hn, size, (rank << 32) | prv[pos], new)
                pushes += 1
        if nxt[pos] >= 0:
            rank, new = _lookup(mkeys, mrank, mnew, sym[pos], sym[nxt[pos]])
            if rank >= 0:
                size = _min_push(hk, hn, size, (rank << 32) | pos, new)
                pushes += 1
    return pushes + pops


@numba.njit(cache=True)
def _steps_kernel(data, byte_ids, mkeys, mrank, mnew):
    n = data.size
    sym = np.empty(n, np.int64)
    prv = np.arange(-1, n - 1)
    nxt = np.arange(1, n + 1)
    for i in range(n):
        sym[i] = byte_ids[data[i]]
    if n > 0:
        nxt[n - 1] = -1
    hk, hn = np.empty(3 * n, np.int64), np.empty(3 * n, np.int64)
    return _merge_all(sym, prv, nxt, n, mkeys, mrank, mnew, hk, hn)


def merge_steps(
    word: bytes, byte_ids: np.ndarray, merge_table: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> int:
    """The heap operations (pushes and pops) the merge kernel makes on one word: the
    measure of its work that the tests hold to a linear bound (each costs ``O(log n)``).

    Examples
    --------
    >>> byte_ids = np.arange(256, dtype=np.int64)
    >>> table = tuple(np.array([x], dtype=np.int64) for x in (pair_key(97, 97), 0, 256))
    >>> merge_steps(b"aaaa", byte_ids, table)  # 3 pairs pushed and popped, one of them stale
    6
    """
    data = np.frombuffer(word, dtype=np.uint8)
    return int(_steps_kernel(data, byte_ids, *merge_table))


@numba.njit(cache=True, nogil=True)
def _encode_kernel(data, offsets, byte_ids, mkeys, mrank, mnew):
    n_words = offsets.size - 1
    longest = 1
    for w in range(n_words):
        longest = max(longest, offsets[w + 1] - offsets[w])
    sym = np.empty(longest, np.int64)  # (L,) symbol ids, -1 once merged into the left one
    prv = np.empty(longest, np.int64)
    nxt = np.empty(longest, np.int64)
    hk = np.empty(3 * longest, np.int64)  # heap of (rank << 32 | position)
    hn = np.empty(3 * longest, np.int64)  # the id each heap entry would create
    out = np.empty(data.size, np.int64)  # (N,) at most one token per byte
    out_offsets = np.zeros(n_words + 1, np.int64)
    o = 0
    for w in range(n_words):
        s, n = offsets[w], offsets[w + 1] - offsets[w]
        for i in range(n):
            sym[i], prv[i], nxt[i] = byte_ids[data[s + i]], i - 1, i + 1
        if n > 0:
            nxt[n - 1] = -1
        _merge_all(sym, prv, nxt, n, mkeys, mrank, mnew, hk, hn)
        i = 0 if n > 0 else -1
        while i >= 0:
            out[o] = sym[i]
            o += 1
            i = nxt[i]
        out_offsets[w + 1] = o
    return out[:o], out_offsets


@numba.njit(cache=True, nogil=True)
def _symbols_kernel(init, offsets, mkeys, mrank, mnew):
    n_words = offsets.size - 1
    longest = 1
    for w in range(n_words):
        longest = max(longest, offsets[w + 1] - offsets[w])
    sym = np.empty(longest, np.int64)  # (L,)
    prv = np.empty(longest, np.int64)
    nxt = np.empty(longest, np.int64)
    hk = np.empty(3 * longest, np.int64)
    hn = np.empty(3 * longest, np.int64)
    out = np.empty(init.size, np.int64)  # (N,) at most one token per symbol
    first = np.empty(init.size, np.int64)  # (N,) the first initial symbol of each token
    out_offsets = np.zeros(n_words + 1, np.int64)
    o = 0
    for w in range(n_words):
        s, n = offsets[w], offsets[w + 1] - offsets[w]
        for i in range(n):
            sym[i], prv[i], nxt[i] = init[s + i], i - 1, i + 1
        if n > 0:
            nxt[n - 1] = -1
        _merge_all(sym, prv, nxt, n, mkeys, mrank, mnew, hk, hn)
        i = 0 if n > 0 else -1
        while i >= 0:
            out[o], first[o] = sym[i], i
            o += 1
            i = nxt[i]
        out_offsets[w + 1] = o
    return out[:o], first[:o], out_offsets


def encode_symbols(
    init: np.ndarray, ends: np.ndarray, merge_table: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`encode_word_bytes` for words already spelled in symbol ids: ``init[ends[i - 1]:
    ends[i]]`` ``(N,)`` (a character-level BPE's characters and byte pieces). Returns the
    ids ``(M,)``, the place in its word of each id's first symbol ``(M,)``, and where each
    word's ids end ``(W,)``.

    Examples
    --------
    >>> table = tuple(np.array([x], dtype=np.int64) for x in (pair_key(1, 2), 0, 7))
    >>> ids, first, ends = encode_symbols(np.array([1, 2, 3, 1, 2]), np.array([3, 5]), table)
    >>> ids.tolist(), first.tolist(), ends.tolist()
    ([7, 3, 7], [0, 2, 0], [2, 3])
    """
    offsets = np.zeros(len(ends) + 1, dtype=np.int64)  # (W + 1,)
    offsets[1:] = ends
    ids, first, bounds = _symbols_kernel(init.astype(np.int64), offsets, *merge_table)
    return ids, first, bounds[1:]


def encode_word_bytes(
    data: np.ndarray,
    ends: np.ndarray,
    byte_ids: np.ndarray,
    merge_table: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """Token ids of the words ``data[ends[i - 1]:ends[i]]`` (UTF-8 bytes ``(N,)``, the first
    word from 0), merges applied lowest rank first: all ids in one array, and where each
    word's ids end ``(W,)``.

    ``merge_table`` is ``(keys, ranks, new_ids)``: int64 arrays sorted by the
    :func:`pair_key` of each merge.
    """
    offsets = np.zeros(len(ends) + 1, dtype=np.int64)  # (W + 1,)
    offsets[1:] = ends
    ids, bounds = _encode_kernel(data, offsets, byte_ids, *merge_table)
    return ids, bounds[1:]


def encode_words(
    words: Sequence[bytes],
    byte_ids: np.ndarray,
    merge_table: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> list[list[int]]:
    """Token ids of each word (UTF-8 bytes), as :func:`encode_word_bytes` gives them."""
    ends = np.cumsum(np.fromiter(map(len, words), dtype=np.int64, count=len(words)))  # (W,)
    data = np.frombuffer(b"".join(words), dtype=np.uint8)  # (N,)
    ids, bounds = encode_word_bytes(data, ends, byte_ids, merge_table)
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
