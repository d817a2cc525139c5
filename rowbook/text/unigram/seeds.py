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
doubling with NumPy sorts (ranks of 1, 2, 4, ... characters; five rounds for pieces of up
to 16) gives that order without building the full suffix array; the longest common
prefixes of neighbours (capped at ``max_piece_length + 1``) follow, and the nodes are the
LCP intervals, found with the stack walk ``esaxx`` uses. Both are numba loops. The tests
compare the seed list with one made by brute-force counting of every substring.

Examples
--------
>>> seeds = seed_pieces({"abab": 2, "ab": 1}, max_piece_length=4, seed_size=10)
>>> [(piece, round(score, 3)) for piece, score in seeds]
[('b', -1.163), ('a', -1.163), ('ab', -0.981)]
"""

from __future__ import annotations

from collections.abc import Mapping

import numba
import numpy as np

from rowbook.text.trie import codepoints
from rowbook.text.word_counts import as_counted

__all__ = ["seed_pieces", "substring_nodes", "substring_nodes_reference"]


def _prefix_ranks(text: np.ndarray, word_end: np.ndarray, depth: int) -> np.ndarray:
    """``(n,)`` ranks of each suffix's first ``depth`` characters, cut after its word's ``\\0``."""
    n = text.size
    _, rank = np.unique(text, return_inverse=True)
    rank = rank.astype(np.int64) + 1  # 0: past the end of the word
    k = 1
    positions = np.arange(n, dtype=np.int64)
    while k < depth:
        second = np.zeros(n, dtype=np.int64)
        inside = positions + k <= word_end  # the k-th next character is still in the word
        second[inside] = rank[positions[inside] + k]
        key = rank * (n + 2) + second
        _, rank = np.unique(key, return_inverse=True)
        rank = rank.astype(np.int64) + 1
        k *= 2
    return rank


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


def substring_nodes(text: np.ndarray, max_length: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(start, length, occurrences)`` of each substring of 2 to ``max_length`` characters of
    ``text`` (code points, words ended by 0) that is an internal node of its suffix tree,
    ordered as the sorted suffixes list them (so by the substring itself)."""
    n = text.size
    zeros = np.flatnonzero(text == 0)
    ends = np.full(n, n - 1, dtype=np.int64)
    word_of = np.searchsorted(zeros, np.arange(n), side="left")
    inside = word_of < zeros.size
    ends[inside] = zeros[word_of[inside]]  # (n,) the position of each character's word end
    cap = max_length + 1
    rank = _prefix_ranks(text, ends, 1 << int(np.ceil(np.log2(cap))))
    order = np.argsort(rank, kind="stable")  # (n,) suffixes sorted by their first cap characters
    lcp = _lcp(text, ends, order, cap)
    nodes = _intervals(lcp, cap)
    left, right, depth = nodes[:, 0], nodes[:, 1], nodes[:, 2]
    start = order[left]
    keep = (depth >= 2) & (depth <= max_length) & (start + depth <= ends[start])  # no "\0" inside
    by_string = np.lexsort((depth[keep], left[keep]))
    return start[keep][by_string], depth[keep][by_string], (right - left)[keep][by_string]


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


def seed_pieces(
    word_counts: Mapping[str, int], *, max_piece_length: int = 16, seed_size: int = 1_000_000
) -> list[tuple[str, float]]:
    """The seeds as ``(piece, log-probability)``, in ``tokenizers``' order (module docstring)."""
    words = as_counted(word_counts)
    codes = codepoints(words.text)  # (C,)
    lengths = np.diff(words.bounds)  # (W,)
    chars, inverse = np.unique(codes, return_inverse=True)
    weights = np.bincount(inverse, weights=np.repeat(words.counts, lengths).astype(np.float64))
    order = np.lexsort((-chars, -weights))  # count, then code point, both descending
    seeds = [(chr(int(chars[i])), float(weights[i])) for i in order.tolist()]
    if lengths.size and len(seeds) < seed_size:
        text = np.zeros(codes.size + lengths.size, dtype=np.int32)  # each word followed by a 0
        text[np.arange(codes.size) + np.repeat(np.arange(lengths.size), lengths)] = codes
        start, length, count = substring_nodes(text, max_piece_length)
        score = count * length
        order = np.lexsort((-length, -np.arange(start.size), -score))[: seed_size - len(seeds)]
        chunks = text.astype(np.uint32).tobytes()
        for i in order.tolist():
            s, n = int(start[i]), int(length[i])
            seeds.append((chunks[4 * s : 4 * (s + n)].decode("utf-32-le"), float(score[i])))
    total = np.log(sum(s for _, s in seeds))
    return [(piece, float(np.log(s) - total)) for piece, s in seeds]
