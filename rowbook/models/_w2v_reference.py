"""The plain-Python formulation of a whole word2vec job, the tests' reference for ``train_job``.

It makes the same random draws in the same order as :func:`rowbook.models._w2v_kernels.train_job`
(subsampling, window shrinks, negatives, all from word2vec.c's generator) and applies each
example with the NumPy step references: a lookup of the context rows
(:func:`rowbook.autograd.sparse.gather_rows_reference`), hierarchical softmax and
negative sampling from the same hidden vector, and a scatter-add of the summed step into
the context rows (:func:`rowbook.autograd.sparse.scatter_add_rows`), so a word repeated in
a window receives it once per occurrence.
"""

from __future__ import annotations

import numpy as np

from rowbook.autograd.sparse import gather_rows_reference, scatter_add_rows
from rowbook.data.sampling import LCG_MASK, LCG_MULTIPLIER
from rowbook.models._w2v_kernels import (
    draw_negatives_reference,
    hierarchical_softmax_reference,
    negative_sampling_reference,
)

__all__ = ["train_job_reference"]


def train_job_reference(
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
):
    """Plain-Python :func:`train_job`: same draws in the same order, NumPy updates."""
    state, sentences = int(seed), []
    for s in range(s0, s1):
        kept = []
        for w in ids[starts[s] : starts[s + 1]]:
            if use_sample:
                draw, state = state >> 16, (state * LCG_MULTIPLIER + 11) & LCG_MASK
                if int(thresholds[w]) < draw:
                    continue
            kept.append(int(w))
        sentences.append(kept)
    reduced = []
    for _ in range(sum(map(len, sentences))):
        reduced.append((state >> 16) % window if shrink else 0)
        state = (state * LCG_MULTIPLIER + 11) & LCG_MASK if shrink else state
    position = 0
    for words in sentences:
        for i, center in enumerate(words):
            b = reduced[position + i]
            lo, hi = max(i - window + b, 0), min(i + window + 1 - b, len(words))
            context = [words[j] for j in range(lo, hi) if j != i]
            for group in [[w] for w in context] if skipgram else [context]:
                state = _step_reference(
                    W_in,
                    group,
                    center,
                    out,
                    tree,
                    np.float32(lr),
                    state,
                    mean=cbow_mean or skipgram,
                )
        position += len(words)
    return sum(map(len, sentences))


def _step_reference(W_in, context, center, out, tree, lr, state, mean):
    """One example of the reference: hierarchical softmax and negative sampling from the
    same hidden vector, their steps summed and scattered into the context rows."""
    W_out, table, _, negative = out
    h = _hidden_reference(W_in, context, mean)
    work = np.zeros_like(h)
    if tree is not None:
        W_nodes, codes, points, lengths = tree
        n = lengths[center]
        work += hierarchical_softmax_reference(
            h, W_nodes, codes[center, :n], points[center, :n], lr
        )[0]
    if negative:
        negatives, state = draw_negatives_reference(table, state, negative)
        work += negative_sampling_reference(h, W_out, center, negatives, lr)[0]
    scale = np.float32(1.0) if mean or not context else np.float32(1.0 / len(context))
    grad = scatter_add_rows(
        np.asarray(context, dtype=np.int64), np.tile(work * scale, (len(context), 1)), len(W_in)
    )
    grad.add_to(W_in)
    return state


def _hidden_reference(W_in, context, mean):
    """The lookup: mean (or sum) of the context rows, through rowbook's gather."""
    rows = gather_rows_reference(W_in, np.asarray(context, dtype=np.int64))  # (C, d)
    h = rows.sum(axis=0, dtype=np.float32)  # (d,)
    if mean and len(context):
        h = h * np.float32(1.0 / len(context))
    return h
