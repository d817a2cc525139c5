"""The merge kernels of SentencePiece's BPE (:mod:`rowbook.text.sentencepiece.bpe`): each
sentence's symbols as a linked list, the candidate merges in a heap ordered by (score,
position), a stale entry skipped when popped, as ``bpe_model.cc`` does. Apart from the model
so that the batch pass (:mod:`rowbook.text.sentencepiece.batch`) compiles them in without
importing the model class.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["encode_sentences", "merge_heap", "merge_span", "pair_table"]


@numba.njit(cache=True, inline="always")
def _better(s1, l1, s2, l2):
    return s1 > s2 or (s1 == s2 and l1 < l2)


@numba.njit(cache=True, inline="always")
def _push(hs, hl, hr, hn, size, score, left, right, new):
    i = size
    while i > 0:
        parent = (i - 1) // 2
        if not _better(score, left, hs[parent], hl[parent]):
            break
        hs[i], hl[i], hr[i], hn[i] = hs[parent], hl[parent], hr[parent], hn[parent]
        i = parent
    hs[i], hl[i], hr[i], hn[i] = score, left, right, new
    return size + 1


@numba.njit(cache=True, inline="always")
def _pop(hs, hl, hr, hn, size):
    top = (hs[0], hl[0], hr[0], hn[0])
    size -= 1
    s, lft, r, n = hs[size], hl[size], hr[size], hn[size]
    i = 0
    while 2 * i + 1 < size:
        c = 2 * i + 1
        if c + 1 < size and _better(hs[c + 1], hl[c + 1], hs[c], hl[c]):
            c += 1
        if not _better(hs[c], hl[c], s, lft):
            break
        hs[i], hl[i], hr[i], hn[i] = hs[c], hl[c], hr[c], hn[c]
        i = c
    if size > 0:
        hs[i], hl[i], hr[i], hn[i] = s, lft, r, n
    return top, size


@numba.njit(cache=True, inline="always")
def _merged(keys, new_ids, a, b):
    """The piece ``a + b`` spells, or -1: ``keys`` is an open-addressing table of the pair keys
    ``a << 32 | b`` (power-of-two size, -1 empty), ``new_ids`` the piece at each slot."""
    if a < 0 or b < 0:
        return -1
    key = (np.int64(a) << 32) | np.int64(b)
    mask = keys.size - 1
    i = np.int64((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(20)) & mask
    while keys[i] != -1:
        if keys[i] == key:
            return new_ids[i]
        i = (i + 1) & mask
    return -1


@numba.njit(cache=True)
def pair_table(keys, values):
    size = 1 << max(4, int(np.ceil(np.log2(2 * keys.size + 1))))
    table = np.full(size, -1, np.int64)
    out = np.empty(size, np.int64)
    mask = size - 1
    for k in range(keys.size):
        i = np.int64((np.uint64(keys[k]) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(20)) & mask
        while table[i] != -1:
            i = (i + 1) & mask
        table[i], out[i] = keys[k], values[k]
    return table, out


@numba.njit(cache=True, inline="always")
def _maybe_push(keys, new_ids, scores, sym, frozen, left, right, heap, size):
    if left < 0 or right < 0 or frozen[left] or frozen[right]:
        return size
    new = _merged(keys, new_ids, sym[left], sym[right])
    if new < 0:
        return size
    return _push(heap[0], heap[1], heap[2], heap[3], size, scores[new], left, right, new)


@numba.njit(cache=True, nogil=True, _nrt=False)
def merge_span(sym, frozen, nxt, prv, a, b, heap, keys, new_ids, scores):
    """Merge the symbols ``sym[a:b]`` in place, as ``bpe_model.cc`` does; the symbols left
    are the linked list from ``a`` (``nxt``, ``-1`` at the end; a merged-away symbol is
    ``-3``). ``heap`` is four scratch arrays of at least ``2 * (b - a) + 2`` entries."""
    for i in range(a, b):
        prv[i] = i - 1 if i > a else -1
        nxt[i] = i + 1 if i + 1 < b else -1
    size = 0
    for i in range(a + 1, b):
        size = _maybe_push(keys, new_ids, scores, sym, frozen, i - 1, i, heap, size)
    while size > 0:
        top, size = _pop(heap[0], heap[1], heap[2], heap[3], size)
        left, right, new = top[1], top[2], top[3]
        if (
            sym[right] == -3
            or nxt[left] != right
            or _merged(keys, new_ids, sym[left], sym[right]) != new
        ):
            continue  # merged away, or changed, since the entry was pushed
        sym[left], sym[right] = new, -3
        nxt[left] = nxt[right]
        if nxt[right] >= 0:
            prv[nxt[right]] = left
        size = _maybe_push(keys, new_ids, scores, sym, frozen, prv[left], left, heap, size)
        size = _maybe_push(keys, new_ids, scores, sym, frozen, left, nxt[left], heap, size)


@numba.njit(cache=True)
def merge_heap(n):
    """Scratch arrays of :func:`merge_span` for spans of up to ``n`` symbols."""
    size = 2 * n + 2
    return (
        np.empty(size, np.float64),
        np.empty(size, np.int64),
        np.empty(size, np.int64),
        np.empty(size, np.int64),
    )


@numba.njit(cache=True)
def _encode_kernel(init, frozen_in, starts, keys, new_ids, scores, heap):
    """Merge each sentence's symbols ``init[starts[s]:starts[s + 1]]``; the result is the
    symbols left, with their first initial symbol (for lengths)."""
    n = init.size
    sym = init.copy()
    frozen = frozen_in.copy()
    nxt = np.empty(n, np.int64)
    prv = np.empty(n, np.int64)
    out_sym = np.empty(n, np.int64)
    out_pos = np.empty(n, np.int64)
    bounds = np.zeros(starts.size, np.int64)
    o = 0
    for s in range(starts.size - 1):
        a, b = starts[s], starts[s + 1]
        merge_span(sym, frozen, nxt, prv, a, b, heap, keys, new_ids, scores)
        i = a if b > a else -1
        while i >= 0:
            out_sym[o], out_pos[o] = sym[i], i - a
            o += 1
            i = nxt[i]
        bounds[s + 1] = o
    return out_sym[:o], out_pos[:o], bounds


def encode_sentences(
    init: np.ndarray, frozen: np.ndarray, starts: np.ndarray, tables: tuple
) -> tuple:
    """``(symbols, positions, bounds)`` after merging; ``tables = (pair table, new ids, scores)``:
    the hash table of the ``left << 32 | right`` keys of the pairs that spell a piece (see
    ``pair_table``), that piece's id at each slot."""
    return _encode_kernel(init, frozen, starts, *tables, merge_heap(init.size))
