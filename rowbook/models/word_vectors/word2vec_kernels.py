"""word2vec's inner loop: numba kernels (their plain NumPy formulation: ``word2vec_reference``).

The trained tables are float32 arrays laid out exactly like a ``rowbook.nn.Embedding``
weight: ``W_in`` ``(V, d)`` (the word vectors, gensim's ``wv.vectors``), ``W_out``
``(V, d)`` (negative sampling's output vectors, ``syn1neg``) and ``W_nodes`` ``(V - 1,
d)`` (hierarchical softmax's inner nodes, ``syn1``). A training example reads a few rows
(a lookup, ``W[ids]``) and adds a gradient into the same rows (a scatter-add).

An example is a hidden vector ``h`` and a ``center`` word to predict:

* skip-gram: ``h = W_in[context]`` for each ``context`` word in the window of ``center``
  (word2vec.c's and gensim's order: the context row predicts the centre word; fastText's
  kernels take the other, :mod:`~rowbook.models.word_vectors.fasttext_kernels`);
* CBOW: ``h`` is the mean (``cbow_mean``) or sum of the window's rows.

Negative sampling (Mikolov et al. 2013b) maximises
``log sigmoid(h . W_out[center]) + sum_k log sigmoid(-h . W_out[negatives[k]])`` over
``negative`` words from the unigram^0.75 table; hierarchical softmax maximises
``sum_k log sigmoid((1 - 2 code[k]) h . W_nodes[point[k]])`` along the centre's Huffman
path. One SGD step of learning rate ``lr`` on a target row ``t`` with label ``y``:
``g = lr * (y - sigmoid(h . W[t]))``, ``W[t] += g * h``, and ``h``'s step
``sum_t g * W[t]`` (rows taken before their own update, targets in order, a negative
equal to ``center`` skipped) goes to ``W_in[context]`` -- for CBOW to every context row,
divided by the context size only for the sum (gensim's convention).

The kernels use the exact sigmoid rather than word2vec.c's 1000-entry table (which also
skips pairs with ``|h . W[t]| >= 6``), and release the GIL so several threads can train
the same tables at once, without locks (Hogwild, as word2vec.c and gensim do).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from rowbook.data.sampling import draw_negative, draw_negative_for, lcg_next, window_bounds
from rowbook.models.word_vectors.telemetry_kernels import (
    add_measured,
    begin_job,
    end_job,
    record,
    step_norm,
)

__all__ = [
    "FASTMATH",
    "hierarchical_softmax_step",
    "kept_words",
    "negative_sampling_step",
    "prefetch_row",
    "train_job",
]

#: The fast-math flags of the family's kernels: reassociation lets LLVM vectorise the dot
#: products; no 'nnan'/'ninf', so an exp that overflows stays safe.
FASTMATH = {"reassoc", "contract", "arcp", "nsz", "afn"}
_U16 = np.uint64(16)
_LINE_BYTES = 64


# -- prefetching the next negative's row ------------------------------------------------------
#
# The negatives are random rows of W_out; drawing the next one before working on the current
# one and prefetching its row overlaps the cache miss with arithmetic (about +25% skip-gram
# words/s on NewsArticles). The hint is LLVM's llvm.prefetch (for writing, high locality),
# issued once per 64-byte line; it changes no result.


@intrinsic
def _prefetch(typingctx, table, row, column):  # pragma: no cover - compiled
    """Prefetch the cache line holding ``table[row, column]``."""

    def codegen(context, builder, signature, args):
        table_type = signature.args[0]
        array = context.make_array(table_type)(context, builder, args[0])
        index = [
            context.cast(builder, v, t, types.intp)
            for v, t in zip(args[1:], signature.args[1:], strict=True)
        ]
        address = cgutils.get_item_pointer(context, builder, table_type, array, index)
        byte_ptr = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32])
        prefetch = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(prefetch, [builder.bitcast(address, byte_ptr), i32(1), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(table, row, column), codegen


@numba.njit(inline="always", nogil=True)
def prefetch_row(table, row):  # pragma: no cover - compiled
    """Ask the CPU to start loading every cache line of ``table[row]`` (numba only)."""
    step = max(1, _LINE_BYTES // table.itemsize)
    for column in range(0, table.shape[1], step):
        _prefetch(table, row, column)


# -- one example: negative sampling, hierarchical softmax --------------------------------------


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True, inline="always")
def negative_sampling_step(
    h, W_out, center, negative, table, guide, lr, state, work, compute_loss, redraw=False
):  # pragma: no cover
    """One negative-sampling step for hidden vector ``h``; h's gradient step is added to ``work``.

    A draw equal to ``center`` is skipped (word2vec.c's and gensim's way), or with ``redraw``
    drawn again (fastText's, :func:`~rowbook.data.sampling.draw_negative_for`). Returns the
    generator state after the draws and the loss (0 unless ``compute_loss``).
    """
    d = h.shape[0]
    loss = 0.0
    upcoming = center
    for k in range(negative + 1):
        target = upcoming
        if k < negative:  # draw the next target now and start fetching its row
            if redraw:  # the next state waits on the draw: only when asked for
                upcoming, state = draw_negative_for(table, guide, state, center, True)
            else:
                upcoming = draw_negative(table, guide, state)
                state = lcg_next(state)
            prefetch_row(W_out, upcoming)
        if k == 0:
            label = np.float32(1.0)
        elif target == center:
            continue
        else:
            label = np.float32(0.0)
        row = W_out[target]
        f = np.float32(0.0)
        for c in range(d):
            f += h[c] * row[c]
        e = math.exp(-f)
        g = (label - np.float32(1.0) / (np.float32(1.0) + e)) * lr
        for c in range(d):
            w = row[c]
            work[c] += g * w
            row[c] = w + g * h[c]
        if compute_loss:
            loss += math.log1p(float(e)) + (0.0 if k == 0 else float(f))
    return state, loss


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True, inline="always")
def hierarchical_softmax_step(
    h, W_nodes, code, point, length, lr, work, compute_loss
):  # pragma: no cover
    """One hierarchical-softmax step: ``h`` predicts the word with Huffman path (code, point).

    At inner node ``point[k]`` the label is ``1 - code[k]`` (word2vec.c's convention);
    h's gradient step is added to ``work``. Returns the loss (0 unless ``compute_loss``).
    """
    d = h.shape[0]
    loss = 0.0
    for k in range(length):
        row = W_nodes[point[k]]
        f = np.float32(0.0)
        for c in range(d):
            f += h[c] * row[c]
        e = math.exp(-f)
        g = (np.float32(1 - code[k]) - np.float32(1.0) / (np.float32(1.0) + e)) * lr
        for c in range(d):
            w = row[c]
            work[c] += g * w
            row[c] = w + g * h[c]
        if compute_loss:
            loss += math.log1p(float(e)) + (0.0 if code[k] == 0 else float(f))
    return loss


# -- a job: the words kept, their windows, and the examples -------------------------------------


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True)
def kept_words(sentences, sampling, state):  # pragma: no cover
    """The draws every job makes before its examples, in order from generator ``state``.

    ``sentences = (ids, starts, s0, s1)``: sentences ``[s0, s1)`` of the ids ``ids`` cut at
    ``starts``; ``sampling = (thresholds, use_sample, window, shrink)``. One draw per word
    for subsampling (kept when ``thresholds[w] >= state >> 16``), then one per kept word for
    its window shrink ``b`` in ``[0, window)`` (none when not ``shrink``: every ``b`` is 0).
    Returns the kept words of the sentences, the end of each sentence among them, the
    shrinks and the generator state after.
    :func:`~rowbook.models.word_vectors.word2vec_reference.kept_words_reference` is the
    same in plain Python.
    """
    ids, starts, s0, s1 = sentences
    thresholds, use_sample, window, shrink = sampling
    words = np.empty(starts[s1] - starts[s0], dtype=np.int32)  # (n_raw,)
    ends = np.empty(s1 - s0, dtype=np.int64)
    n = 0
    for s in range(s0, s1):
        for p in range(starts[s], starts[s + 1]):
            w = ids[p]
            if use_sample:
                draw = state >> _U16
                state = lcg_next(state)
                if np.uint64(thresholds[w]) < draw:
                    continue
            words[n] = w
            n += 1
        ends[s - s0] = n
    shrinks = np.zeros(n, dtype=np.int64)
    if shrink:
        for i in range(n):
            shrinks[i] = np.int64((state >> _U16) % np.uint64(window))
            state = lcg_next(state)
    return words[:n], ends, shrinks, state


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True, inline="always")
def _predict(
    h, center, W_out, table, guide, negative, tree, lr, state, work, compute_loss
):  # pragma: no cover
    """Both objectives for (h, center): their gradient steps for h summed into ``work``."""
    work[:] = 0.0
    loss = 0.0
    if tree is not None:  # hierarchical softmax; None compiles the branch away
        W_nodes, codes, points, lengths = tree
        loss += hierarchical_softmax_step(
            h, W_nodes, codes[center], points[center], lengths[center], lr, work, compute_loss
        )
    if negative > 0:
        state, step_loss = negative_sampling_step(
            h, W_out, center, negative, table, guide, lr, state, work, compute_loss
        )
        loss += step_loss
    return state, loss


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True, inline="always")
def _cbow_position(
    W_in, words, i, lo, hi, out, tree, cbow_mean, lr, state, work, neu1, compute_loss
):  # pragma: no cover
    """CBOW at position ``i``: the window's mean (or sum) predicts ``words[i]``; every context
    row takes the step left in ``work``."""
    d = W_in.shape[1]
    neu1[:] = 0.0
    count = 0
    for j in range(lo, hi):
        if j != i:
            count += 1
            row = W_in[words[j]]
            for c in range(d):
                neu1[c] += row[c]
    inv = np.float32(1.0 / count) if count > 0 else np.float32(1.0)
    if cbow_mean:
        for c in range(d):
            neu1[c] *= inv
    W_out, table, guide, negative = out
    state, loss = _predict(
        neu1, words[i], W_out, table, guide, negative, tree, lr, state, work, compute_loss
    )
    if not cbow_mean:  # gensim divides the step, not the input, for the sum
        for c in range(d):
            work[c] *= inv
    for j in range(lo, hi):
        if j != i:
            row = W_in[words[j]]
            for c in range(d):
                row[c] += work[c]
    return state, loss


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True)
def train_job(
    W_in, sentences, sampling, out, tree, skipgram, cbow_mean, lr, seed, compute_loss, stats=None
):  # pragma: no cover
    """Train on the sentences of an encoded corpus; returns (words trained, loss).

    ``sentences = (ids, starts, s0, s1)`` are sentences ``[s0, s1)`` of the ids ``ids`` cut
    at ``starts``, ``sampling = (thresholds, use_sample, window, shrink)`` the subsampling
    and the window (:func:`kept_words`); every kernel of the family takes these two.
    ``out = (W_out, table, guide, negative)`` is negative sampling (off when
    ``negative == 0``), ``tree = (W_nodes, codes, points, lengths)`` hierarchical softmax
    (``None``: off, and compiled out). Draws, in order from the generator state ``seed``:
    one per word for subsampling, one per kept word for its window shrink ``b`` in
    ``[0, window)``, then the negatives of every step.

    ``stats`` (None: off, compiled away) records per-row telemetry of ``W_in``
    (:mod:`~rowbook.models.word_vectors.telemetry_kernels`: by position during the job,
    into the rows' counters at its end).
    """
    W_out, table, guide, negative = out
    window = sampling[2]
    words, ends, shrinks, state = kept_words(sentences, sampling, np.uint64(seed))
    recorded = begin_job(stats, W_in, words, None)  # (n, 2) or None
    d = W_in.shape[1]
    work = np.empty(d, dtype=np.float32)  # (d,) gradient step for h
    neu1 = np.empty(d, dtype=np.float32)  # (d,) CBOW hidden vector
    lr = np.float32(lr)
    loss, start = 0.0, 0
    for end in ends:
        for i in range(start, end):
            lo, hi = window_bounds(i, start, end, window, shrinks[i])
            if skipgram:
                for j in range(lo, hi):
                    if j != i:
                        h = W_in[words[j]]  # the context row predicts the centre word
                        state, step_loss = _predict(
                            h,
                            words[i],
                            W_out,
                            table,
                            guide,
                            negative,
                            tree,
                            lr,
                            state,
                            work,
                            compute_loss,
                        )
                        if stats is not None:
                            record(recorded, j, add_measured(h, work))
                        else:
                            for c in range(d):
                                h[c] += work[c]
                        loss += step_loss
            else:
                if i + 1 < end:
                    prefetch_row(W_out, words[i + 1])  # the next centre's output row
                state, step_loss = _cbow_position(
                    W_in,
                    words,
                    i,
                    lo,
                    hi,
                    out,
                    tree,
                    cbow_mean,
                    lr,
                    state,
                    work,
                    neu1,
                    compute_loss,
                )
                if stats is not None:  # every context row took the step in work
                    norm = step_norm(work)
                    for j in range(lo, hi):
                        if j != i:
                            record(recorded, j, norm)
                loss += step_loss
        start = end
    end_job(stats, words, None, recorded, lr)
    return words.shape[0], loss
