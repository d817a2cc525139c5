"""A classifier made small, as ``fasttext quantize`` makes it: pruned rows, product-quantised tables.

``FastText::quantize`` does, in order:

1. with ``0 < cutoff < rows``, keep the ``cutoff`` rows of ``W_in`` of largest norm
   (``</s>`` always first: ``selectEmbeddings``); the words kept keep their order, the
   n-gram buckets kept are numbered in norm order and remembered in ``pruneidx`` (bucket
   -> row), so a hashed n-gram outside them adds nothing (``Dictionary::prune``);
2. with ``retrain``, train the kept rows again on the training lines (the output rows
   continue from where they are);
3. quantise ``W_in`` by a product quantiser of sub-spaces of ``dsub`` values, 256
   centroids each (with ``qnorm``, the rows' directions, their norms by a second,
   one-dimensional quantiser), and with ``qout`` ``W_out`` too (``dsub`` 2).

The product quantiser is rowbook's one (:mod:`rowbook.vectors.quantize`, laid out as
fastText's, so the ``.ftz`` written here is fastText's format); its k-means is seeded and
reproducible but not fastText's random stream, so codebooks match fastText's in quality,
not bit for bit. Predictions read the codes as fastText's ``QuantMatrix`` does
(:mod:`~rowbook.models.fasttext_classifier.kernels`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rowbook.checks import ParameterError, check_int
from rowbook.data.counted_vocab import CountedVocab
from rowbook.data.labelled import EOS
from rowbook.models.fasttext_classifier.state import require_dense

__all__ = ["quantize", "select_rows"]

_MIN_ROWS = 256  # one row per centroid at least (fastText: "Matrix too small")


def select_rows(W_in: np.ndarray, cutoff: int, eos: int | None) -> np.ndarray:
    """The ``cutoff`` rows of largest norm, ``eos`` (the row of ``</s>``) first, ties in
    id order (fastText's ``selectEmbeddings``).

    Examples
    --------
    >>> W = np.array([[3.0, 0], [1, 0], [0, 2], [0, 0.5]])
    >>> select_rows(W, 2, eos=None).tolist(), select_rows(W, 2, eos=3).tolist()
    ([0, 2], [3, 0])
    """
    norms = np.sqrt(np.einsum("ij,ij->i", W_in, W_in, dtype=np.float64))  # (rows,)
    if eos is not None:
        norms[eos] = np.inf
    return np.argsort(-norms, kind="stable")[:cutoff]


def quantize(
    model: Any,
    *,
    cutoff: int,
    dsub: int,
    qnorm: bool,
    qout: bool,
    retrain: bool,
    data: Any,
    labels: Any,
    epochs: int | None,
    seed: int,
) -> None:
    """Quantise the fitted ``model`` in place (see the module docstring)."""
    from rowbook.vectors.quantize import PQMatrix

    state = model._require_fitted("quantize()")
    require_dense(state, "quantize()")
    check_int("cutoff", cutoff, 0)
    check_int("dsub", dsub, 1)
    if retrain and data is None:
        raise ParameterError("data", None, "the training lines when retrain=True", fix="pass data=")
    W_in, W_out = state.tables["W_in"], state.tables["W_out"]
    if 0 < cutoff < len(W_in):
        if cutoff < _MIN_ROWS:
            raise ParameterError(
                "cutoff", cutoff, f"0 (keep every row) or at least {_MIN_ROWS} rows"
            )
        _prune(model, state, select_rows(W_in, cutoff, _eos_id(state)))
        if retrain:
            model.train(data, labels, epochs=epochs or model.epochs)
        W_in = state.tables["W_in"]
    if len(W_in) < _MIN_ROWS:
        raise ValueError(
            f"the input table has {len(W_in)} rows; product quantisation needs at least "
            f"{_MIN_ROWS} (one per centroid): this model is small enough as it is"
        )
    quant = {"input": PQMatrix.from_rows(W_in, dsub=dsub, qnorm=qnorm, seed=seed)}
    if qout:
        if len(W_out) < _MIN_ROWS:
            raise ParameterError(
                "qout", True, f"False for a model of {len(W_out)} labels (fewer than {_MIN_ROWS})"
            )
        quant["output"] = PQMatrix.from_rows(W_out, dsub=2, qnorm=qnorm, seed=seed)
    d = model.vector_size
    state.tables["W_in"] = np.zeros((0, d), dtype=np.float32)
    if qout:
        state.tables["W_out"] = np.zeros((0, d), dtype=np.float32)
    state.quant, state.encoder, state.vectors = quant, None, None


def _eos_id(state: Any) -> int | None:
    keys = state.vocab.keys
    return keys.index(EOS) if EOS in keys else None


def _prune(model: Any, state: Any, idx: np.ndarray) -> None:
    """Keep rows ``idx`` of ``W_in``: the words among them in id order, then the buckets in
    the order given, remembered in ``state.prune`` (``Dictionary::prune``)."""
    if state.prune is not None:
        raise ValueError("this model's rows are pruned already; quantise the unpruned model")
    vocab = state.vocab
    V = len(vocab)
    words = np.sort(idx[idx < V])
    grams = idx[idx >= V]
    prune = np.full(model.n_buckets, -1, dtype=np.int32)
    prune[grams - V] = np.arange(len(grams), dtype=np.int32)
    W_in = state.tables["W_in"]
    state.tables["W_in"] = np.ascontiguousarray(W_in[np.concatenate([words, grams])])
    state.vocab = CountedVocab(
        tuple(vocab.keys[i] for i in words),
        vocab.counts[words],
        vocab.total_words,
        vocab.corpus_count,
    )
    state.prune, state.encoder, state.vectors = prune, None, None
