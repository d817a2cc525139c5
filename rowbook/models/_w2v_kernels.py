"""word2vec's inner loop: numba kernels, each with the plain NumPy formulation beside it.

The trained tables are float32 arrays laid out exactly like a ``rowbook.nn.Embedding``
weight: ``W_in`` ``(V, d)`` (the word vectors, gensim's ``wv.vectors``), ``W_out``
``(V, d)`` (negative sampling's output vectors, ``syn1neg``) and ``W_nodes`` ``(V - 1,
d)`` (hierarchical softmax's inner nodes, ``syn1``). A training example reads a few rows
(a lookup, ``W[ids]``) and adds a gradient into the same rows (a scatter-add).

An example is a hidden vector ``h`` and a ``center`` word to predict:

* skip-gram: ``h = W_in[context]`` for each ``context`` word in the window of ``center``
  (word2vec.c's order: the context row predicts the centre word);
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

from rowbook.data.sampling import LCG_MASK, LCG_MULTIPLIER, draw_negative, lcg_next
from rowbook.models._prefetch import prefetch_row

__all__ = [
    "cbow_step_reference",
    "draw_negatives_reference",
    "hierarchical_softmax_reference",
    "hierarchical_softmax_step",
    "negative_sampling_reference",
    "negative_sampling_step",
    "skipgram_step_reference",
    "train_job",
]

# reassociation lets LLVM vectorise the dot products; no 'nnan'/'ninf', so exp overflow is safe
_FAST = {"reassoc", "contract", "arcp", "nsz", "afn"}
_U16 = np.uint64(16)


@numba.njit(nogil=True, fastmath=_FAST, cache=True, inline="always")
def negative_sampling_step(
    h, W_out, center, negative, table, guide, lr, state, work, compute_loss
):  # pragma: no cover
    """One negative-sampling step for hidden vector ``h``; h's gradient step is added to ``work``.

    Returns the generator state after the ``negative`` draws and the loss (0 unless
    ``compute_loss``).
    """
    d = h.shape[0]
    loss = 0.0
    upcoming = center
    for k in range(negative + 1):
        target = upcoming
        if k < negative:  # draw the next target now and start fetching its row
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


def negative_sampling_reference(h, W_out, center, negatives, lr):
    """NumPy formulation of :func:`negative_sampling_step` with the negatives given.

    Updates ``W_out`` in place; returns the gradient step for ``h`` and the loss.
    """
    work = np.zeros_like(h)
    loss = 0.0
    for k, target in enumerate([center, *negatives]):
        if k > 0 and target == center:
            continue
        label = np.float32(1.0 if k == 0 else 0.0)
        row = W_out[target].copy()
        f = np.float32(h @ row)
        g = np.float32((label - 1.0 / (1.0 + np.exp(-f, dtype=np.float32))) * lr)
        work += g * row
        W_out[target] = row + g * h
        loss += (
            -np.log(1 / (1 + np.exp(-float(f)))) if k == 0 else -np.log(1 / (1 + np.exp(float(f))))
        )
    return work, loss


@numba.njit(nogil=True, fastmath=_FAST, cache=True, inline="always")
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


def hierarchical_softmax_reference(h, W_nodes, code, point, lr):
    """NumPy formulation of :func:`hierarchical_softmax_step`; returns h's step and the loss."""
    work, loss = np.zeros_like(h), 0.0
    for bit, node in zip(code, point, strict=True):
        row = W_nodes[node].copy()
        f = np.float32(h @ row)
        g = np.float32((np.float32(1 - bit) - 1.0 / (1.0 + np.exp(-f, dtype=np.float32))) * lr)
        work += g * row
        W_nodes[node] = row + g * h
        loss += float(np.log1p(np.exp(-float(f))) + (float(f) if bit else 0.0))
    return work, loss


def draw_negatives_reference(table, state, negative):
    """The ``negative`` draws of the kernels (with the generator), as a list and a new state."""
    drawn = []
    for _ in range(negative):
        drawn.append(int(np.searchsorted(table, ((state >> 16) % int(table[-1])), side="left")))
        state = (state * LCG_MULTIPLIER + 11) & LCG_MASK
    return drawn, state


def skipgram_step_reference(W_in, W_out, context, center, negatives, lr):
    """One skip-gram pair: ``W_in[context]`` predicts ``center``; updates both tables."""
    work, loss = negative_sampling_reference(W_in[context].copy(), W_out, center, negatives, lr)
    W_in[context] += work
    return loss


def cbow_step_reference(W_in, W_out, context_ids, center, negatives, lr, cbow_mean=True):
    """One CBOW example: the context rows' mean (or sum) predicts ``center``.

    The lookup and the scatter-add of the gradient into the context rows are
    :mod:`rowbook.autograd.sparse`'s, so repeated context words receive it once per
    occurrence.
    """
    from rowbook.autograd.sparse import gather_rows_reference, scatter_add_rows  # reference only

    context_ids = np.asarray(context_ids, dtype=np.int64)
    rows = gather_rows_reference(W_in, context_ids)  # (C, d)
    scale = np.float32(1.0 / len(context_ids)) if len(context_ids) else np.float32(1.0)
    h = rows.sum(axis=0, dtype=np.float32) * (scale if cbow_mean else np.float32(1.0))  # (d,)
    work, loss = negative_sampling_reference(h, W_out, center, negatives, lr)
    if not cbow_mean:
        work = work * scale
    grad = scatter_add_rows(context_ids, np.broadcast_to(work, rows.shape).copy(), len(W_in))
    grad.add_to(W_in)
    return loss


@numba.njit(nogil=True, fastmath=_FAST, cache=True)
def _subsample(ids, starts, s0, s1, thresholds, use_sample, state):  # pragma: no cover
    """Keep each word with its subsampling probability; returns words, sentence ends, state."""
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
    return words[:n], ends, state


@numba.njit(nogil=True, fastmath=_FAST, cache=True, inline="always")
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


@numba.njit(nogil=True, fastmath=_FAST, cache=True, inline="always")
def _cbow_position(
    W_in, words, i, lo, hi, out, tree, cbow_mean, lr, state, work, neu1, compute_loss
):  # pragma: no cover
    """CBOW at position ``i``: the window's mean (or sum) predicts ``words[i]``."""
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


@numba.njit(nogil=True, fastmath=_FAST, cache=True)
def train_job(
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
    skipgram,
    cbow_mean,
    lr,
    seed,
    compute_loss,
):  # pragma: no cover
    """Train on sentences ``[s0, s1)`` of an encoded corpus; returns (words trained, loss).

    ``out = (W_out, table, guide, negative)`` is negative sampling (off when
    ``negative == 0``), ``tree = (W_nodes, codes, points, lengths)`` hierarchical softmax
    (``None``: off, and compiled out). Draws, in order from the generator state ``seed``:
    one per word for subsampling, one per kept word for its window shrink ``b`` in
    ``[0, window)``, then the negatives of every step.
    """
    W_out, table, guide, negative = out
    state = np.uint64(seed)
    words, ends, state = _subsample(ids, starts, s0, s1, thresholds, use_sample, state)
    n = words.shape[0]
    reduced = np.zeros(n, dtype=np.int64)
    if shrink:
        for i in range(n):
            reduced[i] = np.int64((state >> _U16) % np.uint64(window))
            state = lcg_next(state)
    d = W_in.shape[1]
    work = np.empty(d, dtype=np.float32)  # (d,) gradient step for h
    neu1 = np.empty(d, dtype=np.float32)  # (d,) CBOW hidden vector
    lr = np.float32(lr)
    loss, start = 0.0, 0
    for end in ends:
        for i in range(start, end):
            lo = max(i - window + reduced[i], start)
            hi = min(i + window + 1 - reduced[i], end)
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
                loss += step_loss
        start = end
    return n, loss
