"""CBOW's minibatched kernel as state versions 3 and 4 of the family trained it (``kernel="batched-v4"``).

The same algorithm, draws and arguments as
:func:`~rowbook.models.word_vectors.word2vec_batched_cbow_kernels.train_job_batched_cbow`, in
that kernel's code before version 5: the exact sigmoid (libm's ``expf``) and rows read through
views (each counted by numba). Its results differ from the current kernel's in the last bits
of a float (so by what a seed changes after a few jobs); it is kept so that models saved by
those versions resume step for step, as they would have. Not a choice for new models.
"""

from __future__ import annotations

import numba
import numpy as np

from rowbook.models.word_vectors.fasttext_kernels import scatter_bag
from rowbook.models.word_vectors.telemetry_kernels import begin_job, end_job, record, step_norm
from rowbook.models.word_vectors.word2vec_batched_cbow_kernels import batch_order, most_rows
from rowbook.models.word_vectors.word2vec_batched_kernels import (
    add_combination,
    block_step,
    context_windows,
    merged_negatives,
)
from rowbook.models.word_vectors.word2vec_kernels import (
    FASTMATH,
    hierarchical_softmax_step,
    kept_words,
    prefetch_row,
)

__all__ = ["train_job_batched_cbow_v4"]


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True, inline="always")
def _hidden(W_in, words, i, lo, hi, cbow_mean, bags, rows, weights, h):  # pragma: no cover
    """``h`` = the mean (or sum) of the input rows of window ``[lo, hi)`` but the centre
    ``i``'s: a word's row, or every row of its bag when ``bags`` is given; the rows are left
    in ``rows``. Returns their number."""
    n_rows = 0
    for j in range(lo, hi):
        if j == i:
            continue
        if bags is None:
            rows[n_rows] = words[j]
            n_rows += 1
        else:  # fastText: one mean over the rows of every context word's bag together
            bag_starts, bag_ids = bags
            for k in range(bag_starts[words[j]], bag_starts[words[j] + 1]):
                rows[n_rows] = bag_ids[k]
                n_rows += 1
    weight = np.float32(1.0 / n_rows) if cbow_mean else np.float32(1.0)
    weights[:n_rows] = weight
    h[:] = 0.0
    add_combination(h, W_in, rows, weights, n_rows)
    return n_rows


@numba.njit(nogil=True, cache=True, inline="always")
def _prefetch_inputs(W_in, word, bags):  # pragma: no cover - compiled
    """Start loading the input rows of ``word``: its row, or every row of its bag."""
    if bags is None:
        prefetch_row(W_in, word)
        return
    bag_starts, bag_ids = bags
    for k in range(bag_starts[word], bag_starts[word + 1]):
        prefetch_row(W_in, bag_ids[k])


@numba.njit(nogil=True, cache=True, inline="always")
def _batch_targets(words, centres, k0, k1, out, state, targets, counts):  # pragma: no cover
    """The targets of windows ``[k0, k1)``: their centres in ``targets[:k1 - k0]`` (each
    window's positive; each one starts loading), then the batch's :func:`merged_negatives`
    (none when ``negative`` is 0). Returns how many targets and the generator state."""
    W_out, table, guide, negative = out
    n_b = k1 - k0
    for b in range(n_b):
        targets[b] = words[centres[k0 + b]]
        counts[b] = 1.0
        if negative > 0:
            prefetch_row(W_out, targets[b])
    return merged_negatives(n_b, negative, table, guide, state, W_out, targets, counts)


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True)
def train_job_batched_cbow_v4(
    W_in,
    ids,
    starts,
    s0,
    s1,
    thresholds,
    use_sample,
    out,
    tree,
    window,
    shrink,
    cbow_mean,
    batch,
    lr,
    seed,
    compute_loss,
    stats=None,
    bags=None,
):  # pragma: no cover - compiled
    """The minibatched CBOW of state versions 3 and 4 on sentences ``[s0, s1)``; returns
    (words trained, loss). :func:`~rowbook.models.word_vectors.word2vec_batched_cbow_kernels.train_job_batched_cbow`'s
    algorithm, draws and arguments, with the exact sigmoid and its rows read through views.

    The other arguments are :func:`~rowbook.models.word_vectors.word2vec_kernels.train_job`'s
    (CBOW only). ``bags = (bag_starts, bag_ids)`` makes it fastText's CBOW (the bags of
    :func:`~rowbook.models.word_vectors.fasttext_kernels.train_job`; ``None``, word2vec,
    compiles the branch away): a context word's input rows are its bag's, ``h`` is one mean
    over the rows of every context word's bag, and each row of a bag takes the window's
    whole step (fastText's ``Model::update``). Draws, in order from the generator state
    ``seed``: the classic kernel's subsampling and window shrinks (:func:`kept_words`),
    then ``negative`` per minibatch of the windows that have a context (a word alone in its
    sentence trains nothing), the minibatches in :func:`batch_order`. The next batch's
    negatives are drawn (and their rows, its centres' rows and its windows' rows start
    loading) before this batch's steps.
    """
    W_out, _, _, negative = out
    words, ends, shrinks, state = kept_words(
        ids, starts, s0, s1, thresholds, use_sample, window, shrink, np.uint64(seed)
    )
    centres, lows, highs = context_windows(ends, shrinks, window)
    order, bounds = batch_order(centres.shape[0], batch)
    centres, lows, highs = centres[order], lows[order], highs[order]  # in minibatch order
    recorded = begin_job(stats, W_in, words, bags)  # (n, 2) or None
    d = W_in.shape[1]
    H = np.empty((batch, d), dtype=np.float32)  # (B, d) hidden vectors
    steps = np.empty((batch, d), dtype=np.float32)  # (B, d) their steps
    inputs = np.arange(batch)  # H's rows, as block_step's inputs
    n_rows = most_rows(bags, window)
    rows = np.empty(n_rows, dtype=np.int64)  # (R,) a window's input rows
    weights = np.empty(n_rows, dtype=np.float32)  # (R,)
    sizes = np.empty(batch, dtype=np.int64)  # (B,) input rows of each window
    G = np.empty((max(negative, 1), batch), dtype=np.float32)  # (O, B) scores, then gradients
    # (2, B + O) this batch's centres then negatives, and the next batch's; their counts
    targets = np.empty((2, batch + negative), dtype=np.int64)
    counts = np.empty((2, batch + negative), dtype=np.float32)
    n_targets = np.zeros(2, dtype=np.int64)
    labels = np.zeros(max(negative, 1), dtype=np.float32)  # (O,) every negative's label is 0
    positive = np.zeros(1, dtype=np.uint8)  # a centre as a path of one node, code 0: label 1
    lr = np.float32(lr)
    loss = 0.0
    n_batches = bounds.shape[0] - 1
    if n_batches > 0:  # the first batch's centres and draws
        n_targets[0], state = _batch_targets(
            words, centres, 0, bounds[1], out, state, targets[0], counts[0]
        )
    for k in range(n_batches):
        now = k & 1
        k0, k1 = bounds[k], bounds[k + 1]
        n_b = k1 - k0
        if k + 1 < n_batches:  # the next batch's draws, ahead of time
            n_targets[1 - now], state = _batch_targets(
                words, centres, k1, bounds[k + 2], out, state, targets[1 - now], counts[1 - now]
            )
            for w in range(k1, bounds[k + 2]):  # and their windows' rows
                for p in range(lows[w], highs[w]):
                    _prefetch_inputs(W_in, words[p], bags)
        for b in range(n_b):
            w = k0 + b
            sizes[b] = _hidden(
                W_in, words, centres[w], lows[w], highs[w], cbow_mean, bags, rows, weights, H[b]
            )
        steps[:n_b] = 0.0
        for b in range(n_b):  # each window's own targets: its centre's path, its centre
            center = targets[now, b]
            if tree is not None:  # hierarchical softmax; None compiles the branch away
                W_nodes, codes, points, lengths = tree
                loss += hierarchical_softmax_step(
                    H[b],
                    W_nodes,
                    codes[center],
                    points[center],
                    lengths[center],
                    lr,
                    steps[b],
                    compute_loss,
                )
            if negative > 0:
                loss += hierarchical_softmax_step(
                    H[b], W_out, positive, targets[now, b:], 1, lr, steps[b], compute_loss
                )
        n_neg = n_targets[now] - n_b
        if n_neg > 0:
            loss += block_step(
                H,
                inputs,
                n_b,
                W_out,
                targets[now, n_b:],
                labels,
                counts[now, n_b:],
                n_neg,
                lr,
                G,
                steps,
                compute_loss,
            )
        for b in range(n_b):  # every context row of window b takes its step
            w = k0 + b
            step = steps[b]
            if not cbow_mean:  # gensim divides the step, not the input, for the sum
                step *= np.float32(1.0 / sizes[b])
            norm = 0.0
            if stats is not None:  # every row of the window takes this step: measured once
                norm = step_norm(step)
            for j in range(lows[w], highs[w]):
                if j == centres[w]:
                    continue
                if bags is not None:  # fastText: the step goes whole into every bag row
                    scatter_bag(W_in, bags[0], bags[1], words[j], step)
                else:
                    row = W_in[words[j]]
                    for c in range(d):
                        row[c] += step[c]
                if stats is not None:
                    record(recorded, j, norm)
    end_job(stats, words, bags, recorded, lr)
    return words.shape[0], loss
