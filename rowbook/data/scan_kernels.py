"""The first pass's whitespace split, compiled: cut, intern and count in one pass over the bytes.

A file corpus read with the default tokenizer (``str.split``, whitespace) is scanned here
instead of in Python: :class:`WordScanner` takes the UTF-8 bytes the corpus reader gives
(:func:`rowbook.corpus_files.iter_part_batches` with ``as_bytes=True``: whole lines, each
ending with ``\\n``, or a piece of a long line), cuts them where ``str.split`` cuts a line --
at every character Python calls whitespace, ASCII's and the eighteen others (``\\x1c`` to
``\\x1f``, U+0085, U+00A0, U+1680, U+2000 to U+200A, U+2028, U+2029, U+202F, U+205F,
U+3000) -- and gives each token the id of its first sighting from one growing table
(:class:`rowbook.intern_table.InternTable`), a block of tokens at a time. A line is a
sentence, cut every ``max_len`` tokens as :func:`rowbook.data.scan.line_sentences` cuts it.
Only the distinct words are decoded into Python strings.

:func:`rowbook.data.scan.scan_sentences` over :func:`~rowbook.data.scan.line_sentences` with
``str.split`` is the reference: the same keys in the same order, the same ids and sentence
lengths (tested on lines of every kind of whitespace). On NewsArticles (12.7 MB) the
Python pass took about 0.5 s; this one takes a tenth of it.

Examples
--------
>>> scanner = WordScanner(max_len=2)
>>> ids, lengths = scanner.scan(b"a b\\xc2\\xa0a\\n\\nb\\x1fc")
>>> ids.tolist(), lengths.tolist()  # "b c" still open
([0, 1, 0, 1, 2], [2, 1, 0])
>>> ids, lengths = scanner.scan(b" d\\n")  # the open line goes on: its third word
>>> ids.tolist(), lengths.tolist(), scanner.keys(), scanner.counts().tolist()
([3], [2, 1], ['a', 'b', 'c', 'd'], [2, 2, 1, 1])
"""

from __future__ import annotations

import numba
import numpy as np

from rowbook.intern_table import BLOCK, InternTable, intern_ranges, room

__all__ = ["WordScanner"]

_LF = 10


@numba.njit(cache=True, nogil=True, inline="always")
def _plain(b):  # pragma: no cover - compiled
    """Whether byte ``b`` is part of no whitespace character, seen alone: ASCII after the
    space, a continuation byte, or a lead byte of no whitespace character (most bytes)."""
    return (32 < b < 0xC2) or b > 0xE3 or (0xC2 < b < 0xE1)


@numba.njit(cache=True, nogil=True)
def _space(data, p, size):  # pragma: no cover - compiled
    """Bytes of the whitespace character at ``data[p]`` (``str.isspace``), 0 if it is none."""
    b = data[p]
    if b == 32 or (9 <= b <= 13) or (28 <= b <= 31):
        return 1
    if b < 0xC2 or b > 0xE3 or p + 1 >= size:
        return 0
    c = data[p + 1]
    if b == 0xC2:
        return 2 if c == 0x85 or c == 0xA0 else 0  # U+0085, U+00A0
    if p + 2 >= size:
        return 0
    e = data[p + 2]
    if b == 0xE1:
        return 3 if c == 0x9A and e == 0x80 else 0  # U+1680
    if b == 0xE3:
        return 3 if c == 0x80 and e == 0x80 else 0  # U+3000
    if b == 0xE2 and c == 0x80:  # U+2000-U+200A, U+2028, U+2029, U+202F
        return 3 if e <= 0x8A or e == 0xA8 or e == 0xA9 or e == 0xAF else 0
    if b == 0xE2 and c == 0x81:
        return 3 if e == 0x9F else 0  # U+205F
    return 0


@numba.njit(cache=True, nogil=True, inline="always")
def _stop(at, p, n_ids, n_sent, open_len):  # pragma: no cover - compiled
    """Note in ``at`` where :func:`_scan` stopped, for the next call to go on from."""
    at[0], at[1], at[2], at[3] = p, n_ids, n_sent, open_len


@numba.njit(cache=True, nogil=True)
def _scan(
    data, table, key_hash, key_start, key_len, arena, state, ids, lengths, counts, at, max_len
):  # pragma: no cover - compiled
    """The tokens of ``data`` into ``ids`` (each counted in ``counts``, as long as
    ``key_hash``) and the sentences they close into ``lengths``,
    from where ``at = (byte, ids, sentences, tokens of the open sentence)`` says; returns
    False when the table needs room for a block first, or ``lengths`` for a sentence
    (``at`` then says where to resume),
    True at the end of ``data``. A ``\\n`` closes the open sentence (empty or not); so does
    its ``max_len + 1``-th token, which opens the next."""
    size = data.shape[0]
    p, n_ids, n_sent, open_len = at[0], at[1], at[2], at[3]
    starts, ends = np.empty(BLOCK, np.int64), np.empty(BLOCK, np.int64)  # (BLOCK,) each
    while p < size:
        if state[0] + BLOCK > room(table, key_hash):  # at most half full: grow first
            _stop(at, p, n_ids, n_sent, open_len)
            return False
        m, full = 0, False
        while p < size and m < BLOCK:
            if n_sent + 1 >= lengths.shape[0]:  # a byte closes at most one sentence
                full = True
                break
            if data[p] == _LF:
                lengths[n_sent] = open_len
                n_sent += 1
                open_len = 0
                p += 1
                continue
            skip = 0 if _plain(data[p]) else _space(data, p, size)
            if skip:
                p += skip
                continue
            starts[m] = p
            p += 1
            while p < size and (_plain(data[p]) or (data[p] != _LF and _space(data, p, size) == 0)):
                p += 1
            ends[m] = p
            m += 1
            if open_len == max_len:  # the token after max_len starts a piece
                lengths[n_sent] = max_len
                n_sent += 1
                open_len = 0
            open_len += 1
        tokens = (table, key_hash, key_start, key_len, arena, state)
        intern_ranges(data, starts[:m], ends[:m], *tokens, ids[n_ids : n_ids + m])
        for i in range(n_ids, n_ids + m):
            counts[ids[i]] += 1
        n_ids += m
        if full:  # lengths must grow: go on from here after
            _stop(at, p, n_ids, n_sent, open_len)
            return False
    _stop(at, p, n_ids, n_sent, open_len)
    return True


class WordScanner:
    """Interns the whitespace-split words of UTF-8 text, ids in first-sighting order (see
    the module); the sentence open at the end of one :meth:`scan` goes on in the next."""

    def __init__(self, max_len: int) -> None:
        self.tokens = InternTable()
        self.max_len = max_len
        self._open = 0  # tokens of the sentence still open
        self._sentences = 0  # sentences closed so far, their lengths in _lengths
        self._keys: list[str] = []
        self._ids = np.empty(0, dtype=np.int32)  # the buffers scan returns views of
        self._lengths = np.empty(0, dtype=np.int64)
        self._counts = np.zeros(0, dtype=np.int64)  # by id, as long as the table's keys

    def scan(self, data: bytes) -> tuple[np.ndarray, np.ndarray]:
        """``(ids, lengths)`` of the UTF-8 ``data``: every token's id ``(N,)`` int32, and
        the length of every sentence it closes ``(S,)`` int64. The ids are a view of a
        buffer the next call writes over (so reading costs no memory a batch), the lengths
        a view of the one buffer that keeps them all (:meth:`lengths`): a small array kept
        from each batch, among the batches' freed bytes, left the heap fragmented, and the
        peak grew with the number of batches."""
        text = np.frombuffer(data, dtype=np.uint8)
        if len(self._ids) < len(data) // 2 + 1:  # at most a token every two bytes
            self._ids = np.empty(len(data) // 2 + 1, dtype=np.int32)  # (N,)
        first = self._sentences
        at = np.array([0, 0, first, self._open], dtype=np.int64)  # byte, ids, sentences, open
        done = False
        while not done:
            self.tokens.reserve(len(data), BLOCK)
            if at[2] + 2 >= len(self._lengths):  # sentences grow as they come (a big
                # bound, freed, would leave the heap fragmented: the peak grew with the text)
                lengths = np.empty(2 * len(self._lengths) + 1024, dtype=np.int64)  # (S,)
                lengths[: at[2]] = self._lengths[: at[2]]
                self._lengths = lengths
            if len(self._counts) < len(self.tokens.key_hash):  # grown with the keys
                counts = np.zeros(len(self.tokens.key_hash), dtype=np.int64)
                counts[: len(self._counts)] = self._counts
                self._counts = counts
            buffers = (self._ids, self._lengths, self._counts)
            done = _scan(text, *self.tokens.arrays, *buffers, at, self.max_len)
        self._open, self._sentences = int(at[3]), int(at[2])
        return self._ids[: at[1]], self._lengths[first : at[2]]

    def lengths(self) -> np.ndarray:
        """The length of every sentence closed so far ``(S,)``, in order."""
        return self._lengths[: self._sentences].copy()

    def counts(self) -> np.ndarray:
        """How many times each word was seen ``(K,)``, by id."""
        return self._counts[: len(self.tokens)].copy()

    def keys(self) -> list[str]:
        """Every word seen, in id order (each decoded once)."""
        self._keys += self.tokens.keys(len(self._keys))
        return self._keys
