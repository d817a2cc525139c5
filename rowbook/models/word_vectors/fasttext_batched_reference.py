"""fastText's minibatched skip-gram in NumPy: the reference of :mod:`~rowbook.models.word_vectors.fasttext_batched_kernels`.

The same draws in the same order as the kernel (the classic job's subsampling and window
shrinks, :func:`~rowbook.models.word_vectors.word2vec_reference.kept_words_reference`,
then ``negative`` draws for each pair of a window, drawn together, with ``redraw`` a draw
equal to its pair's context word drawn again), and each window as word2vec's
batched block (:func:`~rowbook.models.word_vectors.word2vec_batched_reference.block_step_reference`)
with one input, the centre's mean bag ``h``::

    s = Y h,   g = lr * n * (label - sigmoid(s)),   W_out[T] += g h^T,   W_in[bag] += g^T Y

``h``'s step is scattered into the bag with :func:`rowbook.autograd.sparse.scatter_add_rows`,
so a row twice in a bag takes it twice.
"""

from __future__ import annotations

import numpy as np

from rowbook.autograd.sparse import gather_rows_reference, scatter_add_rows
from rowbook.models.word_vectors.word2vec_batched_reference import (
    block_step_reference,
    merged_negatives_reference,
)
from rowbook.models.word_vectors.word2vec_reference import (
    draw_negatives_reference,
    kept_words_reference,
    window_contexts,
)

__all__ = ["fasttext_job_batched_reference", "window_targets_reference"]


def window_targets_reference(context, negatives):
    """``(targets, counts, n_positive)``: each distinct context word with how many times it
    is in the window, then each distinct negative that is not a context word with how many
    times it was drawn; in order of first sighting.

    >>> window_targets_reference([3, 5, 3], [5, 2, 2, 7])
    ([3, 5, 2, 7], [2, 1, 2, 1], 2)
    """
    positives, counts = merged_negatives_reference([], context)  # each context word, counted
    drawn, drawn_counts = merged_negatives_reference(positives, negatives)
    return positives + drawn, counts + drawn_counts, len(positives)


def fasttext_job_batched_reference(W_in, bags, sentences, sampling, out, lr, seed, redraw=False):
    """Plain :func:`~rowbook.models.word_vectors.fasttext_batched_kernels.train_job_batched`;
    returns the words trained. With ``redraw`` each pair's draw equal to its own context
    word is drawn again (then merged as any other)."""
    W_out, table, _, negative = out
    bag_starts, bag_ids = bags
    window = sampling[2]
    sentences, shrinks, state = kept_words_reference(sentences, sampling, seed)
    for center, context in window_contexts(sentences, shrinks, window):
        if not context:
            continue
        negatives = []
        for target in context:  # negative draws a pair, in the window's order
            drawn, state = draw_negatives_reference(
                table, state, negative, target if redraw else None
            )
            negatives += drawn
        targets, counts, n_positive = window_targets_reference(context, negatives)
        labels = [1.0] * n_positive + [0.0] * (len(targets) - n_positive)
        bag = np.asarray(bag_ids[bag_starts[center] : bag_starts[center + 1]], dtype=np.int64)
        rows = gather_rows_reference(W_in, bag)  # (B, d)
        h = rows.sum(axis=0, dtype=np.float32) * np.float32(1.0 / len(bag))  # (d,)
        step = block_step_reference(h[None, :], W_out, targets, labels, counts, lr)  # (1, d)
        scatter_add_rows(bag, np.repeat(step, len(bag), axis=0), len(W_in)).add_to(W_in)
    return sum(map(len, sentences))
