"""How a :class:`~rowbook.models.fasttext_classifier.FastTextClassifier` is trained: its
words and labels chosen from the lines, its first rows, and an epoch as jobs.

The jobs run on the word-vector family's epoch loop
(:func:`rowbook.models.word_vectors.jobs.run_schedule`), with its learning-rate schedule
(:func:`~rowbook.models.word_vectors.word2vec_training.job_lrs`) and its per-job seeds: one
worker and a seed train the same tables every time, across a checkpoint resume too. The
update itself is :func:`~rowbook.models.fasttext_classifier.kernels.train_job`.
"""

from __future__ import annotations

import threading
from typing import Any

import numba
import numpy as np

from rowbook._memory import untouched_zeros
from rowbook._threads import resolve_workers, side_by_side
from rowbook.checks import ParameterError
from rowbook.data.corpus import job_boundaries
from rowbook.data.counted_vocab import CountedVocab
from rowbook.data.huffman import fasttext_tree
from rowbook.data.labelled import LabelledLines, LabelVocab, choose_labelled_vocab
from rowbook.data.labelled_ids import EncodedLines
from rowbook.data.sampling import job_seed, negative_guide, negative_table
from rowbook.models.fasttext_classifier.kernels import LOSS_CODES, train_job
from rowbook.models.word_vectors.jobs import EpochJobs
from rowbook.models.word_vectors.state import check_vocab
from rowbook.models.word_vectors.word2vec_training import job_lrs

__all__ = [
    "OwnOutputRows",
    "choose_vocabulary",
    "epoch_jobs",
    "initial_input_rows",
]

#: Several workers on a softmax or one-vs-all train on their own copies of ``W_out``
#: (:class:`OwnOutputRows`); False shares the rows as fastText does (what
#: ``benchmarks/defaults_classifier.py`` times them against).
OWN_OUTPUT_ROWS = True
#: Lines between two merges of a thread's copy of ``W_out`` into the shared rows.
MERGE_LINES = 32
_BLOCK = 1 << 10  # rows a thread draws at a time (even: see initial_input_rows), 400 kB at d=100


def choose_vocabulary(
    lines: LabelledLines, label_prefix: str, min_count: int, min_count_label: int
) -> tuple[CountedVocab, LabelVocab]:
    """The words and the labels of the training ``lines``, refusing lines that have words
    but no label and a ``label_prefix`` no token starts with."""
    words, labels = choose_labelled_vocab(
        lines, label_prefix, min_count=min_count, min_count_label=min_count_label
    )
    check_vocab(words, min_count)
    is_label = lines.is_label(label_prefix)
    tokens = np.diff(lines.starts)
    labelled = np.add.reduceat(is_label[lines.ids], lines.starts[:-1]) if len(lines) else tokens
    unlabelled = np.flatnonzero((labelled == 0) & (tokens > 1))  # words, but no label
    if len(unlabelled) == len(lines) or not is_label.any():
        raise ParameterError(
            "label_prefix",
            label_prefix,
            "the start of the labels of the training lines",
            fix="no token of the data starts with it: write the labels as "
            f"{label_prefix}name, or give the prefix your data uses",
        )
    if len(unlabelled):
        raise ValueError(
            f"line {unlabelled[0] + 1} of the training data has words but no label (no "
            f"token starts with {label_prefix!r}); every training line needs one"
        )
    if len(labels) == 0:
        raise ParameterError(
            "min_count_label",
            min_count_label,
            "at most the count of the most frequent label",
            fix=f"no label occurs that often in the {len(lines)} lines: lower it",
        )
    return words, labels


def initial_input_rows(
    n_words: int, n_buckets: int, d: int, used_ids: np.ndarray, seed: int, workers: int = 1
) -> np.ndarray:
    """``W_in`` ``(n_words + n_buckets, d)``: uniform(-1/d, 1/d) on the word rows and the
    bucket rows of ``used_ids``, the rest zero (pages never touched: 10M unused buckets
    cost no memory). fastText fills every row; the rows no line reads never change.

    The ``k``-th row in use is row ``k`` of ``default_rng(seed).random((n, d), float32)``
    (times 2, minus 1, over ``d``), whatever ``workers``: each of ``workers`` threads
    draws its share of the rows from its own copy of the generator, advanced to where that
    share starts in the one stream (PCG64 jumps ahead in O(log n)), and writes them. The
    writes are the cost (a page fault for nearly every row of a 2M-bucket table: 0.3 s of
    the 0.4 s for 280,000 rows), and page faults proceed in parallel.

    Examples
    --------
    >>> W = initial_input_rows(2, 5, 3, np.array([4, 6]), seed=1, workers=2)
    >>> W.shape, np.flatnonzero(W.any(axis=1)).tolist()
    ((7, 3), [0, 1, 4, 6])
    >>> serial = np.random.default_rng(1).random((4, 3), dtype=np.float32) * 2 - 1
    >>> bool((W[[0, 1, 4, 6]] == serial / np.float32(3)).all())
    True
    """
    used = np.zeros(n_words + n_buckets, dtype=np.bool_)
    used[:n_words] = True
    used[used_ids] = True
    rows = np.flatnonzero(used)  # (n,) the rows drawn, in stream order
    W_in = untouched_zeros((n_words + n_buckets, d), np.float32)  # (V + bucket, d)
    shares = -(-len(rows) // (_BLOCK * max(workers, 1))) * _BLOCK  # whole blocks a thread
    starts = range(0, len(rows), max(shares, _BLOCK))

    def draw(start: int) -> None:
        bits = np.random.PCG64(seed)  # default_rng(seed)'s generator
        bits.advance(start * d // 2)  # 64-bit draws = two float32 each; start * d is even
        rng = np.random.Generator(bits)
        block = np.empty((_BLOCK, d), dtype=np.float32)  # (block, d)
        for k in range(start, min(start + shares, len(rows)), _BLOCK):
            part = block[: min(_BLOCK, len(rows) - k)]
            rng.random(out=part, dtype=np.float32)
            _place_rows(W_in, rows[k : k + len(part)], part)

    side_by_side(draw, [(start,) for start in starts])
    return W_in


@numba.njit(nogil=True, cache=True)
def _place_rows(W_in, rows, block):  # pragma: no cover - compiled
    """``W_in[rows[k]] = (2 block[k] - 1) / d`` in float32, in NumPy's order of operations."""
    d = np.float32(block.shape[1])
    for k in range(rows.shape[0]):
        target = W_in[rows[k]]
        for c in range(block.shape[1]):
            target[c] = (block[k, c] * np.float32(2.0) - np.float32(1.0)) / d


class OwnOutputRows:
    """Each training thread's own copy of ``W_out``, merged into the shared rows every
    :data:`MERGE_LINES` lines (:func:`~rowbook.models.fasttext_classifier.kernels.merge_rows`).

    A softmax (and one-vs-all) reads and steps every output row for every line: on shared
    rows two threads on two cores pass every row's cache lines back and forth, and on 500
    labels two workers took twice one worker's time (fastText's Hogwild threads share its
    output matrix and pay the same). A thread here steps its own copy (``nlabels x d``
    floats, 200 kB at 500 labels: in its core's cache) and the rows cross cores once a
    merge. The other threads' changes reach it at its next merge: a delay of
    ``MERGE_LINES`` lines (merging once a job of 10,000 tokens, 667 lines of 500 labels,
    cost 0.4 points of precision@1; every 32 lines, within 0.1 point of one worker on the
    500 labels and on the tweets, means of 3 seeds). ``ns`` and ``hs``
    step a few rows a line and keep them shared: a copy would cost more than the few rows'
    traffic. The input rows stay shared (a line touches a few of them).
    """

    def __init__(self, W_out: np.ndarray) -> None:
        self.shape, self.dtype = W_out.shape, W_out.dtype
        self.local = threading.local()

    def buffers(self) -> tuple[np.ndarray, np.ndarray, int]:
        """``(mine, start, MERGE_LINES)`` of the calling thread: ``train_job``'s ``own``."""
        own = getattr(self.local, "own", None)
        if own is None:
            mine, start = np.empty(self.shape, self.dtype), np.empty(self.shape, self.dtype)
            own = self.local.own = (mine, start, MERGE_LINES)  # (nlabels, d) each
        return own


def epoch_jobs(model: Any, state: Any, encoded: EncodedLines) -> EpochJobs:
    """One epoch of ``model`` on ``encoded`` lines as jobs of about ``batch_words`` tokens of
    whole lines, each at the learning rate of the schedule where it starts and decaying line
    by line from there."""
    schedule, labels = state.schedule, state.labels
    bounds = job_boundaries(encoded.tokens, model.batch_words)  # (J + 1,) lines
    before = np.concatenate([[0], np.cumsum(encoded.tokens)])[bounds]  # (J + 1,) tokens
    per_epoch = schedule.total_words or encoded.total_tokens
    lr, min_lr, seed = model.lr, model.min_lr, model.seed
    slope = (lr - min_lr) / max(schedule.epochs * per_epoch, 1)
    table = negative_table(labels.counts, 0.5)
    negatives = (table, negative_guide(table), model.negative)
    if model.loss == "hs":
        tree = fasttext_tree(labels.counts)[2:]
    else:
        tree = (np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.bool_))
    lines = (
        encoded.input_starts,
        encoded.input_ids,
        encoded.label_starts,
        encoded.label_ids,
        encoded.tokens,
    )
    W_in, W_out = state.tables["W_in"], state.tables["W_out"]
    code = LOSS_CODES[model.loss]
    several = resolve_workers(model.workers) > 1
    every_row = model.loss in ("softmax", "ova")  # steps every output row every line
    own_rows = OwnOutputRows(W_out) if several and every_row and OWN_OUTPUT_ROWS else None

    def run(j: int, job_lr: float, trained: int, stats: None) -> float:
        rates = (float(job_lr), slope, min_lr)
        seeded = job_seed(seed, trained, j)
        args = (W_in, W_out, lines, bounds[j], bounds[j + 1], code, negatives, tree)
        if own_rows is None:
            return train_job(*args, rates, seeded)
        return train_job(*args, rates, seeded, own_rows.buffers())

    def lrs(epoch: int) -> np.ndarray:
        return job_lrs(lr, min_lr, epoch, schedule.epochs, before[:-1], per_epoch)

    return EpochJobs(
        sizes=np.diff(before), total=encoded.total_tokens, run=run, lrs=lrs, unit="token"
    )
