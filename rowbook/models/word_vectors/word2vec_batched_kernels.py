"""word2vec's minibatched skip-gram: a window's context rows against shared targets (HogBatch).

The classic kernel (:mod:`~rowbook.models.word_vectors.word2vec_kernels`) takes one
example per (centre, context) pair: a dot product and two axpy's of ``d`` floats against
``1 + negative`` output rows, fetched again for every pair. HogBatch (Ji et al.,
"Parallelizing Word2Vec in Shared and Distributed Memory", 2016; IntelLabs/pWord2Vec's
``Train_SGNS``) takes the window of a centre word as one minibatch: its ``I`` context rows
``X = W_in[context]`` ``(I, d)`` are the inputs, and the targets ``T`` -- the centre word
(label 1) and one draw of ``negative`` negatives shared by the whole window (label 0; a
draw equal to the centre dropped, repeated draws merged into one row counted ``n`` times,
as pWord2Vec does) -- are the outputs ``Y = W_out[T]`` ``(O, d)``. Then, from the rows as
they were before the minibatch::

    S = Y X^T                                   # (O, I) scores
    G = lr * n[:, None] * (label[:, None] - sigmoid(S))
    W_out[T] += G X                              # (O, d)
    W_in[context] += G^T Y                       # (I, d), repeated context words summed

Hierarchical softmax is the same block with the centre's Huffman path as targets
(``Y = W_nodes[point]``, label ``1 - code``): every context word of a window predicts the
same centre, so the path is shared for free. Both objectives read the same ``X`` and their
steps for ``X`` add up, as in the classic kernel.

The arithmetic is the classic kernel's (``3 * 2 * O * I * d`` FLOPs a window) but each row
is fetched once a window instead of once a pair: the classic kernel reads ``1 + negative``
output rows per pair, this one per window, so the work is arithmetic on rows in L1 instead
of waiting for rows from memory. Within a window every pair sees the rows as they were
before it (the classic kernel lets the second pair see the first's update), and the window
shares its negatives: the result differs from the classic kernel by about what a seed
changes (see ``docs/cores.md`` for the quality measured).

The products are loops over rows that stay in L1 (the inner loop over ``d`` vectorised
by LLVM, two or four rows a pass). Numba's ``np.dot`` (BLAS ``sgemm``) on blocks already
gathered is 3.6-5.0x slower at d = 50-300 for a window of 6 x 6 (``benchmarks/bench_anchors.py
--kernels``: 1.54 against 0.40 microseconds at d = 100): each call costs about half a
microsecond before any arithmetic, as much as the three products themselves. The loops
index rows in their tables, and the window loop and the block step compile with numba's
reference counting off (``_nrt=False``; they make no array): numba's counting of row views
took more time than the products. The sigmoid is
:func:`~rowbook.kernel_math.fast_exp`'s (Cephes' ``expf``, 1.2e-7 relative), on 16 scores an
instruction.
:mod:`~rowbook.models.word_vectors.word2vec_batched_reference` is the same algorithm in NumPy, draw for draw.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from rowbook.data.sampling import draw_negative, lcg_next, window_bounds
from rowbook.kernel_math import fast_sigmoid
from rowbook.models.word_vectors.telemetry_kernels import add_measured, begin_job, end_job, record
from rowbook.models.word_vectors.word2vec_kernels import FASTMATH, kept_words, prefetch_row

__all__ = [
    "SHARED_WINDOWS",
    "add_rows",
    "block_scores",
    "block_step",
    "context_windows",
    "merge_target",
    "merged_negatives",
    "shared_targets",
    "train_job_batched",
]

#: Consecutive windows that share one draw of negatives in ``Word2Vec(kernel="batched")``
#: (``"hogbatch"``: 1, a draw a window); chosen by measurement, ``docs/cores.md``.
SHARED_WINDOWS = 2


@numba.njit(nogil=True, cache=True, inline="always")
def shared_targets(
    center, pool, pool_counts, n_pool, targets, counts
):  # pragma: no cover - compiled
    """A window's targets: ``targets[0] = center``, then the ``n_pool`` merged negatives of
    ``pool`` (weights ``pool_counts``) but the one equal to ``center``, if any. Returns how
    many targets there are.

    The pool is :func:`merged_negatives` of one draw of ``negative`` words, shared by
    ``shared`` consecutive windows (:func:`train_job_batched`); with a window's own draw
    this is the window's centre and its draws, a draw equal to the centre dropped.
    """
    targets[0] = center
    counts[0] = 1.0
    n = 1
    for m in range(n_pool):
        if pool[m] != center:
            targets[n] = pool[m]
            counts[n] = pool_counts[m]
            n += 1
    return n


@numba.njit(nogil=True, cache=True, inline="always")
def merged_negatives(
    n_positive, negative, table, guide, state, W_out, targets, counts
):  # pragma: no cover - compiled
    """:func:`shared_targets` after the ``n_positive`` targets already in ``targets``: the
    ``negative`` draws appended, a draw equal to one of those positives dropped, a repeated
    draw counted in ``counts`` instead of listed again; the new targets' rows of ``W_out``
    start loading."""
    n = n_positive
    for _ in range(negative):
        t = draw_negative(table, guide, state)
        state = lcg_next(state)
        n = merge_target(t, n_positive, targets, counts, n)
    for o in range(n_positive, n):
        prefetch_row(W_out, targets[o])
    return n, state


# Not ``inline="always"``, which would copy the arrays into new variables at every call
# (an atomic reference count up and down for each, per draw: FastText's batched skip-gram
# 0.84x); without NRT it has no counts at all, and LLVM inlines it.
@numba.njit(nogil=True, cache=True, _nrt=False)
def merge_target(t, first, targets, counts, n):  # pragma: no cover - compiled
    """Merge target ``t`` into ``targets[:n]``: dropped if it is one of the ``first`` ones,
    counted once more in ``counts`` if it is a later one, else appended with the count 1.
    Returns how many targets there are."""
    m = 0
    while m < n and targets[m] != t:
        m += 1
    if m < first:
        return n
    if m < n:
        counts[m] += 1.0
        return n
    targets[n] = t
    counts[n] = 1.0
    return n + 1


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True, inline="always")
def block_scores(W, targets, n_out, W_in, context, n_in, G):  # pragma: no cover - compiled
    """``G[o, i] = W[targets[o]] . W_in[context[i]]`` (S = Y X^T), two by two: each pass over
    ``d`` loads two rows of each and keeps four sums in registers. ``context`` maps the
    block's inputs to rows of ``W_in`` (CBOW's kernel: ``arange(B)`` over its hidden
    vectors)."""
    d = W.shape[1]
    for o in range(0, n_out, 2):
        o1 = min(o + 1, n_out - 1)  # an odd last row is computed twice, written once
        y0, y1 = targets[o], targets[o1]
        for i in range(0, n_in, 2):
            i1 = min(i + 1, n_in - 1)
            x0, x1 = context[i], context[i1]
            f00 = f01 = f10 = f11 = np.float32(0.0)
            for c in range(d):
                f00 += W[y0, c] * W_in[x0, c]
                f01 += W[y0, c] * W_in[x1, c]
                f10 += W[y1, c] * W_in[x0, c]
                f11 += W[y1, c] * W_in[x1, c]
            G[o, i], G[o, i1], G[o1, i], G[o1, i1] = f00, f01, f10, f11


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True, inline="always")
def add_rows(out, r, rows, ids, weights, w, n):  # pragma: no cover - compiled
    """``out[r] += sum_k weights[w, k] * rows[ids[k]]`` over ``k < n``, four rows a pass over
    ``out[r]`` and the last one to three in one more pass (a load and a store of ``out[r]``
    per pass, not per row).

    Every row is indexed in its table, never taken as a view (``rows[ids[k]]``): a view made
    in a loop costs two atomic updates of its table's reference count, which were more than
    half of a window's time.
    """
    d = out.shape[1]
    k = 0
    while k + 4 <= n:
        a, b, e, f = ids[k], ids[k + 1], ids[k + 2], ids[k + 3]
        wa, wb, we, wf = weights[w, k], weights[w, k + 1], weights[w, k + 2], weights[w, k + 3]
        for c in range(d):
            out[r, c] += (wa * rows[a, c] + wb * rows[b, c]) + (we * rows[e, c] + wf * rows[f, c])
        k += 4
    left = n - k
    if left == 3:
        a, b, e = ids[k], ids[k + 1], ids[k + 2]
        wa, wb, we = weights[w, k], weights[w, k + 1], weights[w, k + 2]
        for c in range(d):
            out[r, c] += wa * rows[a, c] + wb * rows[b, c] + we * rows[e, c]
    elif left == 2:
        a, b = ids[k], ids[k + 1]
        wa, wb = weights[w, k], weights[w, k + 1]
        for c in range(d):
            out[r, c] += wa * rows[a, c] + wb * rows[b, c]
    elif left == 1:
        a, wa = ids[k], weights[w, k]
        for c in range(d):
            out[r, c] += wa * rows[a, c]


@numba.njit(nogil=True, fastmath=FASTMATH, error_model="numpy", cache=True, _nrt=False)
def block_step(
    W_in, context, n_in, W, targets, labels, counts, n_out, lr, G, work, compute_loss
):  # pragma: no cover - compiled
    """One minibatch against one output table: the rows ``W_in[context[:n_in]]`` predict
    ``targets[:n_out]`` of ``W`` (label ``labels[o]``, weight ``counts[o]``).

    ``W``'s target rows take their step ``G X`` here; the inputs' step ``G^T Y`` is added to
    ``work[:n_in]`` (the caller adds it to ``W_in`` once every objective has read the
    inputs). ``G`` ``(O, I)`` is scratch. Returns the loss (0 unless ``compute_loss``).
    """
    W_in, context, W, targets = W_in, context, W, targets
    labels, counts, G, work = labels, counts, G, work
    block_scores(W, targets, n_out, W_in, context, n_in, G)
    loss = 0.0
    if compute_loss:  # a pass of its own: a branch in the next loop costs a third of the step
        for o in range(n_out):
            for i in range(n_in):
                f = float(G[o, i])
                loss += counts[o] * (math.log1p(math.exp(-f)) + (0.0 if labels[o] > 0 else f))
    for o in range(n_out):  # G = lr * n * (label - sigmoid(S)), 16 scores an instruction
        scale, label = lr * counts[o], labels[o]
        for i in range(n_in):
            G[o, i] = (label - fast_sigmoid(G[o, i])) * scale
    GT = G.T  # (I, O): the weights of the inputs' step
    for i in range(n_in):  # the inputs' step G^T Y, from Y before its own step
        add_rows(work, i, W, targets, GT, i, n_out)
    for o in range(n_out):  # Y += G X
        add_rows(W, targets[o], W_in, context, G, o, n_in)
    return loss


@numba.njit(nogil=True, cache=True)
def context_windows(ends, shrinks, window):  # pragma: no cover - compiled
    """``(centres, lows, highs)``: the positions of the kept words whose window ``[lo, hi)``
    holds another word, in order (a one-word sentence has none), with those bounds."""
    n = shrinks.shape[0]
    centres = np.empty(n, dtype=np.int64)
    lows = np.empty(n, dtype=np.int64)
    highs = np.empty(n, dtype=np.int64)
    n_win, start = 0, 0
    for end in ends:
        for i in range(start, end):
            lo, hi = window_bounds(i, start, end, window, shrinks[i])
            if hi - lo > 1:
                centres[n_win], lows[n_win], highs[n_win] = i, lo, hi
                n_win += 1
        start = end
    return centres[:n_win], lows[:n_win], highs[:n_win]


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True)
def train_job_batched(
    W_in, sentences, sampling, out, tree, shared, lr, seed, compute_loss, stats=None
):  # pragma: no cover - compiled
    """Minibatched skip-gram on the ``sentences``; returns (words trained, loss).

    The arguments are :func:`~rowbook.models.word_vectors.word2vec_kernels.train_job`'s
    (skip-gram only), and ``shared``: how many consecutive windows share one draw of
    negatives (1: each window draws its own). Draws, in order from the generator state
    ``seed``: the classic kernel's subsampling and window shrinks (:func:`kept_words`),
    then ``negative`` for each run of ``shared`` consecutive windows that have a context
    (a job's windows cut in runs in order, across sentences). The windows of a run step
    one after the other, each from the rows as the previous one left them; the run's
    negatives' rows stay in cache from one window to the next instead of being fetched for
    each. The next run's negatives are drawn (and their rows start loading) before this
    run's first products, and the next window's centre row and entering context row before
    this window's, so the rows' cache misses overlap arithmetic; the draws keep their order.
    """
    negative = out[3]
    window = sampling[2]
    words, ends, shrinks, state = kept_words(sentences, sampling, np.uint64(seed))
    windows = context_windows(ends, shrinks, window)  # (centres, lows, highs)
    recorded = begin_job(stats, W_in, words, None)  # (n, 2) or None
    d = W_in.shape[1]
    width = 2 * window
    n_targets = negative + 1
    if tree is not None:
        n_targets = max(n_targets, tree[3].max())
    scratch = (
        np.empty(width, dtype=np.int64),  # (I,) the window's context words
        np.empty((width, d), dtype=np.float32),  # (I, d) the inputs' step
        np.empty((n_targets, width), dtype=np.float32),  # (O, I) scores, then gradients
        np.empty((2, max(negative, 1)), dtype=np.int64),  # this run's negatives, the next's
        np.empty((2, max(negative, 1)), dtype=np.float32),  # their counts
        np.empty((3, n_targets), dtype=np.int64),  # the centre and negatives, the tree's path
        np.empty((4, n_targets), dtype=np.float32),  # their counts, labels; the path's, ones
    )
    loss = _train_windows(
        W_in,
        words,
        windows,
        out,
        tree,
        shared,
        np.float32(lr),
        state,
        compute_loss,
        recorded,
        scratch,
    )
    end_job(stats, words, None, recorded, lr)
    return words.shape[0], loss


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True, _nrt=False)
def _train_windows(
    W_in, words, windows, out, tree, shared, lr, state, compute_loss, recorded, scratch
):  # pragma: no cover - compiled
    """:func:`train_job_batched`'s windows (no reference counting in the loop: it makes no
    array); returns the loss."""
    centres, lows, highs = windows[0], windows[1], windows[2]
    W_out, table, guide, negative = out[0], out[1], out[2], out[3]
    context, work, G = scratch[0], scratch[1], scratch[2]
    pool, pool_counts = scratch[3], scratch[4]
    ints, floats = scratch[5], scratch[6]
    targets, nodes = ints[0], ints[1]  # (O,) the centre, then the negatives; the centre's path
    counts, labels, bits, ones = floats[0], floats[1], floats[2], floats[3]  # (O,) each
    labels[:] = 0.0
    labels[0] = 1.0  # 1 for the centre, then 0
    ones[:] = 1.0  # the tree's weights
    d = W_in.shape[1]
    n_pool0 = n_pool1 = 0  # merged negatives of the two halves of the pool
    loss = 0.0
    n_win = centres.shape[0]
    if negative > 0 and n_win > 0:
        n_pool0, state = merged_negatives(
            0, negative, table, guide, state, W_out, pool[0], pool_counts[0]
        )
    for k in range(n_win):
        now = (k // shared) & 1
        if negative > 0 and k % shared == 0 and k + shared < n_win:  # the next run's draws
            n_next, state = merged_negatives(
                0, negative, table, guide, state, W_out, pool[1 - now], pool_counts[1 - now]
            )
            if now:
                n_pool0 = n_next
            else:
                n_pool1 = n_next
        if k + 1 < n_win:  # the next window's rows that are not in cache yet, ahead of time
            prefetch_row(W_in, words[highs[k + 1] - 1])  # the word entering the window
            if negative > 0:
                prefetch_row(W_out, words[centres[k + 1]])  # its centre's output row
        i, center = centres[k], words[centres[k]]
        n_in = 0
        for j in range(lows[k], highs[k]):
            if j != i:
                context[n_in] = words[j]
                for c in range(d):
                    work[n_in, c] = 0.0
                n_in += 1
        if tree is not None:  # hierarchical softmax; None compiles the branch away
            W_nodes, codes, points, lengths = tree
            length = lengths[center]
            for m in range(length):
                nodes[m] = points[center, m]
                bits[m] = np.float32(1 - codes[center, m])
            loss += block_step(
                W_in,
                context,
                n_in,
                W_nodes,
                nodes,
                bits,
                ones,
                length,
                lr,
                G,
                work,
                compute_loss,
            )
        if negative > 0:
            n_out = shared_targets(
                center, pool[now], pool_counts[now], n_pool1 if now else n_pool0, targets, counts
            )
            loss += block_step(
                W_in,
                context,
                n_in,
                W_out,
                targets,
                labels,
                counts,
                n_out,
                lr,
                G,
                work,
                compute_loss,
            )
        for m in range(n_in):
            if recorded is not None:  # context[m] is the word at position p
                p = lows[k] + m + (1 if lows[k] + m >= i else 0)
                record(recorded, p, add_measured(W_in[context[m]], work[m]))
                continue
            row = context[m]
            for c in range(d):
                W_in[row, c] += work[m, c]
    return loss
