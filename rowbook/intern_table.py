"""Byte strings interned in a compiled, growable open-addressing table: ids in first-sighting order.

Two compiled scanners cut text into tokens and give each token the id of its first
sighting in one pass over UTF-8 bytes: the labelled lines of fastText's supervised mode
(:mod:`rowbook.data.labelled_scan`) and GPT-2's pre-split of a byte-level BPE
(:mod:`rowbook.text.bpe.presplit`, whose table is the encoder's word cache). They share
this table. :class:`InternTable` holds its arrays: ``table`` (a power of two of slots, each
``-1`` or a key's id, probed linearly), and per key its FNV-1a hash (:func:`fnv1a`,
fastText's), its start and length in ``arena``, which holds the keys' bytes one after
another.

A scanner cuts :data:`BLOCK` tokens, writing where each starts and ends, then interns them
with one call of :func:`intern_ranges`, the only place the table is probed. A call per token
costs more than the work: numba passes each array argument with its reference count, and the
probe, inlined or called, made the labelled scanner twice as slow; a call per block costs
nothing, and the block's bounds stay in cache. GPT-2's pre-split interns its blocks with
:func:`intern_front`, which first looks each key of up to 16 bytes up in one of two
direct-mapped caches (the key's bytes are one or two integers: no hash of the bytes, no
probe, no comparison in the arena), and sends only the others to :func:`intern_ranges`. Before a block
the scanner checks :func:`room` (the table stays at most half full) and, if it is short,
returns so that :meth:`InternTable.reserve` grows the arrays, then resumes where it stopped.

Examples
--------
>>> keys = InternTable()
>>> data = np.frombuffer(b"theaa the", dtype=np.uint8)
>>> keys.intern(data, np.array([0, 3, 5, 6]), np.array([3, 5, 6, 9])).tolist()
[0, 1, 2, 0]
>>> keys.keys()
['the', 'aa', ' ']
"""

from __future__ import annotations

import itertools

import numba
import numpy as np

__all__ = [
    "BLOCK",
    "FRONT",
    "InternTable",
    "fnv1a",
    "intern_front",
    "intern_ranges",
    "long_key",
    "lookup_ranges",
    "rehash",
    "room",
    "short_key",
]

_EMPTY = np.int32(-1)
BLOCK = 1024  # tokens a scanner cuts before it interns them: a call per block, its bounds in cache
FRONT_BITS = 15
# slots of the front cache of short keys: 512 KB, which stays in a core's L2; on the 2.5M
# GPT-2 words of NewsArticles' documents 82% hit (73% with 4,096 slots, 83% with 65,536), and
# one thread's warm encoding took 13% less time than with 4,096 (tweets 11%, long words 5%);
# 65,536 was no faster on news and slower on long words
FRONT = 1 << FRONT_BITS
LONG_BITS = 15
# slots of the front cache of keys of 9 to 16 bytes (1 MB): most keys the short front cannot
# hold (14% of the GPT-2 words of news); one thread on NewsArticles' documents took 7% less
# time warm and 5% less cold (news lines 5-8% warm; tweets, long words, Han text within noise)
LONG_FRONT = 1 << LONG_BITS
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # the front slot of a short key: its top bits times this


@numba.njit(cache=True, nogil=True, inline="always")
def fnv1a(data, start, end):  # pragma: no cover - compiled
    """fastText's FNV-1a hash of ``data[start:end]`` (each byte sign-extended, as C's char)."""
    h = np.uint32(2166136261)
    for p in range(start, end):
        h = np.uint32((h ^ np.uint32(np.int32(np.int8(data[p])))) * np.uint32(16777619))
    return h


@numba.njit(cache=True, nogil=True, inline="always")
def _load8(data, start, n):  # pragma: no cover - compiled
    """``data[start:start + n]`` (``n`` of 1 to 8; the data has 8 from ``start``) as one
    little-endian integer."""
    word = np.uint64(0)
    for j in range(8):  # LLVM makes these eight loads one
        word |= np.uint64(data[start + j]) << np.uint64(8 * j)
    return word & (np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - 8 * n))


@numba.njit(cache=True, nogil=True, inline="always")
def short_key(data, start, end):  # pragma: no cover - compiled
    """The bytes ``data[start:end]`` as one little-endian integer if they are 1 to 8 and the
    data has 8 from ``start`` (one load), else 0 (a key of only zero bytes is 0 too)."""
    if end - start > 8 or start + 8 > data.shape[0]:
        return np.uint64(0)
    return _load8(data, start, end - start)


@numba.njit(cache=True, nogil=True, inline="always")
def long_key(data, start, end):  # pragma: no cover - compiled
    """The bytes ``data[start:end]`` as two little-endian integers, the first 8 and the rest,
    if they are 9 to 16 and the data has 16 from ``start`` (two loads), else ``(0, 0)``."""
    if end - start <= 8 or end - start > 16 or start + 16 > data.shape[0]:
        return np.uint64(0), np.uint64(0)
    return _load8(data, start, 8), _load8(data, start + 8, end - start - 8)


@numba.njit(cache=True, nogil=True, inline="always")
def _front_place(data, start, end):  # pragma: no cover - compiled
    """Where the key ``data[start:end]`` goes in the front caches: ``(front, slot, low,
    high)``, ``front`` 1 for the short one (the key ``low``), 2 for the long one (the key's
    halves ``low``, ``high``), 0 for neither; a slot is the top bits of the key (its halves
    mixed) times the golden ratio."""
    word = short_key(data, start, end)
    if word != 0:
        return 1, np.int64((word * _GOLDEN) >> np.uint64(64 - FRONT_BITS)), word, np.uint64(0)
    low, high = long_key(data, start, end)
    if high != 0:
        mixed = (low ^ (high * _GOLDEN)) * _GOLDEN
        return 2, np.int64(mixed >> np.uint64(64 - LONG_BITS)), low, high
    return 0, np.int64(0), low, high


@numba.njit(cache=True, nogil=True, inline="always")
def room(table, key_hash):  # pragma: no cover - compiled
    """Keys the table takes before it must grow: it stays at most half full."""
    return min(table.shape[0] // 2, key_hash.shape[0]) - 2


@numba.njit(cache=True, nogil=True)
def _add(source, start, end, h, slot, table, key_hash, key_start, key_len, arena, state):
    """A new key ``source[start:end]`` (hash ``h``) into the empty ``slot``; returns its id
    (``state``: keys so far, arena bytes used)."""  # pragma: no cover - compiled
    k = state[0]
    state[0] += 1
    base = state[1]
    for i in range(end - start):
        arena[base + i] = source[start + i]
    state[1] += end - start
    key_hash[k], key_start[k], key_len[k] = h, base, end - start
    table[slot] = k
    return k


@numba.njit(cache=True, nogil=True)
def rehash(table, key_hash, n_keys):  # pragma: no cover - compiled
    """Put keys ``0 .. n_keys - 1`` into the empty ``table`` by their hashes."""
    mask = table.shape[0] - 1
    for k in range(n_keys):
        slot = np.int64(key_hash[k]) & mask
        while table[slot] != -1:
            slot = (slot + 1) & mask
        table[slot] = k


@numba.njit(cache=True, nogil=True, inline="always")
def _probe(data, start, end, h, table, key_hash, key_start, key_len, arena):  # pragma: no cover
    """``(slot, id)`` of the key ``data[start:end]`` of hash ``h``: its id, or ``-1`` and the
    empty slot where it would go (linear probing)."""
    mask = table.shape[0] - 1
    slot = np.int64(h) & mask
    while True:
        k = np.int64(table[slot])
        if k == -1:
            return slot, k
        if key_hash[k] == h and key_len[k] == end - start:
            base, same = key_start[k], True
            for j in range(end - start):
                if arena[base + j] != data[start + j]:
                    same = False
                    break
            if same:
                return slot, k
        slot = (slot + 1) & mask


@numba.njit(cache=True, nogil=True)
def intern_ranges(
    data, starts, ends, table, key_hash, key_start, key_len, arena, state, ids
):  # pragma: no cover - compiled
    """The id of each key ``data[starts[i]:ends[i]]`` into ``ids``, a new key added in
    first-sighting order (the caller made room: :func:`room` keys and the bytes).

    The keys are probed in passes over all of them, so that the loads of a pass do not
    wait for one another and the core has many cache misses in flight at once: the hash
    of each key, the key in its first slot, that key's hash, length and start, its bytes.
    Only the keys not found in their first slot (new ones, and those a collision moved)
    are then probed one by one, in order, and added. A key found in the passes was in the
    table before the call, so its id is the one a serial probe gives.
    """
    n = starts.shape[0]
    hashes = np.empty(n, np.uint32)  # (n,)
    found = np.empty(n, np.int64)  # (n,) the key in the first slot, -1 once ruled out
    base = np.empty(n, np.int64)  # (n,) where that key's bytes start in the arena
    mask = table.shape[0] - 1
    for i in range(n):
        hashes[i] = fnv1a(data, starts[i], ends[i])
    for i in range(n):
        found[i] = table[np.int64(hashes[i]) & mask]
    for i in range(n):
        k = found[i]
        if k >= 0:
            if key_hash[k] == hashes[i] and key_len[k] == ends[i] - starts[i]:
                base[i] = key_start[k]
            else:
                found[i] = -1
    for i in range(n):
        if found[i] >= 0:
            b, start = base[i], starts[i]
            for j in range(ends[i] - start):
                if arena[b + j] != data[start + j]:
                    found[i] = -1
                    break
    for i in range(n):
        k = found[i]
        if k < 0:
            start, end, h = starts[i], ends[i], hashes[i]
            slot, k = _probe(data, start, end, h, table, key_hash, key_start, key_len, arena)
            if k == -1:
                k = _add(
                    data, start, end, h, slot, table, key_hash, key_start, key_len, arena, state
                )
        ids[i] = k


@numba.njit(cache=True, nogil=True)
def intern_front(
    data, starts, ends, front, table, key_hash, key_start, key_len, arena, state, ids
):  # pragma: no cover - compiled
    """:func:`intern_ranges` with a direct-mapped front cache of short keys before the table.

    A key of 1 to 8 bytes (:func:`short_key`) is one integer: its slot is that integer's
    Fibonacci hash, and the slot holds a key (``front_key``) and its id and length
    (``front_id``: ``id << 4 | length``), so a hit is exact with no hash of the bytes, no
    probe and no comparison in the arena. A key of 9 to 16 bytes (:func:`long_key`) is two
    integers, looked up the same way in ``front_long`` (each slot its two integers and
    ``id << 5 | length``). Keys that miss are interned by
    :func:`intern_ranges` in one call, in order (new ids stay in first-sighting order), and
    the short ones take their slot. Ids never change but by :meth:`InternTable.clear`,
    which empties the front cache too.
    """
    front_key, front_id, front_long = front  # InternTable.front
    n, missed = starts.shape[0], 0
    miss_starts, miss_ends = np.empty(n, np.int64), np.empty(n, np.int64)  # (n,) at most
    at = np.empty(n, np.int64)  # (n,) the place of each missed key
    for i in range(n):
        front, slot, low, high = _front_place(data, starts[i], ends[i])
        length = ends[i] - starts[i]
        if front == 1 and front_key[slot] == low and (front_id[slot] & 15) == length:
            ids[i] = front_id[slot] >> 4
            continue
        if (
            front == 2
            and front_long[slot, 0] == low
            and front_long[slot, 1] == high
            and (front_long[slot, 2] & 31) == length
        ):
            ids[i] = front_long[slot, 2] >> 5
            continue
        miss_starts[missed], miss_ends[missed], at[missed] = starts[i], ends[i], i
        missed += 1
    miss_ids = np.empty(missed, np.int32)  # (missed,)
    words = (table, key_hash, key_start, key_len, arena, state)
    intern_ranges(data, miss_starts[:missed], miss_ends[:missed], *words, miss_ids)
    for j in range(missed):
        start, end, k = miss_starts[j], miss_ends[j], miss_ids[j]
        ids[at[j]] = k
        front, slot, low, high = _front_place(data, start, end)
        if front == 1:
            front_key[slot], front_id[slot] = low, (np.int64(k) << 4) | (end - start)
        elif front == 2:
            front_long[slot, 0], front_long[slot, 1] = low, high
            front_long[slot, 2] = (np.uint64(k) << np.uint64(5)) | np.uint64(end - start)


@numba.njit(cache=True, nogil=True)
def lookup_ranges(
    data, starts, ends, table, key_hash, key_start, key_len, arena, ids
):  # pragma: no cover - compiled
    """The id of each key ``data[starts[i]:ends[i]]`` into ``ids``, ``-1`` for a key the
    table does not hold; the table is only read (threads may share it)."""
    for i in range(starts.shape[0]):
        start, end = starts[i], ends[i]
        h = fnv1a(data, start, end)
        ids[i] = _probe(data, start, end, h, table, key_hash, key_start, key_len, arena)[1]


class InternTable:
    """The arrays of an interning table (see the module): keys are byte strings, ids count
    from 0 in first-sighting order."""

    def __init__(self) -> None:
        self.table = np.full(1 << 10, _EMPTY, dtype=np.int32)
        self.key_hash = np.zeros(256, dtype=np.uint32)
        self.key_start = np.zeros(256, dtype=np.int64)
        self.key_len = np.zeros(256, dtype=np.int64)
        self.arena = np.zeros(1 << 12, dtype=np.uint8)
        self.state = np.zeros(2, dtype=np.int64)  # keys so far, arena bytes used
        self.front_key = np.zeros(FRONT, dtype=np.uint64)  # a short key a slot (intern_front)
        self.front_id = np.zeros(FRONT, dtype=np.int64)  # its id << 4 | its length
        # a key of 9 to 16 bytes a slot: its first 8 bytes, the rest, its id (32 bytes)
        self.front_long = np.zeros((LONG_FRONT, 4), dtype=np.uint64)

    def __len__(self) -> int:
        return int(self.state[0])

    @property
    def arrays(self) -> tuple[np.ndarray, ...]:
        """What a kernel interns with: ``table, key_hash, key_start, key_len, arena, state``."""
        return self.table, self.key_hash, self.key_start, self.key_len, self.arena, self.state

    @property
    def front(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The front caches :func:`intern_front` reads and fills: ``front_key, front_id,
        front_long``."""
        return self.front_key, self.front_id, self.front_long

    def reserve(self, new_bytes: int, new_keys: int) -> None:
        """Room for ``new_bytes`` more bytes of keys and ``new_keys`` more keys (what
        :func:`room` counts), each array at least doubled when it grows."""
        keys, used = int(self.state[0]), int(self.state[1])
        need = keys + new_keys + 2
        if need > len(self.key_hash):
            grown = max(2 * len(self.key_hash), need)
            for name in ("key_hash", "key_start", "key_len"):
                old = getattr(self, name)
                new = np.zeros(grown, dtype=old.dtype)
                new[:keys] = old[:keys]
                setattr(self, name, new)
        if used + new_bytes > len(self.arena):
            arena = np.zeros(max(2 * len(self.arena), used + new_bytes), dtype=np.uint8)
            arena[:used] = self.arena[:used]
            self.arena = arena
        if 2 * need > len(self.table):
            size = len(self.table)
            while 2 * need > size:
                size *= 2
            self.table = np.full(size, _EMPTY, dtype=np.int32)
            rehash(self.table, self.key_hash, keys)

    def intern(self, data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """The id of each key ``data[starts[i]:ends[i]]`` ``(K,)``, new keys added."""
        ids = np.empty(len(starts), dtype=np.int32)  # (K,)
        self.reserve(int((ends - starts).sum()), len(starts))
        intern_ranges(data, starts, ends, *self.arrays, ids)
        return ids

    def key_bytes(self, start: int = 0, stop: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The bytes of keys ``start`` to ``stop`` ``(N,)`` (consecutive in the arena) and
        their ends in them ``(K,)``."""
        stop = len(self) if stop is None else stop
        lengths = self.key_len[start:stop]
        begin = int(self.key_start[start]) if stop > start else 0
        return self.arena[begin : begin + int(lengths.sum())], np.cumsum(lengths)

    def keys(self, start: int = 0) -> list[str]:
        """Keys ``start`` onwards, decoded from UTF-8, in id order."""
        data, ends = self.key_bytes(start)
        text = data.tobytes()
        return [text[a:b].decode("utf-8") for a, b in itertools.pairwise([0, *ends.tolist()])]

    def clear(self) -> None:
        """Forget every key (the arrays keep their size)."""
        self.table.fill(_EMPTY)
        self.state[:] = 0
        self.front_key.fill(0)
        self.front_long.fill(0)
