"""The compiled merge loop of BPE training, in memory linear in the distinct words' bytes.

One file over 400 lines on purpose: it is one compiled loop, and its heap, entry arrays and
merge step are parts of that loop that are read (and compiled) together.

:func:`train_kernel` turns words spelled in symbol ids, with their counts, into merges, by
the incremental scheme of Hugging Face ``tokenizers``' ``BpeTrainer`` (the algorithm is
told in :mod:`rowbook.text.bpe.train`). What it holds, and in what:

* the words: their symbols ``sym`` ``(N,)`` (uint16 while every id fits, else int32),
  where each starts ``(W + 1,)`` int64, its current length ``(W,)`` int32 and its count
  ``(W,)`` int64;
* the entries: each a pair key and the list of words it was seen in, the lists one after
  another in ``ent_words`` (int32). The first ones are made in two passes over the words
  (count the distinct words of each pair, then write them where a counting sort puts
  them), with no record per pair occurrence and no sort of them. A popped entry is dead:
  when the written part of ``ent_words`` is full, the lists of the entries still on the
  heap are moved down over the dead ones (:func:`_compact`), and the written part is let
  grow to a quarter more than the live lists and the step's new ones need (the array is
  allocated for the most the lists can hold, three per pair, but a page costs memory only
  once written);
* a merge step writes one record ``(slot, word)`` (two int32) for each pair it creates,
  the slot being the other token and the side of the new one; a counting sort by slot
  groups them into the step's new entries (slot arrays of twice the vocabulary, reset
  after each step), in pair-key order as a sort by key would.

* the pair counts (a typed dict), the heap items ``(count, key, entry)`` and each entry's
  start and length: these grow with the pairs the merges make (1.28 million for 32,000
  merges over 1.27 million distinct words of generated text).

The heap orders items by count, then pair key, then entry number, so the merges are
those of the former layout (a record of ``(int64 key, int32 word)`` per pair occurrence,
argsorted at the start and at every merge): the tests hold the kernel to
:func:`rowbook.text.bpe.classic.learn_merges_recount` and to ``tokenizers``. On those 1.27
million words (9.8 MB) the former layout took 74 s and 35 bytes per byte of distinct
words at its peak, this one 30 s and 25 bytes (load 12; 9 of the 25 are the words and the
first entries, :func:`rowbook.text.bpe.train.merge_floor`).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.typed import Dict

__all__ = ["train_kernel"]

_LOW = np.int64(0xFFFFFFFF)


@numba.njit(cache=True, inline="always")
def _before(c1, k1, e1, c2, k2, e2):  # pragma: no cover - compiled
    # max-heap order: higher count, then smaller pair, then older entry
    if c1 != c2:
        return c1 > c2
    if k1 != k2:
        return k1 < k2
    return e1 < e2


@numba.njit(cache=True)
def _push(hc, hk, he, size, count, key, ent):  # pragma: no cover - compiled
    i = size
    while i > 0:
        parent = (i - 1) // 2
        if not _before(count, key, ent, hc[parent], hk[parent], he[parent]):
            break
        hc[i], hk[i], he[i] = hc[parent], hk[parent], he[parent]
        i = parent
    hc[i], hk[i], he[i] = count, key, ent
    return size + 1


@numba.njit(cache=True)
def _pop(hc, hk, he, size):  # pragma: no cover - compiled
    top = (hc[0], hk[0], he[0])
    size -= 1
    count, key, ent = hc[size], hk[size], he[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and _before(
            hc[child + 1], hk[child + 1], he[child + 1], hc[child], hk[child], he[child]
        ):
            child += 1
        if not _before(hc[child], hk[child], he[child], count, key, ent):
            break
        hc[i], hk[i], he[i] = hc[child], hk[child], he[child]
        i = child
    if size > 0:
        hc[i], hk[i], he[i] = count, key, ent
    return top, size


@numba.njit(cache=True)
def _grown(a, size, fill):  # pragma: no cover - compiled
    """``a`` copied into a new array of ``size`` entries, the new ones set to ``fill``, or
    left unwritten (not yet resident) if it is ``None``."""
    out = np.empty(size, a.dtype)
    out[: a.size] = a
    if fill is not None:
        out[a.size :] = fill
    return out


@numba.njit(cache=True)
def _initial_entries(sym, wstart, wcount):  # pragma: no cover - compiled
    """Pair counts, and one entry per distinct pair with the distinct words it is in.

    Returns ``(pair_count, keys, counts, ent_start, ent_len, ent_words)``, entries in key
    order: pass 1 numbers the pairs by first sighting, sums their counts and counts their
    distinct words; pass 2 writes each word into its pairs' lists (a counting sort).
    """
    index = Dict.empty(key_type=types.int64, value_type=types.int64)  # pair key -> number
    keys = np.empty(256, np.int64)  # (D,) by first sighting
    counts = np.zeros(256, np.int64)  # (D,)
    n_words = np.zeros(256, np.int64)  # (D,) distinct words holding the pair
    last = np.full(256, -1, np.int64)  # (D,) the last word counted for the pair
    n = n_pairs = 0
    for w in range(wcount.size):
        for i in range(wstart[w], wstart[w + 1] - 1):
            n_pairs += 1
            k = (np.int64(sym[i]) << 32) | np.int64(sym[i + 1])
            d = index.get(k, -1) + 0  # + 0: an int, not an optional one
            if d < 0:
                if n == keys.size:
                    keys, counts = _grown(keys, 2 * n, 0), _grown(counts, 2 * n, 0)
                    n_words, last = _grown(n_words, 2 * n, 0), _grown(last, 2 * n, -1)
                d = n
                index[k], keys[d] = d, k
                n += 1
            counts[d] += wcount[w]
            if last[d] != w:
                last[d] = w
                n_words[d] += 1
    order = np.argsort(keys[:n])  # entry e is pair order[e]
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    ent_len = n_words[order]  # (D,)
    ent_start = np.zeros(n, np.int64)  # (D,)
    if n > 1:
        ent_start[1:] = np.cumsum(ent_len)[:-1]
    # (3P,) the most the lists ever hold: each pair merged adds at most two records. Pages
    # are resident once written: compaction keeps the written part near the live lists.
    ent_words = np.empty(3 * n_pairs + 1, np.int32)
    cursor = ent_start.copy()
    last[:n] = -1
    for w in range(wcount.size):
        for i in range(wstart[w], wstart[w + 1] - 1):
            e = rank[index[(np.int64(sym[i]) << 32) | np.int64(sym[i + 1])]]
            if last[e] != w:
                last[e] = w
                ent_words[cursor[e]] = w
                cursor[e] += 1
    pair_count = Dict.empty(key_type=types.int64, value_type=types.int64)
    for e in range(n):
        pair_count[keys[order[e]]] = counts[order[e]]
    return pair_count, keys[order], counts[order], ent_start, ent_len, ent_words


@numba.njit(cache=True)
def _merge_word(sym, s, length, pair, new, cw, pair_count, rec, n, w, tok_len, max_len):
    """Merge ``pair = (a, b)`` in ``sym[s:s+length]`` left to right; return ``(new length, n)``.

    Each pair it creates is recorded in ``rec = (slot, word)`` from ``n`` on, the slot being
    its other token (``(x, new)``) or the vocabulary's size plus it (``(new, x)``). A new
    neighbouring pair is counted only if its two tokens span fewer than ``max_len`` symbols
    together (``tokenizers``' ``max_token_length`` test, strict as there).
    """  # pragma: no cover - compiled
    a, b = pair
    rec_slot, rec_word = rec
    right_side = tok_len.size
    new_len = tok_len[a] + tok_len[b]
    r = 0
    o = 0
    while r < length:
        x = sym[s + r]
        if x == a and r + 1 < length and sym[s + r + 1] == b:
            if o > 0:
                prev = np.int64(sym[s + o - 1])
                k = (prev << 32) | a
                pair_count[k] = pair_count.get(k, 0) - cw
                if tok_len[prev] + new_len < max_len:
                    k = (prev << 32) | new
                    pair_count[k] = pair_count.get(k, 0) + cw
                    rec_slot[n], rec_word[n] = prev, w
                    n += 1
            if r + 2 < length:
                nxt = np.int64(sym[s + r + 2])
                k = (b << 32) | nxt
                pair_count[k] = pair_count.get(k, 0) - cw
                if new_len + tok_len[nxt] < max_len:
                    k = (new << 32) | nxt
                    pair_count[k] = pair_count.get(k, 0) + cw
                    rec_slot[n], rec_word[n] = right_side + nxt, w
                    n += 1
            sym[s + o] = new
            r += 2
        else:
            sym[s + o] = x
            r += 1
        o += 1
    return o, n


@numba.njit(cache=True)
def _count_slots(rec, n, slots):  # pragma: no cover - compiled
    """The distinct words of each slot in the step's ``n`` records; returns how many slots
    were touched (listed in ``slots[3]``) and the words they hold together."""
    rec_slot, rec_word = rec
    count, last, _, touched = slots
    n_touched, total = 0, 0
    for i in range(n):
        s, w = rec_slot[i], rec_word[i]
        if last[s] != w:
            if count[s] == 0:
                touched[n_touched] = s
                n_touched += 1
            count[s] += 1
            last[s] = w
            total += 1
    return n_touched, total


@numba.njit(cache=True)
def _fill_entries(rec, n, n_touched, new, slots, pair_count, ent, hp, sizes):  # pragma: no cover
    """One entry per touched slot whose pair still counts, in pair-key order, its words
    written where a counting sort of the records puts them, pushed on the heap; the slot
    arrays are left reset. ``sizes``: entries, words used in ``ent_words``, heap items."""
    rec_slot, rec_word = rec
    count, last, pos, touched = slots
    ent_start, ent_len, ent_words = ent
    right_side = count.size // 2
    keys = np.empty(n_touched, np.int64)
    for j in range(n_touched):
        s = np.int64(touched[j])
        keys[j] = (s << 32) | new if s < right_side else (new << 32) | (s - right_side)
    for j in np.argsort(keys):
        s = touched[j]
        c = pair_count.get(keys[j], 0)
        if c > 0:
            e = sizes[0]
            ent_start[e], ent_len[e], pos[s] = sizes[1], count[s], sizes[1]
            sizes[0] += 1
            sizes[1] += count[s]
            sizes[2] = _push(hp[0], hp[1], hp[2], sizes[2], c, keys[j], e)
        else:
            pos[s] = -1
        last[s] = -1
    for i in range(n):
        s, w = rec_slot[i], rec_word[i]
        if pos[s] >= 0 and last[s] != w:
            ent_words[pos[s]] = w
            pos[s] += 1
            last[s] = w
    for j in range(n_touched):
        count[touched[j]], last[touched[j]] = 0, -1


@numba.njit(cache=True)
def _compact(ent, live, n_live):  # pragma: no cover - compiled
    """Move the word lists of the ``live`` entries (the heap's) down over the dead ones, in
    entry order (their lists are in that order); returns the words used after."""
    ent_start, ent_len, ent_words = ent
    used = 0
    for e in np.sort(live[:n_live]):
        start = ent_start[e]
        for t in range(ent_len[e]):
            ent_words[used + t] = ent_words[start + t]
        ent_start[e] = used
        used += ent_len[e]
    return used


@numba.njit(cache=True)
def _room(ent, hp, sizes, n_touched, total):  # pragma: no cover - compiled
    """``ent`` and ``hp`` with room for ``n_touched`` more entries and heap items holding
    ``total`` words: dead lists compacted first, arrays grown only if that is not enough."""
    ent_start, ent_len, ent_words = ent
    if sizes[0] + n_touched > ent_start.size:
        size = 2 * (sizes[0] + n_touched)
        ent_start, ent_len = _grown(ent_start, size, None), _grown(ent_len, size, None)
    if sizes[2] + n_touched > hp[0].size:
        size = 2 * (sizes[2] + n_touched)
        hp = (_grown(hp[0], size, None), _grown(hp[1], size, None), _grown(hp[2], size, None))
    if sizes[1] + total > sizes[3]:  # past the written part: compact, then write further
        sizes[1] = _compact((ent_start, ent_len, ent_words), hp[2], sizes[2])
        sizes[3] = max(sizes[3], (sizes[1] + total) + (sizes[1] + total) // 4)
        if sizes[1] + total > ent_words.size:  # not reached: 3P bounds the records
            ent_words = _grown(ent_words, sizes[1] + total, None)
    return (ent_start, ent_len, ent_words), hp


@numba.njit(cache=True)
def _token_id(a, b, tok_hash, tok_pow, tok_len, index, n_tokens, rest):  # pragma: no cover
    """Id of the spelling ``a + b``: an existing token with that spelling, or ``n_tokens``.

    ``rest = (hash, pow, flag)`` describe each token's spelling without a continuing-subword
    prefix (WordPiece's ``"##"``; ``flag`` marks the tokens that have one): the merged token
    is ``a`` followed by ``b`` without its prefix. A byte-level BPE passes ``tok_hash``,
    ``tok_pow`` and zeros, so ``a + b`` is spelled in full.
    """
    rest_hash, rest_pow, flag = rest
    h = tok_hash[a] * rest_pow[b] + rest_hash[b]  # polynomial hash of the spelling, mod 2**64
    p = tok_pow[a] * rest_pow[b]
    new = index.get(h ^ p, -1)
    if new < 0:
        new = n_tokens
        if flag[a]:
            rest_hash[new], rest_pow[new] = (
                rest_hash[a] * rest_pow[b] + rest_hash[b],
                rest_pow[a] * rest_pow[b],
            )
        else:
            rest_hash[new], rest_pow[new] = h, p
        tok_hash[new], tok_pow[new], flag[new] = h, p, flag[a]
        tok_len[new] = tok_len[a] + tok_len[b]
        index[h ^ p] = new
    return new


@numba.njit(cache=True)
def _start(sym, wstart, wcount, tok_hash, tok_pow):  # pragma: no cover - compiled
    """The initial entries on the heap, and the spelling index of the existing tokens."""
    pair_count, keys, counts, ent_start, ent_len, ent_words = _initial_entries(sym, wstart, wcount)
    size = max(2 * keys.size, 1024)
    ent = (_grown(ent_start, size, None), _grown(ent_len, size, None), ent_words)
    hp = (np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size, np.int64))
    sizes = np.zeros(4, np.int64)  # entries, words used in ent_words, heap items, word limit
    sizes[0], sizes[1] = keys.size, ent_len.sum()
    sizes[3] = sizes[1] + sizes[1] // 4 + 1024  # words written before the first compaction
    for e in range(keys.size):
        if counts[e] > 0:
            sizes[2] = _push(hp[0], hp[1], hp[2], sizes[2], counts[e], keys[e], e)
    index = Dict.empty(key_type=types.uint64, value_type=types.int64)  # spelling hash -> id
    for t in range(tok_hash.size):
        if tok_pow[t] != 0:
            index[tok_hash[t] ^ tok_pow[t]] = t
    return pair_count, ent, hp, sizes, index


@numba.njit(cache=True)
def train_kernel(
    sym, wstart, wcount, tok_hash, tok_pow, tok_len, n_tokens, vocab_size, min_count, max_len, rest
):  # pragma: no cover - compiled
    """Merges ``(M, 4)`` rows ``(left, right, new id, count)`` and the tokens after them.

    ``sym`` ``(N,)``, ``wstart`` ``(W + 1,)``, ``wcount`` ``(W,)``: the words; ``tok_hash``,
    ``tok_pow``, ``tok_len`` ``(T,)`` and ``rest`` describe the spellings (``T`` >= every id
    ever made); see :func:`rowbook.text.bpe.train.train_merges`.
    """
    pair_count, ent, hp, sizes, index = _start(sym, wstart, wcount, tok_hash, tok_pow)
    wlen = (wstart[1:] - wstart[:-1]).astype(np.int32)  # (W,) current word lengths
    t_cap = tok_len.size
    slots = (
        np.zeros(2 * t_cap, np.int64),  # distinct words recorded for each slot this step
        np.full(2 * t_cap, -1, np.int32),  # the last word counted for each slot
        np.empty(2 * t_cap, np.int64),  # where the next word of each slot's entry goes
        np.empty(2 * t_cap, np.int32),  # the slots touched this step
    )
    rec = (np.empty(1024, np.int32), np.empty(1024, np.int32))  # (R,) slot, word per record
    merges = np.empty((max(vocab_size - n_tokens, 0) + 64, 4), np.int64)  # (M, 4)
    n_merges = 0
    while n_tokens < vocab_size and sizes[2] > 0:
        top, sizes[2] = _pop(hp[0], hp[1], hp[2], sizes[2])
        count, key, e = top
        if count != pair_count[key]:  # stale: count changed since the push
            sizes[2] = _push(hp[0], hp[1], hp[2], sizes[2], pair_count[key], key, e)
            continue
        if count < 1 or count < min_count:
            break
        a, b = key >> 32, key & _LOW
        new = _token_id(a, b, tok_hash, tok_pow, tok_len, index, n_tokens, rest)
        n_tokens += new == n_tokens
        if n_merges == merges.shape[0]:  # a spelling made twice: more merges than new ids
            grown = np.empty((2 * n_merges, 4), np.int64)
            grown[:n_merges] = merges
            merges = grown
        merges[n_merges, 0], merges[n_merges, 1] = a, b
        merges[n_merges, 2], merges[n_merges, 3] = new, count
        n_merges += 1
        ent_start, ent_len, ent_words = ent
        n = 0
        for t in range(ent_start[e], ent_start[e] + ent_len[e]):
            w = ent_words[t]
            if n + wlen[w] > rec[0].size:  # at most one record a symbol
                size = 2 * (n + wlen[w])
                rec = (_grown(rec[0], size, None), _grown(rec[1], size, None))
            wlen[w], n = _merge_word(
                sym,
                wstart[w],
                wlen[w],
                (a, b),
                new,
                wcount[w],
                pair_count,
                rec,
                n,
                w,
                tok_len,
                max_len,
            )
        n_touched, total = _count_slots(rec, n, slots)
        ent, hp = _room(ent, hp, sizes, n_touched, total)
        _fill_entries(rec, n, n_touched, new, slots, pair_count, ent, hp, sizes)
    return merges[:n_merges], n_tokens
