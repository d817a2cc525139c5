"""A SentencePiece Unigram word by word: each distinct word's best path found once, with the
margin that proves it is the path ``sentencepiece`` takes wherever the word occurs.

``sentencepiece`` runs the Viterbi pass of :func:`~rowbook.text.unigram.lattice.best_ends`
over the whole normalized sentence, adding 32-bit scores into 32-bit path scores.
When no piece holds a ``"▁"`` past its first character, every path passes through each
``"▁"``, so each word (a ``"▁"`` and the characters up to the next) is segmented apart from
the others: its best path depends only on its characters and on ``x``, the path score where
it starts. Only through rounding: two paths whose exact sums differ by less than the
rounding of a path score near ``x`` can swap places as ``x`` grows.

So a word's best path is computed once, by the same pass from ``x = 0``
(:func:`word_path`), with its *margin* ``M``: the smallest gap, over the word's positions,
between the best score there and the next best candidate; and its *magnitude* ``W``: the
largest absolute best score. A 32-bit addition is off by at most ``2**-24`` of its result,
and a candidate in a word of ``n`` characters sums at most ``n + 1`` scores, each partial
sum within ``|x| + W`` (a candidate's own gap below the best only widens the gap), so a
candidate from ``x`` is within ``(n + 1) 2**-24 (|x| + W)`` of its exact value, and one
from 0 within ``(n + 1) 2**-24 W``. If ``M > 2 (n + 1) 2**-24 (|x| + 2 W)``, no candidate
can overtake the best at any position from ``x``: the path is ``sentencepiece``'s (:func:`exact_below` asks for ``(n + 2) 2**-22 (|x| + W)``, more than
that). The path score after the word is then its pieces' scores added to ``x`` one by one
in 32 bits, as ``sentencepiece`` adds them. A word whose margin is too small at that ``x``
(an exact tie has none), that is too long to keep, or that finds the cache full runs the
pass from ``x``.

The paths are kept in the batch's word cache (:mod:`rowbook.text.sentencepiece.word_cache`)
and :func:`word_nodes` gives each word's pieces; the tests hold the batch pass to the
sentence-at-a-time path (the whole sentence's lattice) and to ``sentencepiece``, near ties
at large path scores included.
"""

from __future__ import annotations

import numba
import numpy as np

from rowbook.text.sentencepiece.word_cache import (
    MAX_NUMBER,
    add_word,
    find_word,
    has_room,
    number_of,
    results_of,
)
from rowbook.text.unigram.lattice import (
    SENTENCEPIECE,
    USER_DEFINED,
    best_ends,
    sentencepiece_score,
)
from rowbook.text.utf8 import utf8_len

__all__ = ["MAX_WORD", "exact_below", "word_nodes", "word_path", "word_scratch"]

#: The longest word (characters) whose path is kept; longer ones run the pass each time.
MAX_WORD = 32


@numba.njit(cache=True)
def word_scratch(longest):
    """The arrays :func:`word_nodes` works in for words of up to ``longest`` characters:
    ``(best, start, piece, second)``, each ``(longest + 1,)``."""
    return (
        np.empty(longest + 1, np.float64),
        np.empty(longest + 1, np.int64),
        np.empty(longest + 1, np.int64),
        np.empty(longest + 1, np.float64),
    )


@numba.njit(cache=True, inline="always")
def _pass(norm, b, e, x, model, scratch, path_start, path_id, keep_second):
    """The word's path by the Viterbi pass from ``x`` into ``path_start`` and ``path_id``:
    ``(pieces, path score after)``; with ``keep_second``, ``scratch[3]`` holds each
    position's second best."""
    trie, scores, kinds, unk_score = model
    best, start, piece, second = scratch
    best_ends(
        norm,
        b,
        e,
        trie,
        scores,
        kinds,
        unk_score,
        SENTENCEPIECE,
        x,
        best,
        start,
        piece,
        second if keep_second else second[:0],
    )
    count, k = 0, e - b
    while k > 0:
        count += 1
        k = start[k]
    j, k = count - 1, e - b
    while k > 0:  # written right to left
        path_start[j], path_id[j] = start[k], piece[k]
        k = start[k]
        j -= 1
    return count, best[e - b]


@numba.njit(cache=True, nogil=True, _nrt=False)
def word_path(norm, b, e, model, scratch, path_start, path_id):
    """The best path of the word ``norm[b:e]`` from a path score of 0: its pieces' starts
    in the word and ids (``-1`` for an unknown character) into ``path_start`` and
    ``path_id``, left to right. ``(pieces, margin, magnitude)``: the smallest gap between
    the best and the second best score at a position, and the largest absolute best score."""
    count, _ = _pass(norm, b, e, 0.0, model, scratch, path_start, path_id, True)
    best, second = scratch[0], scratch[3]
    margin, magnitude = np.inf, 0.0
    for k in range(1, e - b + 1):
        gap = best[k] - second[k]
        if not gap >= margin:  # a NaN gap stays: the word is then never taken as exact
            margin = gap
        magnitude = max(magnitude, abs(best[k]))
    return count, margin, magnitude


@numba.njit(cache=True, inline="always")
def exact_below(margin, magnitude, n):
    """The path scores ``x`` from which a word of ``n`` characters whose path has ``margin``
    and ``magnitude`` takes that path: ``|x| < exact_below(...)`` (see the module), as an
    integer rounded down (``-1``: none) and at most
    :data:`~rowbook.text.sentencepiece.word_cache.MAX_NUMBER`, kept in the word cache."""
    bound = margin / ((n + 2) * 2.0**-22) - magnitude
    if not bound >= 1.0:
        return -1
    return np.int64(min(bound, MAX_NUMBER))


@numba.njit(cache=True, inline="always")
def _replay(norm, b, e, x, count, path_start, path_id, model):
    """The 32-bit path score after the word ``norm[b:e]``'s path from ``x``, each piece added
    as :func:`~rowbook.text.unigram.lattice.best_ends` adds it."""
    _, scores, kinds, unk_score = model
    for j in range(count):
        token = path_id[j]
        if token < 0:
            score = np.float32(unk_score)
        else:
            nbytes = 0
            if kinds[token] == USER_DEFINED:  # the only score that counts the bytes
                end = b + path_start[j + 1] if j + 1 < count else e
                for k in range(b + path_start[j], end):
                    nbytes += utf8_len(norm[k])
            score = sentencepiece_score(token, nbytes, scores, kinds)
        x = np.float64(np.float32(np.float32(x) + score))
    return x


@numba.njit(cache=True, inline="always")
def word_nodes(norm, b, e, x, model, cached, cache, scratch, path_start, path_id):
    """The pieces of the word ``norm[b:e]`` from the 32-bit path score ``x``, as
    ``sentencepiece`` finds them in the whole sentence: their starts in the word and ids
    (``-1``: an unknown character) into ``path_start`` and ``path_id``. ``(pieces, path
    score after the word)``. Not ``cached``: the Viterbi pass, nothing kept. Inlined: call
    it from functions compiled with ``_nrt=False``."""
    n = e - b
    if not cached or n > MAX_WORD:
        return _pass(norm, b, e, x, model, scratch, path_start, path_id, False)
    arena = cache[1]
    record, slot, tag = find_word(norm, b, e, cache)
    if record >= 0:
        first, count = results_of(cache, record)
        for j in range(count):
            path_start[j], path_id[j] = arena[first + 2 * j], arena[first + 2 * j + 1]
        below = number_of(cache, record)
    elif has_room(cache, n, n):  # a path has a piece per character at most
        count, margin, magnitude = word_path(norm, b, e, model, scratch, path_start, path_id)
        below = exact_below(margin, magnitude, n)
        record = add_word(norm, b, e, slot, tag, cache, count, below)
        first, _ = results_of(cache, record)
        for j in range(count):
            arena[first + 2 * j], arena[first + 2 * j + 1] = path_start[j], path_id[j]
    else:  # the cache is full: the words not kept are rare, the pass is cheaper
        return _pass(norm, b, e, x, model, scratch, path_start, path_id, False)
    if not abs(x) < below:
        return _pass(norm, b, e, x, model, scratch, path_start, path_id, False)
    return count, _replay(norm, b, e, x, count, path_start, path_id, model)
