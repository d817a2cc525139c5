"""Numba kernel of byte-level BPE training: incremental pair counts, as ``tokenizers`` does.

:func:`learn` turns word counts into merges; the kernel follows the incremental scheme of
Hugging Face ``tokenizers``' ``BpeTrainer`` so both learn the same merges from the same
words:

* ``pair_count``: pair -> current count (each word weighted by its frequency);
* entries: a pair plus the set of words it was seen in when the entry was made;
* a max-heap of ``(count, pair, entry)`` ordered by count, then by the smaller pair
  ``(left id, right id)``, with lazy invalidation: a popped entry whose count no longer
  matches ``pair_count`` is pushed back with the current count;
* merging a pair rewrites only the words of its entry, left to right, and turns each
  occurrence into count changes for the neighbouring pairs; pairs that gained an
  occurrence get a new entry holding the words where they did.

Each merge thus costs time in proportion to the words it touches, not to the corpus.
A merge whose spelling already exists (``"a" + "bc"`` after ``"ab" + "c"``) reuses the
existing id, as ``tokenizers`` does. The plain reference is
:func:`rowbook.text.bpe.classic.learn_merges_recount` (recount everything after every
merge); the tests hold the kernel to it and to ``tokenizers``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numba
import numpy as np
from numba import types
from numba.typed import Dict

from rowbook.text.bpe.bytelevel import (
    BYTE_TO_UNICODE,
    UNICODE_TO_BYTE,
    byte_alphabet,
    from_byte_level,
)
from rowbook.text.bpe.classic import MergeStep
from rowbook.text.bpe.presplit import byte_ends
from rowbook.text.word_counts import as_counted

__all__ = ["learn", "spelling_hash", "train_merges", "train_symbol_merges"]

_LOW = np.int64(0xFFFFFFFF)


@numba.njit(cache=True, inline="always")
def _before(c1, k1, e1, c2, k2, e2):
    # max-heap order: higher count, then smaller pair, then older entry
    if c1 != c2:
        return c1 > c2
    if k1 != k2:
        return k1 < k2
    return e1 < e2


@numba.njit(cache=True)
def _push(hc, hk, he, size, count, key, ent):
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
def _pop(hc, hk, he, size):
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
def _group_entries(keys, words, n, pair_count, ent, hp):
    """Sort ``(key, word)`` records, make one entry per key with its distinct words, push it."""
    ent_start, ent_len, ent_words, sizes = ent
    hc, hk, he = hp
    order = np.argsort(keys[:n], kind="mergesort")
    i = 0
    while i < n:
        key = keys[order[i]]
        e = sizes[0]
        ent_start[e] = sizes[1]
        last = -1
        while i < n and keys[order[i]] == key:
            w = words[order[i]]
            if w != last:
                ent_words[sizes[1]] = w
                sizes[1] += 1
                last = w
            i += 1
        ent_len[e] = sizes[1] - ent_start[e]
        count = pair_count[key]
        if count > 0:
            sizes[0] += 1
            sizes[2] = _push(hc, hk, he, sizes[2], count, key, e)
        else:
            sizes[1] = ent_start[e]


@numba.njit(cache=True)
def _merge_word(
    sym, s, length, a, b, new, cw, pair_count, keys, words, n, w, tok_len, new_len, max_len
):
    """Merge ``(a, b)`` in ``sym[s:s+length]`` left to right; return ``(new length, n)``.

    A new neighbouring pair is counted only if its two tokens span fewer than ``max_len``
    symbols together (the merged token spans ``new_len``) (``tokenizers``' ``max_token_length`` test, strict as there).
    """
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
                    keys[n], words[n] = k, w
                    n += 1
            if r + 2 < length:
                nxt = np.int64(sym[s + r + 2])
                k = (b << 32) | nxt
                pair_count[k] = pair_count.get(k, 0) - cw
                if new_len + tok_len[nxt] < max_len:
                    k = (new << 32) | nxt
                    pair_count[k] = pair_count.get(k, 0) + cw
                    keys[n], words[n] = k, w
                    n += 1
            sym[s + o] = new
            r += 2
        else:
            sym[s + o] = x
            r += 1
        o += 1
    return o, n


@numba.njit(cache=True)
def _count_pairs(sym, wstart, wcount):
    """Pair counts over all words, and one ``(pair key, word)`` record per adjacent pair."""
    n_pairs = 0
    for w in range(wcount.size):
        n_pairs += max(wstart[w + 1] - wstart[w] - 1, 0)
    # A merge step writes at most one record per adjacent pair of the words it rewrites,
    # so these (P,) arrays also serve as the scratch space of every step.
    keys = np.empty(max(n_pairs, 1), np.int64)  # (P,) pair keys
    words = np.empty(max(n_pairs, 1), np.int32)  # (P,) the word of each record
    pair_count = Dict.empty(key_type=types.int64, value_type=types.int64)
    n = 0
    for w in range(wcount.size):
        for i in range(wstart[w], wstart[w + 1] - 1):
            k = (np.int64(sym[i]) << 32) | np.int64(sym[i + 1])
            pair_count[k] = pair_count.get(k, 0) + wcount[w]
            keys[n], words[n] = k, w
            n += 1
    return pair_count, keys, words, n


@numba.njit(cache=True)
def _token_id(a, b, tok_hash, tok_pow, tok_len, index, n_tokens, rest):
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
def _train_kernel(
    sym, wstart, wcount, tok_hash, tok_pow, tok_len, n_tokens, vocab_size, min_count, max_len, rest
):
    pair_count, keys, words, n = _count_pairs(sym, wstart, wcount)
    cap = 3 * keys.size + 1  # entries, their words and heap items: P initial + 2 per merged pair
    ent = (
        np.empty(cap, np.int64),
        np.empty(cap, np.int64),
        np.empty(cap, np.int32),
        np.zeros(3, np.int64),
    )  # entry starts, lengths, word lists; sizes: entries, words, heap
    hp = (np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64))
    _group_entries(keys, words, n, pair_count, ent, hp)
    ent_start, ent_len, ent_words, sizes = ent
    wlen = wstart[1:] - wstart[:-1]  # (W,) current word lengths
    index = Dict.empty(key_type=types.uint64, value_type=types.int64)  # spelling hash -> id
    for t in range(n_tokens):
        if tok_pow[t] != 0:
            index[tok_hash[t] ^ tok_pow[t]] = t
    merges = np.empty((cap, 4), np.int64)  # (M, 4) left, right, new id, count
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
        new_len = tok_len[a] + tok_len[b]
        n_tokens += new == n_tokens
        merges[n_merges, 0], merges[n_merges, 1] = a, b
        merges[n_merges, 2], merges[n_merges, 3] = new, count
        n_merges += 1
        n = 0
        for t in range(ent_start[e], ent_start[e] + ent_len[e]):
            w = ent_words[t]
            wlen[w], n = _merge_word(
                sym,
                wstart[w],
                wlen[w],
                a,
                b,
                new,
                wcount[w],
                pair_count,
                keys,
                words,
                n,
                w,
                tok_len,
                new_len,
                max_len,
            )
        _group_entries(keys, words, n, pair_count, ent, hp)
    return merges[:n_merges], n_tokens


def spelling_hash(spelled: bytes | Sequence[int]) -> tuple[int, int]:
    """``(hash, pow)`` of a spelling (bytes, or code points): the polynomial hash the kernel
    combines, ``hash(a + b) = hash(a) * pow(b) + hash(b)`` mod ``2**64``."""
    h, p = 0, 1
    for byte in spelled:
        h = (h * 0x100000001B3 + byte + 1) & 0xFFFFFFFFFFFFFFFF
        p = (p * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h, p


def train_merges(
    data: np.ndarray,
    ends: np.ndarray,
    counts: np.ndarray,
    byte_ids: np.ndarray,
    tokens: Sequence[bytes | None],
    vocab_size: int,
    min_count: int,
    max_token_length: int | None = None,
) -> np.ndarray:
    """Learn merges from words given as bytes with their counts.

    Parameters
    ----------
    data, ends : np.ndarray
        The distinct pre-tokenized words: their UTF-8 bytes one after another ``(N,)``
        uint8, and where each ends in them ``(W,)``.
    counts : np.ndarray
        ``(W,)`` int64, the frequency of each word.
    byte_ids : np.ndarray
        ``(256,)`` int64, the id of each byte's symbol.
    tokens : Sequence[bytes | None]
        Spelling of every existing id (``None`` for a special token no merge can spell).
    vocab_size, min_count : int
        Stop at ``vocab_size`` distinct tokens or when the best count drops below
        ``min_count``.
    max_token_length : int, optional
        ``tokenizers``' option: after the first merges (two bytes), a pair is only counted
        when its two tokens span fewer than this many bytes together.

    Returns
    -------
    np.ndarray
        ``(M, 4)`` int64 rows ``(left id, right id, new id, count)`` in merge order.
    """
    wstart = np.zeros(len(ends) + 1, dtype=np.int64)  # (W + 1,)
    wstart[1:] = ends
    sym = np.asarray(byte_ids, dtype=np.int32)[data]  # (N,)
    tok_hash = np.zeros(max(vocab_size, len(tokens)), dtype=np.uint64)
    tok_pow = np.zeros_like(tok_hash)
    tok_len = np.ones(tok_hash.size, dtype=np.int64)  # (T,) symbols (bytes) each token spans
    for i, spelled in enumerate(tokens):
        if spelled is not None:
            tok_hash[i], tok_pow[i] = spelling_hash(spelled)
            tok_len[i] = max(len(spelled), 1)
    max_len = np.iinfo(np.int64).max if max_token_length is None else int(max_token_length)
    rest = (
        tok_hash,
        tok_pow,
        np.zeros(tok_hash.size, dtype=np.bool_),
    )  # no prefix: spelled in full
    merges, _ = _train_kernel(
        sym,
        wstart,
        np.asarray(counts, dtype=np.int64),
        tok_hash,
        tok_pow,
        tok_len,
        len(tokens),
        vocab_size,
        min_count,
        max_len,
        rest,
    )
    return merges


def train_symbol_merges(
    sym: np.ndarray,
    wstart: np.ndarray,
    counts: np.ndarray,
    spellings: tuple[np.ndarray, ...],
    n_tokens: int,
    vocab_size: int,
    min_count: int,
) -> np.ndarray:
    """The kernel of :func:`train_merges` on words already spelled as symbol ids.

    ``sym`` ``(N,)`` int32 and ``wstart`` ``(W + 1,)`` give the words, ``counts`` ``(W,)``
    their frequencies. ``spellings = (hash, pow, rest_hash, rest_pow, flag)``, arrays of
    ``vocab_size`` entries whose first ``n_tokens`` describe the existing tokens (see
    ``_token_id``); merges fill the rest. Returns the ``(M, 4)`` merge rows.
    """
    tok_hash, tok_pow, rest_hash, rest_pow, flag = spellings
    tok_len = np.ones(tok_hash.size, dtype=np.int64)
    max_len = np.iinfo(np.int64).max
    merges, _ = _train_kernel(
        sym,
        wstart,
        counts,
        tok_hash,
        tok_pow,
        tok_len,
        n_tokens,
        vocab_size,
        min_count,
        max_len,
        (rest_hash, rest_pow, flag),
    )
    return merges


def _spelling(token: str) -> bytes | None:
    """The bytes a token spells if it is made of byte symbols, else None."""
    return from_byte_level(token) if all(c in UNICODE_TO_BYTE for c in token) else None


def learn(
    word_counts: Mapping[str, int],
    vocab_size: int,
    min_count: int,
    specials: Sequence[str],
    *,
    initial_alphabet: Sequence[str] = (),
    max_token_length: int | None = None,
) -> tuple[dict[str, int], list[tuple[str, str]], list[MergeStep]]:
    """Vocabulary, merges and merge trace learned from pre-tokenized words and their counts
    (a mapping, or the :class:`~rowbook.text.word_counts.CountedWords` a count within a memory
    budget gives, read without a Python object per word; empty words, which hold no pair,
    are left out).

    Ids: ``specials`` in order, the alphabet (the 256 byte symbols and any other
    ``initial_alphabet`` character) in code point order, then one per merge with a new
    spelling (the layout ``tokenizers`` gives its vocabulary).

    Examples
    --------
    >>> vocab, merges, trace = learn({"hug": 10, "pug": 5, "hugs": 5}, 259, 2, ["<pad>"])
    >>> merges, [step.count for step in trace]
    ([('u', 'g'), ('h', 'ug')], [20, 15])
    >>> vocab["<pad>"], vocab["!"], vocab["hug"]
    (0, 1, 258)
    """
    alphabet = sorted({*byte_alphabet(), *initial_alphabet})  # code point order
    tokens = list(dict.fromkeys([*specials, *alphabet]))
    ids = {t: i for i, t in enumerate(tokens)}
    byte_ids = np.array([ids[c] for c in BYTE_TO_UNICODE], dtype=np.int64)  # (256,)
    words = as_counted(word_counts)  # the words in one string: no bytes object per word
    data = np.frombuffer(words.text.encode("utf-8"), dtype=np.uint8)  # (N,)
    ends = words.bounds[1:]  # (W,) in characters, then in bytes
    ends = ends if len(data) == len(words.text) else byte_ends(data, ends)
    spellings = [_spelling(t) for t in tokens]
    rows = train_merges(
        data, ends, words.counts, byte_ids, spellings, vocab_size, min_count, max_token_length
    )
    merges, trace = [], []
    for left, right, new, count in rows.tolist():
        pair = (tokens[left], tokens[right])
        if new == len(tokens):
            tokens.append(pair[0] + pair[1])
        merges.append(pair)
        trace.append(MergeStep(pair[0], pair[1], count))
    return {t: i for i, t in enumerate(tokens)}, merges, trace
