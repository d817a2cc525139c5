"""The minibatched skip-gram in NumPy: the reference of :mod:`~rowbook.models.word_vectors.word2vec_batched_kernels`.

The same draws in the same order as the kernel (the classic job's subsampling and window
shrinks, :func:`~rowbook.models.word_vectors.word2vec_reference.kept_words_reference`, then
``negative`` draws per run of ``shared`` consecutive windows that have a context), and each
window as the three matrix products of HogBatch on gathered rows::

    S = Y X^T,   G = lr * n * (label - sigmoid(S)),   W_out[T] += G X,   W_in[context] += G^T Y

with ``X = W_in[context]`` ``(I, d)`` and ``Y = W[T]`` ``(O, d)`` read before the window's
steps; the inputs' step is scattered with :func:`rowbook.autograd.sparse.scatter_add_rows`,
so a context word seen twice in a window takes both steps.
"""

from __future__ import annotations

import numpy as np

from rowbook.autograd.sparse import gather_rows_reference, scatter_add_rows
from rowbook.models.word_vectors.word2vec_reference import (
    draw_negatives_reference,
    kept_words_reference,
    window_contexts,
)

__all__ = [
    "block_step_reference",
    "merged_negatives_reference",
    "shared_targets_reference",
    "train_job_batched_reference",
]


def merged_negatives_reference(exclude, negatives):
    """``(targets, counts)``: each distinct negative not in ``exclude`` with how many times
    it was drawn, in order of first draw.

    >>> merged_negatives_reference([4, 9], [2, 4, 7, 2, 9, 2])
    ([2, 7], [3, 1])
    """
    targets, counts = [], []
    for t in negatives:
        if t in exclude:
            continue
        if t in targets:
            counts[targets.index(t)] += 1
        else:
            targets.append(t)
            counts.append(1)
    return targets, counts


def shared_targets_reference(center, negatives):
    """``(targets, counts)``: the centre, then its :func:`merged_negatives_reference`.

    >>> shared_targets_reference(4, [2, 4, 7, 2, 2])
    ([4, 2, 7], [1, 3, 1])
    """
    targets, counts = merged_negatives_reference([center], negatives)
    return [center, *targets], [1, *counts]


def block_step_reference(X, W, targets, labels, counts, lr):
    """One window against table ``W``: updates ``W[targets]`` in place and returns the
    inputs' step ``G^T Y`` ``(I, d)``. ``targets`` are distinct."""
    targets = np.asarray(targets, dtype=np.int64)
    Y = W[targets].copy()  # (O, d)
    S = Y @ X.T  # (O, I)
    p = np.float32(1.0) / (np.float32(1.0) + np.exp(-S, dtype=np.float32))
    scale = np.float32(lr) * np.asarray(counts, dtype=np.float32)[:, None]  # (O, 1)
    G = ((np.asarray(labels, dtype=np.float32)[:, None] - p) * scale).astype(np.float32)
    W[targets] = Y + G @ X
    return G.T @ Y  # (I, d)


def train_job_batched_reference(W_in, sentences, sampling, out, tree, shared, lr, seed):
    """Plain :func:`~rowbook.models.word_vectors.word2vec_batched_kernels.train_job_batched`;
    returns the words trained. ``shared`` consecutive windows with a context share one
    draw of negatives, each window stepping from the rows the previous one left."""
    W_out, table, _, negative = out
    window = sampling[2]
    sentences, shrinks, state = kept_words_reference(sentences, sampling, seed)
    windows = [(c, ctx) for c, ctx in window_contexts(sentences, shrinks, window) if ctx]
    for k, (center, context) in enumerate(windows):
        rows = np.asarray(context, dtype=np.int64)
        X = gather_rows_reference(W_in, rows)  # (I, d)
        step = np.zeros_like(X)
        if tree is not None:
            W_nodes, codes, points, lengths = tree
            n = lengths[center]
            labels = 1 - codes[center, :n].astype(np.float32)
            step += block_step_reference(X, W_nodes, points[center, :n], labels, [1] * n, lr)
        if negative:
            if k % shared == 0:
                negatives, state = draw_negatives_reference(table, state, negative)
            targets, counts = shared_targets_reference(center, negatives)
            labels = [1.0] + [0.0] * (len(targets) - 1)
            step += block_step_reference(X, W_out, targets, labels, counts, lr)
        scatter_add_rows(rows, step, len(W_in)).add_to(W_in)
    return sum(map(len, sentences))
