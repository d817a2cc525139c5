"""Byte-level BPE training: incremental pair counts, as ``tokenizers`` does.

:func:`learn` turns word counts into merges; the kernel
(:func:`rowbook.text.bpe.train_kernel.train_kernel`, compiled, in memory linear in the
distinct words' bytes: :func:`merge_floor` is the least it holds) follows the incremental scheme of
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

import numpy as np

from rowbook.checks import ParameterError
from rowbook.text.bpe.bytelevel import (
    BYTE_TO_UNICODE,
    UNICODE_TO_BYTE,
    byte_alphabet,
    from_byte_level,
)
from rowbook.text.bpe.classic import MergeStep
from rowbook.text.bpe.train_kernel import train_kernel
from rowbook.text.utf8 import byte_ends
from rowbook.text.word_counts import CountedWords, as_counted

__all__ = [
    "check_merge_memory",
    "learn",
    "merge_floor",
    "spelling_hash",
    "symbol_dtype",
    "train_merges",
    "train_symbol_merges",
]


def symbol_dtype(n_ids: int) -> np.dtype:
    """The narrowest type the kernel holds the words' symbols in, for ids below ``n_ids``:
    uint16 up to 65,536 ids (a 2-byte symbol per byte of distinct words), else int32.

    Examples
    --------
    >>> symbol_dtype(50_257), symbol_dtype(100_000)
    (dtype('uint16'), dtype('int32'))
    """
    return np.dtype(np.uint16 if n_ids <= 1 << 16 else np.int32)


def merge_floor(n_bytes: int, n_words: int, n_ids: int) -> int:
    """The least memory the merge step holds for ``n_words`` distinct words of ``n_bytes`` UTF-8
    bytes (ids below ``n_ids``), the counted words included: per byte of the words, their
    text and its UTF-8 copy (2), a symbol (:func:`symbol_dtype`: 2, or 4 past 65,536 ids)
    and a place in the first pairs' word lists (4); per word, its bounds and count (16), its
    start in bytes twice (16) and its current length (4). The pair counts and the entries
    the merges make come on top (:mod:`rowbook.text.bpe.train_kernel`).

    Examples
    --------
    >>> merge_floor(8_000_000, 1_000_000, 32_000)  # 8 bytes a byte, 36 a word
    100000000
    """
    per_byte = 2 + symbol_dtype(n_ids).itemsize + 4
    return per_byte * n_bytes + 36 * n_words


def check_merge_memory(words: CountedWords, n_ids: int, memory: float | str, budget: int) -> None:
    """Refuse a budget below :func:`merge_floor` for ``words``, naming ``memory`` and the floor."""
    n_bytes = len(words.text) if words.text.isascii() else len(words.text.encode("utf-8"))
    floor = merge_floor(n_bytes, len(words), n_ids)
    if floor > budget:
        raise ParameterError(
            "memory",
            memory,
            f"at least {-(-floor // 2**20)}MB to learn merges over {len(words):,} distinct "
            f"words of {n_bytes:,} bytes",
            fix="the merge step holds every distinct word in RAM: "
            f"{2 + symbol_dtype(n_ids).itemsize + 4} bytes per byte of the words plus 36 per "
            "word; raise the budget to that, or train on fewer distinct words",
        )


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
    tok_hash = np.zeros(max(vocab_size, len(tokens)), dtype=np.uint64)
    sym = np.asarray(byte_ids, dtype=symbol_dtype(tok_hash.size))[data]  # (N,)
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
    merges, _ = train_kernel(
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
    merges, _ = train_kernel(
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
