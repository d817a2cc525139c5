"""What a fitted :class:`~rowbook.models.fasttext_classifier.FastTextClassifier` predicts,
and fastText's test figures over labelled lines.

A line's score is its mean input row (dense, or decoded from product-quantiser codes)
times ``W_out``, under the model's loss; the compiled
:func:`~rowbook.models.fasttext_classifier.kernels.predict_lines` does it a line at a time
on every core. :class:`TestResult` and :class:`Confusion` are what ``fasttext test`` and a
confusion table report; :class:`~rowbook.models.fasttext_classifier.metrics.Meter` counts
them as fastText's meter does.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from rowbook.checks import ParameterError, check_number
from rowbook.data.labelled_ids import EncodedLines
from rowbook.models.fasttext_classifier.kernels import LOSS_CODES, fasttext_tree, predict_lines
from rowbook.models.fasttext_classifier.metrics import Meter
from rowbook.models.word_vectors.jobs import resolve_workers

__all__ = [
    "ROWS_A_THREAD",
    "Confusion",
    "TestResult",
    "confusion",
    "kernel_rows",
    "meter",
    "prediction_threads",
    "predictions",
]

ROWS_A_THREAD = 50_000  # rows read that pay for starting a prediction thread (~1 ms of work)


class TestResult(NamedTuple):
    """What ``fasttext test`` prints: the lines scored, precision@k and recall@k."""

    __test__ = False  # not a pytest test class

    n: int
    precision: float
    recall: float


class Confusion(NamedTuple):
    """``counts[i, j]``: lines with gold label ``labels[i]`` whose best prediction was ``labels[j]``
    (a line with several labels counts once for each)."""

    labels: tuple[str, ...]
    counts: np.ndarray  # (nlabels, nlabels) int64

    def __str__(self) -> str:
        names = [label.removeprefix("__label__") for label in self.labels]
        width = max([len(n) for n in names] + [len(str(int(self.counts.max(initial=0))))])
        head = " " * width + " | " + " ".join(n.rjust(width) for n in names)
        rows = [
            n.rjust(width) + " | " + " ".join(str(int(c)).rjust(width) for c in row)
            for n, row in zip(names, self.counts, strict=True)
        ]
        return "\n".join(["rows: gold label, columns: predicted", head, "-" * len(head), *rows])


def kernel_rows(state: Any, table: str) -> Any:
    """The quantised ``table`` (``"input"`` or ``"output"``) as the kernels read it, or
    ``None`` when its rows are dense."""
    matrix = (state.quant or {}).get(table)
    if matrix is None:
        return None
    from rowbook.models.fasttext_classifier.files import kernel_quant

    return kernel_quant(matrix)


def predictions(
    model: Any, state: Any, encoded: EncodedLines, k: int, threshold: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ids (L, k), probabilities (L, k), counts (L,))``: each line's ``k`` best labels with
    a probability of at least ``threshold``, best first; ``counts`` says how many passed."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or (k < 1 and k != -1):
        raise ParameterError("k", k, "an integer >= 1 (or -1 for every label)")
    check_number("threshold", threshold, 0.0)
    n_labels = len(state.labels)
    k = n_labels if k == -1 else min(int(k), n_labels)
    children = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    if model.loss == "hs":
        children = fasttext_tree(state.labels.counts)[:2]
    W_in, W_out = state.tables["W_in"], state.tables["W_out"]
    quant_in, quant_out = kernel_rows(state, "input"), kernel_rows(state, "output")
    if quant_out is not None:
        W_out = np.zeros((n_labels, model.vector_size), dtype=np.float32)
    return predict_lines(
        (W_in, quant_in, W_out, quant_out),
        encoded.input_starts,
        encoded.input_ids,
        loss=LOSS_CODES[model.loss],
        k=k,
        threshold=threshold,
        children=children,
        workers=prediction_threads(
            resolve_workers(model.workers),
            len(encoded.input_ids),
            len(encoded.input_starts) - 1,
            n_labels if model.loss != "hs" else min(n_labels, k * n_labels.bit_length()),
        ),
    )


def prediction_threads(workers: int, input_rows: int, lines: int, output_rows: int) -> int:
    """Threads to predict on: one per :data:`ROWS_A_THREAD` rows read, up to ``workers``.

    The ``lines`` read ``input_rows`` rows of ``W_in`` in all, and each ``output_rows`` rows
    of ``W_out`` (every label for softmax, ``ova`` and ``ns``; for ``hs`` about ``k`` paths
    down the tree). Counting the input rows alone, 50,000 of them stood for 1.4-4.7 ms of one
    thread's work on the health tweets and long e-mails and 58 ms on short lines of 500
    labels; counting the rows read, 1.4-2.0 ms on all three (``benchmarks/bench_defaults.py``).

    Examples
    --------
    >>> prediction_threads(2, 40_000, 2_500, 16)  # tweets, 16 labels: 80,000 rows
    1
    >>> prediction_threads(2, 40_000, 2_500, 500)  # the same lines, 500 labels
    2
    """
    return max(1, min(workers, (input_rows + lines * output_rows) // ROWS_A_THREAD))


def meter(
    model: Any,
    state: Any,
    encoded: EncodedLines,
    k: int,
    threshold: float,
    false_negatives: bool = False,
) -> Meter:
    """fastText's meter over the lines of ``encoded`` that have both words and labels."""
    scored = (np.diff(encoded.input_starts) > 0) & (np.diff(encoded.label_starts) > 0)
    ids, probs, counts = predictions(model, state, encoded, k, threshold)
    keep = np.flatnonzero(scored)
    label_sizes = np.diff(encoded.label_starts)[keep]
    gold_starts = np.concatenate([[0], np.cumsum(label_sizes)])
    gold = np.concatenate(
        [encoded.labels(line) for line in keep] or [np.zeros(0, np.int32)]
    ).astype(np.int64)
    return Meter.from_predictions(
        (gold_starts, gold),
        (ids[keep], probs[keep], counts[keep]),
        len(state.labels),
        false_negatives=false_negatives,
    )


def confusion(model: Any, state: Any, encoded: EncodedLines) -> Confusion:
    """How often each gold label's lines were given each label first."""
    ids, _, counts = predictions(model, state, encoded, 1, 0.0)
    n = len(state.labels)
    table = np.zeros((n, n), dtype=np.int64)
    for line in np.flatnonzero(counts > 0):
        for gold in encoded.labels(line).tolist():
            table[gold, ids[line, 0]] += 1
    return Confusion(state.labels.keys, table)
