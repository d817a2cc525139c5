"""The seed pieces of Unigram training: every character, then the frequent substrings, by a suffix array.

``tokenizers``' ``UnigramTrainer`` (``make_seed_sentence_pieces``) and SentencePiece start
from the same kind of seed set; rowbook builds ``tokenizers``' one:

1. the distinct words are written one after another, each followed by ``"\\0"``;
2. every character is a seed, scored by its count in the corpus (each word weighted by
   its count), ordered by count, then by code point, both descending;
3. the substrings that are *internal nodes of the suffix tree* of that text (a substring
   occurring at least twice and followed by at least two different characters, as the
   ``esaxx`` library enumerates them), of 2 to ``max_piece_length`` characters and not
   crossing a ``"\\0"``, are scored ``occurrences * length``, where occurrences count the
   distinct words' text, not the corpus; they follow the characters by score, then by the
   substring itself, both descending, up to ``seed_size`` seeds in all;
4. the scores become log-probabilities, ``log(score) - log(sum of scores)``.

How the suffix tree's nodes are found. Only nodes of at most ``max_piece_length``
characters are kept, so the suffixes need sorting only by their first
``max_piece_length + 1`` characters (what comes after a ``"\\0"`` never matters): prefix
doubling (ranks of 1, 2, 4, ... characters; five rounds for pieces of up to 16), each
round two counting sorts, linear, gives that order without building the full suffix
array (``np.unique`` sorting each round took three times as long); the longest common
prefixes of neighbours (capped at ``max_piece_length + 1``) follow, and the nodes are the
LCP intervals, found with the stack walk ``esaxx`` uses. All three are numba loops. The tests
compare the seed list with one made by brute-force counting of every substring.

The words' lattices come from the same intervals. A substring seed begins exactly the
suffixes of its interval, so the nodes at a character are its own character's seed and the
seeds whose intervals hold its suffix: walking the sorted suffixes with the intervals open
at each on a stack (nested, the shortest substring outermost) writes each character's nodes,
shortest first, in one place. That is what a trie of the seeds walked from every character
finds (:func:`rowbook.text.unigram.em.find_nodes`, the tests' reference), without building
the trie (0.25 s of CPU on NewsArticles' 282,000 seeds) or the walk (0.22 s).

Examples
--------
>>> seeds = seed_pieces({"abab": 2, "ab": 1}, max_piece_length=4, seed_size=10)
>>> [(piece, round(score, 3)) for piece, score in zip(seeds.pieces, seeds.scores.tolist())]
[('b', -1.163), ('a', -1.163), ('ab', -0.981)]
>>> seeds.at.tolist(), seeds.span.tolist()  # where in "ababab" each occurs
([1, 0, 2], [1, 1, 2])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numba
import numpy as np

from rowbook.text.trie import codepoints
from rowbook.text.unigram.em import Nodes, nodes_of
from rowbook.text.word_counts import as_counted

__all__ = ["Seeds", "characters", "seed_pieces", "substring_nodes", "substring_nodes_reference"]


@numba.njit(cache=True, inline="always")
def _counting_sort(key, n_keys, source, out, count):
    """``out``: ``source`` (positions) stably sorted by ``key[position]`` in ``0 .. n_keys``."""
    count[: n_keys + 2] = 0
    for i in source:
        count[key[i] + 1] += 1
    for r in range(1, n_keys + 2):
        count[r] += count[r - 1]
    for i in source:
        out[count[key[i]]] = i
        count[key[i]] += 1


@numba.njit(cache=True)
def _sorted_suffixes(rank, word_end, depth):
    """``(n,)`` the suffixes sorted by their first ``depth`` characters cut after their word's
    ``\\0``, ties by position: prefix doubling, each round two stable counting sorts of the
    pairs ``(rank of the first k characters, rank of the next k)``. ``rank``: each
    character's rank, from 1 (0: past the end of the word)."""
    n = rank.size
    order = np.arange(n)
    by_second = np.empty(n, np.int64)
    second = np.zeros(n, np.int64)
    count = np.empty(n + 2, np.int64)
    n_ranks = rank.max() if n else 0
    k = 1
    while k < depth:
        for i in range(n):
            second[i] = rank[i + k] if i + k <= word_end[i] else 0
        _counting_sort(second, n_ranks, np.arange(n), by_second, count)
        _counting_sort(rank, n_ranks, by_second, order, count)
        new_rank = np.empty(n, np.int64)
        r = 0
        for j in range(n):
            i = order[j]
            if j == 0 or rank[i] != rank[order[j - 1]] or second[i] != second[order[j - 1]]:
                r += 1
            new_rank[i] = r
        rank, n_ranks = new_rank, r
        k *= 2
    return order


@numba.njit(cache=True)
def _lcp(text, word_end, order, cap):
    n = order.size
    lcp = np.zeros(n + 1, np.int64)
    for r in range(1, n):
        a, b = order[r - 1], order[r]
        h = 0
        while (
            h < cap and a + h <= word_end[a] and b + h <= word_end[b] and text[a + h] == text[b + h]
        ):
            h += 1
        lcp[r] = h
    lcp[n] = -1
    return lcp


@numba.njit(cache=True)
def _intervals(lcp, cap):
    """Internal nodes ``(left, right, depth)`` of the suffix tree (LCP intervals of two or
    more suffixes), as ``esaxx``'s stack walk emits them."""
    n = lcp.size - 1
    out = np.empty((n + 1, 3), np.int64)
    stack_start = np.empty(n + 2, np.int64)
    stack_depth = np.empty(n + 2, np.int64)
    stack_start[0], stack_depth[0], top = -1, -1, 1
    m = 0
    for i in range(n + 1):
        start, depth = i, lcp[i] if i < n else -1
        if i == 0:
            depth = 0
        while stack_depth[top - 1] > depth:
            top -= 1
            if i - stack_start[top] > 1:
                out[m, 0], out[m, 1], out[m, 2] = stack_start[top], i, stack_depth[top]
                m += 1
            start = stack_start[top]
        if stack_depth[top - 1] < depth:
            stack_start[top], stack_depth[top] = start, depth
            top += 1
        if i == n:
            break
        stack_start[top], stack_depth[top] = i, cap + 1  # the leaf of suffix i
        top += 1
    return out[:m]


@numba.njit(cache=True)
def characters(codes, weights):
    """``(chars, first, totals, rank)``: the distinct code points of ``codes`` in increasing
    order, where each first occurs, its ``weights`` (one per code, or none) added in order,
    and the rank of each of ``codes`` among them.

    >>> codes = np.array([98, 97, 98, 99], np.int32)
    >>> chars, first, totals, rank = characters(codes, np.array([1.0, 2.0, 3.0, 4.0]))
    >>> chars.tolist(), first.tolist(), totals.tolist(), rank.tolist()
    ([97, 98, 99], [1, 0, 3], [2.0, 4.0, 4.0], [1, 0, 1, 2])
    """
    top = codes.max() + 1 if codes.size else 0
    first = np.full(top, -1, np.int64)  # (max + 1,) by code point
    total = np.zeros(top, np.float64)
    for i in range(codes.size):
        if first[codes[i]] < 0:
            first[codes[i]] = i
        if weights.size:
            total[codes[i]] += weights[i]
    chars = np.flatnonzero(first >= 0)
    rank = np.empty(top, np.int64)
    rank[chars] = np.arange(chars.size)
    out = np.empty(codes.size, np.int64)
    for i in range(codes.size):
        out[i] = rank[codes[i]]
    return chars, first[chars], total[chars], out


@numba.njit(cache=True)
def _word_ends(text):
    """``(n,)`` the position of the 0 ending each character's word (the last position past
    the last 0)."""
    ends = np.empty(text.size, np.int64)
    end = text.size - 1
    for i in range(text.size - 1, -1, -1):
        if text[i] == 0:
            end = i
        ends[i] = end
    return ends


def _suffix_intervals(text: np.ndarray, max_length: int) -> tuple[np.ndarray, ...]:
    """``(order, left, right, depth)``: the suffixes of ``text`` sorted by their first
    ``max_length + 1`` characters, and the internal nodes of 2 to ``max_length`` characters
    (no ``"\\0"`` inside): the substring of ``depth`` characters that the suffixes
    ``order[left:right]`` begin with, and only they; by the substring itself."""
    ends = _word_ends(text)  # (n,) the position of each character's word end
    cap = max_length + 1
    rank = characters(text, np.empty(0))[3]
    order = _sorted_suffixes(rank + 1, ends, cap)  # (n,) by the first cap characters
    lcp = _lcp(text, ends, order, cap)
    nodes = _intervals(lcp, cap)
    left, right, depth = nodes[:, 0], nodes[:, 1], nodes[:, 2]
    start = order[left]
    keep = (depth >= 2) & (depth <= max_length) & (start + depth <= ends[start])  # no "\0" inside
    by_string = np.lexsort((depth[keep], left[keep]))
    return order, left[keep][by_string], right[keep][by_string], depth[keep][by_string]


def substring_nodes(text: np.ndarray, max_length: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(start, length, occurrences)`` of each substring of 2 to ``max_length`` characters of
    ``text`` (code points, words ended by 0) that is an internal node of its suffix tree,
    ordered as the sorted suffixes list them (so by the substring itself)."""
    order, left, right, depth = _suffix_intervals(text, max_length)
    return order[left], depth, right - left


@numba.njit(cache=True, inline="always")
def _open_at(j, left, right, s, stack, top):
    """The intervals open at suffix ``j`` on ``stack`` (nested, the outermost first): those
    ending by ``j`` closed, those beginning at ``j`` opened. ``(s, top)`` after."""
    while top > 0 and right[stack[top - 1]] <= j:
        top -= 1
    while s < left.size and left[s] == j:
        stack[top] = s
        top += 1
        s += 1
    return s, top


@numba.njit(cache=True)
def _lattice_nodes(text, char_of, order, left, right, depth, ids, like):
    """``(count, length, piece)`` of :class:`~rowbook.text.unigram.em.Nodes` for the words of
    ``text`` (each followed by a 0): at each character its own seed ``char_of[c]``, then the
    seeds ``ids[s]`` it begins, seed ``ids[s]`` being the suffixes ``order[left[s]:right[s]]``
    (by ``left``, then ``depth``: nested intervals, the outer first), ``depth[s]``
    characters long; shortest first; the integers of ``count`` and ``length`` those of
    ``like``. The suffixes are walked in order with the intervals open at each on a stack, so
    each character's nodes are written in one place."""
    n = text.size
    data_at = np.empty(n, np.int64)  # (n,) each character's place among the words' characters
    c = 0
    for i in range(n):
        data_at[i] = c if text[i] != 0 else -1
        c += text[i] != 0
    stack = np.empty(left.size + 1, np.int64)
    count = np.zeros(c, like.dtype)  # (C,) the character's own seed and those it begins
    s, top = 0, 0
    for j in range(n):
        s, top = _open_at(j, left, right, s, stack, top)
        if data_at[order[j]] >= 0:
            count[data_at[order[j]]] = 1 + top
    cursor = np.zeros(c + 1, np.int64)
    for k in range(c):
        cursor[k + 1] = cursor[k] + count[k]
    length = np.empty(cursor[c], like.dtype)
    piece = np.empty(cursor[c], np.int32)
    s, top = 0, 0
    for j in range(n):
        s, top = _open_at(j, left, right, s, stack, top)
        k = data_at[order[j]]
        if k < 0:
            continue
        o = cursor[k]
        length[o], piece[o] = 1, char_of[k]
        for t in range(top):
            length[o + 1 + t], piece[o + 1 + t] = depth[stack[t]], ids[stack[t]]
    return count, length, piece


def substring_nodes_reference(words: list[str], max_length: int) -> dict[str, int]:
    """Every substring of 2 to ``max_length`` characters occurring at least twice in the words'
    text and followed there by two different characters (``"\\0"`` after a word's end)."""
    text = "".join(w + "\0" for w in words)
    counts: dict[str, int] = {}
    nexts: dict[str, set[str]] = {}
    for i in range(len(text)):
        for n in range(2, max_length + 1):
            s = text[i : i + n]
            if len(s) < n or "\0" in s:
                break
            counts[s] = counts.get(s, 0) + 1
            nexts.setdefault(s, set()).add(text[i + n] if i + n < len(text) else "")
    return {s: c for s, c in counts.items() if c >= 2 and len(nexts[s]) >= 2}


class Seeds(NamedTuple):
    """The seed pieces in ``tokenizers``' order: piece ``i`` is ``pieces[i]``, scored
    ``scores[i]`` (a log-probability), and occurs in the words' text (the words one after
    another) as its ``span[i]`` characters from character ``at[i]``; ``nodes``, the words'
    lattices (:class:`~rowbook.text.unigram.em.Nodes`, seed ``i`` as piece ``i``), as
    :func:`~rowbook.text.unigram.em.find_nodes` finds them with a trie of the seeds."""

    pieces: list[str]
    scores: np.ndarray  # (S,) float64
    at: np.ndarray  # (S,) int64
    span: np.ndarray  # (S,) int64
    nodes: Nodes


def seed_pieces(
    word_counts: Mapping[str, int], *, max_piece_length: int = 16, seed_size: int = 1_000_000
) -> Seeds:
    """The seeds, in ``tokenizers``' order (module docstring), and the words' lattices."""
    words = as_counted(word_counts)
    codes = codepoints(words.text)  # (C,)
    lengths = np.diff(words.bounds)  # (W,)
    per_char = np.repeat(words.counts, lengths).astype(np.float64)
    chars, first, weights, rank = characters(codes, per_char)
    order = np.lexsort((-chars, -weights))  # count, then code point, both descending
    pieces = [chr(c) for c in chars[order].tolist()]
    char_of = np.argsort(order)[rank]  # (C,) the seed of each character
    scores, at = [weights[order]], [first[order].astype(np.int64)]
    span = [np.ones(len(pieces), np.int64)]
    text = np.zeros(codes.size + lengths.size, dtype=np.int32)  # each word followed by a 0
    text[np.arange(codes.size) + np.repeat(np.arange(lengths.size), lengths)] = codes
    suffixes, left, right, depth, nested = np.arange(text.size), *np.zeros((4, 0), np.int64)
    if lengths.size and len(pieces) < seed_size:
        suffixes, left, right, depth = _suffix_intervals(text, max_piece_length)
        start, count = suffixes[left], right - left
        score = count * depth
        order = np.lexsort((-depth, -np.arange(start.size), -score))[: seed_size - len(pieces)]
        left, right, depth = left[order], right[order], depth[order]
        nested = np.argsort(order)  # the substring seeds by their intervals: by left, then depth
        flat = text.astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass")
        where = zip(start[order].tolist(), depth.tolist(), strict=True)
        pieces += [flat[s : s + n] for s, n in where]
        scores.append(score[order].astype(np.float64))
        ends = words.bounds[1:] + np.arange(lengths.size)  # (W,) where each word's 0 is
        at.append(start[order] - np.searchsorted(ends, start[order]))  # less the 0s before
        span.append(depth.astype(np.int64))
    kind = np.empty(0, np.uint8 if max_piece_length < 256 else np.int32)
    ids = chars.size + nested
    count, length, piece = _lattice_nodes(
        text, char_of, suffixes, left[nested], right[nested], depth[nested], ids, kind
    )
    total = np.concatenate(scores)  # (S,) integers, so any order of addition gives the total
    log_probs = np.log(total) - np.log(total.sum())
    nodes = nodes_of(words.bounds, count, length, piece)
    return Seeds(pieces, log_probs, np.concatenate(at), np.concatenate(span), nodes)
