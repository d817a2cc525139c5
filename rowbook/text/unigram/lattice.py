"""The Unigram lattice (Kudo 2018) in numba kernels: Viterbi, the two best paths, sampling.

One file over 400 lines on purpose: the three walks of one lattice (the best path, the two
best, a sample) share its node loop over the trie and read side by side.

A word (or a whole sentence) of ``n`` characters has a node for every vocabulary piece
that occurs in it, from the character where it starts to the one after its end, found by
walking the trie of the pieces (:mod:`rowbook.text.trie`) from each character. A position
that no one-character piece covers gets an *unknown* node over that character, scored
``min(score) - 10``. A segmentation is a path from position 0 to ``n``; its score is the
sum of its pieces' scores (log-probabilities), and

* :func:`viterbi` finds the best path: for each end position the best score and the piece
  that reaches it, candidates taken start by start, shortest piece first, and a later one
  only wins with a strictly higher score (the order of ``tokenizers``' and SentencePiece's
  optimized encoders);
* :mod:`rowbook.text.unigram.em` runs forward-backward over the words on every core and adds
  each piece's expected count, ``count(word) * P(piece node | word)``, as ``tokenizers``'
  ``populate_marginal`` does (the E-step of training), with :func:`log_sum_exp`;
* :func:`two_best` keeps the two best paths of each position (the pruning step asks
  whether a piece has a better or second-best segmentation);
* :func:`sample_paths` draws a path with probability proportional to
  ``exp(theta * score)`` (subword regularisation), by forward filtering and backward
  sampling with uniforms drawn by the caller's seeded generator.

Scores. ``tokenizers`` adds ``float64`` scores. SentencePiece adds ``float`` (32-bit) scores
into ``float`` path scores (as ``sentencepiece`` 0.2.3 behaves: where a tie or near-tie of two
paths comes out differently in 32 and 64 bits, it takes the 32-bit answer; the ``.model``
tests include such texts); a user-defined piece of ``n`` UTF-8 bytes scores
``0.1 * (n - 1)`` in 32 bits, whatever the other scores (``sentencepiece`` 0.2.3; the 0.2.1
source's ``n * max_score - 0.1`` is not what it does: a user-defined ``"bb"`` among pieces
scored -0.5 wins with 0.1, ``"▁" "bb" "c"`` over ``"▁b" "bc"``), and an unused piece is
skipped. ``mode`` selects which (:data:`HF`, :data:`SENTENCEPIECE`),
so both encoders are followed to the last bit of their tie-breaking.

Node kinds: 0 normal, 1 user-defined, 2 unused (skipped), 3 never matched (``tokenizers``'
trainer's ``<UNK>`` placeholder).

The references are :func:`viterbi_reference` (every segmentation enumerated) in the tests.
"""

from __future__ import annotations

import numba
import numpy as np

from rowbook.text.trie import find_child
from rowbook.text.utf8 import utf8_len

__all__ = [
    "HF",
    "SENTENCEPIECE",
    "best_ends",
    "log_sum_exp",
    "sample_paths",
    "sentencepiece_score",
    "two_best",
    "viterbi",
    "viterbi_reference",
]

HF, SENTENCEPIECE = 0, 1
NORMAL, USER_DEFINED, UNUSED, NEVER = 0, 1, 2, 3


@numba.njit(cache=True, inline="always")
def sentencepiece_score(token, nbytes, scores, kinds):
    """The 32-bit score ``sentencepiece`` gives the piece ``token`` of ``nbytes`` UTF-8
    bytes: its own, or ``0.1 * (nbytes - 1)`` for a user-defined piece (see the module)."""
    if kinds[token] == USER_DEFINED:
        return np.float32(np.float32(0.1) * np.float32(nbytes - 1))
    return np.float32(scores[token])


@numba.njit(cache=True, inline="always")
def _offer(k, candidate, p, token, best, start, piece, second):
    """The node ``p -> k`` of ``token`` with path score ``candidate``: the best at ``k`` if
    it is the first or strictly higher; ``second[k]`` keeps the best of the others."""
    if start[k] < 0 or candidate > best[k]:
        if second.size:
            second[k] = best[k] if start[k] >= 0 else -np.inf
        best[k], start[k], piece[k] = candidate, p, token
    elif second.size and candidate > second[k]:
        second[k] = candidate


@numba.njit(cache=True, nogil=True, _nrt=False)
def best_ends(data, s, e, trie, scores, kinds, unk_score, mode, first, best, start, piece, second):
    """Fill ``best[k]``, ``start[k]``, ``piece[k]`` (``k = 0 .. e - s``) for ``data[s:e]``,
    the path score at ``s`` being ``first``; and ``second[k]``, the best score of the other
    nodes ending at ``k`` (``-inf``: none), unless ``second`` is empty."""
    values = trie[2]
    n = e - s
    for k in range(n + 1):
        best[k], start[k], piece[k] = 0.0, -1, -2
        if second.size:
            second[k] = -np.inf
    best[0] = first
    unk32 = np.float32(unk_score)
    for p in range(n):
        here = best[p]
        single = False
        node, nbytes = 0, 0
        for q in range(p, n):
            node = find_child(trie, node, data[s + q])
            if node < 0:
                break
            nbytes += utf8_len(data[s + q])
            token = values[node]
            if token < 0 or kinds[token] >= UNUSED:
                continue
            if mode == SENTENCEPIECE:  # float arithmetic throughout
                score = sentencepiece_score(token, nbytes, scores, kinds)
                candidate = np.float64(np.float32(np.float32(here) + score))
            else:
                candidate = here + scores[token]
            _offer(q + 1, candidate, p, token, best, start, piece, second)
            single = single or q == p
        if not single:
            if mode == SENTENCEPIECE:
                candidate = np.float64(np.float32(here) + unk32)
            else:
                candidate = here + unk_score
            _offer(p + 1, candidate, p, -1, best, start, piece, second)


@numba.njit(cache=True, inline="always")
def _flip(a, o, m):
    """Reverse ``a[o:o + m]`` in place (a path backtracked right to left)."""
    for i in range(m // 2):
        a[o + i], a[o + m - 1 - i] = a[o + m - 1 - i], a[o + i]


@numba.njit(cache=True, inline="always")
def _in_order(ids, pos, o, m, bounds, w):
    """Word ``w``'s path of ``m`` pieces, backtracked into ``ids`` and ``pos`` from ``o``
    right to left, put in order, and its end in ``bounds``: the next free place."""
    _flip(ids, o, m)
    _flip(pos, o, m)
    bounds[w + 1] = o + m
    return o + m


@numba.njit(cache=True, nogil=True)
def _viterbi_kernel(data, starts, trie, scores, kinds, unk_score, mode):
    n_words = starts.size - 1
    longest = 1
    for w in range(n_words):
        longest = max(longest, starts[w + 1] - starts[w])
    best = np.empty(longest + 1, np.float64)
    start = np.empty(longest + 1, np.int64)
    piece = np.empty(longest + 1, np.int64)
    ids = np.empty(max(data.size, 1), np.int64)  # at most one piece per character
    pos = np.empty(max(data.size, 1), np.int64)
    bounds = np.zeros(n_words + 1, np.int64)
    none = np.empty(0, np.float64)  # no second best kept
    o = 0
    for w in range(n_words):
        s, e = starts[w], starts[w + 1]
        best_ends(
            data,
            s,
            e,
            trie,
            scores,
            kinds,
            unk_score,
            mode,
            0.0,
            best,
            start,
            piece,
            none,
        )
        k, m = e - s, 0
        while k > 0:  # backtrack, writing the pieces right to left
            ids[o + m], pos[o + m] = piece[k], start[k]
            k = start[k]
            m += 1
        o = _in_order(ids, pos, o, m, bounds, w)
    return ids[:o], pos[:o], bounds


def viterbi(
    data: np.ndarray, starts: np.ndarray, model: tuple, mode: int = HF
) -> tuple[np.ndarray, ...]:
    """``(ids, piece_starts, bounds)`` of the best path of each word ``data[starts[w]:starts[w + 1]]``.

    ``model = (trie, scores, kinds, unk_score)``. The pieces of word ``w`` are
    ``ids[bounds[w]:bounds[w + 1]]`` (``-1`` for an unknown node), starting at the given
    character positions within the word.
    """
    trie, scores, kinds, unk_score = model
    return _viterbi_kernel(data, starts, trie, scores, kinds, unk_score, mode)


@numba.njit(cache=True, inline="always")
def log_sum_exp(x, y, init):
    """``log(exp(x) + exp(y))`` as ``tokenizers`` computes it (``y`` alone if ``init``; the
    smaller term skipped when it is more than 50 below the larger)."""
    if init:
        return y
    lo, hi = min(x, y), max(x, y)
    if hi > lo + 50.0:
        return hi
    return hi + np.log(np.exp(lo - hi) + 1.0)


@numba.njit(cache=True, nogil=True, _nrt=False)
def _node_rows(data, s, e, trie, kinds, unk_id, out):
    """Write the rows of :func:`_nodes` into ``out``: their count, or -1 if ``out`` is too short."""
    values = trie[2]
    n = e - s
    m = 0
    for p in range(n):
        node, single = 0, False
        for q in range(p, n):
            node = find_child(trie, node, data[s + q])
            if node < 0:
                break
            token = values[node]
            if token < 0 or kinds[token] >= UNUSED:
                continue
            if m == out.shape[0]:
                return -1
            out[m, 0], out[m, 1], out[m, 2], out[m, 3] = p, q + 1, token, 0
            m += 1
            single = single or q == p
        if not single:
            if m == out.shape[0]:
                return -1
            out[m, 0], out[m, 1], out[m, 2], out[m, 3] = p, p + 1, unk_id, 1
            m += 1
    return m


@numba.njit(cache=True, nogil=True)
def _nodes(data, s, e, trie, kinds, unk_id):
    """The nodes of ``data[s:e]`` in ``tokenizers``' insertion order (by begin, then shortest
    first, the unknown node last): rows ``(begin, end, id, unknown)``."""
    out = np.empty(((e - s) * 4 + 1, 4), np.int64)
    m = _node_rows(data, s, e, trie, kinds, unk_id, out)
    while m < 0:
        out = np.empty((out.shape[0] * 2, 4), np.int64)
        m = _node_rows(data, s, e, trie, kinds, unk_id, out)
    return out[:m]


@numba.njit(cache=True, nogil=True)
def _two_best_kernel(data, starts, trie, scores, kinds, unk_id, unk_score):
    """For each word: how many paths it has (1 or 2 at most), the length of the best one and
    the pieces of the second best (``-1`` for an unknown node)."""
    n_words = starts.size - 1
    n_paths = np.zeros(n_words, np.int64)
    best_len = np.zeros(n_words, np.int64)
    second = np.empty(max(data.size, 1), np.int64)
    bounds = np.zeros(n_words + 1, np.int64)
    o = 0
    for w in range(n_words):
        s, e = starts[w], starts[w + 1]
        n = e - s
        nodes = _nodes(data, s, e, trie, kinds, unk_id)
        # top[k, r]: score, back node, back rank of the r-th best path to position k
        top = np.full((n + 1, 2), -np.inf)
        back = np.full((n + 1, 2), -1, np.int64)
        rank = np.zeros((n + 1, 2), np.int64)
        count = np.zeros(n + 1, np.int64)
        top[0, 0], count[0] = 0.0, 1
        by_end = np.argsort(nodes[:, 1], kind="mergesort")
        for i in by_end:
            b, k = nodes[i, 0], nodes[i, 1]
            sc = unk_score if nodes[i, 3] else scores[nodes[i, 2]]
            for r in range(count[b]):
                cand = top[b, r] + sc
                if count[k] == 0 or cand > top[k, 0]:
                    top[k, 1], back[k, 1], rank[k, 1] = top[k, 0], back[k, 0], rank[k, 0]
                    top[k, 0], back[k, 0], rank[k, 0] = cand, i, r
                    count[k] = min(count[k] + 1, 2)
                elif count[k] == 1 or cand > top[k, 1]:
                    top[k, 1], back[k, 1], rank[k, 1] = cand, i, r
                    count[k] = 2
        n_paths[w] = count[n]
        k, r, length = n, 0, 0
        while k > 0:
            i = back[k, r]
            r, k = rank[k, r], nodes[i, 0]
            length += 1
        best_len[w] = length
        if count[n] == 2:
            k, r, m = n, 1, 0
            while k > 0:
                i = back[k, r]
                second[o + m] = -1 if nodes[i, 3] else nodes[i, 2]
                r, k = rank[k, r], nodes[i, 0]
                m += 1
            _flip(second, o, m)
            o += m
        bounds[w + 1] = o
    return n_paths, best_len, second[:o], bounds


def two_best(
    data: np.ndarray, starts: np.ndarray, model: tuple, unk_id: int
) -> tuple[np.ndarray, ...]:
    """``(n_paths, best_len, second, bounds)`` of each word: paths (1 or 2), pieces on the best
    path, and the second best path's pieces ``second[bounds[w]:bounds[w + 1]]``."""
    trie, scores, kinds, unk_score = model
    return _two_best_kernel(data, starts, trie, scores, kinds, unk_id, unk_score)


@numba.njit(cache=True)
def _node_score(data, s, node, scores, kinds, unk_score, mode):
    """The score of ``node``, a row of :func:`_nodes` of a word starting at ``data[s]``: the
    unknown score, a user-defined piece's :func:`sentencepiece_score` in ``mode``
    :data:`SENTENCEPIECE`, else the piece's own."""
    begin, end, token, unknown = node[0], node[1], node[2], node[3]
    if unknown:
        return np.float64(unk_score)
    if mode == SENTENCEPIECE and kinds[token] == USER_DEFINED:
        nbytes = 0
        for k in range(s + begin, s + end):
            nbytes += utf8_len(data[k])
        return np.float64(sentencepiece_score(token, nbytes, scores, kinds))
    return np.float64(scores[token])


@numba.njit(cache=True, nogil=True)
def _sample_kernel(data, starts, trie, scores, kinds, unk_id, unk_score, mode, theta, uniforms):
    n_words = starts.size - 1
    ids = np.empty(max(data.size, 1), np.int64)
    pos = np.empty(max(data.size, 1), np.int64)
    bounds = np.zeros(n_words + 1, np.int64)
    o, u = 0, 0
    for w in range(n_words):
        s, e = starts[w], starts[w + 1]
        n = e - s
        nodes = _nodes(data, s, e, trie, kinds, unk_id)
        score = np.empty(nodes.shape[0], np.float64)
        for i in range(nodes.shape[0]):
            score[i] = theta * _node_score(data, s, nodes[i], scores, kinds, unk_score, mode)
        by_end = np.argsort(nodes[:, 1], kind="mergesort")
        A = np.zeros(n + 1, np.float64)
        started = np.zeros(n + 1, np.bool_)
        for i in by_end:
            k = nodes[i, 1]
            A[k] = log_sum_exp(A[k], score[i] + A[nodes[i, 0]], not started[k])
            started[k] = True
        k, m = n, 0
        while k > 0:  # backward sampling: a node ending at k, by its share of A[k]
            target, acc, chosen = uniforms[u], 0.0, -1
            u += 1
            for i in by_end:
                if nodes[i, 1] == k:
                    chosen = i
                    acc += np.exp(score[i] + A[nodes[i, 0]] - A[k])
                    if acc > target:
                        break
            ids[o + m] = -1 if nodes[chosen, 3] else nodes[chosen, 2]
            pos[o + m] = nodes[chosen, 0]
            k = nodes[chosen, 0]
            m += 1
        o = _in_order(ids, pos, o, m, bounds, w)
    return ids[:o], pos[:o], bounds


def sample_paths(
    data: np.ndarray,
    starts: np.ndarray,
    model: tuple,
    unk_id: int,
    theta: float,
    rng: np.random.Generator,
    mode: int = HF,
) -> tuple[np.ndarray, ...]:
    """A path of each word drawn with probability ``exp(theta * score(path)) / Z``, as
    :func:`viterbi` returns paths (``-1`` for unknown nodes); a user-defined piece scored
    as ``mode`` scores it."""
    trie, scores, kinds, unk_score = model
    uniforms = rng.random(data.size + 1)
    return _sample_kernel(
        data, starts, trie, scores, kinds, unk_id, unk_score, mode, float(theta), uniforms
    )


def viterbi_reference(
    word: str, pieces: dict[str, float], unk_score: float
) -> tuple[float, list[str]]:
    """The best segmentation of ``word`` by enumerating them all (short words only): the score
    and the pieces, an unknown character (no one-character piece) scoring ``unk_score``.

    Examples
    --------
    >>> viterbi_reference("abc", {"a": -1.0, "b": -1.0, "c": -1.0, "ab": -1.5}, -10.0)
    (-2.5, ['ab', 'c'])
    """
    if not word:
        return 0.0, []
    options = [(pieces[word[:k]], word[:k]) for k in range(1, len(word) + 1) if word[:k] in pieces]
    if word[0] not in pieces:
        options.append((unk_score, word[0]))
    best = (-np.inf, [])
    for score, head in options:
        rest_score, rest = viterbi_reference(word[len(head) :], pieces, unk_score)
        if score + rest_score > best[0]:
            best = (score + rest_score, [head, *rest])
    return best
