"""word2vec's minibatched CBOW: windows' hidden vectors against shared negatives.

The classic kernel (:func:`~rowbook.models.word_vectors.word2vec_kernels.train_job`) takes
one example per centre word: the mean ``h`` of its window's rows against the centre and
``negative`` negatives of its own, ``1 + negative`` output rows fetched for every word. This
one takes ``B`` windows (:data:`CBOW_BATCH`) as one minibatch, as the minibatched skip-gram
takes a window (:mod:`~rowbook.models.word_vectors.word2vec_batched_kernels`): the hidden
vectors ``H`` ``(B, d)``, row ``b`` the mean (``cbow_mean``) or sum of window ``b``'s rows,
predict

* each its own centre ``c_b`` (label 1): a dot product and two axpy's a window, in order;
* one draw of ``negative`` negatives shared by the batch (label 0; a draw equal to a centre
  of the batch dropped, repeated draws merged into one row counted ``n`` times):
  ``Y = W_out[T]`` ``(O, d)``, from the rows as they were before the minibatch::

    S = Y H^T                                   # (O, B) scores
    G = lr * n[:, None] * (0 - sigmoid(S))
    W_out[T] += G H                              # (O, d)
    steps += G^T Y                               # (B, d), h's step of each window

Hierarchical softmax steps each window along its centre's own path, as the classic kernel
does (the paths of a batch differ: no block to share). Then every context row of window
``b`` takes ``steps[b]`` (divided by the window's size for the sum, gensim's convention).

Which windows: the job's windows are cut into ``B`` runs of consecutive windows and
minibatch ``k`` takes the ``k``-th window of every run (:func:`batch_order`), so the
windows of a batch are far apart in the text. ``B`` consecutive windows would share most
of their context rows: ``H`` is computed once, before the batch's steps, so window
``b + 1`` would not see the steps window ``b`` gave those rows, and their almost equal
``h`` would give each shared negative ``B`` times one step from one score. On NewsArticles
that cost 0.022 of questions-words accuracy at ``B = 8`` (0.038 at 16); windows far apart
cost nothing measurable (``docs/cores.md``). A run's next window shares its rows with the
current one, so they stay in cache from one batch to the next.

fastText's CBOW (``FastText(architecture="cbow")``) is the same minibatch over bags
(``bags=(bag_starts, bag_ids)``): row ``b`` of ``H`` is one mean over the rows of every
context word's bag together, as fastText's ``FastText::cbow`` and the classic
:func:`~rowbook.models.word_vectors.fasttext_kernels.train_job` take it, and every row of
every bag of window ``b`` takes ``steps[b]`` whole (fastText's ``Model::update``); a
window reads and writes about 120 rows (6 bags of about 20) against ``1 + negative``
output rows, so the bags, not the targets, are most of its work.

The negatives' rows are fetched once a batch instead of once a window. The result differs
from the classic kernel by about what a seed changes.
:mod:`~rowbook.models.word_vectors.word2vec_batched_cbow_reference` is the same algorithm
in NumPy, draw for draw.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from rowbook.kernel_math import fast_sigmoid
from rowbook.models.word_vectors.telemetry_kernels import begin_job, end_job, record, step_norm
from rowbook.models.word_vectors.word2vec_batched_kernels import (
    add_rows,
    block_scores,
    context_windows,
    merged_negatives,
)
from rowbook.models.word_vectors.word2vec_kernels import FASTMATH, kept_words, prefetch_row

__all__ = ["CBOW_BATCH", "batch_order", "most_rows", "train_job_batched_cbow"]

#: Windows a minibatch (chosen by measurement, ``docs/cores.md``).
CBOW_BATCH = 8


# -- rows by two indices ---------------------------------------------------------------------------
#
# Every helper reads and writes table rows as ``W[row, c]``, never through a row view
# ``W[row]``: numba counts the references of the array a view is cut from, with an atomic
# add on a counter that every thread training the table shares, so each view cost two locked
# instructions on a cache line the other worker kept taking away. Written with views, this
# kernel spent about half its time there (perf, NewsArticles, one thread: NRT_incref and
# NRT_decref). The products are the skip-gram kernel's
# (:func:`~rowbook.models.word_vectors.word2vec_batched_kernels.block_scores` and
# ``add_rows``, the hidden vectors ``H`` their inputs through the index map ``arange(B)``);
# a window's own targets take :func:`_target_step`, the arithmetic of
# :func:`~rowbook.models.word_vectors.word2vec_kernels.hierarchical_softmax_step` on rows
# indexed in their tables.


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True, inline="always")
def _negatives_step(
    H, inputs, n_in, W, targets, counts, n_out, lr, G, GT, steps, compute_loss
):  # pragma: no cover - compiled
    """The batch's hidden vectors ``H[:n_in]`` against the shared negatives
    ``targets[:n_out]`` (label 0, weights ``counts``): ``W``'s rows take ``G H``,
    ``steps[:n_in]`` gets ``G^T Y`` (from the rows before their step). ``inputs`` is
    ``arange(B)``, H's rows as the skip-gram block's context rows; ``G`` ``(O, B)`` and
    ``GT`` ``(B, O)`` are scratch. Returns the loss (0 unless ``compute_loss``).

    The skip-gram kernel's ``block_step`` but for the gradients, computed here with the
    label 0 folded in and written to ``GT`` too (its arithmetic, and so CBOW's results, would
    otherwise change in the last bit).
    """
    block_scores(W, targets, n_out, H, inputs, n_in, G)
    loss = 0.0
    if compute_loss:  # a pass of its own, as the skip-gram kernel's
        for o in range(n_out):
            for i in range(n_in):
                f = float(G[o, i])
                loss += counts[o] * (math.log1p(math.exp(-f)) + f)
    for o in range(n_out):  # G = lr * n * (0 - sigmoid(S))
        scale = lr * counts[o]
        for i in range(n_in):
            g = -fast_sigmoid(G[o, i]) * scale
            G[o, i] = g
            GT[i, o] = g
    for i in range(n_in):  # the inputs' step G^T Y, from Y before its own step
        add_rows(steps, i, W, targets, GT, i, n_out)
    for o in range(n_out):  # Y += G H
        add_rows(W, targets[o], H, inputs, G, o, n_in)
    return loss


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True, inline="always")
def _target_step(H, b, W, t, label, lr, steps, compute_loss):  # pragma: no cover - compiled
    """Hidden vector ``H[b]`` against row ``t`` of ``W`` with label ``label``: ``W[t]`` takes
    its step, ``H[b]``'s is added to ``steps[b]``. Returns the loss (0 unless
    ``compute_loss``)."""
    d = H.shape[1]
    f = np.float32(0.0)
    for c in range(d):
        f += H[b, c] * W[t, c]
    g = (label - fast_sigmoid(f)) * lr
    for c in range(d):
        w = W[t, c]
        steps[b, c] += g * w
        W[t, c] = w + g * H[b, c]
    if compute_loss:
        return math.log1p(math.exp(-float(f))) + (0.0 if label > 0 else float(f))
    return 0.0


# -- a window ------------------------------------------------------------------------------------


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True, inline="always")
def _hidden(W_in, words, i, lo, hi, cbow_mean, bags, rows, weights, H, b):  # pragma: no cover
    """``H[b]`` = the mean (or sum) of the input rows of window ``[lo, hi)`` but the centre
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
    weights[0, :n_rows] = weight
    H[b, :] = 0.0
    add_rows(H, b, W_in, rows, weights, 0, n_rows)
    return n_rows


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True, inline="always")
def _scatter(W_in, word, bags, steps, b):  # pragma: no cover - compiled
    """Every input row of ``word`` (its row, or each row of its bag) takes ``steps[b]``."""
    d = W_in.shape[1]
    if bags is None:
        for c in range(d):
            W_in[word, c] += steps[b, c]
        return
    bag_starts, bag_ids = bags
    for k in range(bag_starts[word], bag_starts[word + 1]):  # fastText: the step whole
        r = bag_ids[k]
        for c in range(d):
            W_in[r, c] += steps[b, c]


@numba.njit(nogil=True, cache=True, inline="always")
def _prefetch_inputs(W_in, word, bags):  # pragma: no cover - compiled
    """Start loading the input rows of ``word``: its row, or every row of its bag."""
    if bags is None:
        prefetch_row(W_in, word)
        return
    bag_starts, bag_ids = bags
    for k in range(bag_starts[word], bag_starts[word + 1]):
        prefetch_row(W_in, bag_ids[k])


@numba.njit(nogil=True, cache=True)
def most_rows(bags, window):  # pragma: no cover - compiled
    """The most input rows a window can hold: ``2 * window`` words, each one row or (with
    ``bags``) its largest bag's."""
    if bags is None:
        return 2 * window
    bag_starts = bags[0]
    largest = 1
    for w in range(bag_starts.shape[0] - 1):
        largest = max(largest, bag_starts[w + 1] - bag_starts[w])
    return 2 * window * largest


@numba.njit(nogil=True, cache=True)
def batch_order(n_win, batch):  # pragma: no cover - compiled
    """``(order, bounds)``: the ``n_win`` windows of a job cut into ``batch`` runs of
    consecutive windows, minibatch ``k`` the ``k``-th window of every run: windows
    ``order[bounds[k]:bounds[k + 1]]``. Compiled, so the reference shares it.

    Examples
    --------
    >>> order, bounds = batch_order(7, 3)
    >>> order.tolist(), bounds.tolist()
    ([0, 3, 6, 1, 4, 2, 5], [0, 3, 5, 7])
    """
    length = (n_win + batch - 1) // batch  # windows a run (the last one shorter)
    order = np.empty(n_win, dtype=np.int64)
    bounds = np.empty(length + 1, dtype=np.int64)
    n = 0
    for k in range(length):
        bounds[k] = n
        for run in range(batch):
            w = run * length + k
            if w < n_win:
                order[n] = w
                n += 1
    bounds[length] = n
    return order, bounds


@numba.njit(nogil=True, cache=True, inline="always")
def _batch_targets(
    words, centres, k0, k1, W_out, table, guide, negative, state, targets, counts
):  # pragma: no cover - compiled
    """The targets of windows ``[k0, k1)``: their centres in ``targets[:k1 - k0]`` (each
    window's positive; each one starts loading), then the batch's :func:`merged_negatives`
    (none when ``negative`` is 0). Returns how many targets and the generator state."""
    n_b = k1 - k0
    for b in range(n_b):
        targets[b] = words[centres[k0 + b]]
        counts[b] = 1.0
        if negative > 0:
            prefetch_row(W_out, targets[b])
    return merged_negatives(n_b, negative, table, guide, state, W_out, targets, counts)


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True)
def train_job_batched_cbow(
    W_in, sentences, sampling, out, tree, cbow_mean, batch, lr, seed, compute_loss, stats, bags=None
):  # pragma: no cover - compiled
    """Minibatched CBOW on the ``sentences``, ``batch`` windows a minibatch; returns
    (words trained, loss).

    The other arguments are :func:`~rowbook.models.word_vectors.word2vec_kernels.train_job`'s
    (CBOW only; ``stats`` None: no telemetry). ``bags = (bag_starts, bag_ids)`` makes it
    fastText's CBOW (the bags of :func:`~rowbook.models.word_vectors.fasttext_kernels.train_job`;
    ``None``, word2vec, compiles the branch away): a context word's input rows are its bag's,
    ``h`` is one mean over the rows of every context word's bag, and each row of a bag takes
    the window's whole step (fastText's ``Model::update``). Draws, in order from the
    generator state ``seed``: the classic kernel's subsampling and window shrinks
    (:func:`kept_words`), then ``negative`` per minibatch of the windows that have a context
    (a word alone in its sentence trains nothing), the minibatches in :func:`batch_order`.
    The next batch's negatives are drawn (and their rows, its centres' rows and its windows'
    rows start loading) before this batch's steps.

    This function draws and makes the job's buffers; :func:`_train_batches` steps.
    """
    window = sampling[2]
    words, ends, shrinks, state = kept_words(sentences, sampling, np.uint64(seed))
    centres, lows, highs = context_windows(ends, shrinks, window)
    order, bounds = batch_order(centres.shape[0], batch)
    windows = (centres[order], lows[order], highs[order], bounds)  # in minibatch order
    negative = out[3]
    recorded = begin_job(stats, W_in, words, bags)  # (n, 2) or None
    d = W_in.shape[1]
    n_rows = most_rows(bags, window)
    scratch = (
        np.empty((batch, d), dtype=np.float32),  # H (B, d) hidden vectors
        np.empty((batch, d), dtype=np.float32),  # steps (B, d) their steps
        np.arange(batch),  # inputs: H's rows, as the block's inputs
        np.empty(n_rows, dtype=np.int64),  # rows (R,) a window's input rows
        np.empty((1, n_rows), dtype=np.float32),  # weights (1, R) their weights
        np.empty(batch, dtype=np.int64),  # sizes (B,) input rows of each window
        np.empty((max(negative, 1), batch), dtype=np.float32),  # G (O, B) scores, gradients
        np.empty((batch, max(negative, 1)), dtype=np.float32),  # GT (B, O) the gradients
        # targets, counts: a batch's centres then its negatives, in halves of B + O (this
        # batch's, the next one's)
        np.empty(2 * (batch + negative), dtype=np.int64),
        np.empty(2 * (batch + negative), dtype=np.float32),
    )
    settings = (cbow_mean, np.float32(lr), compute_loss)
    loss = _train_batches(W_in, words, windows, out, tree, bags, state, settings, recorded, scratch)
    end_job(stats, words, bags, recorded, lr)
    return words.shape[0], loss


@numba.njit(nogil=True, fastmath=FASTMATH, error_model="numpy", cache=True, _nrt=False)
def _train_batches(
    W_in, words, windows, out, tree, bags, state, settings, recorded, scratch
):  # pragma: no cover - compiled
    """The minibatches of :func:`train_job_batched_cbow`, in order; returns the loss.
    ``settings = (cbow_mean, lr, compute_loss)``; ``recorded`` is the telemetry's record
    (None: off).

    Compiled without numba's reference counts (``_nrt=False``: this function makes no
    array): inlined here, every helper's array arguments would otherwise be counted at every
    call with an atomic add, on counters the threads share for the tables.
    """
    W_out, table, guide, negative = out
    centres, lows, highs, bounds = windows
    cbow_mean, lr, compute_loss = settings
    H, steps, inputs, rows, weights, sizes, G, GT, targets, counts = scratch
    d = W_in.shape[1]
    half = H.shape[0] + negative
    n_targets = (0, 0)
    one = np.float32(1.0)
    loss = 0.0
    n_batches = bounds.shape[0] - 1
    if n_batches > 0:  # the first batch's centres and draws
        first, state = _batch_targets(
            words, centres, 0, bounds[1], W_out, table, guide, negative, state, targets, counts
        )
        n_targets = (first, 0)
    for k in range(n_batches):
        now = k & 1
        base = now * half
        k0, k1 = bounds[k], bounds[k + 1]
        n_b = k1 - k0
        if k + 1 < n_batches:  # the next batch's draws, ahead of time
            later = (1 - now) * half
            n_next, state = _batch_targets(
                words,
                centres,
                k1,
                bounds[k + 2],
                W_out,
                table,
                guide,
                negative,
                state,
                targets[later:],
                counts[later:],
            )
            n_targets = (n_targets[0], n_next) if now == 0 else (n_next, n_targets[1])
            for w in range(k1, bounds[k + 2]):  # and their windows' rows
                for p in range(lows[w], highs[w]):
                    _prefetch_inputs(W_in, words[p], bags)
        for b in range(n_b):
            w = k0 + b
            sizes[b] = _hidden(
                W_in,
                words,
                centres[w],
                lows[w],
                highs[w],
                cbow_mean,
                bags,
                rows,
                weights,
                H,
                b,
            )
        steps[:n_b] = 0.0
        for b in range(n_b):  # each window's own targets: its centre's path, its centre
            center = targets[base + b]
            if tree is not None:  # hierarchical softmax; None compiles the branch away
                W_nodes, codes, points, lengths = tree
                for m in range(lengths[center]):
                    label = one - np.float32(codes[center, m])
                    node = points[center, m]
                    loss += _target_step(H, b, W_nodes, node, label, lr, steps, compute_loss)
            if negative > 0:
                loss += _target_step(H, b, W_out, center, one, lr, steps, compute_loss)
        n_neg = n_targets[now] - n_b
        if n_neg > 0:  # H[:n_b] against the batch's shared negatives, label 0
            at = base + n_b
            negatives, drawn = targets[at:], counts[at:]
            loss += _negatives_step(
                H, inputs, n_b, W_out, negatives, drawn, n_neg, lr, G, GT, steps, compute_loss
            )
        for b in range(n_b):  # every context row of window b takes its step
            w = k0 + b
            if not cbow_mean:  # gensim divides the step, not the input, for the sum
                inv = np.float32(1.0 / sizes[b])
                for c in range(d):
                    steps[b, c] *= inv
            norm = 0.0
            if recorded is not None:  # every row of the window takes this step: measured once
                norm = step_norm(steps[b])
            for j in range(lows[w], highs[w]):
                if j == centres[w]:
                    continue
                _scatter(W_in, words[j], bags, steps, b)
                if recorded is not None:
                    record(recorded, j, norm)
    return loss
