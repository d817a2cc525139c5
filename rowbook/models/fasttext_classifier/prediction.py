"""What a fitted :class:`~rowbook.models.fasttext_classifier.FastTextClassifier` predicts,
and fastText's test figures over labelled lines.

A line's score is its mean input row (dense, or decoded from product-quantiser codes)
times ``W_out``, under the model's loss; the compiled
:func:`~rowbook.models.fasttext_classifier.prediction_kernels.predict_lines` does it a line at a time
on every core. :class:`TestResult` and :class:`Confusion` are what ``fasttext test`` and a
confusion table report; :class:`~rowbook.models.fasttext_classifier.metrics.Meter` counts
them as fastText's meter does. :class:`ClassifierAnswers` is the classifier's side of it,
the methods that answer with these functions (``predict``, ``test``, ``test_label``,
``confusion``, the sentence and word vectors).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from rowbook.checks import ParameterError, check_number
from rowbook.corpus_files import is_file_source
from rowbook.data.huffman import fasttext_tree
from rowbook.data.labelled import LabelledLines, labelled_batches
from rowbook.data.labelled_ids import EncodedLines, LineEncoder
from rowbook.models.fasttext_classifier.kernels import LOSS_CODES
from rowbook.models.fasttext_classifier.metrics import Meter
from rowbook.models.fasttext_classifier.prediction_kernels import predict_lines, sentence_vectors
from rowbook.models.fasttext_classifier.state import kernel_rows
from rowbook.models.word_vectors.jobs import resolve_workers

__all__ = [
    "ROWS_A_THREAD",
    "ClassifierAnswers",
    "Confusion",
    "TestResult",
    "confusion",
    "meter",
    "prediction_threads",
    "predictions",
    "texts_and_labels",
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


def texts_and_labels(data: Any, labels: Any) -> tuple[Any, Any]:
    """``data`` and ``labels``, or the two halves of ``data`` given as a ``(texts, labels)``
    pair (a tuple of two file paths is a file source, not a pair)."""
    if labels is None and isinstance(data, tuple) and len(data) == 2 and not is_file_source(data):
        return data
    return data, labels


class ClassifierAnswers:
    """What a fitted classifier answers: its predictions, fastText's test figures, the
    confusion table, sentence and word vectors (a mixin of
    :class:`~rowbook.models.fasttext_classifier.FastTextClassifier`, which gives
    ``_require_fitted``, ``_encoder``, ``labels_``, ``vectors`` and its parameters)."""

    _require_fitted: Callable[[str], Any]
    _encoder: Callable[[Any], LineEncoder]
    labels_: tuple[str, ...]
    vectors: Any
    label_prefix: str
    vector_size: int

    def _encode_texts(self, texts: Any, labels: Any = None) -> tuple[Any, EncodedLines]:
        state = self._require_fitted("predict(...)")
        single = isinstance(texts, str)
        return state, self._encoded(state, [texts] if single else texts, labels)

    def _encoded(self, state: Any, data: Any, labels: Any) -> EncodedLines:
        """The lines of ``data`` (read already, a file source, or texts with ``labels``) as
        the fitted model's rows: read straight into its dictionary
        (:meth:`~rowbook.data.labelled_ids.LineEncoder.encode_batches`)."""
        encoder = self._encoder(state)
        if isinstance(data, LabelledLines):
            return encoder.encode(data)
        data, labels = texts_and_labels(data, labels)
        prefix = self.label_prefix
        return encoder.encode_batches(labelled_batches(data, labels, label_prefix=prefix))

    def predict(
        self, texts: str | Sequence[str], k: int = 1, threshold: float = 0.0
    ) -> tuple[tuple[str, ...], np.ndarray] | tuple[list[list[str]], list[np.ndarray]]:
        """The ``k`` most probable labels of each text with a probability of at least
        ``threshold``, and their probabilities, best first (fastText's ``predict``).

        One text (a str) gives ``(labels, probabilities)``; a list of texts gives a list of
        labels and a list of probability arrays. ``k=-1`` returns every label. The
        probability is fastText's: ``p + 1e-5``, so never 0 (and may pass 1 by ``1e-5``).
        """
        state, encoded = self._encode_texts(texts)
        ids, probs, counts = predictions(self, state, encoded, k, threshold)
        names = np.array([*state.labels.keys, ""], dtype=object)  # id -1 (none): ""
        labels = names[ids].tolist()  # (L, k) lists, one pass
        values = list(probs.astype(np.float64))  # (k,) rows
        for line in np.flatnonzero(counts < ids.shape[1]).tolist():  # fewer above threshold
            labels[line] = labels[line][: counts[line]]
            values[line] = values[line][: counts[line]]
        if isinstance(texts, str):
            return tuple(labels[0]), values[0]
        return labels, values

    def _meter(
        self, data: Any, labels: Any, k: int, threshold: float, false_negatives: bool = False
    ) -> Meter:
        state = self._require_fitted("test(...)")
        encoded = self._encoded(state, data, labels)
        return meter(self, state, encoded, k, threshold, false_negatives)

    def test(
        self, data: Any, labels: Sequence[Any] | None = None, k: int = 1, threshold: float = 0.0
    ) -> TestResult:
        """``(N, precision@k, recall@k)`` over the labelled lines of ``data`` (a fastText file
        or texts with ``labels``), as ``fasttext test`` counts them."""
        counted = self._meter(data, labels, k, threshold)
        return TestResult(counted.n_examples, counted.precision(), counted.recall())

    def test_label(
        self, data: Any, labels: Sequence[Any] | None = None, k: int = 1, threshold: float = 0.0
    ) -> dict[str, dict[str, float]]:
        """Each label's ``{"precision", "recall", "f1score"}`` (fastText's ``test_label``)."""
        counted = self._meter(data, labels, k, threshold)
        return {
            label: {
                "precision": counted.precision(i),
                "recall": counted.recall(i),
                "f1score": counted.f1(i),
            }
            for i, label in enumerate(self.labels_)
        }

    def confusion(self, data: Any, labels: Sequence[Any] | None = None) -> Confusion:
        """How often each gold label's lines were given each label first (:class:`Confusion`)."""
        state = self._require_fitted("confusion(...)")
        return confusion(self, state, self._encoded(state, data, labels))

    def get_sentence_vector(self, text: str) -> np.ndarray:
        """``(d,)`` the mean row of ``text`` (its words, n-grams and ``</s>``), what the
        linear layer scores (fastText's ``get_sentence_vector`` of a supervised model)."""
        state, encoded = self._encode_texts(text)
        out = np.zeros((1, self.vector_size), dtype=np.float32)
        sentence_vectors(
            state.tables["W_in"],
            kernel_rows(state, "input"),
            encoded.input_starts,
            encoded.input_ids,
            out,
        )
        return out[0]

    def get_word_vector(self, word: str) -> np.ndarray:
        """``(d,)`` the vector of ``word``, seen or not: the mean of its row and n-gram rows."""
        from rowbook.vectors.subword import SubwordVectors

        vectors = self.vectors
        if isinstance(vectors, SubwordVectors):
            return vectors.vector_for(word)
        return vectors[word]
