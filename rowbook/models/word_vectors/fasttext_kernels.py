"""fastText's inner loop: word2vec's, with every input row replaced by a mean bag of rows.

The input table ``W_in`` ``(nwords + bucket, d)`` holds a row per word and a row per n-gram
bucket; ``bag(w)`` is the CSR run ``bag_ids[bag_starts[w]:bag_starts[w + 1]]`` (the word's
own id, then its n-gram rows, :mod:`rowbook.text.char_ngrams`). ``W_out`` ``(nwords, d)`` is
the negative-sampling output table. One example is a hidden vector ``h`` predicting a
``center`` word:

* skip-gram: ``h = mean(W_in[r] for r in bag(center))`` predicts each ``context`` word in
  the window of ``center``, h taken afresh before each (fastText's ``FastText::skipgram``,
  which calls ``Model::update`` once per context word) -- a word's n-grams predict its
  neighbours. word2vec.c's skip-gram (and :mod:`~rowbook.models.word_vectors.word2vec_kernels`)
  takes the other orientation, the context row predicting the centre: the same pairs, but
  the rows stepped are the context's, and the window drawn for the centre bounds them;
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

A job makes its draws as word2vec's does (:func:`~rowbook.models.word_vectors.word2vec_kernels.kept_words`:
one per word for subsampling, one per kept word for the window shrink, then the
negatives, through the same :func:`~rowbook.models.word_vectors.word2vec_kernels.negative_sampling_step`;
with ``redraw`` a negative equal to its example's target is drawn again, as fastText's
``getNegative`` does, where word2vec skips it);
with ``maxn=0`` every bag is the word alone, ``h`` is its row (times exactly 1.0), and CBOW
is word2vec's CBOW bit for bit. The window shrink ``b`` in ``[0, window)`` gives
fastText's ``uniform(1, ws)`` effective window, drawn once per centre word as fastText does.
:func:`~rowbook.models.word_vectors.word2vec_reference.fasttext_job_reference` is the
plain-Python formulation the tests hold this kernel to.
"""

from __future__ import annotations

import numba
import numpy as np

from rowbook.data.sampling import window_bounds
from rowbook.models.word_vectors.telemetry_kernels import begin_job, end_job, record, step_norm
from rowbook.models.word_vectors.word2vec_kernels import (
    FASTMATH,
    kept_words,
    negative_sampling_step,
)

__all__ = ["bag_mean", "scatter_bag", "train_job"]


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True, inline="always")
def _add_bag(W_in, bag_starts, bag_ids, word, h):  # pragma: no cover - compiled
    """``h += sum(W_in[r] for r in bag(word))``; returns the bag's size."""
    d = W_in.shape[1]
    for k in range(bag_starts[word], bag_starts[word + 1]):
        row = W_in[bag_ids[k]]
        for c in range(d):
            h[c] += row[c]
    return bag_starts[word + 1] - bag_starts[word]


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True, inline="always")
def bag_mean(W_in, bag_starts, bag_ids, word, h):  # pragma: no cover - compiled
    """``h = mean(W_in[r] for r in bag(word))``, summed row by row, then times ``1 / size``."""
    h[:] = 0.0
    size = _add_bag(W_in, bag_starts, bag_ids, word, h)
    _scale(h, np.float32(1.0 / size))


# The transpose of _add_bag (its gather), alike in shape only: one reads the bag's rows into
# h, the other adds one vector to each of them; a loop with a direction flag would read worse.
@numba.njit(nogil=True, fastmath=FASTMATH, cache=True, inline="always")
def scatter_bag(W_in, bag_starts, bag_ids, word, work):  # pragma: no cover - compiled
    """``W_in[r] += work`` for every row ``r`` of bag(word) (fastText: the full step each)."""
    d = W_in.shape[1]
    for k in range(bag_starts[word], bag_starts[word + 1]):
        row = W_in[bag_ids[k]]
        for c in range(d):
            row[c] += work[c]


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True, inline="always")
def _scale(h, factor):  # pragma: no cover - compiled
    """``h *= factor`` (the mean of a bag: its sum times ``1 / size``)."""
    for c in range(h.shape[0]):
        h[c] *= factor


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True)
def train_job(
    W_in, bags, sentences, sampling, out, skipgram, lr, seed, stats=None, redraw=False
):  # pragma: no cover - compiled
    """Train on the ``sentences`` of an encoded corpus; returns the words trained.

    ``bags = (bag_starts, bag_ids)``: every word's rows of ``W_in``. ``stats`` (None: off,
    compiled away) records per-row telemetry of ``W_in``, every row of every bag
    (:mod:`~rowbook.models.word_vectors.telemetry_kernels`). A negative equal to its
    example's target is skipped, or with ``redraw`` drawn again (fastText's choice).

    ``sentences``, ``sampling`` and ``out = (W_out, table, guide, negative)`` are word2vec's
    (:func:`~rowbook.models.word_vectors.word2vec_kernels.train_job`; fastText always
    shrinks the window), and so are the draws
    (:func:`~rowbook.models.word_vectors.word2vec_kernels.kept_words`, then the negatives
    of every example in order).
    """
    W_out, table, guide, negative = out
    bag_starts, bag_ids = bags
    window = sampling[2]
    words, ends, shrinks, state = kept_words(sentences, sampling, np.uint64(seed))
    recorded = begin_job(stats, W_in, words, bags)  # (n, 2) or None
    d = W_in.shape[1]
    work = np.empty(d, dtype=np.float32)  # (d,) h's step
    h = np.empty(d, dtype=np.float32)  # (d,) the mean bag
    lr = np.float32(lr)
    start = 0
    for end in ends:
        for i in range(start, end):
            lo, hi = window_bounds(i, start, end, window, shrinks[i])
            if skipgram:  # the centre's bag predicts each context word, h afresh each time
                for j in range(lo, hi):
                    if j != i:
                        bag_mean(W_in, bag_starts, bag_ids, words[i], h)
                        work[:] = 0.0
                        state, _ = negative_sampling_step(
                            h,
                            W_out,
                            words[j],
                            negative,
                            table,
                            guide,
                            lr,
                            state,
                            work,
                            False,
                            redraw,
                        )
                        scatter_bag(W_in, bag_starts, bag_ids, words[i], work)
                        if stats is not None:  # every row of the bag took this step
                            record(recorded, i, step_norm(work))
            else:  # one mean over the rows of every context word's bag predicts the centre
                h[:] = 0.0
                size = 0
                for j in range(lo, hi):
                    if j != i:
                        size += _add_bag(W_in, bag_starts, bag_ids, words[j], h)
                _scale(h, np.float32(1.0 / size) if size > 0 else np.float32(1.0))
                work[:] = 0.0
                state, _ = negative_sampling_step(
                    h, W_out, words[i], negative, table, guide, lr, state, work, False, redraw
                )
                if stats is not None:  # every row of every bag takes this step
                    norm = step_norm(work)
                for j in range(lo, hi):
                    if j != i:
                        scatter_bag(W_in, bag_starts, bag_ids, words[j], work)
                        if stats is not None:
                            record(recorded, j, norm)
        start = end
    end_job(stats, words, bags, recorded, lr)
    return words.shape[0]
