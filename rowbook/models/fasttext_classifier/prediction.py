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

from rowbook._threads import resolve_workers
from rowbook.checks import ParameterError, check_number
from rowbook.corpus_files import is_file_source
from rowbook.data.huffman import fasttext_tree
from rowbook.data.labelled import LabelledLines, labelled_batches
from rowbook.data.labelled_ids import EncodedLines, LineEncoder
from rowbook.models.fasttext_classifier.kernels import LOSS_CODES
from rowbook.models.fasttext_classifier.metrics import Meter
from rowbook.models.fasttext_classifier.prediction_kernels import predict_lines, sentence_vectors
from rowbook.models.fasttext_classifier.state import kernel_rows
from rowbook.text.batches import batch_bounds

__all__ = [
    "LINE_WORK",
    "OUTPUT_WORK",
    "THREAD_WORK",
    "ClassifierAnswers",
    "Confusion",
    "TestResult",
    "confusion",
    "meter",
    "output_rows",
    "prediction_threads",
    "prediction_work",
    "predictions",
    "texts_and_labels",
    "work_ends",
]

# one thread's work predicting, in floats of an input row added to a line's mean (0.076-0.087
# ns of its CPU), fitted on the tweets, generated mail and generated topics (each within 3% of
# the fit) and checked on the tweets with ova at d = 50 (0.90-0.94 of the CPU measured) and the
# topics with hs (0.09-0.10: hs's search visits far more of the tree than k paths, so hs gets
# its second thread late, never early): benchmarks/fit_predict_cutoff.py. A second thread adds
# 0.13-0.15 ms + 2% of CPU, and its start 0.05-0.1 ms of the caller's wall time: two threads
# passed one from about 0.35 ms of work (0.77x at 0.23 ms, 1.12x at 0.47 ms on the mail).
OUTPUT_WORK = 4  # a float of an output row scored: its product with the mean, the loss (0.35 ns)
LINE_WORK = 2_500  # a line: its mean's division, its heap, its probabilities (0.2 us)
THREAD_WORK = 9_000_000  # from which a second thread pays: 0.7-0.8 ms, 2x the 0.35 measured


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
        bounds=_bounds(model, work_ends(model, encoded.input_starts, n_labels, k)),
    )


def work_ends(model: Any, input_starts: np.ndarray, n_labels: int, k: int) -> np.ndarray:
    """Where each line's :func:`prediction_work` ends ``(L,)``, cumulated, for the ``k`` best
    of ``n_labels`` labels: a line scores every label, or for ``hs`` about ``k`` paths down
    the tree."""
    rows = np.diff(input_starts)  # (L,) input rows a line
    scored = output_rows(model.loss, n_labels, k)
    return np.cumsum(prediction_work(model.vector_size, rows, rows > 0, scored))


def output_rows(loss: str, n_labels: int, k: int) -> int:
    """The rows of ``W_out`` a line scores for its ``k`` best labels: every label, or for
    ``hs`` about ``k`` paths down the tree (a floor: the search visits more).

    Examples
    --------
    >>> output_rows("softmax", 500, 1), output_rows("hs", 500, 1)
    (500, 9)
    """
    return n_labels if loss != "hs" else min(n_labels, k * n_labels.bit_length())


def _bounds(model: Any, ends: np.ndarray) -> list[int] | None:
    """Where the lines (whose work ends at ``ends``, :func:`work_ends`) are cut for the
    threads :func:`prediction_threads` chose: into ranges of about equal work (None: one)."""
    work = float(ends[-1]) if len(ends) else 0.0
    threads = prediction_threads(resolve_workers(model.workers), work)
    return None if threads == 1 else batch_bounds(ends, work / threads)


def prediction_work(d: int, input_rows: Any, lines: Any, output_rows: int) -> Any:
    """One thread's work predicting ``lines`` lines that hold ``input_rows`` rows of ``W_in``
    in all (their mean) and each score ``output_rows`` rows of ``W_out``, the rows ``d``
    floats: in floats of an input row, :data:`OUTPUT_WORK` a float of an output row and
    :data:`LINE_WORK` a line. Element-wise on arrays (a line each).

    ``output_rows`` is every label for softmax, ``ova`` and ``ns``, and for ``hs`` about
    ``k`` paths down the tree (a floor: the search visits more). The count before, rows read
    (input and output rows alike), stood for 0.5-1.7 ms of one thread's CPU a 50,000 on the
    three sets of ``bench_defaults.py`` (a row of the long e-mails costs a third of a
    tweet's); this is within 3% of one thread's CPU on each.

    Examples
    --------
    >>> prediction_work(100, 1_600, 100, 16)  # 100 tweets, 16 labels: 1.05 M, 90 us
    1050000
    """
    return d * (input_rows + OUTPUT_WORK * lines * output_rows) + LINE_WORK * lines


def prediction_threads(workers: int, work: float) -> int:
    """Threads to predict on: one, and one more for each :data:`THREAD_WORK` of
    :func:`prediction_work` (measured for a second thread on two cores), up to ``workers``.

    Examples
    --------
    >>> prediction_threads(2, prediction_work(100, 1_600, 100, 16))  # 100 tweets
    1
    >>> prediction_threads(2, prediction_work(100, 16_000, 1_000, 16))  # 1,000: 0.9 ms
    2
    >>> prediction_threads(2, prediction_work(100, 1_600, 100, 500))  # 100 lines, 500 labels
    2
    """
    return max(1, min(workers, 1 + int(work // THREAD_WORK)))


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
