"""Token ids of labelled lines, compiled: split, hash and intern in one pass over the bytes.

fastText reads a line byte by byte (``Dictionary::readWord``), cutting at its seven
separators, and looks each token up in an open-addressing table by its FNV-1a hash
(``Dictionary::find``). :class:`TokenScanner` does the same over a batch of lines in a
numba kernel: it cuts the UTF-8 bytes at the separators, a block of tokens at a time, and
gives each token the id of its first sighting from a table that keeps growing across
batches (:class:`rowbook.intern_table.InternTable`, hashing as fastText does); a ``\\n``
ends a line with ``</s>``. Only the distinct tokens are decoded into Python strings. It
gives the ids the plain-Python reading gives
(:func:`rowbook.data.labelled.read_labelled_reference`, which the tests hold it to), about
ten times faster: reading is most of a small training's time.
"""

from __future__ import annotations

import numba
import numpy as np

from rowbook.intern_table import BLOCK, InternTable, intern_ranges, lookup_ranges, room

__all__ = ["TokenScanner"]

_EOS = b"</s>"


@numba.njit(cache=True, nogil=True, inline="always")
def _is_space(b):  # pragma: no cover - compiled
    return b == 32 or b == 10 or b == 13 or b == 9 or b == 11 or b == 12 or b == 0


@numba.njit(cache=True, nogil=True)
def _intern_block(data, starts, ends, tokens, known, ids):  # pragma: no cover - compiled
    """The ids of a block of tokens: those of the read-only table ``known`` (``(table,
    key_hash, key_start, key_len, arena, n_known)``) first, the others interned in
    ``tokens`` after them (``n_known + `` their id there); no ``known``: all interned."""
    if known is None:
        intern_ranges(data, starts, ends, *tokens, ids)
        return
    table, key_hash, key_start, key_len, arena, n_known = known
    lookup_ranges(data, starts, ends, table, key_hash, key_start, key_len, arena, ids)
    misses = np.flatnonzero(ids == -1)
    if misses.shape[0] > 0:
        new = np.empty(misses.shape[0], dtype=ids.dtype)
        intern_ranges(data, starts[misses], ends[misses], *tokens, new)
        for i in range(misses.shape[0]):
            ids[misses[i]] = n_known + new[i]


@numba.njit(cache=True, nogil=True)
def _scan(
    data, size, table, key_hash, key_start, key_len, arena, state, ids, lengths, at, known
):  # pragma: no cover
    """Ids of the tokens of ``data[:size]`` (lines, each ending with ``\n``) into ``ids``,
    each line's token count (``</s>`` included) into ``lengths``, from where ``at`` =
    (byte, ids, lines, line start) says; returns False when the table needs room for a
    block first (``at`` then says where to resume), True at the end. ``data[size:]`` is
    ``</s>``, the key a line end stands for. With ``known`` (see :func:`_intern_block`)
    its keys keep their ids and only the others are interned."""
    p, n_ids, n_lines, line_start = at[0], at[1], at[2], at[3]
    starts, ends = np.empty(BLOCK, np.int64), np.empty(BLOCK, np.int64)  # (BLOCK,) each
    while p < size:
        if state[0] + BLOCK > room(table, key_hash):
            at[0], at[1], at[2], at[3] = p, n_ids, n_lines, line_start
            return False  # at most half full: grow, then go on from here
        m = 0
        while p < size and m < BLOCK:
            b = data[p]
            if _is_space(b) and b != 10:
                p += 1
                continue
            if b == 10:  # the line ends: </s>
                starts[m], ends[m] = size, data.shape[0]
                p += 1
                lengths[n_lines] = n_ids + m + 1 - line_start
                n_lines += 1
                line_start = n_ids + m + 1
            else:
                starts[m] = p
                while p < size and not _is_space(data[p]):
                    p += 1
                ends[m] = p
            m += 1
        tokens = (table, key_hash, key_start, key_len, arena, state)
        _intern_block(data, starts[:m], ends[:m], tokens, known, ids[n_ids : n_ids + m])
        n_ids += m
    at[0], at[1], at[2], at[3] = p, n_ids, n_lines, line_start
    return True


class TokenScanner:
    """Interns the tokens of batches of lines, ids in first-sighting order (see the module).

    Examples
    --------
    >>> scanner = TokenScanner()
    >>> ids, lengths = scanner.scan(["a b a", "", "b\\tc"])
    >>> ids.tolist(), lengths.tolist(), scanner.keys()
    ([0, 1, 0, 2, 2, 1, 3, 2], [4, 1, 3], ['a', 'b', '</s>', 'c'])
    """

    def __init__(self, known: InternTable | None = None) -> None:
        self.tokens = InternTable()
        self._keys: list[str] = []
        self.known = None if known is None else (*known.arrays[:5], np.int64(len(known)))

    def scan(self, lines: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(ids, lengths)`` of ``lines`` (no line holds ``\\n``): every token's id, each
        line ending with ``</s>``, and each line's token count."""
        text = ("\n".join(lines) + "\n").encode("utf-8")
        data = np.frombuffer(text + _EOS, dtype=np.uint8)
        bound = len(text) // 2 + len(lines) + 1  # tokens in the batch at most
        ids = np.empty(bound, dtype=np.int32)  # (tokens,)
        lengths = np.empty(len(lines), dtype=np.int64)  # (lines,)
        at = np.zeros(4, dtype=np.int64)  # byte, ids, lines, line start
        done = False
        while not done:
            self.tokens.reserve(len(data), BLOCK)
            done = _scan(data, len(text), *self.tokens.arrays, ids, lengths, at, self.known)
        return ids[: at[1]], lengths[: at[2]]

    def keys(self) -> list[str]:
        """Every token seen, in id order (decoded once each); with ``known``, the tokens it
        does not hold (id ``len(known) + i`` is ``keys()[i]``)."""
        self._keys += self.tokens.keys(len(self._keys))
        return self._keys
