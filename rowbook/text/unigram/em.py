"""Unigram training's passes over the words on every core: the E-step and pruning's best paths.

One file over 400 lines on purpose: every pass (finding and keeping the nodes, the E-step,
pruning's best paths) reads the one node layout (:class:`Nodes`) block by block on the
same threads, and the plain reference the tests hold the E-step to stands beside it.

Each distinct word has a lattice (:mod:`rowbook.text.unigram.lattice`): a node for each
piece occurring in it. Training only ever drops pieces, so the nodes of every pass are
among those of the first: the seeds give every node once (its piece and length, by begin,
shortest first; :mod:`~rowbook.text.unigram.seeds` reads them off the suffix array, and
:func:`find_nodes`, which walks a trie of the pieces over the words, is the reference), and
:func:`keep_nodes` drops those of the dropped pieces and renumbers the rest after each
M-step and pruning, on ``workers`` threads. A pass then reads the nodes instead of walking a trie (which took two
thirds of a pass: several steps a character, three for a ``"▁"``); the unknown node of a
position is added where no piece of one character is left, last, as the walk added it.

:func:`marginals` runs forward-backward as ``tokenizers``' ``Lattice::populate_marginal``:
``A[k]``, the log-sum of the paths from the start to position ``k``, adds the nodes ending
at ``k`` by their begin (pushed forward from each position: every node ending at ``p``
began before it); ``B[k]``, the log-sum from ``k`` to the end, adds the nodes beginning at
``k`` in order; with ``Z = A[n]``, a node ``p -> k`` of piece ``i`` adds

    count(word) * exp(A[p] + score(i) + B[k] - Z)

to ``expected[i]`` (the log-sum-exp skips a term more than 50 below the larger, as there).
:func:`best_pieces` is :func:`~rowbook.text.unigram.lattice.viterbi` over the same nodes.

Threads, and why the sums do not depend on them. The words are cut into blocks; a block's
kernel runs without the GIL on a thread of :func:`rowbook.fork_pool.map_in_threads` and
writes each node's term with its piece, in the order one pass would add it; the calling
thread adds the blocks' terms into ``expected`` in block order. So every piece's sum is
made of the same terms in the same order as a single pass over the words, and the result
is the same to the last bit on one thread or many (the tests hold it so). ``tokenizers``
instead sums a chunk of words per thread and adds the chunks, which changes its last bits
with the thread count (and its word order is a hash map's, different in every process).
The serial part is the scatter-add of the terms, a few percent of the forward-backward's
``exp`` and ``log``.

Memory: a byte per character of the distinct words and five per node (a few nodes a
character with the seeds, fewer as pieces go).

Examples
--------
>>> import numpy as np
>>> from rowbook.text.trie import build_trie, codepoints
>>> data, starts = codepoints("ab"), np.array([0, 2])
>>> nodes = find_nodes(data, starts, build_trie(["a", "b", "ab"], [1, 2, 3]), 2)
>>> expected, _ = marginals(starts, np.array([2.0]), nodes, np.log([1, 0.25, 0.25, 0.5]), 0, -10.0)
>>> np.round(expected, 3).tolist()  # P(a b) = 0.0625 / 0.5625, P(ab) = 0.5 / 0.5625
[0.0, 0.222, 0.222, 1.778]
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import NamedTuple

import numba
import numpy as np

from rowbook.fork_pool import map_in_threads
from rowbook.text.trie import find_child
from rowbook.text.unigram.lattice import log_sum_exp

__all__ = [
    "BLOCK_CHARS",
    "Nodes",
    "best_pieces",
    "blocks",
    "find_nodes",
    "joined_runs",
    "keep_nodes",
    "marginals",
    "marginals_reference",
    "nodes_of",
]

#: Characters of words per block handed to a thread: large enough that a block's compiled
#: work (milliseconds) hides the thread pool's per-task Python, small enough that two cores
#: get many blocks each and a block's terms stay a few megabytes.
BLOCK_CHARS = 1 << 16


class Nodes(NamedTuple):
    """The nodes of every word's lattice but the unknown ones: ``count[c]`` begin at character
    ``c`` of the words' text, those of word ``w`` from ``first[w]``; node ``i`` is piece
    ``piece[i]``, ``length[i]`` characters long; by begin, shortest first."""

    first: np.ndarray  # (W + 1,) int64
    count: np.ndarray  # (C,) uint8, or int32 for pieces longer than 255 characters
    length: np.ndarray  # (N,) like count
    piece: np.ndarray  # (N,) int32


@numba.njit(cache=True, inline="always")
def _room(a, needed):
    """``a``, or a longer copy if it is shorter than ``needed``."""
    if needed <= a.size:
        return a
    grown = np.empty(max(needed, 2 * a.size), a.dtype)
    grown[: a.size] = a
    return grown


@numba.njit(cache=True, nogil=True, _nrt=False)
def _walk(data, s, e, trie, count, length, piece, o):
    """Write the nodes of ``data[s:e]`` from ``o`` on; their number, or -1 if they do not fit."""
    values = trie[2]
    m = o
    for p in range(e - s):
        here = 0
        node = 0
        for q in range(s + p, e):
            node = find_child(trie, node, data[q])
            if node < 0:
                break
            token = values[node]
            if token < 0:
                continue
            if m == piece.size:
                return -1
            length[m], piece[m] = q + 1 - s - p, token
            m += 1
            here += 1
        count[s + p] = here
    return m - o


@numba.njit(cache=True, nogil=True)
def _block_nodes(data, starts, w0, w1, trie, count, kind):
    """``(length, piece)`` of the nodes of words ``w0 .. w1 - 1``; ``count`` filled."""
    length = np.empty((starts[w1] - starts[w0]) * 4, kind)
    piece = np.empty(length.size, np.int32)
    o = 0
    for w in range(w0, w1):
        m = _walk(data, starts[w], starts[w + 1], trie, count, length, piece, o)
        while m < 0:
            length, piece = _room(length, 2 * length.size), _room(piece, 2 * piece.size)
            m = _walk(data, starts[w], starts[w + 1], trie, count, length, piece, o)
        o += m
    return length[:o].copy(), piece[:o].copy()


def blocks(starts: np.ndarray, chars: int) -> list[tuple[int, int]]:
    """``(w0, w1)`` runs of the words ``starts[w]:starts[w + 1]`` of about ``chars``
    characters each.

    >>> blocks(np.array([0, 3, 5, 9, 10]), 4)
    [(0, 2), (2, 3), (3, 4)]
    """
    cuts = np.searchsorted(starts, np.arange(chars, int(starts[-1]), chars), side="left")
    edges = np.unique(np.concatenate(([0], cuts, [starts.size - 1])))
    return list(zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True))


def nodes_of(starts: np.ndarray, count: np.ndarray, length: np.ndarray, piece: np.ndarray) -> Nodes:
    """The :class:`Nodes` of the words ``starts`` with ``count`` nodes at each character."""
    ends = np.zeros(count.size + 1, np.int64)
    np.cumsum(count, out=ends[1:])
    return Nodes(ends[starts], count, length, piece)


def find_nodes(
    data: np.ndarray, starts: np.ndarray, trie: tuple, longest: int, *, workers: int = 1
) -> Nodes:
    """The nodes of the words ``data[starts[w]:starts[w + 1]]`` (code points) for the pieces
    of ``trie`` (their ids its values), the longest of ``longest`` characters."""
    kind = np.uint8 if longest < 256 else np.int32
    count = np.zeros(data.size, kind)

    def job(block: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        return _block_nodes(data, starts, *block, trie, count, kind)

    parts = list(map_in_threads(job, blocks(starts, BLOCK_CHARS), workers))
    length = np.concatenate([np.empty(0, kind), *(p[0] for p in parts)])
    piece = np.concatenate([np.empty(0, np.int32), *(p[1] for p in parts)])
    return nodes_of(starts, count, length, piece)


@numba.njit(cache=True, nogil=True)
def _keep(count, length, piece, new_id):
    """``(count, length, piece)`` of the nodes whose piece has a new id (>= 0), renumbered."""
    kept_count = np.empty_like(count)
    kept_length = np.empty_like(length)
    kept_piece = np.empty_like(piece)
    i, o = 0, 0
    for c in range(count.size):
        here = 0
        for _ in range(count[c]):
            new = new_id[piece[i]]
            if new >= 0:
                kept_length[o], kept_piece[o] = length[i], new
                o += 1
                here += 1
            i += 1
        kept_count[c] = here
    return kept_count, kept_length[:o].copy(), kept_piece[:o].copy()


def keep_nodes(nodes: Nodes, starts: np.ndarray, new_id: np.ndarray, *, workers: int = 1) -> Nodes:
    """``nodes`` without the pieces whose ``new_id`` is negative, the others renumbered; on
    ``workers`` threads, blocks of words joined in order."""
    new_id = np.asarray(new_id, np.int64)
    if np.array_equal(new_id, np.arange(new_id.size)):
        return nodes
    first, count, length, piece = nodes

    def job(block: tuple[int, int]) -> tuple[np.ndarray, ...]:
        (w0, w1), (c0, c1) = block, (starts[block[0]], starts[block[1]])
        return _keep(
            count[c0:c1], length[first[w0] : first[w1]], piece[first[w0] : first[w1]], new_id
        )

    parts = list(map_in_threads(job, blocks(starts, BLOCK_CHARS), workers))
    count, length, piece = (
        np.concatenate([empty, *(part[k] for part in parts)])
        for k, empty in enumerate((count[:0], length[:0], piece[:0]))
    )
    return nodes_of(starts, count, length, piece)


@numba.njit(cache=True, nogil=True)
def _block_terms(starts, counts, first, count, length, piece, w0, w1, scores, unk_id, unk_score):
    """Forward-backward over words ``w0 .. w1 - 1``: ``(ids, terms, z)``, each node's piece
    and expected count in the order they are added, and each word's log-likelihood."""
    longest = 1
    for w in range(w0, w1):
        longest = max(longest, starts[w + 1] - starts[w])
    size = first[w1] - first[w0] + starts[w1] - starts[w0]  # the nodes, and unknown ones at most
    ids = np.empty(size, np.int64)  # (nodes of the block,)
    terms = np.empty(size, np.float64)
    z = np.empty(w1 - w0, np.float64)
    A = np.empty(longest + 1, np.float64)  # (n + 1,) at 0: the bos node, score 0
    B = np.empty(longest + 1, np.float64)  # (n + 1,) at n: the eos node, score 0
    started = np.empty(longest + 1, np.bool_)
    at = np.empty(longest + 1, np.int64)  # each position's first node in ids
    end = np.empty(size, np.int64)
    score = np.empty(size, np.float64)
    o = 0
    for w in range(w0, w1):
        s, n, i = starts[w], starts[w + 1] - starts[w], first[w]
        started[: n + 1] = False
        A[0] = 0.0
        m = o
        for p in range(n):  # the nodes beginning at p, shortest first, the unknown one last
            at[p] = m
            single = count[s + p] > 0 and length[i] == 1
            for _ in range(count[s + p]):
                ids[m], end[m], score[m] = piece[i], p + length[i], scores[piece[i]]
                m += 1
                i += 1
            if not single:
                ids[m], end[m], score[m] = unk_id, p + 1, unk_score
                m += 1
            for t in range(at[p], m):
                k = end[t]
                A[k] = log_sum_exp(A[k], score[t] + A[p], not started[k])
                started[k] = True
        at[n] = m
        B[n] = 0.0
        for p in range(n - 1, -1, -1):
            for t in range(at[p], at[p + 1]):
                B[p] = log_sum_exp(B[p], score[t] + B[end[t]], t == at[p])
        z[w - w0] = A[n]
        for p in range(n):
            for t in range(at[p], at[p + 1]):
                terms[t] = counts[w] * np.exp(A[p] + score[t] + B[end[t]] - A[n])
        o = m
    return ids[:o], terms[:o], z


@numba.njit(cache=True, nogil=True)
def _add_terms(expected, ids, terms):
    for i in range(ids.size):
        expected[ids[i]] += terms[i]


@numba.njit(cache=True, nogil=True)
def _objective(counts, z):
    total = 0.0
    for w in range(counts.size):
        total += counts[w]
    objective = 0.0
    for w in range(counts.size):
        objective -= counts[w] * z[w] / total
    return objective


def marginals(
    starts: np.ndarray,
    counts: np.ndarray,
    nodes: Nodes,
    scores: np.ndarray,
    unk_id: int,
    unk_score: float,
    *,
    workers: int = 1,
) -> tuple[np.ndarray, float]:
    """``(expected, objective)``: each piece's expected count over the words (``scores``'
    size; the unknown nodes count for ``unk_id``), weighted by ``counts``, and the negative
    log-likelihood per word occurrence; on ``workers`` threads, the same to the last bit
    for any number (module docstring)."""
    counts = np.asarray(counts, np.float64)
    first, count, length, piece = nodes

    def job(block: tuple[int, int]) -> tuple[np.ndarray, ...]:
        w0, w1 = block
        return _block_terms(
            starts, counts, first, count, length, piece, w0, w1, scores, unk_id, unk_score
        )

    expected = np.zeros(scores.size, np.float64)
    z = np.empty(starts.size - 1, np.float64)
    runs = blocks(starts, BLOCK_CHARS)
    for (w0, w1), (ids, terms, z_block) in zip(
        runs, map_in_threads(job, runs, workers), strict=True
    ):
        _add_terms(expected, ids, terms)
        z[w0:w1] = z_block
    return expected, float(_objective(counts, z))


@numba.njit(cache=True, nogil=True)
def _block_best(starts, first, count, length, piece, w0, w1, scores, unk_score):
    """The best path of words ``w0 .. w1 - 1`` as :func:`lattice.viterbi` finds it, over the
    nodes: ``(ids, bounds)``, ``-1`` for an unknown node."""
    longest = 1
    for w in range(w0, w1):
        longest = max(longest, starts[w + 1] - starts[w])
    best = np.empty(longest + 1, np.float64)
    back = np.empty(longest + 1, np.int64)  # the begin of the best node ending at each position
    token = np.empty(longest + 1, np.int64)
    ids = np.empty(max(starts[w1] - starts[w0], 1), np.int64)
    bounds = np.zeros(w1 - w0 + 1, np.int64)
    o = 0
    for w in range(w0, w1):
        s, n, i = starts[w], starts[w + 1] - starts[w], first[w]
        back[: n + 1] = -1
        best[0] = 0.0
        for p in range(n):  # as lattice.best_ends: a later node wins only if strictly better
            single = count[s + p] > 0 and length[i] == 1
            for _ in range(count[s + p]):
                k, candidate = p + length[i], best[p] + scores[piece[i]]
                if back[k] < 0 or candidate > best[k]:
                    best[k], back[k], token[k] = candidate, p, piece[i]
                i += 1
            if not single:
                candidate = best[p] + unk_score
                if back[p + 1] < 0 or candidate > best[p + 1]:
                    best[p + 1], back[p + 1], token[p + 1] = candidate, p, -1
        k, m = n, 0
        while k > 0:  # backtrack, writing the pieces right to left
            ids[o + m] = token[k]
            k = back[k]
            m += 1
        for j in range(m // 2):
            ids[o + j], ids[o + m - 1 - j] = ids[o + m - 1 - j], ids[o + j]
        o += m
        bounds[w - w0 + 1] = o
    return ids[:o], bounds


def best_pieces(
    starts: np.ndarray, nodes: Nodes, scores: np.ndarray, unk_score: float, *, workers: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, bounds)``: the pieces of each word's best path (as
    :func:`~rowbook.text.unigram.lattice.viterbi` finds it, ``-1`` for an unknown node), word
    ``w``'s being ``ids[bounds[w]:bounds[w + 1]]``; on ``workers`` threads, blocks of words
    joined in order."""
    first, count, length, piece = nodes

    def job(block: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        return _block_best(starts, first, count, length, piece, *block, scores, unk_score)

    return joined_runs(list(map_in_threads(job, blocks(starts, BLOCK_CHARS), workers)))


def joined_runs(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """``(values, bounds)`` of blocks' ``(values, bounds)`` one after another: run ``r`` of the
    blocks together is ``values[bounds[r]:bounds[r + 1]]``.

    >>> values, bounds = joined_runs([(np.array([7, 8]), np.array([0, 2])), (np.array([9]), np.array([0, 0, 1]))])
    >>> values.tolist(), bounds.tolist()
    ([7, 8, 9], [0, 2, 2, 3])
    """
    if not parts:
        return np.empty(0, np.int64), np.zeros(1, np.int64)
    offsets = np.cumsum([0] + [values.size for values, _ in parts[:-1]])
    bounds = np.concatenate([[0]] + [b[1:] + o for (_, b), o in zip(parts, offsets, strict=True)])
    return np.concatenate([values for values, _ in parts]), bounds


def _segmentations(word: str, pieces: Mapping[str, float], unk_score: float) -> Iterator[list]:
    """Every path through ``word``'s lattice as ``[(piece, score), ...]``; an unknown node
    (``None``) where no piece of one character starts."""
    if not word:
        yield []
        return
    heads = [(word[:k], pieces[word[:k]]) for k in range(1, len(word) + 1) if word[:k] in pieces]
    if word[0] not in pieces:
        heads.append((None, unk_score))
    for head, score in heads:
        for rest in _segmentations(word[len(head or word[0]) :], pieces, unk_score):
            yield [(head, score), *rest]


def marginals_reference(
    word_counts: Mapping[str, float], pieces: Mapping[str, float], unk_score: float
) -> dict[str | None, float]:
    """Each piece's expected count (``None``: the unknown nodes) by enumerating every path of
    every word, ``P(path) = exp(score(path)) / Z`` (short words only).

    Examples
    --------
    >>> pieces = {"a": math.log(0.25), "b": math.log(0.25), "ab": math.log(0.5)}
    >>> got = marginals_reference({"ab": 2}, pieces, -10.0)
    >>> {piece: round(count, 3) for piece, count in got.items()}
    {'a': 0.222, 'b': 0.222, 'ab': 1.778}
    """
    expected: dict[str | None, float] = {}
    for word, count in word_counts.items():
        paths = list(_segmentations(word, pieces, unk_score))
        weights = [math.exp(sum(score for _, score in path)) for path in paths]
        z = sum(weights)
        for path, weight in zip(paths, weights, strict=True):
            for piece, _ in path:
                expected[piece] = expected.get(piece, 0.0) + count * weight / z
    return expected
