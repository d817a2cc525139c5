"""The minibatched CBOW in NumPy: the reference of :mod:`~rowbook.models.word_vectors.word2vec_batched_cbow_kernels`.

The same draws in the same order as the kernel (the classic job's subsampling and window
shrinks, :func:`~rowbook.models.word_vectors.word2vec_reference.kept_words_reference`, then
``negative`` draws per minibatch of the windows that have a context, taken in the kernel's
order, :func:`~rowbook.models.word_vectors.word2vec_batched_cbow_kernels.batch_order`), and
each minibatch as the kernel computes it: the hidden vectors ``H`` ``(B, d)`` gathered
before the batch's steps, each window's own targets in order (its centre's Huffman path,
:func:`~rowbook.models.word_vectors.word2vec_reference.hierarchical_softmax_reference`, and
its centre, :func:`~rowbook.models.word_vectors.word2vec_reference.negative_sampling_reference`
with no negatives), then the shared negatives as one block
(:func:`~rowbook.models.word_vectors.word2vec_batched_reference.block_step_reference`)::

    S = Y H^T,   G = lr * n * (0 - sigmoid(S)),   W_out[T] += G H,   steps += G^T Y

and every window's step scattered into its context rows with
:func:`rowbook.autograd.sparse.scatter_add_rows` (a word twice in a window takes it twice).
"""

from __future__ import annotations

import itertools

import numpy as np

from rowbook.autograd.sparse import gather_rows_reference, scatter_add_rows
from rowbook.models.word_vectors.word2vec_batched_cbow_kernels import batch_order
from rowbook.models.word_vectors.word2vec_batched_reference import (
    block_step_reference,
    merged_negatives_reference,
)
from rowbook.models.word_vectors.word2vec_reference import (
    draw_negatives_reference,
    hierarchical_softmax_reference,
    kept_words_reference,
    negative_sampling_reference,
    window_contexts,
)

__all__ = ["train_job_batched_cbow_reference"]


def train_job_batched_cbow_reference(
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
):
    """Plain :func:`~rowbook.models.word_vectors.word2vec_batched_cbow_kernels.train_job_batched_cbow`;
    returns the words trained."""
    W_out, table, _, negative = out
    sentences, shrinks, state = kept_words_reference(
        ids, starts, s0, s1, thresholds, use_sample, window, shrink, seed
    )
    windows = [w for w in window_contexts(sentences, shrinks, window) if w[1]]
    order, bounds = batch_order(len(windows), batch)
    for k0, k1 in itertools.pairwise(bounds):
        part = [windows[w] for w in order[k0:k1]]
        centres = [center for center, _ in part]
        H = np.stack([_hidden(W_in, context, cbow_mean) for _, context in part])  # (B, d)
        steps = np.zeros_like(H)  # (B, d)
        for b, center in enumerate(centres):
            if tree is not None:
                W_nodes, codes, points, lengths = tree
                n = lengths[center]
                path = (codes[center, :n], points[center, :n])
                steps[b] += hierarchical_softmax_reference(H[b], W_nodes, *path, lr)[0]
            if negative:
                steps[b] += negative_sampling_reference(H[b], W_out, center, [], lr)[0]
        if negative:
            negatives, state = draw_negatives_reference(table, state, negative)
            targets, counts = merged_negatives_reference(centres, negatives)
            if targets:
                labels = [0.0] * len(targets)
                steps += block_step_reference(H, W_out, targets, labels, counts, lr)
        rows = np.asarray([w for _, context in part for w in context], dtype=np.int64)
        grads = np.concatenate(
            [
                np.tile(_step(steps[b], context, cbow_mean), (len(context), 1))
                for b, (_, context) in enumerate(part)
            ]
        )  # (rows, d)
        scatter_add_rows(rows, grads, len(W_in)).add_to(W_in)
    return sum(map(len, sentences))


def _hidden(W_in, context, cbow_mean):
    """The mean (or sum) of the context rows ``(d,)``."""
    rows = gather_rows_reference(W_in, np.asarray(context, dtype=np.int64))  # (C, d)
    h = rows.sum(axis=0, dtype=np.float32)
    return h * np.float32(1.0 / len(context)) if cbow_mean else h


def _step(step, context, cbow_mean):
    """What each context row of a window takes: h's step, divided by the window's size for
    the sum (gensim's convention)."""
    return step if cbow_mean else step * np.float32(1.0 / len(context))
