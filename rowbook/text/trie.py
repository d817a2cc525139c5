"""A character trie in flat arrays, for numba kernels: prefix searches over code points.

WordPiece asks for the longest vocabulary entry that starts a word; a Unigram lattice asks
for every entry that starts at each position. Both walk a trie of the vocabulary one
character at a time and stop at the first character no entry continues with, so a
position costs a few steps rather than one dictionary lookup per candidate length (which
is what ``tokenizers`` does for WordPiece: ``O(L^2)`` lookups per word).

The trie is three arrays, built once per vocabulary (:func:`build_trie`):

* ``keys`` ``(T,)`` int64: an open-addressing hash table of edges, the key of the edge
  from ``node`` on code point ``c`` being ``node << 21 | c`` (code points need 21 bits),
  ``-1`` for an empty slot; ``T`` is a power of two at least twice the edges;
* ``children`` ``(T,)`` int32: the node each edge leads to;
* ``values`` ``(N,)`` int64: the id of the entry ending at each node, ``-1`` if none.

The references are a Python dict lookup per candidate (:func:`longest_prefix_reference`,
:func:`prefixes_reference`); the tests hold the kernels to them.

Examples
--------
>>> trie = build_trie(["a", "ab", "abc", "b"])
>>> longest_prefix(trie, codepoints("abd"), 0, 3)
(2, 1)
>>> prefixes_reference({"a": 0, "ab": 1, "abc": 2, "b": 3}, "abc")
[(1, 0), (2, 1), (3, 2)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numba
import numpy as np

__all__ = [
    "Trie",
    "build_trie",
    "codepoints",
    "find_child",
    "joined_codepoints",
    "longest_prefix",
    "longest_prefix_reference",
    "prefixes_reference",
]

Trie = tuple[np.ndarray, np.ndarray, np.ndarray]
_MUL = np.uint64(0x9E3779B97F4A7C15)


def codepoints(text: str) -> np.ndarray:
    """``(len(text),)`` int32 code points (surrogates included, as Python holds them)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(
        np.int32
    )


def joined_codepoints(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(data, starts)``: the code points of all ``texts`` one after another ``(C,)`` and
    where each begins, with the end last ``(W + 1,)``.

    >>> joined_codepoints(["ab", "", "c"])[1].tolist()
    [0, 2, 2, 3]
    """
    starts = np.zeros(len(texts) + 1, dtype=np.int64)  # (W + 1,)
    np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), out=starts[1:])
    return codepoints("".join(texts)), starts


@numba.njit(cache=True, inline="always")
def _slot(key, mask):
    return np.int64((np.uint64(key) * _MUL) >> np.uint64(20)) & mask


@numba.njit(cache=True, nogil=True, _nrt=False)
def find_child(keys, children, node, c):
    """The child of ``node`` on code point ``c``, or -1."""
    mask = keys.size - 1
    key = (np.int64(node) << 21) | c
    i = _slot(key, mask)
    while keys[i] != -1:
        if keys[i] == key:
            return children[i]
        i = (i + 1) & mask
    return -1


@numba.njit(cache=True)
def _build(data, starts, ids, table_size):
    n_nodes = 1 + data.size  # at most one node per character, plus the root
    keys = np.full(table_size, -1, np.int64)
    children = np.empty(table_size, np.int32)
    values = np.full(n_nodes, -1, np.int64)
    mask = table_size - 1
    used = 1
    for w in range(starts.size - 1):
        node = 0
        for p in range(starts[w], starts[w + 1]):
            key = (np.int64(node) << 21) | data[p]
            i = _slot(key, mask)
            while keys[i] != -1 and keys[i] != key:
                i = (i + 1) & mask
            if keys[i] == -1:
                keys[i], children[i] = key, used
                used += 1
            node = children[i]
        if values[node] == -1:  # the first of duplicate entries wins
            values[node] = ids[w]
    return keys, children, values[:used]


def build_trie(entries: Sequence[str], ids: Sequence[int] | None = None) -> Trie:
    """The trie of ``entries`` (entry ``k`` has id ``ids[k]``, default ``k``).

    An empty entry marks the root; of duplicate entries the first keeps its id.
    """
    lengths = np.fromiter(map(len, entries), dtype=np.int64, count=len(entries))
    starts = np.zeros(len(entries) + 1, dtype=np.int64)  # (W + 1,)
    np.cumsum(lengths, out=starts[1:])
    data = codepoints("".join(entries))  # (C,)
    table_size = 1 << max(4, int(2 * max(data.size, 1) - 1).bit_length())
    ids = np.arange(len(entries), dtype=np.int64) if ids is None else np.asarray(ids, np.int64)
    return _build(data, starts, ids, table_size)


@numba.njit(cache=True, nogil=True, _nrt=False)
def longest_prefix(trie, text, start, end):
    """``(length, id)`` of the longest entry that ``text[start:end]`` starts with, or
    ``(0, -1)``."""
    keys, children, values = trie
    node, best, best_id = 0, 0, -1
    for p in range(start, end):
        node = find_child(keys, children, node, text[p])
        if node < 0:
            break
        if values[node] >= 0:
            best, best_id = p + 1 - start, values[node]
    return best, best_id


def longest_prefix_reference(vocab: Mapping[str, int], text: str) -> tuple[int, int]:
    """:func:`longest_prefix` with a dict lookup per length, longest first (as ``tokenizers``'
    WordPiece looks entries up)."""
    for end in range(len(text), 0, -1):
        if text[:end] in vocab:
            return end, vocab[text[:end]]
    return 0, -1


def prefixes_reference(vocab: Mapping[str, int], text: str) -> list[tuple[int, int]]:
    """``(length, id)`` of every entry that ``text`` starts with, shortest first."""
    return [(n, vocab[text[:n]]) for n in range(1, len(text) + 1) if text[:n] in vocab]
