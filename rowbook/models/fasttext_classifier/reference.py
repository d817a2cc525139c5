"""One supervised update in plain NumPy: the formulation :func:`classifier_kernels.train_job` is held to.

``update_reference`` is fastText's ``Model::update`` for one line, written with whole-row
NumPy operations in the order of the module docstring of
:mod:`~rowbook.models.fasttext_classifier.kernels`: the mean row, the loss's steps on
the output rows (each row read before its own step), then the normalised gradient added
to every input row. The random choices (the target among several labels, the negatives)
are made from the same generator state as the kernel's, so the two give the same tables
(to float32 rounding: NumPy's dot products sum in another order).

Examples
--------
>>> W_in = np.array([[0.1, 0.2], [0.3, -0.1]], dtype=np.float32)
>>> W_out = np.zeros((2, 2), dtype=np.float32)
>>> _ = update_reference(W_in, W_out, [0, 1], [1], loss="softmax", lr=0.5, seed=1)
>>> W_out.round(4).tolist()  # the target's row moves towards h = (0.2, 0.05), the other away
[[-0.05, -0.0125], [0.05, 0.0125]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rowbook.data.huffman import fasttext_tree
from rowbook.data.sampling import draw_negative, lcg_next, negative_guide, negative_table
from rowbook.models.fasttext_classifier.kernels import LOG_TABLE, SIGMOID_TABLE

__all__ = ["update_reference"]


def _sigmoid(x: np.float32) -> np.float32:
    if x < -8:
        return np.float32(0.0)
    if x > 8:
        return np.float32(1.0)
    return SIGMOID_TABLE[int(np.float32(np.float32(x + np.float32(8)) * np.float32(32)))]


def _log(x: np.float32) -> float:
    return 0.0 if x > 1 else float(LOG_TABLE[int(np.float32(x * np.float32(512)))])


def update_reference(
    W_in: np.ndarray,
    W_out: np.ndarray,
    inputs: Sequence[int],
    labels: Sequence[int],
    *,
    loss: str,
    lr: float,
    seed: int,
    negative: int = 5,
    label_counts: np.ndarray | None = None,
) -> float:
    """Update ``W_in`` / ``W_out`` in place for one line; returns its loss (fastText's table
    logs). ``label_counts`` (the negatives' distribution, the Huffman tree) for ns / hs."""
    lr = np.float32(lr)
    h = W_in[list(inputs)].sum(axis=0, dtype=np.float32) * np.float32(1.0 / len(inputs))
    grad = np.zeros_like(h)
    state = np.uint64(seed)
    total = 0.0

    def logistic(t: int, positive: bool) -> float:
        score = _sigmoid(np.float32(W_out[t] @ h))
        alpha = lr * (np.float32(positive) - score)
        grad[:] += alpha * W_out[t]
        W_out[t] += alpha * h
        return -_log(score if positive else np.float32(1.0) - score)

    if loss == "ova":
        for i in range(len(W_out)):
            total += logistic(i, i in labels)
    else:
        target = labels[0]
        if len(labels) > 1:
            target = labels[int((state >> np.uint64(16)) % np.uint64(len(labels)))]
            state = lcg_next(state)
        if loss == "softmax":
            s = W_out @ h  # (nlabels,)
            p = np.exp((s - s.max()).astype(np.float64)).astype(np.float32)
            p /= p.sum(dtype=np.float32)
            for i in range(len(W_out)):
                alpha = lr * (np.float32(i == target) - p[i])
                grad += alpha * W_out[i]
                W_out[i] += alpha * h
            total -= _log(p[target])
        elif loss == "ns":
            table = negative_table(label_counts, 0.5)
            guide = negative_guide(table)
            total += logistic(target, True)
            for _ in range(negative if len(W_out) > 1 else 0):
                other = target
                while other == target:
                    other = int(draw_negative(table, guide, state))
                    state = lcg_next(state)
                total += logistic(other, False)
        else:
            _, _, starts, paths, codes = fasttext_tree(label_counts)
            for q in range(starts[target], starts[target + 1]):
                total += logistic(int(paths[q]), bool(codes[q]))
    grad *= np.float32(1.0 / len(inputs))
    for r in inputs:
        W_in[r] += grad
    return total
