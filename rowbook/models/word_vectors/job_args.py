"""What an epoch's jobs hand each kernel of the family, by name.

The numba kernels take their tables and settings as positional arguments (numba compiles
one signature per tuple of argument types; a record of them would not unpack faster). What
every word-vector kernel takes travels as two plain tuples, never None (numba passes
tuples of arrays and scalars, but cannot unpack a NamedTuple with a None field): the job's
``sentences = (ids, starts, s0, s1)`` and the ``sampling = (thresholds, use_sample, window,
shrink)`` that :func:`~rowbook.models.word_vectors.word2vec_kernels.kept_words` draws from.
Around them the arguments travel as one named bundle a model makes once per epoch --
:class:`Word2VecJob`, :class:`FastTextJob`, :class:`GloVeJob` -- and are unpacked in one
place only, the bundle's ``run``, which calls the kernel on one job's data. A job then
reads as what differs from job to job: its sentences (or records), its learning rate, its
seed and its telemetry.

Examples
--------
>>> import numpy as np
>>> W_in = np.zeros((3, 2), np.float32)
>>> out = (np.zeros((3, 2), np.float32), np.zeros(4, np.int32), np.zeros(2, np.int64), 0)
>>> job = Word2VecJob(W_in, np.full(3, 2**32), False, out, None, 2, False, True, True, False)
>>> job.window, job.skipgram
(2, True)
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from rowbook.models.word_vectors.fasttext_batched_kernels import (
    train_job_batched as fasttext_train_job_batched,
)
from rowbook.models.word_vectors.fasttext_kernels import train_job as fasttext_train_job
from rowbook.models.word_vectors.glove_kernels import glove_records
from rowbook.models.word_vectors.word2vec_batched_cbow_kernels import (
    CBOW_BATCH,
    train_job_batched_cbow,
)
from rowbook.models.word_vectors.word2vec_batched_kernels import train_job_batched
from rowbook.models.word_vectors.word2vec_kernels import train_job as word2vec_train_job

__all__ = ["FastTextJob", "GloVeJob", "Word2VecJob"]


class Word2VecJob(NamedTuple):
    """word2vec's tables and settings for every job of an epoch
    (:func:`~rowbook.models.word_vectors.word2vec_kernels.train_job`).

    ``out = (W_out, table, guide, negative)`` is negative sampling (off when ``negative``
    is 0), ``tree = (W_nodes, codes, points, lengths)`` hierarchical softmax (``None``:
    off); ``thresholds`` and ``use_sample`` the subsampling, ``shrink`` the random window;
    ``batched`` runs the minibatched kernels (``Word2Vec(kernel="batched")``): skip-gram's
    (:func:`~rowbook.models.word_vectors.word2vec_batched_kernels.train_job_batched`, its
    runs of ``shared`` consecutive windows sharing a draw of negatives) instead of the
    per-pair one, CBOW's
    (:func:`~rowbook.models.word_vectors.word2vec_batched_cbow_kernels.train_job_batched_cbow`)
    instead of the per-window one.
    """

    W_in: np.ndarray
    thresholds: np.ndarray
    use_sample: bool
    out: tuple
    tree: tuple | None
    window: int
    shrink: bool
    skipgram: bool
    cbow_mean: bool
    compute_loss: bool
    batched: bool = False
    shared: int = 1

    def run(
        self, ids: np.ndarray, starts: np.ndarray, lr: float, seed: int, stats: Any
    ) -> tuple[int, float]:
        """Train on the sentences ``ids`` cut at ``starts``; ``(words trained, loss)``."""
        sentences = (ids, starts, 0, len(starts) - 1)  # every sentence given
        sampling = (self.thresholds, self.use_sample, self.window, self.shrink)
        head = (self.W_in, sentences, sampling, self.out, self.tree)
        if self.batched and self.skipgram:
            return train_job_batched(*head, self.shared, lr, seed, self.compute_loss, stats)
        if self.batched:
            cbow = (self.cbow_mean, CBOW_BATCH)
            return train_job_batched_cbow(*head, *cbow, lr, seed, self.compute_loss, stats)
        return word2vec_train_job(
            *head, self.skipgram, self.cbow_mean, lr, seed, self.compute_loss, stats
        )


class FastTextJob(NamedTuple):
    """fastText's tables and settings for every job of an epoch
    (:func:`~rowbook.models.word_vectors.fasttext_kernels.train_job`): word2vec's, with the
    bag of every word (``bag_starts``, ``bag_ids``: CSR rows of ``W_in``); ``batched`` runs
    the minibatched kernels (``FastText(kernel="batched")``): skip-gram's
    (:func:`~rowbook.models.word_vectors.fasttext_batched_kernels.train_job_batched`)
    instead of the per-pair one, CBOW's (word2vec's
    :func:`~rowbook.models.word_vectors.word2vec_batched_cbow_kernels.train_job_batched_cbow`
    over the bags) instead of the per-window one. ``redraw`` draws a negative equal to its
    example's target again (``FastText(redraw=True)``; the classic kernels and the batched
    skip-gram; the batched CBOW's shared negatives drop it, as word2vec's)."""

    W_in: np.ndarray
    bag_starts: np.ndarray
    bag_ids: np.ndarray
    thresholds: np.ndarray
    use_sample: bool
    out: tuple
    window: int
    skipgram: bool
    batched: bool = False
    redraw: bool = False

    def run(self, ids: np.ndarray, starts: np.ndarray, lr: float, seed: int, stats: Any) -> int:
        """Train on the sentences ``ids`` cut at ``starts``; the words trained."""
        sentences = (ids, starts, 0, len(starts) - 1)  # every sentence given
        sampling = (self.thresholds, self.use_sample, self.window, True)  # a shrunk window
        bags = (self.bag_starts, self.bag_ids)
        if self.batched and self.skipgram:
            return fasttext_train_job_batched(
                self.W_in, bags, sentences, sampling, self.out, lr, seed, stats, self.redraw
            )
        if self.batched:  # word2vec's minibatched CBOW, a context word's rows its bag's
            head = (self.W_in, sentences, sampling, self.out, None)
            return train_job_batched_cbow(*head, True, CBOW_BATCH, lr, seed, False, stats, bags)[0]
        head = (self.W_in, bags, sentences, sampling, self.out)
        return fasttext_train_job(*head, self.skipgram, lr, seed, stats, self.redraw)


class GloVeJob(NamedTuple):
    """GloVe's tables and settings for every job of an epoch
    (:func:`~rowbook.models.word_vectors.glove_kernels.glove_records`): ``params = (W,
    W_tilde, b, b_tilde)``, ``grads`` their AdaGrad sums, and the weighting's ``x_max`` and
    ``alpha``."""

    params: tuple[np.ndarray, ...]
    grads: tuple[np.ndarray, ...]
    x_max: float
    alpha: float

    def run(
        self, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, lr: float, stats: Any
    ) -> float:
        """AdaGrad steps on the records ``(rows, cols, vals)``; their summed loss."""
        first, end = 0, len(vals)  # every record given
        return glove_records(
            self.params,
            self.grads,
            rows,
            cols,
            vals,
            first,
            end,
            self.x_max,
            self.alpha,
            lr,
            stats,
        )
