"""What a fitted :class:`~rowbook.models.fasttext_classifier.FastTextClassifier` holds, how it
is saved and read back, and the learned attributes it shows.

:class:`ClassifierState` is the word-vector family's
:class:`~rowbook.models.word_vectors.state.TrainedState` (words, tables, schedule, history)
with the labels, the dictionary once made, and after ``quantize()`` the bucket map and the
quantised tables. :func:`saved_classifier` and :func:`classifier_from_saved` turn it into the
plain values of a rowbook ``.npz`` and back, checked (the shape rowbook 0.1 saved:
``tests/models/saved_by_0_1`` loads). :class:`ClassifierViews` is the mixin of the learned
attributes (``labels_``, ``W_in_``, ``vectors``, ...), as
:class:`~rowbook.models.word_vectors.state.LearnedViews` is the family's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rowbook.data.counted_vocab import CountedVocab
from rowbook.data.labelled import LabelVocab
from rowbook.data.labelled_ids import LineEncoder
from rowbook.models.fasttext_classifier.prediction_kernels import sentence_vectors
from rowbook.models.word_vectors.state import (
    LearnedViews,
    Schedule,
    TrainedState,
    fitted_state,
    saved_state,
    subword_vectors,
    table_view,
)
from rowbook.vectors import Vectors

__all__ = [
    "ClassifierState",
    "ClassifierViews",
    "classifier_from_saved",
    "kernel_rows",
    "new_state",
    "quant_from_state",
    "require_dense",
    "saved_classifier",
]


@dataclass
class ClassifierState(TrainedState):
    """What a fitted classifier holds: the word-vector family's state (words, tables,
    schedule, history) and its ``labels``; its dictionary once made (``encoder``); after
    :meth:`~rowbook.models.FastTextClassifier.quantize`, the bucket map (``prune``) and the
    quantised tables (``quant``, by name: ``input``, ``output``); the ``autotune`` record."""

    labels: LabelVocab | None = None
    encoder: LineEncoder | None = None
    prune: np.ndarray | None = None
    quant: dict[str, Any] | None = None
    autotune: dict[str, Any] | None = None


def new_state(
    vocab: CountedVocab,
    labels: LabelVocab,
    vector_size: int,
    schedule: Schedule,
    tables: dict[str, np.ndarray] | None = None,
) -> ClassifierState:
    """A fresh learned state with the labels: ``tables`` (a file's), or an empty ``W_in``
    (its first rows come with the first fit) and ``W_out`` zeros, as fastText starts it."""
    if tables is None:
        tables = {
            "W_in": np.zeros((0, vector_size), dtype=np.float32),
            "W_out": np.zeros((len(labels), vector_size), dtype=np.float32),
        }
    return ClassifierState(vocab, tables, schedule, labels=labels)


def require_dense(state: ClassifierState, what: str) -> None:
    """Refuse ``what`` (training, quantising) on a quantised model's codes."""
    if state.quant:
        raise ValueError(
            f"this FastTextClassifier is quantised (its rows are codes); {what} needs the "
            "float tables: train the unquantised model, then quantize() it"
        )


def saved_classifier(fitted: ClassifierState) -> dict[str, Any]:
    """``fitted`` as the plain values a rowbook ``.npz`` holds."""
    labels, quant = fitted.labels, fitted.quant
    return {
        **saved_state(fitted),
        "labels": {"keys": list(labels.keys), "counts": labels.counts},
        "prune": fitted.prune,
        "quant": None if quant is None else {k: q.get_state() for k, q in quant.items()},
        "autotune": fitted.autotune,
    }


def quant_from_state(state: dict[str, Any], model: Any) -> tuple[dict[str, Any] | None, Any]:
    """The quantised tables and the bucket map a saved model holds (``None``, ``None`` for a
    dense, unpruned one), checked."""
    prune = state.get("prune")
    if prune is not None:
        prune = np.asarray(prune)
        if prune.dtype != np.int32 or prune.shape != (model.n_buckets,):
            raise ValueError(
                f"saved 'prune' must be {model.n_buckets} int32 rows (one per bucket), got "
                f"{prune.dtype} {prune.shape}; the file is damaged"
            )
    if state.get("quant") is None:
        return None, prune
    from rowbook.vectors.quantize.saved import matrix_from_state

    quant = {
        name: matrix_from_state(value, f"saved quantised {name} table")
        for name, value in state["quant"].items()
    }
    return quant, prune


def classifier_from_saved(model: Any, saved: dict[str, Any]) -> ClassifierState:
    """What :func:`saved_classifier` saved, checked against ``model``'s parameters: the
    labels, the bucket map and quantised tables, the tables' shapes."""
    keys = saved["labels"]["keys"]
    counts = np.asarray(saved["labels"]["counts"], dtype=np.int64)
    if not isinstance(keys, list) or len(counts) != len(keys):
        raise ValueError(f"saved labels: {len(keys)} keys but {len(counts)} counts")
    labels = LabelVocab(keys, counts)
    quant, prune = quant_from_state(saved, model)

    def shapes(V: int) -> dict[str, tuple[int, int]]:
        d = model.vector_size
        buckets = model.n_buckets if prune is None else int(np.count_nonzero(prune >= 0))
        found = {"W_in": (V + buckets, d), "W_out": (len(labels), d)}  # prune: buckets kept
        for name, table in (("W_in", "input"), ("W_out", "output")):
            if table in (quant or {}):
                found[name] = (0, d)
        return found

    common = fitted_state(saved, np.float32, shapes)
    return ClassifierState(
        **common, labels=labels, prune=prune, quant=quant, autotune=saved.get("autotune")
    )


def kernel_rows(state: ClassifierState, table: str) -> tuple[Any, ...] | None:
    """The quantised ``table`` (``"input"`` or ``"output"``) as the kernels read it, ``(codes,
    centroids, dsub, lastdsub, norm_codes, norm_centroids)``, or ``None`` when its rows are
    dense."""
    matrix = (state.quant or {}).get(table)
    if matrix is None:
        return None
    pq = matrix.quantizer
    widths = pq.widths
    norms = np.zeros(0, dtype=np.uint8), np.zeros(0, dtype=np.float32)
    if matrix.qnorm:
        norms = matrix.norm_codes, np.ascontiguousarray(matrix.norm_quantizer.centroids)
    return (
        np.ascontiguousarray(matrix.codes),
        np.ascontiguousarray(pq.centroids),
        int(widths[0]),
        int(widths[-1]),
        *norms,
    )


class ClassifierViews(LearnedViews):
    """The learned attributes of a fitted classifier (a mixin of
    :class:`~rowbook.models.fasttext_classifier.FastTextClassifier`, which gives
    ``_require_fitted``, ``_encoder`` and ``vector_size``)."""

    _encoder: Callable[[ClassifierState], LineEncoder]
    vector_size: int

    @property
    def labels_(self) -> tuple[str, ...]:
        """The labels in id order (descending count), spelled with ``label_prefix``."""
        return self._require_fitted(".labels_").labels.keys

    @property
    def label_counts_(self) -> np.ndarray:
        """``(nlabels,)`` how often each label occurs in the training lines."""
        return self._require_fitted(".label_counts_").labels.counts

    W_in_ = table_view(
        "W_in",
        "``(nwords + bucket, d)`` float32 input rows: words, then hash buckets.",
    )

    W_out_ = table_view(
        "W_out",
        "``(nlabels, d)`` float32 output rows (``hs``: the tree's inner nodes).",
    )

    @property
    def is_quantized(self) -> bool:
        """Whether the rows are product-quantised codes (a ``.ftz``, or ``quantize()``)."""
        return bool(self._require_fitted(".is_quantized").quant)

    @property
    def autotune_(self) -> dict[str, Any] | None:
        """The search of ``fit(..., validation=...)``: best parameters, score, every trial."""
        return self._require_fitted(".autotune_").autotune

    def _make_vectors(self, state: ClassifierState) -> Vectors:
        """Each word's vector: the mean of its row and its char n-grams' rows (fastText's
        ``getWordVector``); unseen words too when the rows are dense and unpruned."""
        vocab = state.vocab
        if not state.quant and state.prune is None:
            return subword_vectors(state, self)
        starts, ids = self._encoder(state).word_bags()
        rows = np.zeros((len(vocab), self.vector_size), dtype=np.float32)  # (V, d)
        sentence_vectors(state.tables["W_in"], kernel_rows(state, "input"), starts, ids, rows)
        return Vectors(vocab.keys, rows, vocab.counts)
