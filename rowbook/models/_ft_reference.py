"""The plain-Python formulation of a fastText job, the tests' reference for ``_ft_kernels.train_job``.

The same draws in the same order as the kernel (subsampling, window shrinks, negatives);
each example is word2vec's reference step (:func:`rowbook.models._w2v_reference._step_reference`)
applied to the *rows of the bags* instead of the words: a mean lookup of the rows
(an ``EmbeddingBag(mode="mean")``), negative sampling, and a scatter-add of h's whole step
into every row, once per occurrence.
"""

from __future__ import annotations

import numpy as np

from rowbook.data.sampling import LCG_MASK, LCG_MULTIPLIER
from rowbook.models._w2v_reference import _step_reference

__all__ = ["train_job_reference"]


def _next(state: int) -> int:
    return (state * LCG_MULTIPLIER + 11) & LCG_MASK


def train_job_reference(
    W_in,
    bag_starts,
    bag_ids,
    ids,
    starts,
    s0,
    s1,
    thresholds,
    use_sample,
    out,
    window,
    skipgram,
    lr,
    seed,
):
    """Plain-Python :func:`rowbook.models._ft_kernels.train_job`; returns the words trained."""
    state, sentences = int(seed), []
    for s in range(s0, s1):
        kept = []
        for w in ids[starts[s] : starts[s + 1]]:
            if use_sample:
                draw, state = state >> 16, _next(state)
                if int(thresholds[w]) < draw:
                    continue
            kept.append(int(w))
        sentences.append(kept)
    reduced = []
    for _ in range(sum(map(len, sentences))):
        reduced.append((state >> 16) % window)
        state = _next(state)
    position = 0
    for words in sentences:
        for i, center in enumerate(words):
            b = reduced[position + i]
            context = [
                words[j]
                for j in range(max(i - window + b, 0), min(i + window + 1 - b, len(words)))
                if j != i
            ]
            for group in [[w] for w in context] if skipgram else [context]:
                rows = [int(r) for w in group for r in bag_ids[bag_starts[w] : bag_starts[w + 1]]]
                state = _step_reference(
                    W_in, rows, center, out, None, np.float32(lr), state, mean=True
                )
        position += len(words)
    return sum(map(len, sentences))
