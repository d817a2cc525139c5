"""fastText's minibatched skip-gram: a centre's bag read once for its whole window.

The classic kernel (:mod:`~rowbook.models.word_vectors.fasttext_kernels`, fastText's
``FastText::skipgram``) takes one example per (centre, context) pair: it sums the centre's
bag of rows into ``h``, steps ``1 + negative`` output rows, and adds h's step to every row
of the bag, once per pair. A bag holds the word's row and its n-gram rows (about 20 for a
word of 7 letters at n = 3-6, scattered over a table of 2M buckets), so for a window of
``I`` context words the bag is read and written ``I`` times: most of the step. This kernel
takes the window as one minibatch, as word2vec's batched skip-gram does
(:mod:`~rowbook.models.word_vectors.word2vec_batched_kernels`, HogBatch), in fastText's
orientation: one input ``h = mean(W_in[bag(center)])`` ``(d,)``, taken once a window, and
targets ``T`` -- the context words (label 1; a word twice in the window is one target
counted twice) and the window's ``I * negative`` negatives, ``negative`` a pair as in the
classic kernel, drawn together (label 0; with ``redraw`` a draw equal to its own pair's
context word drawn again, as the classic kernel does; a draw equal to a context word
dropped, a repeated draw merged and counted). Then, from the rows as they were before the window, with
``Y = W_out[T]`` ``(O, d)`` and counts ``n``::

    s = Y h                                    # (O,) scores
    g = lr * n * (label - sigmoid(s))          # (O,)
    W_out[T] += g h^T                          # (O, d)
    W_in[r] += g^T Y   for each r in bag(center), once per occurrence

the classic kernel's pairs with their rows read once: the bag once a window, each target
row once. This is word2vec's ``block_step`` with one input row (h), and it runs as that.

Why not one draw of ``negative`` shared by the window, as word2vec's batched kernel does.
There the window's inputs are ``I`` different context rows, so ``negative`` shared
negatives still make ``I * negative`` distinct (input, negative) pairs. Here the window has
one input, ``h``: shared negatives would be the same ``negative`` pairs met ``I`` times.
Measured (``docs/cores.md``), that loses 0.10-0.16 on questions-words and 0.05-0.06 on
WordSim353, weighted ``I`` a draw or not, with h updated between the pairs or not; the
window's own ``I * negative`` draws keep the classic kernel's scores. The snapshot (every
pair of a window sees the rows as they were before it) costs nothing measurable: a pair's
step moves ``h`` by exactly what it adds to every row of the bag, so the classic kernel's
``h`` between two pairs of a window differs from this one's only by the steps themselves.

Draws, in order from the generator state ``seed``: word2vec's subsampling and window
shrinks (:func:`~rowbook.models.word_vectors.word2vec_kernels.kept_words`), then
``I * negative`` per centre word with ``I`` context words. The next window's draws are made
(and its target rows and its centre's bag rows start loading) before this window's
products. :func:`~rowbook.models.word_vectors.fasttext_batched_reference.fasttext_job_batched_reference`
is the same algorithm in NumPy, draw for draw.
"""

from __future__ import annotations

import numba
import numpy as np

from rowbook.data.sampling import draw_negative_for
from rowbook.models.word_vectors.fasttext_kernels import bag_mean, scatter_bag
from rowbook.models.word_vectors.telemetry_kernels import begin_job, end_job, record, step_norm
from rowbook.models.word_vectors.word2vec_batched_kernels import (
    block_step,
    context_windows,
    merge_target,
    merged_negatives,
)
from rowbook.models.word_vectors.word2vec_kernels import FASTMATH, kept_words, prefetch_row

__all__ = ["train_job_batched", "window_targets"]


@numba.njit(nogil=True, cache=True, inline="always")
def window_targets(
    words, i, lo, hi, negative, table, guide, state, W_out, targets, counts, redraw=False
):  # pragma: no cover - compiled
    """The targets of centre ``i``'s window ``[lo, hi)``: its context words (a repeated word
    counted, not listed again), then ``negative`` draws for each of its pairs, pair by pair
    (as :func:`~rowbook.models.word_vectors.word2vec_batched_kernels.merged_negatives`
    merges them: a draw equal to a context word dropped, a repeated draw counted); with
    ``redraw`` a pair's draw equal to its own context word is drawn again first
    (:func:`~rowbook.data.sampling.draw_negative_for`).

    Returns how many positives, how many targets, and the generator state after the draws.
    """
    n = 0
    for j in range(lo, hi):
        if j != i:
            n = merge_target(words[j], 0, targets, counts, n)
    for o in range(n):  # their rows start loading
        prefetch_row(W_out, targets[o])
    if not redraw:  # the draws' own loop: the generator does not wait on the table
        draws = negative * (hi - lo - 1)
        n_out, state = merged_negatives(n, draws, table, guide, state, W_out, targets, counts)
        return n, n_out, state
    n_out = n
    for j in range(lo, hi):
        if j != i:
            for _ in range(negative):
                t, state = draw_negative_for(table, guide, state, words[j], True)
                n_out = merge_target(t, n, targets, counts, n_out)
    for o in range(n, n_out):
        prefetch_row(W_out, targets[o])
    return n, n_out, state


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True)
def train_job_batched(
    W_in, bags, sentences, sampling, out, lr, seed, stats=None, redraw=False
):  # pragma: no cover - compiled
    """Minibatched skip-gram on the ``sentences``; returns the words trained.

    The arguments are :func:`~rowbook.models.word_vectors.fasttext_kernels.train_job`'s
    (skip-gram only, so no ``skipgram`` flag); ``stats`` records every row of the bag,
    ``redraw`` draws a pair's negative equal to its context word again
    (:func:`window_targets`).
    """
    W_out, table, guide, negative = out
    bag_starts, bag_ids = bags
    window = sampling[2]
    words, ends, shrinks, state = kept_words(sentences, sampling, np.uint64(seed))
    centres, lows, highs = context_windows(ends, shrinks, window)
    recorded = begin_job(stats, W_in, words, bags)  # (n, 2) or None
    d = W_in.shape[1]
    n_targets = 2 * window * (1 + negative)
    H = np.empty((1, d), dtype=np.float32)  # (1, d) the centre's mean bag, the one input
    inputs = np.zeros(1, dtype=np.int64)  # (1,) its row of H
    work = np.empty((1, d), dtype=np.float32)  # (1, d) h's step
    G = np.empty((n_targets, 1), dtype=np.float32)  # (O, 1) scores, then gradients
    targets = np.empty((2, n_targets), dtype=np.int64)  # (2, O) this window's, the next's
    counts = np.empty((2, n_targets), dtype=np.float32)  # (2, O)
    n_positive = np.zeros(2, dtype=np.int64)
    n_out = np.zeros(2, dtype=np.int64)
    labels = np.empty(n_targets, dtype=np.float32)  # (O,) 1 for a context word, then 0
    lr = np.float32(lr)
    n_win = centres.shape[0]
    if n_win > 0:
        n_positive[0], n_out[0], state = window_targets(
            words,
            centres[0],
            lows[0],
            highs[0],
            negative,
            table,
            guide,
            state,
            W_out,
            targets[0],
            counts[0],
            redraw,
        )
    for k in range(n_win):
        now = k & 1
        if k + 1 < n_win:  # the next window's draws, ahead of time
            n_positive[1 - now], n_out[1 - now], state = window_targets(
                words,
                centres[k + 1],
                lows[k + 1],
                highs[k + 1],
                negative,
                table,
                guide,
                state,
                W_out,
                targets[1 - now],
                counts[1 - now],
                redraw,
            )
            upcoming = words[centres[k + 1]]  # its bag starts loading too
            for r in range(bag_starts[upcoming], bag_starts[upcoming + 1]):
                prefetch_row(W_in, bag_ids[r])
        center = words[centres[k]]
        bag_mean(W_in, bag_starts, bag_ids, center, H[0])
        labels[: n_positive[now]] = 1.0
        labels[n_positive[now] : n_out[now]] = 0.0
        work[0] = 0.0
        block_step(
            H, inputs, 1, W_out, targets[now], labels, counts[now], n_out[now], lr, G, work, False
        )
        scatter_bag(W_in, bag_starts, bag_ids, center, work[0])
        if stats is not None:  # every row of the bag took this step
            record(recorded, centres[k], step_norm(work[0]))
    end_job(stats, words, bags, recorded, lr)
    return words.shape[0]
