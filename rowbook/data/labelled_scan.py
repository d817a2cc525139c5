"""Token ids of labelled lines, compiled: split, hash and intern in one pass over the bytes.

fastText reads a line byte by byte (``Dictionary::readWord``), cutting at its seven
separators, and looks each token up in an open-addressing table by its FNV-1a hash
(``Dictionary::find``). :class:`TokenScanner` does the same over a batch of lines in a
numba kernel: it cuts the UTF-8 bytes at the separators, hashes each token as fastText
does (:func:`rowbook.text.subwords.fasttext_hash`), and gives it the id of its first
sighting, from a table that keeps growing across batches; a ``\\n`` ends a line with
``</s>``. Only the distinct tokens are decoded into Python strings. It gives the ids the
plain-Python reading gives (:func:`rowbook.data.labelled.read_labelled_reference`, which
the tests hold it to), about ten times faster: reading is most of a small training's time.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["TokenScanner"]

_EMPTY = np.int32(-1)
_EOS = np.frombuffer(b"</s>", dtype=np.uint8)


@numba.njit(cache=True, nogil=True, inline="always")
def _is_space(b):  # pragma: no cover - compiled
    return b == 32 or b == 10 or b == 13 or b == 9 or b == 11 or b == 12 or b == 0


@numba.njit(cache=True, nogil=True)
def _add(data, start, end, h, slot, table, key_hash, key_start, key_len, arena, state):
    """A new key ``data[start:end]`` (hash ``h``) into the empty ``slot``; returns its id
    (``state``: keys so far, arena bytes used)."""  # pragma: no cover - compiled
    k = state[0]
    state[0] += 1
    base = state[1]
    for i in range(end - start):
        arena[base + i] = data[start + i]
    state[1] += end - start
    key_hash[k], key_start[k], key_len[k] = h, base, end - start
    table[slot] = k
    return k


@numba.njit(cache=True, nogil=True, inline="always")
def _fnv(data, start, end):  # pragma: no cover - compiled
    h = np.uint32(2166136261)
    for p in range(start, end):
        h = np.uint32((h ^ np.uint32(np.int32(np.int8(data[p])))) * np.uint32(16777619))
    return h


@numba.njit(cache=True, nogil=True)
def _scan(
    data, eos, table, key_hash, key_start, key_len, arena, state, ids, lengths, at
):  # pragma: no cover
    """Ids of the tokens of ``data`` (lines, each ending with ``\n``) into ``ids``, each
    line's token count (``</s>`` included) into ``lengths``, from where ``at`` = (byte, ids,
    lines, line start) says; returns False when the table or the keys need room first
    (``at`` then says where to resume), True at the end of ``data``.

    The lookup is written out here rather than called: numba passes every array argument
    of a call with its reference count, which made a call per token 2.5x slower."""
    p, n_ids, n_lines, line_start = at[0], at[1], at[2], at[3]
    size, mask = data.shape[0], table.shape[0] - 1
    room = min(table.shape[0] // 2, key_hash.shape[0]) - 2
    while p < size:
        b = data[p]
        if _is_space(b) and b != 10:
            p += 1
            continue
        if state[0] >= room:
            at[0], at[1], at[2], at[3] = p, n_ids, n_lines, line_start
            return False  # at most half full: grow, then go on from here
        source, start = data, p
        if b == 10:  # the line ends: </s>
            source, start, end = eos, 0, eos.shape[0]
            p += 1
        else:
            while p < size and not _is_space(data[p]):
                p += 1
            end = p
        h = _fnv(source, start, end)
        slot = np.int64(h) & mask
        while True:
            k = np.int64(table[slot])
            if k == -1:
                k = _add(
                    source, start, end, h, slot, table, key_hash, key_start, key_len, arena, state
                )
                break
            if key_hash[k] == h and key_len[k] == end - start:
                base, same = key_start[k], True
                for i in range(end - start):
                    if arena[base + i] != source[start + i]:
                        same = False
                        break
                if same:
                    break
            slot = (slot + 1) & mask
        ids[n_ids] = k
        n_ids += 1
        if b == 10:
            lengths[n_lines] = n_ids - line_start
            n_lines += 1
            line_start = n_ids
    at[0], at[1], at[2], at[3] = p, n_ids, n_lines, line_start
    return True


@numba.njit(cache=True, nogil=True)
def _rehash(table, key_hash, n_keys):  # pragma: no cover - compiled
    mask = table.shape[0] - 1
    for k in range(n_keys):
        slot = np.int64(key_hash[k]) & mask
        while table[slot] != -1:
            slot = (slot + 1) & mask
        table[slot] = k


class TokenScanner:
    """Interns the tokens of batches of lines, ids in first-sighting order (see the module).

    Examples
    --------
    >>> scanner = TokenScanner()
    >>> ids, lengths = scanner.scan(["a b a", "", "b\\tc"])
    >>> ids.tolist(), lengths.tolist(), scanner.keys()
    ([0, 1, 0, 2, 2, 1, 3, 2], [4, 1, 3], ['a', 'b', '</s>', 'c'])
    """

    def __init__(self) -> None:
        self.table = np.full(1 << 10, _EMPTY, dtype=np.int32)
        self.key_hash = np.zeros(256, dtype=np.uint32)
        self.key_start = np.zeros(256, dtype=np.int64)
        self.key_len = np.zeros(256, dtype=np.int64)
        self.arena = np.zeros(1 << 12, dtype=np.uint8)
        self.state = np.zeros(2, dtype=np.int64)  # keys so far, arena bytes used
        self._keys: list[str] = []

    def _reserve(self, new_bytes: int) -> None:
        """Room for ``new_bytes`` more bytes of keys, and twice the keys (the table at most
        half full: a small table, so its lookups stay in cache)."""
        keys, used = int(self.state[0]), int(self.state[1])
        new_keys = keys + 2
        if keys + new_keys > len(self.key_hash):
            grown = max(2 * len(self.key_hash), keys + new_keys)
            for name in ("key_hash", "key_start", "key_len"):
                old = getattr(self, name)
                new = np.zeros(grown, dtype=old.dtype)
                new[:keys] = old[:keys]
                setattr(self, name, new)
        if used + new_bytes > len(self.arena):
            arena = np.zeros(max(2 * len(self.arena), used + new_bytes), dtype=np.uint8)
            arena[:used] = self.arena[:used]
            self.arena = arena
        if 2 * (keys + new_keys) > len(self.table):
            size = len(self.table)
            while 2 * (keys + new_keys) > size:
                size *= 2
            self.table = np.full(size, _EMPTY, dtype=np.int32)
            _rehash(self.table, self.key_hash, keys)

    def scan(self, lines: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(ids, lengths)`` of ``lines`` (no line holds ``\\n``): every token's id, each
        line ending with ``</s>``, and each line's token count."""
        data = np.frombuffer(("\n".join(lines) + "\n").encode("utf-8"), dtype=np.uint8)
        bound = len(data) // 2 + len(lines) + 1  # tokens in the batch at most
        ids = np.empty(bound, dtype=np.int32)  # (tokens,)
        lengths = np.empty(len(lines), dtype=np.int64)  # (lines,)
        at = np.zeros(4, dtype=np.int64)  # byte, ids, lines, line start
        done = False
        while not done:
            self._reserve(len(data) + 4)
            tables = (self.table, self.key_hash, self.key_start, self.key_len, self.arena)
            done = _scan(data, _EOS, *tables, self.state, ids, lengths, at)
        return ids[: at[1]], lengths[: at[2]]

    def keys(self) -> list[str]:
        """Every token seen, in id order (decoded once each)."""
        arena = self.arena
        for k in range(len(self._keys), int(self.state[0])):
            start = int(self.key_start[k])
            self._keys.append(arena[start : start + int(self.key_len[k])].tobytes().decode("utf-8"))
        return self._keys
