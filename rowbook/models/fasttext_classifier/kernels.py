"""fastText's supervised model: the update of one line, compiled, and what prediction shares.

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

**Prediction**, which reads a line's mean row and its scores through the same pieces
(:func:`hidden`, :func:`row_dot`, :func:`softmax`, the tables), is
:mod:`~rowbook.models.fasttext_classifier.prediction_kernels`.

The kernels release the GIL; several threads train the same tables without locks
(Hogwild, as fastText's threads do). The draws (the target among several labels, the
negatives) come from word2vec's generator (:mod:`rowbook.data.sampling`), one stream per
job: one worker and a seed train the same tables every time.
:mod:`~rowbook.models.fasttext_classifier.reference` is the plain-NumPy formulation
of one update that the tests hold :func:`train_job` to.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from rowbook.data.sampling import draw_negative, lcg_next
from rowbook.models.word_vectors.word2vec_kernels import FASTMATH, prefetch_row

__all__ = [
    "LOG_TABLE",
    "LOSS_CODES",
    "SIGMOID_TABLE",
    "hidden",
    "merge_rows",
    "row_dot",
    "softmax",
    "std_log",
    "table_log",
    "table_sigmoid",
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
def row_dot(W, quant, t, h):  # pragma: no cover - compiled
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
def hidden(W_in, quant, ids, start, end, h):  # pragma: no cover - compiled
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
def softmax(W_out, quant, h, out):  # pragma: no cover - compiled
    """``out = softmax(W_out h)`` as fastText's ``SoftmaxLoss::computeOutput`` computes it."""
    for i in range(out.shape[0]):
        out[i] = row_dot(W_out, quant, i, h)
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
        hidden(W_in, None, in_ids, a, b, h)
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
                softmax(rows, None, h, out)
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
