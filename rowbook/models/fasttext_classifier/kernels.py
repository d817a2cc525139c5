"""fastText's supervised model: the update of one line and the prediction of one, compiled.

A line is the list of its input rows ``r_1 .. r_n`` of ``W_in`` (words, their char
n-grams, word n-grams: :mod:`rowbook.data.labelled_ids`) and its labels. The model is one
linear layer on the mean of the rows (Joulin et al. 2017, "Bag of Tricks"):

    h = (1/n) sum_i W_in[r_i]                          (d,)   fastText's computeHidden
    s = W_out h                                        (nlabels,)

**Losses and their gradients** (``src/loss.cc``). With ``g = dL/dh`` accumulated while the
output rows are stepped, one SGD step of learning rate ``lr`` *ascends* the log-likelihood:

* ``softmax``: ``p = softmax(s)``; for every label ``i``, ``a_i = lr (y_i - p_i)`` with
  ``y_i = 1`` for the target; ``g += a_i W_out[i]`` (the row before its step), then
  ``W_out[i] += a_i h``. The target is one label of the line, drawn uniformly.
* binary logistic, the unit of the three others: ``q = sigmoid(W_out[t] . h)`` read from
  fastText's table (512 entries over ``[-8, 8]``, 0 and 1 outside), ``a = lr (y - q)``,
  ``g += a W_out[t]``, ``W_out[t] += a h`` -- the derivative of ``log sigmoid`` at the
  table's value;
* ``ns``: the target with ``y = 1``, then ``negative`` labels drawn from
  ``count ** 0.5`` (drawn again when equal to the target) with ``y = 0``;
* ``hs``: along the target's path in fastText's Huffman tree over the label counts, the
  inner node ``t`` with ``y`` its code bit;
* ``ova`` (one-vs-all): every label, ``y = 1`` for each of the line's labels: several
  labels per text, each scored on its own.

Then ``dL/dW_in[r_i] = (1/n) g``: supervised fastText normalises the gradient
(``Model::update`` with ``normalizeGradient``), ``g *= 1/n``, and adds it to every row of
the line, once per occurrence -- unlike its unsupervised models, which add ``g`` whole
(:mod:`~rowbook.models.word_vectors.fasttext_kernels`).

**Prediction** follows ``Loss::predict`` operation by operation in float32, so the
probabilities are fastText's to the last bit where the libm agrees: softmax as
``exp(s_i - max)`` over their float32 sum; ``ns`` and ``ova`` the table's sigmoid;
``hs`` a depth-first walk of the tree that prunes by the ``k``-th best score and the
threshold, with the exact sigmoid. The scores kept are ``log(p + 1e-5)`` (fastText's
``std_log``), in a heap ordered as libstdc++'s ``push_heap`` / ``pop_heap`` /
``sort_heap`` order it, so equal scores come out in fastText's order; the probability
returned is ``exp`` of the kept score, ``p + 1e-5`` rounded, as the ``fasttext`` package
returns it.

The kernels release the GIL; several threads train the same tables without locks
(Hogwild, as fastText's threads do). The draws (the target among several labels, the
negatives) come from word2vec's generator (:mod:`rowbook.data.sampling`), one stream per
job: one worker and a seed train the same tables every time.
:mod:`~rowbook.models.fasttext_classifier.reference` is the plain-NumPy formulation
of one update that the tests hold :func:`train_job` to.

Over 400 lines on purpose: the four losses' updates and predictions share their inner
loops, which numba compiles only when they stand in one module it can inline across.
"""

from __future__ import annotations

import itertools
import math
import threading
from typing import Any

import numba
import numpy as np

from rowbook.data.sampling import draw_negative, lcg_next
from rowbook.models.word_vectors.word2vec_kernels import FASTMATH, prefetch_row

__all__ = [
    "LOG_TABLE",
    "LOSS_CODES",
    "SIGMOID_TABLE",
    "fasttext_tree",
    "merge_rows",
    "predict_lines",
    "sentence_vectors",
    "train_job",
]

#: The loss names and fastText's codes for them (``args.h``'s ``loss_name``).
LOSS_CODES = {"hs": 1, "ns": 2, "softmax": 3, "ova": 4}
_HS, _NS, _SOFTMAX, _OVA = 1, 2, 3, 4
_SIGMOID_SIZE, _MAX_SIGMOID, _LOG_SIZE = 512, 8, 512
_U16 = np.uint64(16)


@numba.njit(cache=True)
def _tables():  # pragma: no cover - compiled
    """fastText's two tables, computed with its types: ``x`` in float32, ``exp`` and
    ``log`` of float32 (libm's ``expf`` / ``logf``), the divisions in float64."""
    sigmoid = np.empty(_SIGMOID_SIZE + 1, dtype=np.float32)
    for i in range(_SIGMOID_SIZE + 1):
        x = np.float32(i * 2 * _MAX_SIGMOID) / np.float32(_SIGMOID_SIZE) - np.float32(_MAX_SIGMOID)
        sigmoid[i] = np.float32(1.0 / (1.0 + np.float64(math.exp(-x))))
    logs = np.empty(_LOG_SIZE + 1, dtype=np.float32)
    for i in range(_LOG_SIZE + 1):
        x = np.float32((np.float64(np.float32(i)) + 1e-5) / _LOG_SIZE)
        logs[i] = math.log(x)
    return sigmoid, logs


SIGMOID_TABLE, LOG_TABLE = _tables()


@numba.njit(nogil=True, cache=True, inline="always")
def table_sigmoid(x, table):  # pragma: no cover - compiled
    """fastText's ``Loss::sigmoid``: 0 below -8, 1 above 8, else ``table[(x + 8) * 32]``."""
    if x < np.float32(-_MAX_SIGMOID):
        return np.float32(0.0)
    if x > np.float32(_MAX_SIGMOID):
        return np.float32(1.0)
    i = np.int64(
        (x + np.float32(_MAX_SIGMOID))
        * np.float32(_SIGMOID_SIZE)
        / np.float32(_MAX_SIGMOID)
        / np.float32(2)
    )
    return table[i]


@numba.njit(nogil=True, cache=True, inline="always")
def table_log(x, table):  # pragma: no cover - compiled
    """fastText's ``Loss::log`` (of the loss it reports): 0 above 1, else ``table[x * 512]``."""
    if x > np.float32(1.0):
        return np.float32(0.0)
    return table[np.int64(x * np.float32(_LOG_SIZE))]


@numba.njit(nogil=True, cache=True, inline="always")
def std_log(x):  # pragma: no cover - compiled
    """fastText's ``std_log``: ``log(x + 1e-5)`` in float64, returned as float32."""
    return np.float32(math.log(np.float64(x) + 1e-5))


# -- the input rows: dense, or product-quantised (a .ftz) --------------------------------------


@numba.njit(nogil=True, cache=True, inline="always")
def _centroid(codes, dsub, lastdsub, r, m):  # pragma: no cover - compiled
    """``(start, width)`` in the centroids of row ``r``'s code for subquantiser ``m``
    (fastText's ``ProductQuantizer::get_centroids``: 256 centroids a subquantiser, ``dsub``
    wide, the last subquantiser's ``lastdsub`` wide)."""
    if m == codes.shape[1] - 1:
        return m * 256 * dsub + np.int64(codes[r, m]) * lastdsub, lastdsub
    return (m * 256 + np.int64(codes[r, m])) * dsub, dsub


@numba.njit(nogil=True, cache=True, inline="always")
def _norm(norm_codes, norm_centroids, r):  # pragma: no cover - compiled
    """Row ``r``'s norm with ``qnorm`` (its code's centroid), else 1."""
    if norm_codes.shape[0] > 0:
        return norm_centroids[norm_codes[r]]
    return np.float32(1.0)


@numba.njit(nogil=True, cache=True, inline="always")
def _add_row(h, W, quant, r):  # pragma: no cover - compiled
    """``h += W[r]``; with ``quant`` (a product-quantised table), its decoded row times its
    norm, as fastText's ``ProductQuantizer::addcode`` adds it."""
    d = h.shape[0]
    if quant is None:
        row = W[r]
        for c in range(d):
            h[c] += row[c]
    else:
        codes, centroids, dsub, lastdsub, norm_codes, norm_centroids = quant
        alpha = _norm(norm_codes, norm_centroids, r)
        for m in range(codes.shape[1]):
            base, width = _centroid(codes, dsub, lastdsub, r, m)
            for n in range(width):
                h[m * dsub + n] += alpha * centroids[base + n]


@numba.njit(nogil=True, cache=True, inline="always")
def _dot(W, quant, t, h):  # pragma: no cover - compiled
    """``W[t] . h`` in float32, in fastText's order (``dotRow``, or ``mulcode`` times the norm)."""
    f = np.float32(0.0)
    if quant is None:
        row = W[t]
        for c in range(h.shape[0]):
            f += row[c] * h[c]
        return f
    codes, centroids, dsub, lastdsub, norm_codes, norm_centroids = quant
    for m in range(codes.shape[1]):
        base, width = _centroid(codes, dsub, lastdsub, t, m)
        for n in range(width):
            f += h[m * dsub + n] * centroids[base + n]
    return f * _norm(norm_codes, norm_centroids, t)


@numba.njit(nogil=True, cache=True, inline="always")
def _hidden(W_in, quant, ids, start, end, h):  # pragma: no cover - compiled
    """``h = mean(W_in[ids[start:end]])``: the rows summed in order, times ``float32(1 / n)``."""
    h[:] = 0.0
    for p in range(start, end):
        _add_row(h, W_in, quant, ids[p])
    inv = np.float32(1.0 / (end - start))
    for c in range(h.shape[0]):
        h[c] *= inv


# -- training: one line's update --------------------------------------------------------------


@numba.njit(nogil=True, cache=True, inline="always")
def _step_row(row, alpha, h, grad):  # pragma: no cover - compiled
    """``grad += alpha row`` (the row before its step), then ``row += alpha h``, in one pass."""
    for c in range(h.shape[0]):
        w = row[c]
        grad[c] += alpha * w
        row[c] = w + alpha * h[c]


@numba.njit(nogil=True, cache=True, inline="always")
def _binary_logistic(W_out, t, h, label, lr, grad, sigmoid, logs):  # pragma: no cover
    """One binary logistic step on output row ``t``; returns its loss."""
    row = W_out[t]
    f = np.float32(0.0)
    for c in range(h.shape[0]):
        f += row[c] * h[c]
    score = table_sigmoid(f, sigmoid)
    alpha = lr * (np.float32(label) - score)
    _step_row(row, alpha, h, grad)
    if label:
        return -table_log(score, logs)
    return -table_log(np.float32(1.0) - score, logs)


@numba.njit(nogil=True, cache=True, inline="always")
def _softmax(W_out, quant, h, out):  # pragma: no cover - compiled
    """``out = softmax(W_out h)`` as fastText's ``SoftmaxLoss::computeOutput`` computes it."""
    for i in range(out.shape[0]):
        out[i] = _dot(W_out, quant, i, h)
    top = out[0]
    for i in range(out.shape[0]):
        top = max(out[i], top)
    z = np.float32(0.0)
    for i in range(out.shape[0]):
        out[i] = np.float32(math.exp(np.float64(out[i] - top)))
        z += out[i]
    for i in range(out.shape[0]):
        out[i] /= z


@numba.njit(nogil=True, fastmath=FASTMATH, cache=True)
def train_job(
    W_in,
    W_out,
    lines,
    l0,
    l1,
    loss,
    negatives,
    tree,
    lr_schedule,
    seed,
    own=None,
):  # pragma: no cover - compiled
    """Train on lines ``[l0, l1)``; returns the summed loss (fastText's table logs).

    ``lines = (input_starts, input_ids, label_starts, label_ids, tokens)`` (the CSR of
    :class:`~rowbook.data.labelled_ids.EncodedLines`); ``negatives = (table, guide,
    negative)`` for ``ns``; ``tree = (path_starts, paths, codes)`` for ``hs``;
    ``lr_schedule = (lr, slope, min_lr)``: the line after ``t`` tokens of this job trains at
    ``max(min_lr, lr - slope * t)``. Draws from ``seed``: per line with several labels (and
    a loss other than ``ova``) one for the target, then the negatives of ``ns``.

    ``own = (mine, start, every)``, two ``W_out``-shaped buffers of this thread, trains on
    ``mine``, a copy of ``W_out``, and adds its change to ``W_out`` every ``every`` lines and
    at the end (:func:`merge_rows`); ``None`` trains on ``W_out`` itself.
    """
    in_starts, in_ids, lab_starts, lab_ids, tokens = lines
    table, guide, negative = negatives
    path_starts, paths, codes = tree
    lr0, slope, min_lr = lr_schedule
    sigmoid, logs = SIGMOID_TABLE, LOG_TABLE
    d = W_in.shape[1]
    n_labels = W_out.shape[0]
    h = np.empty(d, dtype=np.float32)  # (d,) the line's mean row
    grad = np.empty(d, dtype=np.float32)  # (d,) dL/dh
    out = np.empty(n_labels, dtype=np.float32)  # (nlabels,) softmax
    state = np.uint64(seed)
    total = 0.0
    done = 0
    rows = W_out  # (nlabels, d) the output rows stepped
    since = 0  # lines since ``mine`` was last merged
    if own is not None:
        rows = own[0]
        rows[:] = W_out
        own[1][:] = rows
    for line in range(l0, l1):
        if own is not None:
            if since == own[2]:
                merge_rows(W_out, own[0], own[1], l0)
                since = 0
            since += 1
        lr = np.float32(max(min_lr, lr0 - slope * done))
        done += tokens[line]
        a, b = in_starts[line], in_starts[line + 1]
        la, lb = lab_starts[line], lab_starts[line + 1]
        if a == b or la == lb:
            continue
        _hidden(W_in, None, in_ids, a, b, h)
        if line + 1 < l1:  # the next line's rows load while this one's labels are stepped
            for p in range(b, in_starts[line + 2]):
                prefetch_row(W_in, in_ids[p])
        grad[:] = 0.0
        if loss == _OVA:
            for i in range(n_labels):
                positive = False
                for q in range(la, lb):
                    positive = positive or lab_ids[q] == i
                total += _binary_logistic(rows, i, h, positive, lr, grad, sigmoid, logs)
        else:
            target = lab_ids[la]
            if lb - la > 1:  # one of the line's labels, uniformly
                target = lab_ids[la + np.int64((state >> _U16) % np.uint64(lb - la))]
                state = lcg_next(state)
            if loss == _SOFTMAX:
                _softmax(rows, None, h, out)
                for i in range(n_labels):
                    alpha = lr * ((np.float32(1.0) if i == target else np.float32(0.0)) - out[i])
                    _step_row(rows[i], alpha, h, grad)
                total -= table_log(out[target], logs)
            elif loss == _NS:
                total += _binary_logistic(rows, target, h, True, lr, grad, sigmoid, logs)
                for _ in range(negative if n_labels > 1 else 0):
                    other = target
                    while other == target:  # fastText draws again
                        other = draw_negative(table, guide, state)
                        state = lcg_next(state)
                    total += _binary_logistic(rows, other, h, False, lr, grad, sigmoid, logs)
            else:  # hs
                for q in range(path_starts[target], path_starts[target + 1]):
                    total += _binary_logistic(rows, paths[q], h, codes[q], lr, grad, sigmoid, logs)
        inv = np.float32(1.0 / (b - a))
        for c in range(d):
            grad[c] *= inv
        for p in range(a, b):
            row = W_in[in_ids[p]]
            for c in range(d):
                row[c] += grad[c]
    if own is not None:
        merge_rows(W_out, own[0], own[1], l0)
    return total


@numba.njit(nogil=True, cache=True)
def merge_rows(shared, mine, start, first):  # pragma: no cover - compiled
    """``shared += mine - start``, then ``mine = start = shared``: a thread's change to its
    copy of the output rows added to the shared rows, and the others' changes taken in.

    An element no other thread changed since (``shared == start``) becomes ``mine``
    exactly, so one thread alone trains the tables it trains on shared rows, bit for bit.
    Without a lock: two threads merging the same element at the same instant may lose one
    change, as Hogwild's updates may; each merge starts at row ``first % nlabels`` (the
    job's first line), so two merges at once sweep different rows.
    """
    n = shared.shape[0]
    for k in range(n):
        r = (first + k) % n
        for c in range(shared.shape[1]):
            s = shared[r, c]
            v = mine[r, c] if s == start[r, c] else s + (mine[r, c] - start[r, c])
            shared[r, c] = v
            mine[r, c] = v
            start[r, c] = v


# -- prediction: the k best labels, in fastText's order ---------------------------------------


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
    _hidden(W_in, quant_in, in_ids, a, b, h)
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
            f = _dot(W_out, quant_out, node - n, h)
            f = np.float32(1.0 / np.float32(np.float32(1) + np.float32(math.exp(-f))))
            stack_nodes[top], stack_scores[top] = right[node], score + std_log(np.float32(1.0 * f))
            stack_nodes[top + 1], stack_scores[top + 1] = (
                left[node],
                score + std_log(np.float32(1.0 - f)),
            )
            top += 2
    else:
        if loss == _SOFTMAX:
            _softmax(W_out, quant_out, h, out)
        else:
            for i in range(out.shape[0]):
                out[i] = table_sigmoid(_dot(W_out, quant_out, i, h), SIGMOID_TABLE)
        for i in range(out.shape[0]):
            if out[i] < threshold:
                continue
            score = std_log(out[i])
            if size == k and score < scores[0]:
                continue
            size = _offer(scores, ids, size, k, score, i)
    n_sorted = size
    while n_sorted > 1:  # libstdc++'s sort_heap: best first
        _pop_heap(scores, ids, n_sorted)
        n_sorted -= 1
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
    workers: int = 1,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``k`` best labels of every line, best first: ``(ids (L, k) int32, probabilities
    (L, k) float32, counts (L,) int64)``, row ``l`` holding ``counts[l]`` of them.

    ``tables = (W_in, quant_in, W_out, quant_out)``: a dense table and ``None``, or a
    product-quantised one as ``(None-like placeholder, (codes, centroids, dsub, lastdsub,
    norm_codes, norm_centroids))``; ``children`` the tree's ``(left, right)`` for ``hs``.
    Lines are cut into ``workers`` ranges predicted on as many threads.
    """
    L = len(in_starts) - 1
    out_ids = np.full((L, k), -1, dtype=np.int32)  # (L, k)
    out_probs = np.zeros((L, k), dtype=np.float32)  # (L, k)
    counts = np.zeros(L, dtype=np.int64)  # (L,)
    left, right = children
    options = (loss, k, np.float32(threshold), left, right)

    def run(l0: int, l1: int) -> None:
        _predict_range(tables, options, in_starts, in_ids, l0, l1, out_ids, out_probs, counts)

    bounds = np.linspace(0, L, max(1, min(workers, L)) + 1).astype(np.int64)
    if len(bounds) <= 2:
        run(0, L)
    else:
        threads = [
            threading.Thread(target=run, args=(int(a), int(b)))
            for a, b in itertools.pairwise(bounds)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return out_ids, out_probs, counts


def fasttext_tree(counts: np.ndarray) -> tuple[np.ndarray, ...]:
    """fastText's Huffman tree over label counts (``HierarchicalSoftmaxLoss::buildTree``).

    Returns ``(left, right, path_starts, paths, codes)``: the children of each of the
    ``2n - 1`` nodes (``-1`` for a leaf; leaves are the labels ``0 .. n - 1``, inner nodes
    ``n ..``), and for each label, CSR style, the inner nodes from it to the root as rows
    of ``W_out`` (node ``- n``) with the bit of each step (1 when the right child). The
    counts are taken in the order given (fastText's are sorted, descending).

    Examples
    --------
    >>> left, right, starts, paths, codes = fasttext_tree(np.array([5, 3, 1]))
    >>> left.tolist(), right.tolist()
    ([-1, -1, -1, 2, 3], [-1, -1, -1, 1, 0])
    >>> starts.tolist(), paths.tolist(), codes.astype(int).tolist()
    ([0, 1, 3, 5], [1, 0, 1, 0, 1], [1, 1, 0, 0, 0])
    """
    n = len(counts)
    size = max(2 * n - 1, 0)
    parent = [-1] * size
    left, right = [-1] * size, [-1] * size
    binary = [False] * size
    count = [int(1e15)] * size
    count[:n] = [int(c) for c in counts]
    leaf, node = n - 1, n
    for i in range(n, size):
        mini = [0, 0]
        for j in range(2):
            if leaf >= 0 and count[leaf] < count[node]:
                mini[j], leaf = leaf, leaf - 1
            else:
                mini[j], node = node, node + 1
        left[i], right[i] = mini
        count[i] = count[mini[0]] + count[mini[1]]
        parent[mini[0]] = parent[mini[1]] = i
        binary[mini[1]] = True
    paths, codes, starts = [], [], [0]
    for i in range(n):
        j = i
        while parent[j] != -1:
            paths.append(parent[j] - n)
            codes.append(binary[j])
            j = parent[j]
        starts.append(len(paths))
    return (
        np.array(left, dtype=np.int64),
        np.array(right, dtype=np.int64),
        np.array(starts, dtype=np.int64),
        np.array(paths, dtype=np.int64),
        np.array(codes, dtype=np.bool_),
    )


@numba.njit(nogil=True, cache=True)
def sentence_vectors(W_in, quant, in_starts, in_ids, out):  # pragma: no cover - compiled
    """``out[l]`` = the mean row of line ``l`` (zeros for a line without rows)."""
    for line in range(in_starts.shape[0] - 1):
        a, b = in_starts[line], in_starts[line + 1]
        if a < b:
            _hidden(W_in, quant, in_ids, a, b, out[line])
