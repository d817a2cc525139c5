"""The kernels' side of the per-row telemetry (:mod:`~rowbook.models.word_vectors.telemetry`):
what a job records while it trains, folded into the rows' counters when it ends.

The counters of a row (``(V, 3)`` float64: updates, summed gradient norm, last job) sit at
a random place in memory, like the row itself; reading them before every step (has the row
ever been updated? then copy its start) and writing them after cost skip-gram 9-12% of
its step, most of it the test (``docs/benchmarks.md``). A job of the family knows its
words in order before it trains (:func:`~rowbook.models.word_vectors.word2vec_kernels.kept_words`)
and every step it takes moves the input rows of one position ``p`` of them: the word's row
(word2vec) or every row of its bag (fastText). So a job records by position instead, into a
``(n, 2)`` buffer of its own whose lines the window being trained already holds in cache:

* :func:`begin_job`, before the first step: the buffer, and the ``start`` of every row of
  the job that was never updated (its value before its first update);
* :func:`record` at each step: one more update of position ``p`` and the step's norm
  (:func:`add_measured` adds a step to a row and measures it in the same pass,
  :func:`step_norm` measures a step that several rows take);
* :func:`end_job`, after the last: each position's updates and summed norm (divided by the
  job's learning rate: the gradients') added to the counters of its rows, its last job set.

The helpers a step calls are inlined into the kernels and compiled with their fast-math
flags (:data:`~rowbook.models.word_vectors.word2vec_kernels.FASTMATH`: the square sums
vectorise); this module imports no kernel, so every kernel module can import it. A kernel
calls them under ``if stats is not None`` on its own argument ``stats``, which numba
prunes when it is None (a test on a local, such as the buffer, would not be): off, none of
it is compiled.

The counters mean what they meant when they were updated step by step; only the order of
the floating-point additions of the norms differs. With several workers the counters race
like the tables do (Hogwild) and may miss an update; a row's ``start`` may be taken after
another worker's job has moved it but not yet counted it. One worker records exactly.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = [
    "add_measured",
    "begin_job",
    "count_update",
    "end_job",
    "record",
    "step_norm",
]


@numba.njit(nogil=True, cache=True, inline="always")
def count_update(stats, row, updates, grad_norm_sum):  # pragma: no cover - compiled
    """The counters of ``row`` in ``stats = (counters, start, job)``: ``updates`` more updates
    of summed gradient norm ``grad_norm_sum``, the last of them in this job."""
    counters, _, job = stats
    counters[row, 0] += updates
    counters[row, 1] += grad_norm_sum
    if counters[row, 2] < job:
        counters[row, 2] = job


@numba.njit(nogil=True, cache=True, inline="always")
def _rows(words, p, bags):  # pragma: no cover - compiled
    """``(k0, k1)``: the input rows of position ``p`` are ``_row(words, p, bags, k)`` for
    ``k0 <= k < k1`` -- the word's row, or with ``bags = (bag_starts, bag_ids)`` its bag's."""
    if bags is None:
        return 0, 1
    return bags[0][words[p]], bags[0][words[p] + 1]


@numba.njit(nogil=True, cache=True, inline="always")
def _row(words, p, bags, k):  # pragma: no cover - compiled
    if bags is None:
        return words[p]
    return bags[1][k]


@numba.njit(nogil=True, cache=True)
def begin_job(stats, table, words, bags):  # pragma: no cover - compiled
    """The record of a job training the positions of ``words`` (None when ``stats`` is None:
    telemetry off compiles away): ``(n, 2)`` zeros, updates and summed step norm per position.

    First every input row of the job never updated before gets its ``start``, a copy of
    its row of ``table``. ``bags`` is None (a word's row is its id) or fastText's
    ``(bag_starts, bag_ids)``.
    """
    if stats is None:
        return None
    counters, start, _ = stats
    d = table.shape[1]
    for p in range(words.shape[0]):
        k0, k1 = _rows(words, p, bags)
        for k in range(k0, k1):
            row = _row(words, p, bags, k)
            if counters[row, 0] == 0.0:
                for c in range(d):
                    start[row, c] = table[row, c]
    return np.zeros((words.shape[0], 2), dtype=np.float64)  # (n, 2)


@numba.njit(nogil=True, cache=True, inline="always")
def record(recorded, p, norm):  # pragma: no cover - compiled
    """One more update of the rows of position ``p``, a step of norm ``norm``."""
    recorded[p, 0] += 1.0
    recorded[p, 1] += norm


@numba.njit(nogil=True, cache=True, inline="always")
def add_measured(row, step):  # pragma: no cover - compiled
    """``row += step``; returns ``||step||``, its squares summed (in float32) in the same pass."""
    total = np.float32(0.0)
    for c in range(step.shape[0]):
        value = step[c]
        row[c] += value
        total += value * value
    return math.sqrt(np.float64(total))


@numba.njit(nogil=True, cache=True, inline="always")
def step_norm(step):  # pragma: no cover - compiled
    """``||step||``, its squares summed in float32: once for a step that several rows take."""
    total = np.float32(0.0)
    for c in range(step.shape[0]):
        total += step[c] * step[c]
    return math.sqrt(np.float64(total))


@numba.njit(nogil=True, cache=True)
def end_job(stats, words, bags, recorded, lr):  # pragma: no cover - compiled
    """Add the job's ``recorded`` positions to the counters of their rows: a step's gradient
    norm is its norm over the job's learning rate ``lr``. Nothing when ``stats`` is None."""
    if stats is None:
        return
    for p in range(words.shape[0]):
        updates = recorded[p, 0]
        if updates == 0.0:
            continue
        grad_norm_sum = recorded[p, 1] / lr
        k0, k1 = _rows(words, p, bags)
        for k in range(k0, k1):
            count_update(stats, _row(words, p, bags, k), updates, grad_norm_sum)
