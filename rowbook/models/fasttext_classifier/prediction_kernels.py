"""fastText's supervised model: the prediction of a line, compiled.

**Prediction** follows ``Loss::predict`` operation by operation in float32, so the
probabilities are fastText's to the last bit where the libm agrees: softmax as
``exp(s_i - max)`` over their float32 sum; ``ns`` and ``ova`` the table's sigmoid;
``hs`` a depth-first walk of the tree that prunes by the ``k``-th best score and the
threshold, with the exact sigmoid. The scores kept are ``log(p + 1e-5)`` (fastText's
``std_log``), in a heap ordered as libstdc++'s ``push_heap`` / ``pop_heap`` /
``sort_heap`` order it, so equal scores come out in fastText's order; the probability
returned is ``exp`` of the kept score, ``p + 1e-5`` rounded, as the ``fasttext`` package
returns it. A line's mean row and its scores are read as the update reads them
(:mod:`~rowbook.models.fasttext_classifier.kernels`: dense rows, or a ``.ftz``'s
product-quantised codes decoded as they are read).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numba
import numpy as np

from rowbook._threads import side_by_side
from rowbook.models.fasttext_classifier.kernels import (
    LOSS_CODES,
    SIGMOID_TABLE,
    hidden,
    row_dot,
    softmax,
    std_log,
    table_sigmoid,
)

__all__ = ["predict_lines", "sentence_vectors"]

_HS, _SOFTMAX = LOSS_CODES["hs"], LOSS_CODES["softmax"]


@numba.njit(nogil=True, cache=True, inline="always")
def _sift_up(scores, ids, hole, top, score, label):  # pragma: no cover - compiled
    """libstdc++'s ``__push_heap`` with fastText's ``comparePairs`` (a min-heap on scores)."""
    parent = (hole - 1) // 2
    while hole > top and scores[parent] > score:
        scores[hole], ids[hole] = scores[parent], ids[parent]
        hole = parent
        parent = (hole - 1) // 2
    scores[hole], ids[hole] = score, label


@numba.njit(nogil=True, cache=True, inline="always")
def _pop_heap(scores, ids, n):  # pragma: no cover - compiled
    """libstdc++'s ``pop_heap`` of ``[0, n)``: the smallest goes to ``n - 1``."""
    if n <= 1:
        return
    length = n - 1
    score, label = scores[length], ids[length]
    scores[length], ids[length] = scores[0], ids[0]
    hole = 0
    child = 0
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if scores[child] > scores[child - 1]:
            child -= 1
        scores[hole], ids[hole] = scores[child], ids[child]
        hole = child
    if (length & 1) == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        scores[hole], ids[hole] = scores[child - 1], ids[child - 1]
        hole = child - 1
    _sift_up(scores, ids, hole, 0, score, label)


@numba.njit(nogil=True, cache=True, inline="always")
def _offer(scores, ids, size, k, score, label):  # pragma: no cover - compiled
    """Push ``(score, label)`` and drop the smallest past ``k`` (``findKBest``'s body)."""
    scores[size], ids[size] = score, label
    _sift_up(scores, ids, size, 0, score, label)
    size += 1
    if size > k:
        _pop_heap(scores, ids, size)
        size -= 1
    return size


@numba.njit(nogil=True, cache=True, inline="always")
def _sort_heap(scores, ids, n):  # pragma: no cover - compiled
    """libstdc++'s ``sort_heap`` of ``[0, n)``: the best first."""
    while n > 1:
        _pop_heap(scores, ids, n)
        n -= 1


@numba.njit(nogil=True, cache=True)
def _predict_one(
    W_in, quant_in, W_out, quant_out, in_ids, a, b, options, buffers
):  # pragma: no cover
    """The ``k`` best labels of one line into ``scores`` / ``ids`` (sorted); returns how many.

    ``options = (loss, k, threshold, left, right)``, ``buffers = (h, out, scores, ids)``; the
    tables stand apart (a ``None`` quantiser must be an argument for numba to drop its branch).
    """
    loss, k, threshold, left, right = options
    h, out, scores, ids = buffers
    if a == b:
        return 0
    hidden(W_in, quant_in, in_ids, a, b, h)
    size = 0
    if loss == _HS:
        n = W_out.shape[0]
        limit = std_log(threshold)
        stack_nodes = np.empty(2 * n + 2, dtype=np.int64)
        stack_scores = np.empty(2 * n + 2, dtype=np.float32)
        stack_nodes[0], stack_scores[0] = 2 * n - 2, np.float32(0.0)
        top = 1
        while top > 0:  # fastText's recursive dfs, left child first
            top -= 1
            node, score = stack_nodes[top], stack_scores[top]
            if score < limit:
                continue
            if size == k and score < scores[0]:
                continue
            if left[node] == -1 and right[node] == -1:
                size = _offer(scores, ids, size, k, score, node)
                continue
            f = row_dot(W_out, quant_out, node - n, h)
            f = np.float32(1.0 / np.float32(np.float32(1) + np.float32(math.exp(-f))))
            stack_nodes[top], stack_scores[top] = right[node], score + std_log(np.float32(1.0 * f))
            stack_nodes[top + 1], stack_scores[top + 1] = (
                left[node],
                score + std_log(np.float32(1.0 - f)),
            )
            top += 2
    else:
        if loss == _SOFTMAX:
            softmax(W_out, quant_out, h, out)
        else:
            for i in range(out.shape[0]):
                out[i] = table_sigmoid(row_dot(W_out, quant_out, i, h), SIGMOID_TABLE)
        for i in range(out.shape[0]):
            if out[i] < threshold:
                continue
            score = std_log(out[i])
            if size == k and score < scores[0]:
                continue
            size = _offer(scores, ids, size, k, score, i)
    _sort_heap(scores, ids, size)
    return size


@numba.njit(nogil=True, cache=True)
def _predict_range(
    tables, options, in_starts, in_ids, l0, l1, out_ids, out_probs, counts
):  # pragma: no cover
    """Lines ``[l0, l1)``: their best labels into ``out_ids`` / ``out_probs``, how many into
    ``counts`` (see :func:`predict_lines`)."""
    W_in, quant_in, W_out, quant_out = tables
    k = options[1]
    buffers = (
        np.empty(W_out.shape[1], dtype=np.float32),  # (d,) h
        np.empty(W_out.shape[0], dtype=np.float32),  # (nlabels,) scores of every label
        np.empty(k + 1, dtype=np.float32),  # (k + 1,) the heap's scores
        np.empty(k + 1, dtype=np.int32),  # (k + 1,) and labels
    )
    scores, ids = buffers[2], buffers[3]
    for line in range(l0, l1):
        a, b = in_starts[line], in_starts[line + 1]
        size = _predict_one(W_in, quant_in, W_out, quant_out, in_ids, a, b, options, buffers)
        counts[line] = size
        for j in range(size):
            out_ids[line, j] = ids[j]
            out_probs[line, j] = np.float32(math.exp(scores[j]))  # expf, as predictLine


def predict_lines(
    tables: tuple[Any, Any, Any, Any],
    in_starts: np.ndarray,
    in_ids: np.ndarray,
    *,
    loss: int,
    k: int,
    threshold: float,
    children: tuple[np.ndarray, np.ndarray],
    bounds: Sequence[int] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``k`` best labels of every line, best first: ``(ids (L, k) int32, probabilities
    (L, k) float32, counts (L,) int64)``, row ``l`` holding ``counts[l]`` of them.

    ``tables = (W_in, quant_in, W_out, quant_out)``: a dense table and ``None``, or a
    product-quantised one as ``(None-like placeholder, (codes, centroids, dsub, lastdsub,
    norm_codes, norm_centroids))``; ``children`` the tree's ``(left, right)`` for ``hs``.
    ``bounds`` (``[0, ..., L]``, all lines in one range when None) cuts the lines into
    ranges predicted at once, the first on the calling thread, each other on a new thread
    on another core (:func:`rowbook._threads.side_by_side`). Each line is predicted alone,
    so the answer is the same whatever the cut.
    """
    L = len(in_starts) - 1
    out_ids = np.full((L, k), -1, dtype=np.int32)  # (L, k)
    out_probs = np.zeros((L, k), dtype=np.float32)  # (L, k)
    counts = np.zeros(L, dtype=np.int64)  # (L,)
    left, right = children
    options = (loss, k, np.float32(threshold), left, right)

    def run(l0: int, l1: int) -> None:
        _predict_range(tables, options, in_starts, in_ids, l0, l1, out_ids, out_probs, counts)

    side_by_side(run, list(itertools.pairwise([0, L] if bounds is None else bounds)))
    return out_ids, out_probs, counts


@numba.njit(nogil=True, cache=True)
def sentence_vectors(W_in, quant, in_starts, in_ids, out):  # pragma: no cover - compiled
    """``out[l]`` = the mean row of line ``l`` (zeros for a line without rows)."""
    for line in range(in_starts.shape[0] - 1):
        a, b = in_starts[line], in_starts[line + 1]
        if a < b:
            hidden(W_in, quant, in_ids, a, b, out[line])
