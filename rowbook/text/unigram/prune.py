"""The pruning step of Unigram training (``tokenizers``' ``prune_sentence_pieces``), over the words' lattice nodes.

Between rounds of EM the trainer (:mod:`rowbook.text.unigram.train`, step 3) keeps the
pieces whose removal would cost the likelihood most. For that it needs, for every piece,

* ``freq[i]``: how often the best paths of the words use it (weighted by the words'
  counts): :func:`rowbook.text.unigram.em.best_pieces` over the words' nodes;
* whether the piece has a segmentation other than itself, and the pieces of the second
  best one: the two best paths of the piece's own lattice, the lattice of its text under
  the current pieces.

The lattice of a piece is part of a word's lattice. Every piece is a substring of a word
(a seed is a character or a substring of the words' text, :mod:`~rowbook.text.unigram.seeds`,
and pieces only get dropped): if piece ``i`` spans ``span[i]`` characters from character
``at[i]`` of the words' text, its lattice's nodes are those of the word's lattice that begin
at ``at[i] + b`` and end within the piece, ``b + length <= span[i]`` (the nodes are kept by
begin, shortest first; an unknown node where no piece of one character begins). So the two
best paths of every piece are found over the nodes the E-step reads
(:func:`two_best_of_pieces`), with no trie of the pieces and none of their texts built,
on ``workers`` threads, blocks of pieces joined in order.
:func:`rowbook.text.unigram.lattice.two_best` (the lattice of each piece's text walked from
a trie of the pieces) is the reference the tests hold it to.

The two best paths of a position keep ``tokenizers``' order: a node's candidates are offered
best path first, then second; a candidate becomes the best at its end only when strictly
higher (the former best becomes the second), else the second when strictly higher or when
it is the second one offered. Nodes are offered by their end, then by their begin; pushing
them forward from each begin in turn offers each end's candidates in that same order.
"""

from __future__ import annotations

import itertools

import numba
import numpy as np

from rowbook.fork_pool import map_in_threads
from rowbook.text.unigram import em

__all__ = ["PIECES_PER_BLOCK", "prune", "two_best_of_pieces"]

#: Pieces a thread finds the two best paths of per task.
PIECES_PER_BLOCK = 1 << 13


@numba.njit(cache=True, inline="always")
def _offer(k, candidate, b, r, token, top, begin, rank, piece, count):
    """The path of rank ``r`` at ``b`` followed by ``token``, scoring ``candidate`` at ``k``."""
    if count[k] == 0 or candidate > top[k, 0]:
        top[k, 1], begin[k, 1], rank[k, 1], piece[k, 1] = (
            top[k, 0],
            begin[k, 0],
            rank[k, 0],
            piece[k, 0],
        )
        top[k, 0], begin[k, 0], rank[k, 0], piece[k, 0] = candidate, b, r, token
        count[k] = min(count[k] + 1, 2)
    elif count[k] == 1 or candidate > top[k, 1]:
        top[k, 1], begin[k, 1], rank[k, 1], piece[k, 1] = candidate, b, r, token
        count[k] = 2


@numba.njit(cache=True, nogil=True)
def _block_two_best(node_at, length, piece_of, at, span, order, j0, j1, scores, unk_score, skip):
    """``(n_paths, best_len, second, bounds)`` of pieces ``order[j0:j1]``, in that order (see
    :func:`two_best_of_pieces`)."""
    longest, size = 1, 1
    for j in range(j0, j1):
        longest = max(longest, span[order[j]])
        size += span[order[j]]
    n_paths = np.zeros(j1 - j0, np.int64)
    best_len = np.zeros(j1 - j0, np.int64)
    second = np.empty(size, np.int64)
    bounds = np.zeros(j1 - j0 + 1, np.int64)
    top = np.empty((longest + 1, 2), np.float64)  # (n + 1, 2) the two best scores at each position
    begin = np.empty((longest + 1, 2), np.int64)  # where their last node begins,
    rank = np.empty((longest + 1, 2), np.int64)  # the rank of the path there they extend,
    piece = np.empty((longest + 1, 2), np.int64)  # and their last node's piece (-1: unknown)
    count = np.empty(longest + 1, np.int64)
    o = 0
    for j in range(j0, j1):
        c, n = at[order[j]], span[order[j]]
        count[: n + 1] = 0
        top[0, 0], count[0] = 0.0, 1
        for b in range(n):
            i0, i1 = node_at[c + b], node_at[c + b + 1]
            single = i1 > i0 and length[i0] == 1
            for i in range(i0, i1):
                k = b + length[i]
                if k > n:
                    break  # shortest first: the rest end past the piece
                if piece_of[i] == skip:
                    continue
                for r in range(count[b]):
                    candidate = top[b, r] + scores[piece_of[i]]
                    _offer(k, candidate, b, r, piece_of[i], top, begin, rank, piece, count)
            if not single:
                for r in range(count[b]):
                    _offer(b + 1, top[b, r] + unk_score, b, r, -1, top, begin, rank, piece, count)
        n_paths[j - j0] = count[n] if n else 0
        k, r, m = n, 0, 0
        while k > 0:
            k, r = begin[k, r], rank[k, r]
            m += 1
        best_len[j - j0] = m
        if n and count[n] == 2:
            k, r, m = n, 1, 0
            while k > 0:  # written right to left
                second[o + m] = piece[k, r]
                k, r = begin[k, r], rank[k, r]
                m += 1
            for t in range(m // 2):
                second[o + t], second[o + m - 1 - t] = second[o + m - 1 - t], second[o + t]
            o += m
        bounds[j - j0 + 1] = o
    return (n_paths, best_len, second[:o]), bounds


def two_best_of_pieces(
    nodes: em.Nodes,
    at: np.ndarray,
    span: np.ndarray,
    scores: np.ndarray,
    unk_score: float,
    skip: int = -1,
    *,
    workers: int = 1,
) -> tuple[np.ndarray, ...]:
    """``(n_paths, best_len, second, bounds)`` of each piece ``i`` (the text ``span[i]``
    characters from ``at[i]`` of the words' text whose lattices are ``nodes``; ``span`` 0:
    none, the placeholder): how many paths its own lattice has (1, or 2 for more), how many
    pieces its best path has, and its second best path's pieces
    ``second[bounds[i]:bounds[i + 1]]`` (``-1`` for an unknown node), as
    :func:`rowbook.text.unigram.lattice.two_best` finds them; the nodes of piece ``skip``
    left out."""
    node_at = np.zeros(nodes.count.size + 1, np.int64)  # (C + 1,) the first node at each character
    np.cumsum(nodes.count, out=node_at[1:])
    length, piece_of = nodes.length, nodes.piece

    def job(block: tuple[int, int]) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
        return _block_two_best(
            node_at, length, piece_of, at, span, order, *block, scores, unk_score, skip
        )

    order = np.argsort(at, kind="stable")  # by where they occur: the nodes read in order
    parts = list(map_in_threads(job, _piece_blocks(at.size), workers))
    n_paths, best_len = np.empty(at.size, np.int64), np.empty(at.size, np.int64)
    n_paths[order] = np.concatenate([np.zeros(0, np.int64), *(p[0][0] for p in parts)])
    best_len[order] = np.concatenate([np.zeros(0, np.int64), *(p[0][1] for p in parts)])
    second, bounds = em.joined_runs([(p[0][2], p[1]) for p in parts])
    return (n_paths, best_len, *_runs_in_order(second, bounds, order))


@numba.njit(cache=True)
def _runs_in_order(values, bounds, order):
    """``(values, bounds)`` with run ``j`` of the input made run ``order[j]``."""
    n = order.size
    out_bounds = np.zeros(n + 1, np.int64)
    for j in range(n):
        out_bounds[order[j] + 1] = bounds[j + 1] - bounds[j]
    for i in range(n):
        out_bounds[i + 1] += out_bounds[i]
    out = np.empty(values.size, values.dtype)
    for j in range(n):
        out[out_bounds[order[j]] : out_bounds[order[j] + 1]] = values[bounds[j] : bounds[j + 1]]
    return out, out_bounds


def _piece_blocks(n: int) -> list[tuple[int, int]]:
    return list(itertools.pairwise([*range(0, n, PIECES_PER_BLOCK), n]))


@numba.njit(cache=True)
def _prune_kernel(freq, n_paths, best_len, second, bounds, vsum, size):
    """The ids that survive pruning, in the order they are kept (:mod:`~rowbook.text.unigram.train`,
    step 3): ``freq[i]``, how often the best paths of the words use piece ``i``; ``second``,
    the second-best path of each piece alone (``bounds``); ``size``, the pieces to keep."""
    V = freq.size
    total = 0.0
    for i in range(V):
        total += freq[i]
    logsum = np.log(total)
    kept = np.empty(V, np.int64)
    kept[0], n_kept = 0, 1
    candidates = np.empty(V, np.int64)
    loss = np.empty(V, np.float64)
    n_candidates = 0
    for i in range(1, V):
        always = n_paths[i] == 1 or best_len[i] == 1
        with_alternatives = n_paths[i] == 2 and best_len[i] == 1 and bounds[i + 1] > bounds[i]
        if freq[i] == 0 and not always:
            continue
        if not with_alternatives:
            kept[n_kept] = i
            n_kept += 1
            continue
        f = freq[i] / vsum
        if f == 0 or np.isnan(f):
            continue
        logprob_sp = np.log(freq[i]) - logsum
        logsum_alt = np.log(total + freq[i] * (V - 1))  # tokenizers' (sic) normalizer
        logprob_alt = 0.0
        for a in second[bounds[i] : bounds[i + 1]]:
            logprob_alt += np.log(freq[max(a, 0)] + freq[i]) - logsum_alt
        candidates[n_candidates] = i
        loss[n_candidates] = f * (logprob_sp - logprob_alt)
        n_candidates += 1
    order = np.argsort(-loss[:n_candidates], kind="mergesort")  # stable: ties in id order
    for r in range(n_candidates):
        if n_kept == size:
            break
        kept[n_kept] = candidates[order[r]]
        n_kept += 1
    return kept[:n_kept]


def prune(
    starts: np.ndarray,
    counts: np.ndarray,
    nodes: em.Nodes,
    scores: np.ndarray,
    unk_score: float,
    at: np.ndarray,
    span: np.ndarray,
    size: int,
    skip: int = -1,
    *,
    workers: int = 1,
) -> np.ndarray:
    """The ids of the pieces that survive pruning, at most ``size`` of them, in their new
    order: the pieces scored ``scores`` (the placeholder first), the words
    ``starts`` with their ``counts`` and lattices ``nodes``, piece ``i`` the text of
    ``span[i]`` characters from ``at[i]`` of the words' text (the piece ``skip`` left out of
    the pieces' own lattices)."""
    ids, word_bounds = em.best_pieces(starts, nodes, scores, unk_score, workers=workers)
    ids = np.where(ids < 0, 0, ids)  # unknown nodes count for the placeholder
    per_word = np.repeat(counts, np.diff(word_bounds))
    freq = np.bincount(ids, weights=per_word, minlength=scores.size)  # (V,)
    n_paths, best_len, second, bounds = two_best_of_pieces(
        nodes, at, span, scores, unk_score, skip, workers=workers
    )
    return _prune_kernel(freq, n_paths, best_len, second, bounds, float(counts.sum()), size)
