"""Many texts through a ``.model`` file's model in one compiled pass, on every core.

``sentencepiece`` encodes a sentence at a time in C++: the normalizer, the model over the
whole normalized sentence, then the unknown pieces. rowbook runs the same three steps for a
whole batch of texts in one numba call that releases the GIL:

1. the normalizer's walk (:func:`~rowbook.text.sentencepiece.normalizer.normalize_into`:
   user-defined symbols, the character map's rules, the whitespace flags);
2. the model over the normalized sentence: a Unigram's best path
   (:func:`rowbook.text.unigram.lattice.best_ends`, 32-bit path scores as ``sentencepiece``
   adds them) or a BPE's merges (:func:`rowbook.text.sentencepiece.bpe_merges.merge_span`, user-defined
   symbols frozen; word by word when no piece holds a ``"▁"`` past its first character,
   which gives the same merges, since no merge can then join two words, in smaller heaps);
3. unknown text as ``sentencepiece`` gives it: a run of unknown pieces is one ``unk`` id,
   or with byte fallback each character's UTF-8 bytes as ``<0xXX>`` pieces.

A job (:func:`unigram_job`, :func:`bpe_job`) takes a list of texts to all their ids ``(N,)``
int32 and each text's count ``(B,)``: :meth:`SubwordTokenizer.encode_batch
<rowbook.text.subword_pipeline.SubwordTokenizer.encode_batch>` shares batches of texts out
to threads with it. What the pass does not cover goes the Python way, one text at a time
(added tokens cut out of the text, a Unigram's sampling, a BPE with ``UNUSED`` pieces).
The tests hold the pass to that way, and both to ``sentencepiece``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numba
import numpy as np

from rowbook.text.sentencepiece.bpe_merges import merge_heap, merge_span
from rowbook.text.sentencepiece.normalizer import normalize_into, with_room
from rowbook.text.trie import joined_codepoints, longest_prefix
from rowbook.text.unigram.lattice import SENTENCEPIECE, best_ends

__all__ = ["Job", "bpe_job", "unigram_job"]

#: A batch job: texts -> (all ids ``(N,)`` int32, ids per text ``(B,)``).
Job = Callable[[Sequence[str]], tuple[np.ndarray, np.ndarray]]
_ESCAPED_CODE = 0x2581


@numba.njit(cache=True, inline="always")
def _utf8(c, out):
    """The UTF-8 bytes of code point ``c`` (surrogates as three bytes) into ``out``; their count."""
    if c < 0x80:
        out[0] = c
        return 1
    if c < 0x800:
        out[0], out[1] = 0xC0 | (c >> 6), 0x80 | (c & 0x3F)
        return 2
    if c < 0x10000:
        out[0], out[1], out[2] = 0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)
        return 3
    out[0], out[1] = 0xF0 | (c >> 18), 0x80 | ((c >> 12) & 0x3F)
    out[2], out[3] = 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)
    return 4


@numba.njit(cache=True, inline="always")
def _unknown(ids, o, c, run, unk_id, byte_ids, utf8):
    """Write the ids of the unknown character ``c`` at ``ids[o:]``: its bytes with byte
    fallback, else ``unk_id`` unless a run of unknown text is already open. The new ``o``."""
    if byte_ids.size:
        for k in range(_utf8(c, utf8)):
            ids[o] = byte_ids[utf8[k]]
            o += 1
    elif not run:
        ids[o] = unk_id
        o += 1
    return o


@numba.njit(cache=True, nogil=True, _nrt=False)
def _unigram_text(norm, m, model, unk_id, byte_ids, best, start, piece, path, utf8, ids, o):
    """Write the ids of the normalized sentence ``norm[:m]`` at ``ids[o:]``: the best path
    of its lattice, unknown characters resolved. The new ``o``."""
    trie, scores, kinds, unk_score, max_score = model
    best_ends(
        norm, 0, m, trie, scores, kinds, unk_score, SENTENCEPIECE, max_score, best, start, piece
    )
    n_nodes, k = 0, m
    while k > 0:  # the path's end positions, right to left
        path[n_nodes] = k
        k = start[k]
        n_nodes += 1
    run = False
    for j in range(n_nodes - 1, -1, -1):
        end = path[j]
        if piece[end] >= 0:
            ids[o] = piece[end]
            o += 1
            run = False
        else:  # an unknown node: one character
            o = _unknown(ids, o, norm[start[end]], run, unk_id, byte_ids, utf8)
            run = True
    return o


@numba.njit(cache=True, nogil=True)
def _unigram_kernel(data, starts, user, rules, flags, model, unk_id, byte_ids):
    n_texts = starts.size - 1
    ids = np.empty(max(16, data.size + n_texts), np.int32)  # grown when byte pieces need it
    counts = np.zeros(n_texts, np.int64)
    norm = np.empty(0, np.int32)
    best = np.empty(0, np.float64)
    start = piece = path = np.empty(0, np.int64)
    utf8 = np.empty(4, np.int64)
    o = 0
    for t in range(n_texts):
        bound = (starts[t + 1] - starts[t]) * flags[6] + 2  # normalized characters, at most
        if norm.size < bound:
            norm = np.empty(2 * bound, np.int32)
            best = np.empty(2 * bound + 1, np.float64)
            start = np.empty(2 * bound + 1, np.int64)
            piece = np.empty(2 * bound + 1, np.int64)
            path = np.empty(2 * bound + 1, np.int64)
        m = normalize_into(data, starts[t], starts[t + 1], user, rules, flags, norm)
        ids = with_room(ids, o + 4 * m)  # four byte pieces a character at most
        before = o
        o = _unigram_text(norm, m, model, unk_id, byte_ids, best, start, piece, path, utf8, ids, o)
        counts[t] = o - before
    return ids[:o], counts


@numba.njit(cache=True, inline="always")
def _char_index(c, bmp, codes):
    """Row of code point ``c`` in the character tables, or -1."""
    if c < bmp.size:
        return bmp[c]
    k = np.searchsorted(codes, c)
    return k if k < codes.size and codes[k] == c else -1


#: Most distinct words a batch's word cache keeps (a BPE merged word by word).
CACHE_WORDS = 1 << 16
_FNV_OFFSET, _FNV_PRIME = np.uint64(0xCBF29CE484222325), np.uint64(0x100000001B3)


@numba.njit(cache=True)
def word_cache(words):
    """An empty word cache for up to ``min(words, CACHE_WORDS)`` words: ``(slots (T,) hash,
    slots' entries (T,), entries' character starts (E + 1,), entries' result starts (E + 1,),
    characters (E * 24,), result offsets and symbols (E * 16,) each, used (3,): entries,
    characters, results)``; ``T`` a power of two at least twice ``E``."""
    size = min(words, CACHE_WORDS)
    slots = 16
    while slots < 2 * size:
        slots *= 2
    return (
        np.zeros(slots, np.uint64),
        np.empty(slots, np.int64),
        np.zeros(size + 1, np.int64),
        np.zeros(size + 1, np.int64),
        np.empty(size * 24, np.int32),
        np.empty(size * 16, np.int64),
        np.empty(size * 16, np.int64),
        np.zeros(3, np.int64),
    )


@numba.njit(cache=True, inline="always")
def _merge_word(norm, c0, c1, sym, frozen, nxt, prv, a, b, heap, model, cache):
    """Merge the symbols ``a .. b`` of the word ``norm[c0:c1]``, or take them from the cache
    (a word's merges depend on its characters alone); a word merged is kept while there is
    room."""
    keys, new_ids, scores = model[2]
    hashes, entry_of, char_start, res_start, chars, res_off, res_sym, used = cache
    h = _FNV_OFFSET
    for k in range(c0, c1):
        h = (h ^ np.uint64(norm[k])) * _FNV_PRIME
    h |= np.uint64(1)  # 0 marks an empty slot
    mask = hashes.size - 1
    slot = np.int64(h >> np.uint64(40)) & mask
    while hashes[slot] != 0:
        if hashes[slot] == h:
            e = entry_of[slot]
            x0, x1 = char_start[e], char_start[e + 1]
            same = x1 - x0 == c1 - c0
            k = 0
            while same and k < c1 - c0:
                same = chars[x0 + k] == norm[c0 + k]
                k += 1
            if same:
                for k in range(a, b):
                    sym[k] = -3
                for r in range(res_start[e], res_start[e + 1]):
                    sym[a + res_off[r]] = res_sym[r]
                return
        slot = (slot + 1) & mask
    merge_span(sym, frozen, nxt, prv, a, b, heap, keys, new_ids, scores)
    e, x0, r0 = used[0], used[1], used[2]
    if e + 1 >= char_start.size or x0 + c1 - c0 > chars.size or r0 + b - a > res_sym.size:
        return  # full
    for k in range(c0, c1):
        chars[x0 + k - c0] = norm[k]
    r = r0
    for k in range(a, b):
        if sym[k] != -3:
            res_off[r], res_sym[r] = k - a, sym[k]
            r += 1
    hashes[slot], entry_of[slot] = h, e
    char_start[e + 1], res_start[e + 1] = x0 + c1 - c0, r
    used[0], used[1], used[2] = e + 1, x0 + c1 - c0, r


@numba.njit(cache=True, nogil=True, _nrt=False)
def _bpe_text(
    norm, m, user, has_user, model, by_word, unk_id, byte_ids, scratch, cache, utf8, ids, o
):
    """Write the ids of the normalized sentence ``norm[:m]`` at ``ids[o:]``: its symbols
    merged, unknown characters resolved. The new ``o``."""
    user_ids, (bmp, codes, symbol_of, piece_of), (keys, new_ids, scores), model_size = model
    sym, first, frozen, nxt, prv, heap = scratch
    n, i = 0, 0
    while i < m:  # the initial symbols: user-defined symbols whole, else characters
        length, found = 0, -1
        if has_user:
            length, found = longest_prefix(user, norm, i, m)
        first[n] = i  # where each symbol starts in the normalized text
        if length > 1:
            sym[n], frozen[n] = user_ids[found], True
            i += length
        else:
            row = _char_index(norm[i], bmp, codes)
            sym[n], frozen[n] = (symbol_of[row] if row >= 0 else -2), False
            i += 1
        n += 1
    if by_word:
        a = 0
        for j in range(1, n + 1):
            if j == n or norm[first[j]] == _ESCAPED_CODE:
                end = first[j] if j < n else m
                _merge_word(norm, first[a], end, sym, frozen, nxt, prv, a, j, heap, model, cache)
                a = j
    else:
        merge_span(sym, frozen, nxt, prv, 0, n, heap, keys, new_ids, scores)
    run = False
    for j in range(n):  # the symbols left, in order (a merge keeps the left index)
        s = sym[j]
        if s == -3:
            continue
        if 0 <= s < model_size:
            ids[o] = s
            o += 1
            run = False
            continue
        row = _char_index(norm[first[j]], bmp, codes)  # a character no merge knows
        if row >= 0 and piece_of[row] >= 0:
            ids[o] = piece_of[row]
            o += 1
            run = False
        else:
            o = _unknown(ids, o, norm[first[j]], run, unk_id, byte_ids, utf8)
            run = True
    return o


@numba.njit(cache=True, nogil=True)
def _bpe_kernel(data, starts, user, rules, flags, model, by_word, unk_id, byte_ids):
    n_texts = starts.size - 1
    ids = np.empty(max(16, data.size + n_texts), np.int32)
    counts = np.zeros(n_texts, np.int64)
    norm = np.empty(0, np.int32)
    scratch = _bpe_scratch(0)
    cache = word_cache(data.size // 4 + 16)
    utf8 = np.empty(4, np.int64)
    o = 0
    for t in range(n_texts):
        bound = (starts[t + 1] - starts[t]) * flags[6] + 2
        if norm.size < bound:
            norm = np.empty(2 * bound, np.int32)
            scratch = _bpe_scratch(2 * bound)
        m = normalize_into(data, starts[t], starts[t + 1], user, rules, flags, norm)
        ids = with_room(ids, o + 4 * m)
        before = o
        o = _bpe_text(
            norm, m, user, flags[0], model, by_word, unk_id, byte_ids, scratch, cache, utf8, ids, o
        )
        counts[t] = o - before
    return ids[:o], counts


@numba.njit(cache=True)
def _bpe_scratch(n):
    """``(symbols, first characters, frozen, next, previous, heap)`` for ``n`` symbols."""
    return (
        np.empty(n, np.int64),
        np.empty(n, np.int64),
        np.zeros(n, np.bool_),
        np.empty(n, np.int64),
        np.empty(n, np.int64),
        merge_heap(n),
    )


def _run(kernel: Callable, tables: tuple, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    data, starts = joined_codepoints(texts)
    return kernel(data, starts, *tables)


def _byte_ids(byte_ids: Sequence[int] | None) -> np.ndarray:
    return np.zeros(0, np.int64) if byte_ids is None else np.asarray(byte_ids, np.int64)


def unigram_job(uni: Any) -> Job:
    """The batch job of a :class:`~rowbook.text.Unigram` read from a ``.model`` file (its
    normalizer a :class:`~rowbook.text.sentencepiece.normalizer.SentencePieceNormalizer`,
    no pre-tokenizer, no sampling)."""
    user, rules, flags = uni.normalizer.tables
    tables = (user, rules, flags, uni._model, uni._unk_id, _byte_ids(uni._byte_ids))
    return functools.partial(_run, _unigram_kernel, tables)


def _char_tables(bpe: Any) -> tuple[np.ndarray, ...]:
    """``(bmp, codes, symbol_of, piece_of)``: the characters the merges know (their initial
    symbol) or that are a piece by themselves (their id), sorted by code point; ``bmp[c]``
    is the row of code point ``c < 0x10000`` (-1: none), others are found in ``codes``."""
    size = bpe._model_size
    singles = {t: i for t, i in bpe._vocab.items() if len(t) == 1 and i < size}
    table = sorted(set(bpe._char_ids) | set(singles))
    codes = np.array([ord(c) for c in table], dtype=np.int64)
    symbol_of = np.array([bpe._char_ids.get(c, -2) for c in table], dtype=np.int64)
    piece_of = np.array([singles.get(c, -1) for c in table], dtype=np.int64)
    bmp = np.full(0x10000, -1, np.int32)
    small = codes < bmp.size
    bmp[codes[small]] = np.flatnonzero(small)
    return bmp, codes, symbol_of, piece_of


def bpe_job(bpe: Any, by_word: bool) -> Job:
    """The batch job of a :class:`~rowbook.text.SentencePieceBPE` without ``UNUSED`` pieces
    (``by_word``: merge word by word, for a model whose pieces never join two words)."""
    user, rules, flags = bpe.normalizer.tables
    user_ids = np.array([bpe._vocab[s] for s in bpe.normalizer.user_defined], dtype=np.int64)
    model = (
        user_ids,
        _char_tables(bpe),
        (bpe._pair_keys, bpe._new_ids, bpe._scores),
        bpe._model_size,
    )
    byte_ids = _byte_ids(bpe._byte_ids() if bpe.byte_fallback else None)
    tables = (user, rules, flags, model, by_word, bpe._unk_id, byte_ids)
    return functools.partial(_run, _bpe_kernel, tables)
