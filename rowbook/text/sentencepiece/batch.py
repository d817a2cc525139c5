"""Many texts through a ``.model`` file's model in one compiled pass, on every core.

``sentencepiece`` encodes a sentence at a time in C++: the normalizer, the model over the
whole normalized sentence, then the unknown pieces. rowbook runs the same three steps for a
whole batch of texts in one numba call that releases the GIL:

1. the normalizer's walk (:func:`~rowbook.text.sentencepiece.normalizer.normalize_into`:
   user-defined symbols, the character map's rules, the whitespace flags);
2. the model over the normalized sentence: a Unigram's best path
   (:func:`rowbook.text.unigram.lattice.best_ends`, 32-bit path scores as ``sentencepiece``
   adds them) or a BPE's merges (:func:`rowbook.text.sentencepiece.bpe_merges.merge_span`,
   user-defined symbols frozen). When no piece holds a ``"▁"`` past its first character,
   no piece joins two words, and both run word by word, each distinct word of the batch
   once (:mod:`rowbook.text.sentencepiece.word_cache`): a BPE gives the same merges in
   smaller heaps; a Unigram keeps each word's path with the margin that proves it is the
   one ``sentencepiece``'s 32-bit sums take (:mod:`rowbook.text.sentencepiece.unigram_words`);
3. unknown text as ``sentencepiece`` gives it: a run of unknown pieces is one ``unk`` id,
   or with byte fallback each character's UTF-8 bytes as ``<0xXX>`` pieces.

A :class:`Job` (:func:`unigram_job`, :func:`bpe_job`) takes a list of texts to all their ids
``(N,)`` int32 and each text's count ``(B,)``: :meth:`SubwordTokenizer.encode_batch
<rowbook.text.subword_pipeline.SubwordTokenizer.encode_batch>` runs it on batches of
texts, one thread or several, each thread with one word cache for all its batches (a cache
made per batch found the words of 10 MB of news lines again in each of 16 batches). What the pass does not cover goes the Python way, one text at a time
(added tokens cut out of the text, a Unigram's sampling, a BPE with ``UNUSED`` pieces).
The tests hold the pass to that way, and both to ``sentencepiece``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from rowbook.text.sentencepiece.bpe_merges import merge_heap, merge_span
from rowbook.text.sentencepiece.normalizer import normalize_into, with_room
from rowbook.text.sentencepiece.unigram_words import word_nodes, word_scratch
from rowbook.text.sentencepiece.word_cache import (
    CACHE_WORDS,
    add_word,
    find_word,
    results_of,
    word_cache,
)
from rowbook.text.trie import compiled_codepoints, joined, longest_prefix

__all__ = ["Job", "bpe_job", "unigram_job"]

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
def _unigram_text(norm, m, model, by_word, unk_id, byte_ids, scratch, cache, utf8, ids, o):
    """Write the ids of the normalized sentence ``norm[:m]`` at ``ids[o:]``: the best path
    of its lattice, found word by word (``by_word``) or over the whole sentence, unknown
    characters resolved. The new ``o``."""
    words, path_start, path_id = scratch
    x, run, b = 0.0, False, 0
    while b < m:
        e = m
        if by_word:
            e = b + 1
            while e < m and norm[e] != _ESCAPED_CODE:
                e += 1
        count, x = word_nodes(norm, b, e, x, model, by_word, cache, words, path_start, path_id)
        for j in range(count):
            if path_id[j] >= 0:
                ids[o] = path_id[j]
                o += 1
                run = False
            else:  # an unknown node: one character
                o = _unknown(ids, o, norm[b + path_start[j]], run, unk_id, byte_ids, utf8)
                run = True
        b = e
    return o


@numba.njit(cache=True, inline="always")
def _unigram_scratch(n):
    """``(word scratch, path starts, path ids)``: what :func:`_unigram_text` works in, for
    ``n`` normalized characters. Inlined, as :func:`_bpe_scratch`: made by a call, the
    scratch cost each text about 100 ns (texts of 3 words encoded 1.3-1.45x slower)."""
    return word_scratch(n), np.empty(n, np.int64), np.empty(n, np.int64)


@numba.njit(cache=True, inline="always")
def _char_index(c, bmp, codes):
    """Row of code point ``c`` in the character tables, or -1."""
    if c < bmp.size:
        return bmp[c]
    k = np.searchsorted(codes, c)
    return k if k < codes.size and codes[k] == c else -1


@numba.njit(cache=True, inline="always")
def _merge_word(norm, c0, c1, sym, frozen, nxt, prv, a, b, heap, model, cache):
    """Merge the symbols ``a .. b`` of the word ``norm[c0:c1]``, or take them from the cache
    (a word's merges depend on its characters alone); a word merged is kept while there is
    room."""
    keys, new_ids, scores = model[2]
    arena = cache[1]
    record, slot, tag = find_word(norm, c0, c1, cache)
    if record >= 0:
        for k in range(a, b):
            sym[k] = -3
        first, count = results_of(cache, record)
        for r in range(first, first + 2 * count, 2):
            sym[a + arena[r]] = arena[r + 1]
        return
    merge_span(sym, frozen, nxt, prv, a, b, heap, keys, new_ids, scores)
    left = 0
    for k in range(a, b):
        left += sym[k] != -3
    record = add_word(norm, c0, c1, slot, tag, cache, left, 0)
    if record < 0:
        return  # full
    r, _ = results_of(cache, record)
    for k in range(a, b):
        if sym[k] != -3:
            arena[r], arena[r + 1] = k - a, sym[k]
            r += 2


@numba.njit(cache=True, nogil=True, _nrt=False)
def _bpe_text(norm, m, model, by_word, unk_id, byte_ids, scratch, cache, utf8, ids, o):
    """Write the ids of the normalized sentence ``norm[:m]`` at ``ids[o:]``: its symbols
    merged, unknown characters resolved. The new ``o``."""
    (user, user_ids), (bmp, codes, symbol_of, piece_of), (keys, new_ids, scores), model_size = model
    sym, first, frozen, nxt, prv, heap = scratch
    n, i = 0, 0
    while i < m:  # the initial symbols: user-defined symbols whole, else characters
        length, found = 0, -1
        if user_ids.size:
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


@numba.njit(cache=True, inline="always")
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


@numba.njit(nogil=True, inline="always")
def _encode_texts(encode_text, new_scratch, text, starts, tables, cache):
    """All the ids of the texts ``text[starts[t]:starts[t + 1]]`` ``(N,)`` int32 and each
    text's count ``(B,)``: each text normalized, then its ids written by ``encode_text(norm,
    m, model, by_word, unk_id, byte_ids, scratch, cache, utf8, ids, o)`` (the new ``o``),
    working in ``new_scratch(n)`` for ``n`` normalized characters.

    Inlined into each kernel below, and cached with it: numba keys the cache of a function
    given a compiled function (as an argument or in a closure) by that function's id, new in
    each process, so such a function compiles again in every process (its cache index
    growing); and a kernel passing one to a call it does not inline holds its address and is
    not cached at all."""
    user, rules, flags, model, by_word, unk_id, byte_ids = tables
    data = compiled_codepoints(text)  # (C,)
    n_texts = starts.size - 1
    ids = np.empty(max(16, data.size + n_texts), np.int32)  # grown when byte pieces need it
    counts = np.zeros(n_texts, np.int64)
    norm = np.empty(0, np.int32)
    scratch = new_scratch(0)
    utf8 = np.empty(4, np.int64)
    o = 0
    for t in range(n_texts):
        bound = (starts[t + 1] - starts[t]) * flags[6] + 2  # normalized characters, at most
        if norm.size < bound:
            norm = np.empty(2 * bound, np.int32)
            scratch = new_scratch(2 * bound)
        m = normalize_into(data, starts[t], starts[t + 1], user, rules, flags, norm)
        ids = with_room(ids, o + 4 * m)  # four byte pieces a character at most
        before = o
        o = encode_text(norm, m, model, by_word, unk_id, byte_ids, scratch, cache, utf8, ids, o)
        counts[t] = o - before
    return ids[:o], counts


@numba.njit(cache=True, nogil=True)
def _unigram_kernel(text, starts, tables, cache):
    return _encode_texts(_unigram_text, _unigram_scratch, text, starts, tables, cache)


@numba.njit(cache=True, nogil=True)
def _bpe_kernel(text, starts, tables, cache):
    return _encode_texts(_bpe_text, _bpe_scratch, text, starts, tables, cache)


@dataclass(frozen=True)
class Job:
    """A batch job: ``job(texts)`` gives all the ids of ``texts`` ``(N,)`` int32 and each
    text's count ``(B,)``, by ``kernel`` (a compiled pass that releases the GIL) with the
    model's ``tables``. ``job(texts, cache)`` encodes with a word cache made by
    :meth:`word_cache` and kept between calls (one per thread: the words of one batch are
    found in the next); without it, each call makes its own."""

    kernel: Callable
    tables: tuple
    by_word: bool

    def word_cache(self, chars: int = CACHE_WORDS * 4) -> tuple[np.ndarray, ...]:
        """An empty word cache for texts of about ``chars`` characters (none for a model
        encoded sentence by sentence)."""
        return word_cache(chars // 4 + 16 if self.by_word else 0)

    def __call__(
        self, texts: Sequence[str], cache: tuple[np.ndarray, ...] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        return self.run(joined(texts), cache)

    def run(
        self, texts: tuple[str, np.ndarray], cache: tuple[np.ndarray, ...] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``job(texts, cache)`` from the texts :func:`~rowbook.text.trie.joined` ``(text,
        starts)``: compiled code alone, without the GIL from the code points on."""
        text, starts = texts
        if cache is None:
            cache = self.word_cache(len(text))
        return self.kernel(text, starts, self.tables, cache)


def _byte_ids(byte_ids: Sequence[int] | None) -> np.ndarray:
    return np.zeros(0, np.int64) if byte_ids is None else np.asarray(byte_ids, np.int64)


def unigram_job(uni: Any, by_word: bool) -> Job:
    """The batch job of a :class:`~rowbook.text.Unigram` read from a ``.model`` file (its
    normalizer a :class:`~rowbook.text.sentencepiece.normalizer.SentencePieceNormalizer`,
    no pre-tokenizer, no sampling; ``by_word``: word by word, for a model whose pieces never
    join two words, :mod:`rowbook.text.sentencepiece.unigram_words`)."""
    user, rules, flags = uni.normalizer.tables
    tables = (user, rules, flags, uni._model, by_word, uni._unk_id, _byte_ids(uni._byte_ids))
    return Job(_unigram_kernel, tables, by_word)


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
        (user, user_ids),
        _char_tables(bpe),
        (bpe._pair_keys, bpe._new_ids, bpe._scores),
        bpe._model_size,
    )
    byte_ids = _byte_ids(bpe._byte_ids() if bpe.byte_fallback else None)
    tables = (user, rules, flags, model, by_word, bpe._unk_id, byte_ids)
    return Job(_bpe_kernel, tables, by_word)
