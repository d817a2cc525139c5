"""GPT-2's pre-split, compiled: the words of :data:`GPT2_PATTERN`, cut from UTF-8 bytes and interned.

The words are cut by the rules of :mod:`rowbook.text.bpe.presplit_rules`. The texts are
joined into one UTF-8 buffer (bytes rather than code points: as fast here, a quarter of the
memory, and the merge kernel reads bytes). :func:`scan_words` cuts a block
of words at a time and interns the block in an
:class:`~rowbook.intern_table.InternTable`, no Python object per word: each word gets the id
of its first sighting, the word cache's key (:mod:`rowbook.text.bpe.word_cache`) or the
key of a count (:func:`count_words`, the first pass of training).

Examples
--------
>>> split_words(["I'll pay $3.50  now!", "日本語 ok"])
[['I', "'ll", ' pay', ' $', '3', '.', '50', ' ', ' now', '!'], ['日本語', ' ok']]
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence

import numba
import numpy as np

from rowbook.intern_table import BLOCK, InternTable, intern_front, lookup_ranges, room
from rowbook.text.batches import text_batches
from rowbook.text.bpe.presplit_rules import SPACE, char_classes, cut_words
from rowbook.text.utf8 import utf8_of
from rowbook.text.word_count_runs import WordBytes

__all__ = [
    "BATCH_CHARS",
    "count_word_bytes",
    "count_words",
    "cut_text",
    "scan_utf8",
    "scan_words",
    "split_words",
    "unknown_bytes",
]

BATCH_CHARS = 1 << 20  # characters scanned at a time: the buffers stay small, the calls few


@numba.njit(cache=True, nogil=True)
def _scan(
    data,
    text_ends,
    classes,
    front,
    table,
    key_hash,
    key_start,
    key_len,
    arena,
    state,
    ids,
    ends,
    at,
):  # pragma: no cover - compiled
    """The id of every word of the texts ``data[text_ends[t - 1]:text_ends[t]]`` into
    ``ids`` and the words so far at the end of each text into ``ends``, from where ``at`` =
    (text, byte, words) says (``front``: the table's front cache of short words,
    :func:`~rowbook.intern_table.intern_front`); returns False when the table needs room for a block first
    (``at`` then says where to resume), True at the end."""
    t, p, n = at[0], at[1], at[2]
    starts, stops = np.empty(BLOCK, np.int64), np.empty(BLOCK, np.int64)  # (BLOCK,) each
    while t < text_ends.shape[0]:
        if state[0] + BLOCK > room(table, key_hash):
            at[0], at[1], at[2] = t, p, n
            return False
        m, t, p = cut_words(data, text_ends, classes, t, p, starts, stops, ends, n)
        words = (table, key_hash, key_start, key_len, arena, state)
        intern_front(data, starts[:m], stops[:m], front, *words, ids[n : n + m])
        n += m
    at[0], at[1], at[2] = t, p, n
    return True


@numba.njit(cache=True, nogil=True)
def _unknown(
    data, text_ends, classes, table, key_hash, key_start, key_len, arena
):  # pragma: no cover - compiled
    """The bytes of the words of the texts ``data[text_ends[t - 1]:text_ends[t]]`` that the
    table does not hold, each time one comes; the table is only read."""
    starts, stops = np.empty(BLOCK, np.int64), np.empty(BLOCK, np.int64)  # (BLOCK,) each
    ids = np.empty(BLOCK, np.int32)  # (BLOCK,)
    ends = np.empty(text_ends.shape[0], np.int64)  # (B,) cut_words fills it; not read
    t, p, n, unknown = 0, 0, 0, 0
    while t < text_ends.shape[0]:
        m, t, p = cut_words(data, text_ends, classes, t, p, starts, stops, ends, n)
        lookup_ranges(data, starts[:m], stops[:m], table, key_hash, key_start, key_len, arena, ids)
        for i in range(m):
            if ids[i] < 0:
                unknown += stops[i] - starts[i]
        n += m
    return unknown


def unknown_bytes(words: InternTable, texts: Sequence[str]) -> tuple[int, int]:
    """The UTF-8 bytes of ``texts``, and those of their words that ``words`` lacks, counted
    each time a word comes (``words`` is only read: a probe of the work before encoding).

    Examples
    --------
    >>> words = InternTable()
    >>> _ = scan_words(words, ["a cat"])
    >>> unknown_bytes(words, ["a cat sat", "a dog"])  # " sat", " dog"
    (14, 8)
    """
    data, text_ends = utf8_of(texts)
    return len(data), int(_unknown(data, text_ends, char_classes(), *words.arrays[:5]))


def scan_words(words: InternTable, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The word ids of ``texts`` ``(W,)`` (new words added to ``words``) and how many words
    end with each text ``(B,)``, cumulated."""
    return scan_utf8(words, *utf8_of(texts))


def scan_utf8(
    words: InternTable, data: np.ndarray, text_ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`scan_words` of texts given as their UTF-8 bytes ``(N,)`` and where each text
    ends in them ``(B,)``."""
    ids = np.empty(len(data), dtype=np.int32)  # (W,) at most one word a byte
    ends = np.empty(len(text_ends), dtype=np.int64)  # (B,)
    at = np.zeros(3, dtype=np.int64)  # text, byte, words
    classes = char_classes()
    words.reserve(len(data), BLOCK)
    while not _scan(data, text_ends, classes, words.front, *words.arrays, ids, ends, at):
        words.reserve(len(data), BLOCK)
    return ids[: at[2]], ends


def cut_text(text: str, size: int) -> list[str]:
    """``text`` in pieces of about ``size`` characters whose words are the text's words.

    A cut goes before a space (U+0020) that follows a character that is not white space,
    where GPT-2's pattern always ends a word whatever comes after: the word holding the
    character before is a run of that character's class (or a contraction) and stops at
    white space, no rule reads past it, and the next word starts at the space, whose rules
    read only what follows. So cutting there and scanning each piece alone gives the same
    words (the tests hold the pieces to the whole text on generated hard text). A text
    without such a space (no U+0020, or only after white space) stays whole.

    Examples
    --------
    >>> text = "It's  a cat\u3000 ok"
    >>> cut_text(text, 3)
    ["It's", '  a', ' cat\u3000 ok']
    >>> split_words(cut_text(text, 3)), split_words([text])
    ([['It', "'s"], [' ', ' a'], [' cat', '\u3000', ' ok']], [['It', "'s", ' ', ' a', ' cat', '\u3000', ' ok']])
    """
    classes, pieces, start = char_classes(), [], 0
    while len(text) - start > size:
        q = text.find(" ", start + size)
        while q > 0 and classes[ord(text[q - 1])] == SPACE:
            q = text.find(" ", q + 1)
        if q < 0:
            break
        pieces.append(text[start:q])
        start = q
    pieces.append(text[start:])
    return pieces


def split_words(texts: Sequence[str]) -> list[list[str]]:
    """The words of each text, as ``regex.findall(GPT2_PATTERN, text)`` gives them."""
    words = InternTable()
    ids, ends = scan_words(words, texts)
    keys, ids = words.keys(), ids.tolist()
    return [[keys[i] for i in ids[a:b]] for a, b in itertools.pairwise([0, *ends.tolist()])]


def count_word_bytes(pieces: Iterable[str]) -> WordBytes:
    """The words of ``pieces`` and their counts, in first-sighting order (what
    ``Counter().update`` of each piece's words gives), as UTF-8 bytes: no Python object per
    word. Scanned :data:`BATCH_CHARS` at a time."""
    words, counts = InternTable(), np.zeros(0, dtype=np.int64)  # (K,) a count per word
    for batch in text_batches(pieces, BATCH_CHARS):
        ids, _ = scan_words(words, batch)
        added = np.bincount(ids, minlength=len(words))  # (K,)
        added[: len(counts)] += counts
        counts = added
    data, ends = words.key_bytes()
    return WordBytes(data.copy(), ends, counts)


def count_words(pieces: Iterable[str]) -> Counter[str]:
    """:func:`count_word_bytes` as a ``Counter`` of ``str``."""
    data, ends, counts = count_word_bytes(pieces)
    text, bounds = data.tobytes(), [0, *ends.tolist()]
    words = (text[a:b].decode("utf-8") for a, b in itertools.pairwise(bounds))
    return Counter(dict(zip(words, counts.tolist(), strict=True)))
