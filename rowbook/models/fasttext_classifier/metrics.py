"""What ``fasttext test`` and ``test-label`` count: fastText's ``Meter``, from a batch of predictions.

Over the lines that hold a label and at least one input row (fastText's ``test`` skips the
others), with the ``k`` best predictions of each line above the threshold:

* ``precision`` = predictions that are one of the line's labels / predictions;
* ``recall`` = the same / labels of the lines (a label written twice counts twice);
* per label, the same counts restricted to that label, and ``f1 = 2 tp / (predicted +
  gold)``; a count of zero over zero is ``nan``, as fastText prints it;
* the precision-recall curve of a label (or of all), from each prediction's probability
  (capped at 1) and whether it was right, with a label never predicted entered at -1
  when ``false_negatives`` (fastText's autotune metrics ``precisionAtRecall:...``).

Examples
--------
>>> meter = Meter.from_predictions(
...     gold=(np.array([0, 1, 3]), np.array([0, 1, 0])),
...     predicted=(np.array([[0, 1], [1, 0]]), np.array([[0.9, 0.1], [0.6, 0.3]]), np.array([2, 2])),
...     n_labels=2,
... )
>>> meter.n_examples, meter.precision(), meter.recall(), meter.precision(1), meter.f1(0)
(2, 0.75, 1.0, 0.5, 1.0)
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Meter"]

_FALSE_NEGATIVE_SCORE = -1.0


class Meter:
    """fastText's ``Meter`` over a batch: totals, per-label counts and the scored predictions.

    Build it with :meth:`from_predictions`. ``gold``, ``predicted`` and
    ``predicted_gold`` are ``(n_labels,)`` counts; ``scores`` holds, per prediction (and per
    missed label with ``false_negatives``), ``(label, probability capped at 1, right)``.
    """

    def __init__(self, n_labels: int) -> None:
        self.n_labels = n_labels
        self.n_examples = 0
        self.gold = np.zeros(n_labels, dtype=np.int64)
        self.predicted = np.zeros(n_labels, dtype=np.int64)
        self.predicted_gold = np.zeros(n_labels, dtype=np.int64)
        self.score_labels = np.zeros(0, dtype=np.int64)
        self.score_values = np.zeros(0, dtype=np.float32)
        self.score_right = np.zeros(0, dtype=np.float32)

    @classmethod
    def from_predictions(
        cls,
        gold: tuple[np.ndarray, np.ndarray],
        predicted: tuple[np.ndarray, np.ndarray, np.ndarray],
        n_labels: int,
        *,
        false_negatives: bool = False,
    ) -> Meter:
        """The counts of lines whose labels are ``gold = (starts (L + 1,), ids)`` and whose
        predictions are ``predicted = (ids (L, k), probabilities (L, k), counts (L,))``;
        the caller passes only the lines fastText's ``test`` logs."""
        starts, gold_ids = gold
        pred_ids, pred_probs, counts = predicted
        meter = cls(n_labels)
        L = len(starts) - 1
        meter.n_examples = L
        k = pred_ids.shape[1] if pred_ids.ndim == 2 else 0
        shown = np.arange(k)[None, :] < counts[:, None]  # (L, k) the predictions made
        lines = np.repeat(np.arange(L), np.diff(starts))  # (G,) the line of each gold label
        pred_lines = np.nonzero(shown)[0]  # (P,) the line of each prediction
        labels = pred_ids[shown].astype(np.int64)  # (P,)
        right = np.isin(pred_lines * n_labels + labels, lines * n_labels + gold_ids)  # (P,)
        meter.gold = np.bincount(gold_ids, minlength=n_labels).astype(np.int64)
        meter.predicted = np.bincount(labels, minlength=n_labels).astype(np.int64)
        meter.predicted_gold = np.bincount(labels[right], minlength=n_labels).astype(np.int64)
        values = np.minimum(pred_probs[shown], np.float32(1.0)).astype(np.float32)
        score_labels, score_values, score_right = [labels], [values], [right.astype(np.float32)]
        if false_negatives:  # each gold label the line's predictions missed, at -1
            missed = ~np.isin(lines * n_labels + gold_ids, pred_lines * n_labels + labels)
            score_labels.append(gold_ids[missed].astype(np.int64))
            score_values.append(np.full(int(missed.sum()), _FALSE_NEGATIVE_SCORE, np.float32))
            score_right.append(np.ones(int(missed.sum()), np.float32))
        meter.score_labels = np.concatenate(score_labels)
        meter.score_values = np.concatenate(score_values)
        meter.score_right = np.concatenate(score_right)
        return meter

    # -- the totals and each label's ------------------------------------------------------

    def _counts(self, label: int | None) -> tuple[int, int, int]:
        if label is None:
            return int(self.predicted_gold.sum()), int(self.predicted.sum()), int(self.gold.sum())
        return (
            int(self.predicted_gold[label]),
            int(self.predicted[label]),
            int(self.gold[label]),
        )

    def precision(self, label: int | None = None) -> float:
        """Right predictions / predictions (of ``label``, or of all); ``nan`` with none."""
        right, predicted, _ = self._counts(label)
        return right / predicted if predicted else math.nan

    def recall(self, label: int | None = None) -> float:
        """Right predictions / gold labels (of ``label``, or of all); ``nan`` with none."""
        right, _, gold = self._counts(label)
        return right / gold if gold else math.nan

    def f1(self, label: int | None = None) -> float:
        """``2 P R / (P + R)`` of all; of one label ``2 right / (predicted + gold)``."""
        if label is None:
            p, r = self.precision(), self.recall()
            return 2 * p * r / (p + r) if p + r != 0 else math.nan
        right, predicted, gold = self._counts(label)
        return 2 * right / (predicted + gold) if predicted + gold else math.nan

    # -- the precision-recall curve ------------------------------------------------------

    def precision_recall_curve(self, label: int | None = None) -> list[tuple[float, float]]:
        """``(precision, recall)`` as the probability threshold falls, prediction by
        prediction (tied scores squeezed into one point), up to full recall, then
        ``(1, 0)`` (fastText's ``precisionRecallCurve``); empty with no scored prediction."""
        mask = slice(None) if label is None else self.score_labels == label
        values, right = self.score_values[mask], self.score_right[mask]
        order = np.lexsort((right, values))[::-1]  # std::sort of (score, gold) pairs, read back
        positive: list[tuple[int, int]] = []
        tp = fp = 0
        last = _FALSE_NEGATIVE_SCORE - 1.0
        for score, gold in zip(values[order].tolist(), right[order].tolist(), strict=True):
            if score < 0:
                break
            tp, fp = (tp + 1, fp) if gold == 1.0 else (tp, fp + 1)
            if score == last and positive:
                positive[-1] = (tp, fp)
            else:
                positive.append((tp, fp))
            last = score
        if not positive:
            return []
        golds = self._counts(label)[2]
        stop = next((i for i, (t, _) in enumerate(positive) if t >= golds), len(positive))
        curve = []
        for t, f in positive[: stop + 1]:
            precision = t / (t + f) if t + f else 0.0
            curve.append((precision, t / golds if golds else math.nan))
        return [*curve, (1.0, 0.0)]

    def precision_at_recall(self, recall: float, label: int | None = None) -> float:
        """The best precision at a recall of at least ``recall`` (0 when never reached)."""
        return max((p for p, r in self.precision_recall_curve(label) if r >= recall), default=0.0)

    def recall_at_precision(self, precision: float, label: int | None = None) -> float:
        """The best recall at a precision of at least ``precision`` (0 when never reached)."""
        return max(
            (r for p, r in self.precision_recall_curve(label) if p >= precision), default=0.0
        )
