"""The plain-Python formulation of word2vec's and fastText's training, the kernels' reference.

Every numba kernel of the family is held to a function here in the tests, draw for draw:
the NumPy steps (negative sampling, hierarchical softmax, a skip-gram pair, a CBOW
window), the draws a job makes before its examples (:func:`kept_words_reference`), and
whole jobs: :func:`train_job_reference` for
:func:`~rowbook.models.word_vectors.word2vec_kernels.train_job` and
:func:`fasttext_job_reference` for
:func:`~rowbook.models.word_vectors.fasttext_kernels.train_job`. The lookup of the input
rows and the scatter-add of h's step into them are :mod:`rowbook.autograd.sparse`'s
(``gather_rows_reference``, ``scatter_add_rows``), so a row repeated in a window or a bag
receives the step once per occurrence. The generator step and the window are the kernels'
own compiled functions (:func:`rowbook.data.lcg_next`, :func:`rowbook.data.window_bounds`),
called from Python here: one definition of each.
"""

from __future__ import annotations

import numpy as np

from rowbook.autograd.sparse import gather_rows_reference, scatter_add_rows
from rowbook.data.sampling import lcg_next, window_bounds

__all__ = [
    "cbow_step_reference",
    "draw_negatives_reference",
    "fasttext_job_reference",
    "hierarchical_softmax_reference",
    "kept_words_reference",
    "negative_sampling_reference",
    "skipgram_step_reference",
    "train_job_reference",
    "window_contexts",
]

# -- one example ------------------------------------------------------------------------------


def negative_sampling_reference(h, W_out, center, negatives, lr):
    """NumPy formulation of :func:`~rowbook.models.word_vectors.word2vec_kernels.negative_sampling_step` with the negatives given.

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


def hierarchical_softmax_reference(h, W_nodes, code, point, lr):
    """NumPy formulation of :func:`~rowbook.models.word_vectors.word2vec_kernels.hierarchical_softmax_step`; returns h's step and the loss."""
    work, loss = np.zeros_like(h), 0.0
    for bit, node in zip(code, point, strict=True):
        row = W_nodes[node].copy()
        f = np.float32(h @ row)
        g = np.float32((np.float32(1 - bit) - 1.0 / (1.0 + np.exp(-f, dtype=np.float32))) * lr)
        work += g * row
        W_nodes[node] = row + g * h
        loss += float(np.log1p(np.exp(-float(f))) + (float(f) if bit else 0.0))
    return work, loss


def draw_negatives_reference(table, state, negative, avoid=None):
    """The ``negative`` draws of the kernels (with the generator), as a list and a new state;
    a draw equal to ``avoid`` (None: none) is drawn again, unless the table has one word
    (:func:`~rowbook.data.sampling.draw_negative_for` with ``redraw``)."""
    drawn = []
    while len(drawn) < negative:
        t = int(np.searchsorted(table, ((state >> 16) % int(table[-1])), side="left"))
        state = int(lcg_next(np.uint64(state)))
        if t != avoid or len(table) == 1:
            drawn.append(t)
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


# -- a job ------------------------------------------------------------------------------------


def kept_words_reference(sentences, sampling, state):
    """Plain :func:`~rowbook.models.word_vectors.word2vec_kernels.kept_words`: the kept
    words of each sentence (a list per sentence), the window shrinks of all of them in
    order, and the generator state after."""
    ids, starts, s0, s1 = sentences
    thresholds, use_sample, window, shrink = sampling
    state, sentences = int(state), []
    for s in range(s0, s1):
        kept = []
        for w in ids[starts[s] : starts[s + 1]]:
            if use_sample:
                draw, state = state >> 16, int(lcg_next(np.uint64(state)))
                if int(thresholds[w]) < draw:
                    continue
            kept.append(int(w))
        sentences.append(kept)
    shrinks = []
    for _ in range(sum(map(len, sentences))):
        shrinks.append((state >> 16) % window if shrink else 0)
        state = int(lcg_next(np.uint64(state))) if shrink else state
    return sentences, shrinks, state


def window_contexts(sentences, shrinks, window):
    """``(center, context words)`` of every kept word, in order."""
    position = 0
    for words in sentences:
        for i, center in enumerate(words):
            lo, hi = window_bounds(i, 0, len(words), window, shrinks[position + i])
            yield center, [words[j] for j in range(lo, hi) if j != i]
        position += len(words)


def train_job_reference(W_in, sentences, sampling, out, tree, skipgram, cbow_mean, lr, seed):
    """Plain :func:`~rowbook.models.word_vectors.word2vec_kernels.train_job`: the same draws
    in the same order, NumPy updates; returns the words trained.

    Skip-gram in word2vec.c's order: each context row predicts the centre word.
    """
    window = sampling[2]
    sentences, shrinks, state = kept_words_reference(sentences, sampling, seed)
    for center, context in window_contexts(sentences, shrinks, window):
        for rows in [[w] for w in context] if skipgram else [context]:
            state = _step_reference(
                W_in, rows, center, out, tree, np.float32(lr), state, mean=cbow_mean or skipgram
            )
    return sum(map(len, sentences))


def fasttext_job_reference(W_in, bags, sentences, sampling, out, skipgram, lr, seed, redraw=False):
    """Plain :func:`~rowbook.models.word_vectors.fasttext_kernels.train_job`; returns the
    words trained.

    word2vec's job with every input row replaced by the rows of a bag: skip-gram in
    fastText's order (the centre word's bag predicts each context word, h recomputed
    before each, as ``FastText::skipgram`` calls ``Model::update``), CBOW from one mean
    over the rows of every context word's bag.
    """
    bag_starts, bag_ids = bags
    window = sampling[2]
    sentences, shrinks, state = kept_words_reference(sentences, sampling, seed)

    def bag(word):
        return [int(r) for r in bag_ids[bag_starts[word] : bag_starts[word + 1]]]

    for center, context in window_contexts(sentences, shrinks, window):
        if skipgram:
            examples = [(bag(center), target) for target in context]
        else:
            examples = [([r for w in context for r in bag(w)], center)]
        for rows, target in examples:
            state = _step_reference(
                W_in, rows, target, out, None, np.float32(lr), state, mean=True, redraw=redraw
            )
    return sum(map(len, sentences))


def _step_reference(W_in, rows, target, out, tree, lr, state, mean, redraw=False):
    """One example: hierarchical softmax and negative sampling from the same hidden vector
    (the mean, or sum, of ``W_in[rows]``), their steps summed and scattered into ``rows``;
    with ``redraw`` a negative equal to ``target`` is drawn again, not skipped."""
    W_out, table, _, negative = out
    h = gather_rows_reference(W_in, np.asarray(rows, dtype=np.int64)).sum(axis=0, dtype=np.float32)
    if mean and len(rows):
        h = h * np.float32(1.0 / len(rows))
    work = np.zeros_like(h)
    if tree is not None:
        W_nodes, codes, points, lengths = tree
        n = lengths[target]
        work += hierarchical_softmax_reference(
            h, W_nodes, codes[target, :n], points[target, :n], lr
        )[0]
    if negative:
        avoid = target if redraw else None
        negatives, state = draw_negatives_reference(table, state, negative, avoid)
        work += negative_sampling_reference(h, W_out, target, negatives, lr)[0]
    scale = np.float32(1.0) if mean or not rows else np.float32(1.0 / len(rows))
    grad = scatter_add_rows(
        np.asarray(rows, dtype=np.int64), np.tile(work * scale, (len(rows), 1)), len(W_in)
    )
    grad.add_to(W_in)
    return state
