"""fastText's inner loop: word2vec's, with every input row replaced by a mean bag of rows.

The input table ``W_in`` ``(nwords + bucket, d)`` holds a row per word and a row per n-gram
bucket; ``bag(w)`` is the CSR run ``bag_ids[bag_starts[w]:bag_starts[w + 1]]`` (the word's
own id, then its n-gram rows, :mod:`rowbook.text.subwords`). ``W_out`` ``(nwords, d)`` is
the negative-sampling output table. One example is a hidden vector ``h`` predicting a
``center`` word:

* skip-gram: ``h = mean(W_in[r] for r in bag(context))`` for each ``context`` in the
  window of ``center`` -- a word's n-grams predict its neighbour;
* CBOW: ``h = mean(W_in[r] for r in bag(c1) + bag(c2) + ...)``: one mean over the rows of
  every context word's bag together (fastText's ``bow``), not a mean of means.

Derivation. Negative sampling maximises
``L = log s(h . W_out[center]) + sum_k log s(-h . W_out[neg_k])`` (``s`` the sigmoid).
For a target ``t`` with label ``y`` (1 for ``center``, 0 for a negative),
``dL/d(h . W_out[t]) = y - s(h . W_out[t])``; with ``g_t = lr * (y - s(h . W_out[t]))`` the
ascent steps are ``W_out[t] += g_t h`` and ``h += sum_t g_t W_out[t]`` (rows taken before
their own update). Since ``h = (1/n) sum_r W_in[r]``, the exact gradient of each bag row
is ``(1/n)`` of h's; fastText (``Model::update`` with ``normalizeGradient`` false for
unsupervised models) adds h's *whole* step to every row of the bag, and so do these
kernels: ``W_in[r] += sum_t g_t W_out[t]`` for each ``r`` in the bag, once per occurrence.

With ``maxn=0`` every bag is the word alone, ``h`` is its row (times exactly 1.0), and a
job makes the same draws in the same order as word2vec's
(:func:`rowbook.models._w2v_kernels.train_job`): one per word for subsampling, one per
kept word for the window shrink, then the negatives, through the same
:func:`~rowbook.models._w2v_kernels.negative_sampling_step`. The window shrink ``b`` in
``[0, window)`` gives fastText's ``uniform(1, ws)`` effective window.
"""

from __future__ import annotations

import numba
import numpy as np

from rowbook.data.sampling import lcg_next
from rowbook.models._w2v_kernels import _FAST, _subsample, negative_sampling_step

__all__ = ["train_job"]

_U16 = np.uint64(16)


@numba.njit(nogil=True, fastmath=_FAST, cache=True, inline="always")
def _add_bag(W_in, bag_starts, bag_ids, word, h):  # pragma: no cover - compiled
    """``h += sum(W_in[r] for r in bag(word))``; returns the bag's size."""
    d = W_in.shape[1]
    for k in range(bag_starts[word], bag_starts[word + 1]):
        row = W_in[bag_ids[k]]
        for c in range(d):
            h[c] += row[c]
    return bag_starts[word + 1] - bag_starts[word]


@numba.njit(nogil=True, fastmath=_FAST, cache=True, inline="always")
def _scatter_bag(W_in, bag_starts, bag_ids, word, work):  # pragma: no cover - compiled
    """``W_in[r] += work`` for every row ``r`` of bag(word) (fastText: the full step each)."""
    d = W_in.shape[1]
    for k in range(bag_starts[word], bag_starts[word + 1]):
        row = W_in[bag_ids[k]]
        for c in range(d):
            row[c] += work[c]


@numba.njit(nogil=True, fastmath=_FAST, cache=True)
def train_job(
    W_in,
    bag_starts,
    bag_ids,
    ids,
    starts,
    s0,
    s1,
    thresholds,
    use_sample,
    out,
    window,
    skipgram,
    lr,
    seed,
):  # pragma: no cover - compiled
    """Train on sentences ``[s0, s1)`` of an encoded corpus; returns the words trained.

    ``out = (W_out, table, guide, negative)``; draws, in order from the generator state
    ``seed``: one per word for subsampling, one per kept word for its window shrink, then
    the negatives of every example (word2vec's order).
    """
    W_out, table, guide, negative = out
    state = np.uint64(seed)
    words, ends, state = _subsample(ids, starts, s0, s1, thresholds, use_sample, state)
    n = words.shape[0]
    reduced = np.empty(n, dtype=np.int64)
    for i in range(n):
        reduced[i] = np.int64((state >> _U16) % np.uint64(window))
        state = lcg_next(state)
    d = W_in.shape[1]
    work = np.empty(d, dtype=np.float32)  # (d,) h's step
    h = np.empty(d, dtype=np.float32)  # (d,) the mean bag
    lr = np.float32(lr)
    start = 0
    for end in ends:
        for i in range(start, end):
            lo = max(i - window + reduced[i], start)
            hi = min(i + window + 1 - reduced[i], end)
            if skipgram:
                for j in range(lo, hi):
                    if j != i:
                        h[:] = 0.0
                        size = _add_bag(W_in, bag_starts, bag_ids, words[j], h)
                        inv = np.float32(1.0 / size)
                        for c in range(d):
                            h[c] *= inv
                        work[:] = 0.0
                        state, _ = negative_sampling_step(
                            h, W_out, words[i], negative, table, guide, lr, state, work, False
                        )
                        _scatter_bag(W_in, bag_starts, bag_ids, words[j], work)
            else:
                h[:] = 0.0
                size = 0
                for j in range(lo, hi):
                    if j != i:
                        size += _add_bag(W_in, bag_starts, bag_ids, words[j], h)
                inv = np.float32(1.0 / size) if size > 0 else np.float32(1.0)  # word2vec's draws
                for c in range(d):
                    h[c] *= inv
                work[:] = 0.0
                state, _ = negative_sampling_step(
                    h, W_out, words[i], negative, table, guide, lr, state, work, False
                )
                for j in range(lo, hi):
                    if j != i:
                        _scatter_bag(W_in, bag_starts, bag_ids, words[j], work)
        start = end
    return n
