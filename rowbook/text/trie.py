"""A character trie in flat arrays, for numba kernels: prefix searches over code points.

WordPiece asks for the longest vocabulary entry that starts a word; a Unigram lattice asks
for every entry that starts at each position. Both walk a trie of the vocabulary one
character at a time and stop at the first character no entry continues with, so a
position costs a few steps rather than one dictionary lookup per candidate length (which
is what ``tokenizers`` does for WordPiece: ``O(L^2)`` lookups per word).

The trie is a *double array* over the entries' UTF-8 bytes (Aoe 1989; the layout of Darts,
which ``sentencepiece`` walks), built once per vocabulary (:func:`build_trie`). A node is an
index into two arrays, and its child on byte ``x`` is ``t = base[node] + x + 1`` if
``check[t] == node``: a step is two reads from arrays of a few hundred kilobytes, where a
hash table of edges on code points (what this module held before) read a table of
megabytes at random, and a Unigram lattice walks several steps from every character. A
code point is one step per byte of its UTF-8 form (one for ASCII). The three arrays:

* ``base`` ``(T,)`` int32: where each node's children begin (0 for a leaf);
* ``check`` ``(T,)`` int32: the parent of each slot, -1 for a free slot (the root is 0);
* ``values`` ``(T,)`` int64: the id of the entry ending at each node, ``-1`` if none.

Building places the nodes breadth first, each at the first ``base`` whose slots are free
for all its children (the entries sorted, so a node's children are runs of them), looking
at no more than :data:`PLACE_TRIES` free slots before taking fresh ones at the end.

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

try:  # numba's reader of a str's code point i by its storage kind: private, so guarded
    from numba.cpython.unicode import _get_code_point
except ImportError:  # pragma: no cover - a numba that moved it: the public way, slower
    _get_code_point = None

__all__ = [
    "Trie",
    "build_trie",
    "codepoints",
    "compiled_codepoints",
    "find_child",
    "joined",
    "joined_codepoints",
    "longest_prefix",
    "longest_prefix_reference",
    "prefixes_reference",
]

Trie = tuple[np.ndarray, np.ndarray, np.ndarray]


def codepoints(text: str) -> np.ndarray:
    """``(len(text),)`` int32 code points (surrogates included, as Python holds them)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(
        np.int32
    )


@numba.njit(cache=True, nogil=True)
def _codepoints_by_kind(text):
    """:func:`codepoints` in compiled code: a kernel handed a ``str`` reads its code points
    without the GIL (the ``utf-32`` encode holds it, and took 25 ms of 10 MB of news lines
    where this takes 5). From Python, :func:`codepoints` is quicker on short strings (a
    call here costs 6 us)."""
    out = np.empty(len(text), np.int32)  # (n,)
    for i in range(len(text)):
        out[i] = _get_code_point(text, i)
    return out


@numba.njit(cache=True, nogil=True)
def _codepoints_by_ord(text):  # the same with numba's public str: a one-character str each
    out = np.empty(len(text), np.int32)  # (n,)
    for i in range(len(text)):
        out[i] = ord(text[i])
    return out


compiled_codepoints = _codepoints_by_ord if _get_code_point is None else _codepoints_by_kind


def joined(texts: Sequence[str]) -> tuple[str, np.ndarray]:
    """``(text, starts)``: all ``texts`` joined and where each begins, with the end last
    ``(W + 1,)``.

    >>> joined(["ab", "", "c"])
    ('abc', array([0, 2, 2, 3]))
    """
    starts = np.zeros(len(texts) + 1, dtype=np.int64)  # (W + 1,)
    np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), out=starts[1:])
    return "".join(texts), starts


def joined_codepoints(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(data, starts)``: the code points of all ``texts`` one after another ``(C,)`` and
    where each begins, with the end last ``(W + 1,)`` (:func:`joined`).

    >>> joined_codepoints(["ab", "", "c"])[1].tolist()
    [0, 2, 2, 3]
    """
    text, starts = joined(texts)
    return codepoints(text), starts


#: Free slots tried as a node's first child before the node goes past the last slot in use.
PLACE_TRIES = 64


@numba.njit(cache=True, inline="always")
def _step(base, check, node, byte):
    t = base[node] + byte + 1
    if t < check.size and check[t] == node:
        return t
    return -1


@numba.njit(cache=True, inline="always")
def find_child(trie, node, c):
    """The node after code point ``c`` (its UTF-8 bytes) from ``node``, or -1 (the root is
    node 0). Inlined where it is called (a call cost as much as the step): call it from
    functions compiled with ``_nrt=False``, where taking the arrays out of ``trie`` counts
    no references."""
    base, check = trie[0], trie[1]
    if c < 0x80:
        return _step(base, check, node, c)
    if c < 0x800:
        node = _step(base, check, node, 0xC0 | (c >> 6))
    elif c < 0x10000:
        node = _step(base, check, node, 0xE0 | (c >> 12))
        if node >= 0:
            node = _step(base, check, node, 0x80 | ((c >> 6) & 0x3F))
    else:
        node = _step(base, check, node, 0xF0 | (c >> 18))
        if node >= 0:
            node = _step(base, check, node, 0x80 | ((c >> 12) & 0x3F))
        if node >= 0:
            node = _step(base, check, node, 0x80 | ((c >> 6) & 0x3F))
    if node < 0:
        return -1
    return _step(base, check, node, 0x80 | (c & 0x3F))


@numba.njit(cache=True, _nrt=False)
def _next_free(nxt, check, f, cap):
    """The first free slot after the free slot ``f`` (``cap``: none), its link shortened."""
    g = nxt[f]
    while g < cap and check[g] != -1:
        g = nxt[g]
    nxt[f] = g
    return g


@numba.njit(cache=True)
def _place(data, starts, ids):
    """``(base, check, values)`` of the sorted byte strings ``data[starts[k]:starts[k + 1]]``."""
    n_entries = starts.size - 1
    cap = data.size + 258
    base = np.zeros(cap, np.int32)
    check = np.full(cap, -1, np.int32)
    values = np.full(cap, -1, np.int64)
    nxt = np.arange(1, cap + 1).astype(np.int32)  # the free slots as a list, in order
    check[0] = 0  # the root's slot is taken
    head, top = 1, 0  # the first free slot; the last slot taken
    queue = np.empty((data.size + 1, 4), np.int64)  # (node, first entry, end entry, depth)
    queue[0, 0], queue[0, 1], queue[0, 2], queue[0, 3] = 0, 0, n_entries, 0
    q_head, q_tail = 0, 1
    child = np.empty((257, 3), np.int64)  # (label, first entry, end entry)
    while q_head < q_tail:
        node, lo, hi, depth = queue[q_head, 0], queue[q_head, 1], queue[q_head, 2], queue[q_head, 3]
        q_head += 1
        k = lo
        while k < hi and starts[k + 1] - starts[k] == depth:  # entries ending here sort first
            if values[node] == -1:  # the first of duplicate entries keeps its id
                values[node] = ids[k]
            k += 1
        n_children = 0
        while k < hi:
            label = data[starts[k] + depth] + 1
            j = k
            while j < hi and data[starts[j] + depth] + 1 == label:
                j += 1
            child[n_children, 0], child[n_children, 1], child[n_children, 2] = label, k, j
            n_children += 1
            k = j
        if n_children == 0:
            continue
        b, f, tries = -1, head, 0
        while f < cap and tries < PLACE_TRIES:  # free slots for the first child, in order
            candidate = f - child[0, 0]
            if candidate >= 1 and candidate + child[n_children - 1, 0] < cap:
                fits = True
                for c in range(1, n_children):
                    if check[candidate + child[c, 0]] != -1:
                        fits = False
                        break
                if fits:
                    b = candidate
                    break
            f = _next_free(nxt, check, f, cap)
            tries += 1
        if b < 0:  # past every slot taken
            b = max(1, top + 1 - child[0, 0])
        if b + 257 > cap:
            grown = 2 * cap + 257
            base = np.concatenate((base, np.zeros(grown - cap, np.int32)))
            check = np.concatenate((check, np.full(grown - cap, -1, np.int32)))
            values = np.concatenate((values, np.full(grown - cap, -1, np.int64)))
            nxt = np.concatenate((nxt, np.arange(cap + 1, grown + 1).astype(np.int32)))
            cap = grown
        base[node] = b
        for c in range(n_children):
            t = b + child[c, 0]
            check[t] = node
            top = max(top, t)
            queue[q_tail, 0], queue[q_tail, 1], queue[q_tail, 2] = t, child[c, 1], child[c, 2]
            queue[q_tail, 3] = depth + 1
            q_tail += 1
        if tries == PLACE_TRIES:  # the first free slot fits nothing: leave it empty
            head = _next_free(nxt, check, head, cap)
        while head < cap and check[head] != -1:
            head = nxt[head]
    size = top + 1
    return base[:size].copy(), check[:size].copy(), values[:size].copy()


def build_trie(entries: Sequence[str], ids: Sequence[int] | None = None) -> Trie:
    """The trie of ``entries`` (entry ``k`` has id ``ids[k]``, default ``k``).

    An empty entry marks the root; of duplicate entries the first keeps its id.
    """
    ids = np.arange(len(entries), dtype=np.int64) if ids is None else np.asarray(ids, np.int64)
    encoded = [e.encode("utf-8", "surrogatepass") for e in entries]
    order = sorted(range(len(entries)), key=encoded.__getitem__)  # stable: duplicates in order
    starts = np.zeros(len(entries) + 1, dtype=np.int64)  # (W + 1,)
    np.cumsum([len(encoded[k]) for k in order], out=starts[1:])
    data = np.frombuffer(b"".join(encoded[k] for k in order), dtype=np.uint8).astype(np.int32)
    return _place(data, starts, ids[np.array(order, dtype=np.int64)])


@numba.njit(cache=True, nogil=True, _nrt=False)
def longest_prefix(trie, text, start, end):
    """``(length, id)`` of the longest entry that ``text[start:end]`` starts with, or
    ``(0, -1)``."""
    values = trie[2]
    node, best, best_id = 0, 0, -1
    for p in range(start, end):
        node = find_child(trie, node, text[p])
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
