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
With ``bags``, fastText's CBOW: a context word's rows are its bag's (:func:`input_rows`),
``H``'s row one mean over them all, and each row of each bag takes the window's step.
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

__all__ = ["input_rows", "train_job_batched_cbow_reference"]


def train_job_batched_cbow_reference(
    W_in, sentences, sampling, out, tree, cbow_mean, batch, lr, seed, bags=None
):
    """Plain :func:`~rowbook.models.word_vectors.word2vec_batched_cbow_kernels.train_job_batched_cbow`;
    returns the words trained. ``bags = (bag_starts, bag_ids)``: fastText's CBOW, a context
    word's input rows its bag's."""
    W_out, table, _, negative = out
    window = sampling[2]
    sentences, shrinks, state = kept_words_reference(sentences, sampling, seed)
    windows = [w for w in window_contexts(sentences, shrinks, window) if w[1]]
    order, bounds = batch_order(len(windows), batch)
    for k0, k1 in itertools.pairwise(bounds):
        part = [windows[w] for w in order[k0:k1]]
        centres = [center for center, _ in part]
        inputs = [input_rows(context, bags) for _, context in part]
        H = np.stack([_hidden(W_in, rows, cbow_mean) for rows in inputs])  # (B, d)
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
        rows = np.concatenate(inputs)
        grads = np.concatenate(
            [
                np.tile(_step(steps[b], window_rows, cbow_mean), (len(window_rows), 1))
                for b, window_rows in enumerate(inputs)
            ]
        )  # (rows, d)
        scatter_add_rows(rows, grads, len(W_in)).add_to(W_in)
    return sum(map(len, sentences))


def input_rows(context, bags=None):
    """The input rows of a window's context words: the words themselves (word2vec), or with
    ``bags = (bag_starts, bag_ids)`` every row of each word's bag, in order (fastText).

    >>> input_rows([4, 2]).tolist()
    [4, 2]
    >>> input_rows([1, 0], (np.array([0, 2, 3]), np.array([0, 7, 1]))).tolist()
    [1, 0, 7]
    """
    if bags is None:
        return np.asarray(context, dtype=np.int64)
    bag_starts, bag_ids = bags
    return np.concatenate([bag_ids[bag_starts[w] : bag_starts[w + 1]] for w in context]).astype(
        np.int64
    )


def _hidden(W_in, rows, cbow_mean):
    """The mean (or sum) of the input rows ``(d,)``."""
    gathered = gather_rows_reference(W_in, rows)  # (R, d)
    h = gathered.sum(axis=0, dtype=np.float32)
    return h * np.float32(1.0 / len(rows)) if cbow_mean else h


def _step(step, rows, cbow_mean):
    """What each input row of a window takes: h's step, divided by the window's size for
    the sum (gensim's convention)."""
    return step if cbow_mean else step * np.float32(1.0 / len(rows))
