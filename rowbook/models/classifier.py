r"""Text classifiers: a bag of embeddings with an MLP, and an LSTM reader.

One file over 400 lines on purpose: the two textbook classifiers share all but their
network, a few lines each, and are read together.

Both turn a text into ids with a :class:`~rowbook.text.TextPipeline` (lower-casing
normalizer, word tokenizer, vocabulary with ``min_count``; ``<pad>`` = 0, ``<unk>`` = 1)
and learn a table ``E`` (V, d) together with the layers after it:

* :class:`TextClassifier` averages the rows of the text's tokens (``EmbeddingBag``, mean
  mode; padding excluded) and scores the mean with a one-hidden-layer ReLU MLP:
  ``logits = W_2 relu(W_1 mean_t E[w_t] + b_1) + b_2``. Word order is invisible to it.
* :class:`LSTMClassifier` reads the rows in order with an :class:`~rowbook.nn.LSTM` and
  scores the hidden state after the last real token: ``logits = W h_T + b``.

These are the textbook classifiers of the network family (autograd, an MLP or an LSTM head,
Adam / SparseAdam, the shared :class:`~rowbook.training.Trainer`). fastText's supervised
classifier -- a linear layer on the mean of word and hashed n-gram rows, trained by Hogwild
SGD, exact with fastText's ``.bin`` and ``.ftz`` files -- is
:class:`~rowbook.models.FastTextClassifier`, in the word-vector family whose machinery
(vocabulary, jobs, schedule) it shares; :class:`TextClassifier` stays separate because
what it teaches (a table trained through autograd with the layers after it) is that
family's opposite, not a setting of it.

Optimizer: by default the table is looked up with ``sparse=True`` and stepped by
:class:`~rowbook.optim.SparseAdam` (each step touches only the rows of the batch's
tokens, so its cost does not grow with V), the dense layers by
:class:`~rowbook.optim.Adam`. SparseAdam is *lazy*: a row's moments decay only on the
steps that see it, unlike dense Adam, which keeps moving rows on stale momentum.
``optimizer="adam"`` trains everything densely instead.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from rowbook.autograd import Tensor, no_grad, ops
from rowbook.checks import InputTypeError, check_choice, check_int, check_number
from rowbook.models.network import (
    NetworkModel,
    NetworkState,
    OptimizerName,
    PipelineExtras,
    check_tokens_kept,
    pipeline_from_state,
    pipeline_of_0_1,
    sparse_table,
)
from rowbook.models.pretrained import copy_rows, with_start_vectors
from rowbook.nn import Embedding, EmbeddingBag, Linear, Module, init
from rowbook.nn import functional as F
from rowbook.nn.recurrent import LSTM
from rowbook.text import Normalizer, TextPipeline, Vocab, WordTokenizer
from rowbook.training import Trainer
from rowbook.vectors import Vectors

__all__ = ["BagOfEmbeddingsNet", "ClassifierExtras", "LSTMClassifier", "LSTMNet", "TextClassifier"]

_EVAL_BATCH = 512


class _TextNet(Module):
    """What the two nets share: ``net(vocab_size, dim, hidden, classes, pad=, sparse=, rng=)``
    builds the token table and the body of width ``hidden`` (each net's ``_body``), then the
    output layer ``W h + b`` to the ``classes`` logits, drawing from one generator in that
    order."""

    def __init__(
        self,
        vocab_size: int,
        dim: int,
        hidden: int,
        classes: int,
        *,
        pad: int = 0,
        sparse: bool = False,
        rng: Any = None,
    ) -> None:
        rng = init.as_generator(rng)
        self._body(vocab_size, dim, hidden, pad, sparse, rng)
        self.output = Linear(hidden, classes, rng=rng)


class BagOfEmbeddingsNet(_TextNet):
    """``W_2 relu(W_1 mean(E[ids]) + b_1) + b_2``; padding ids are left out of the mean.

    Shape
    -----
    - Input: ``(B, T)`` ids padded with ``pad``, and ``(B,)`` lengths (unused)
    - Output: ``(B, classes)`` logits
    """

    def _body(
        self, vocab_size: int, dim: int, hidden: int, pad: int, sparse: bool, rng: Any
    ) -> None:
        self.embedding = EmbeddingBag(
            vocab_size, dim, mode="mean", sparse=sparse, padding_idx=pad, rng=rng
        )
        self.hidden = Linear(dim, hidden, rng=rng)

    def forward(self, ids: np.ndarray, lengths: np.ndarray) -> Tensor:
        pooled = self.embedding(ids)  # (B, d)
        return self.output(ops.relu(self.hidden(pooled)))  # (B, classes)


class LSTMNet(_TextNet):
    """``W h_T + b`` with ``h_T`` the LSTM state after each text's last real token.

    Shape
    -----
    - Input: ``(B, T)`` ids padded with ``pad``, and ``(B,)`` lengths
    - Output: ``(B, classes)`` logits
    """

    def _body(
        self, vocab_size: int, dim: int, hidden: int, pad: int, sparse: bool, rng: Any
    ) -> None:
        self.embedding = Embedding(vocab_size, dim, padding_idx=pad, sparse=sparse, rng=rng)
        self.lstm = LSTM(dim, hidden, rng=rng)

    def forward(self, ids: np.ndarray, lengths: np.ndarray) -> Tensor:
        _, (h, _) = self.lstm(self.embedding(ids), lengths=lengths)  # h: (1, B, H)
        return self.output(h[0])  # (B, classes)


def _trimmed(ids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The batch's ids without the columns that are padding in every row."""
    return ids[:, : max(int(lengths.max(initial=0)), 1)]


def _loss(net: Module, batch: tuple[np.ndarray, ...]) -> Tensor:
    ids, lengths, y = batch
    return F.cross_entropy(net(_trimmed(ids, lengths), lengths), y)


def _logits(net: Module, ids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``(N, classes)`` logits in batches, without a graph."""
    out = []
    with no_grad():
        for s in range(0, len(ids), _EVAL_BATCH):
            part = slice(s, s + _EVAL_BATCH)
            out.append(net(_trimmed(ids[part], lengths[part]), lengths[part]).data)
    return np.concatenate(out)


def _metrics(net: Module, data: tuple[np.ndarray, ...]) -> dict[str, float]:
    ids, lengths, y = data
    logits = _logits(net, ids, lengths)
    loss = F.cross_entropy(Tensor(logits), y).item()
    return {"loss": loss, "accuracy": float(np.mean(logits.argmax(axis=1) == y))}


@dataclass(frozen=True)
class ClassifierExtras(PipelineExtras):
    """A classifier's extras: its fitted ``pipeline`` and the sorted class labels ``classes``."""

    classes: np.ndarray


class _SequenceClassifier(NetworkModel[ClassifierExtras]):
    """fit / predict / score shared by the two classifiers; subclasses name their network."""

    #: 2: the pipelines are :mod:`rowbook.text.pipeline_file` documents.
    _state_version: ClassVar[int] = 2
    _object_params: ClassVar[dict[str, Any]] = {"pipeline": TextPipeline.from_dict}

    _net_class: type[Module]

    def __init__(
        self,
        *,
        dim: int = 64,
        hidden: int = 64,
        epochs: int = 5,
        lr: float | None = None,
        batch_size: int = 32,
        optimizer: OptimizerName = "sparse_adam",
        min_count: int = 1,
        max_length: int | None = None,
        pipeline: TextPipeline | None = None,
        seed: int = 0,
        patience: int | None = None,
        progress: bool = False,
        freeze_embeddings: bool = False,
    ) -> None:
        self.dim, self.hidden, self.epochs, self.lr = dim, hidden, epochs, lr
        self.batch_size, self.optimizer, self.min_count = batch_size, optimizer, min_count
        self.max_length, self.pipeline, self.seed = max_length, pipeline, seed
        self.patience, self.progress = patience, progress
        self.freeze_embeddings = freeze_embeddings
        self._check_params()

    @classmethod
    def from_vectors(cls, vectors: Vectors, **params: Any) -> _SequenceClassifier:
        """An unfitted classifier whose ``fit`` starts the table from ``vectors``' rows for
        the words of its vocabulary they hold (:mod:`rowbook.models.pretrained`); ``dim``
        defaults to their size, ``params`` are the other parameters."""
        return with_start_vectors(cls, vectors, params)

    def _check_params(self) -> None:
        owner = type(self).__name__
        check_choice("optimizer", self.optimizer, ("adam", "sgd", "sparse_adam"), owner=owner)
        check_choice("freeze_embeddings", self.freeze_embeddings, (False, True), owner=owner)
        self._check_ints(owner, dim=1, hidden=1, epochs=0, batch_size=1, min_count=1, seed=0)
        check_int("max_length", self.max_length, 1, allow_none=True, owner=owner)
        check_int("patience", self.patience, 1, allow_none=True, owner=owner)
        check_number("lr", self.lr, 0.0, low_open=True, allow_none=True, owner=owner)
        if self.pipeline is not None and not isinstance(self.pipeline, TextPipeline):
            raise InputTypeError(
                f"{owner}: pipeline must be a TextPipeline or None, got "
                f"{type(self.pipeline).__name__}"
            )

    @classmethod
    def _upgrade(cls, params: dict[str, Any], state: dict[str, Any], version: int):
        """Version 1 (rowbook 0.1) kept the pipelines in a form of its own."""
        params = params | {"pipeline": pipeline_of_0_1(params.get("pipeline"))}
        return params, state | {"pipeline": pipeline_of_0_1(state["pipeline"])}

    def _make_pipeline(self) -> TextPipeline:
        if self.pipeline is not None:
            return copy.deepcopy(self.pipeline)  # fit a copy: the parameter stays as given
        return TextPipeline(
            Normalizer(case="lower"), WordTokenizer(), Vocab(min_count=self.min_count)
        )

    def _encode(
        self, texts: Sequence[str], pipeline: TextPipeline | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        pipeline = pipeline if pipeline is not None else self.pipeline_
        ids, mask = pipeline.encode_batch(_check_texts(texts), max_length=self.max_length)
        return ids, mask.sum(axis=1)  # (N, T), (N,)

    def fit(
        self,
        texts: Sequence[str],
        labels: Sequence[Any],
        val: tuple[Sequence[str], Sequence[Any]] | None = None,
        *,
        checkpoint: str | os.PathLike[str] | None = None,
        resume: str | os.PathLike[str] | None = None,
    ) -> _SequenceClassifier:
        """Fit the pipeline on ``texts`` and train; ``val = (texts, labels)`` is scored per epoch.

        ``checkpoint`` and ``resume`` follow the model contract (:mod:`rowbook.models.base`).
        """
        labels = _check_labels(labels, len(_check_texts(texts)))
        state = self._resume_state(resume)
        if state is None:
            classes = np.unique(labels)
            if len(classes) < 2:
                raise ValueError(
                    f"labels must hold at least 2 classes, got only {classes.tolist()}"
                )
            pipeline = self._make_pipeline().fit(texts)
            if self.pipeline is None:  # min_count made the vocabulary
                check_tokens_kept(pipeline, self.min_count)
            extras = ClassifierExtras(pipeline, classes)
        else:
            extras = self._extras_from_state(state)
        train = (*self._encode(texts, extras.pipeline), _class_ids(extras.classes, labels))
        val_columns = self._val_columns(val, extras)
        self._train(extras, train, val_columns, checkpoint=checkpoint, state=state)
        return self

    def _build(self, extras: ClassifierExtras) -> tuple[Module, Any]:
        net = self._net_class(
            extras.pipeline.vocab_size,
            self.dim,
            self.hidden,
            len(extras.classes),
            pad=_pad_id(extras.pipeline),
            sparse=sparse_table(self.optimizer),
            rng=self.seed,
        )
        return net, self._optimizer_for(net, net.embedding.weight)

    def _start_rows(self, net: Module, extras: ClassifierExtras, vectors: Vectors) -> None:
        pipeline = extras.pipeline
        table = net.embedding.weight.data
        copy_rows(table, _table_keys(pipeline), vectors, skip=[_pad_id(pipeline)])

    def _trainer_for(self, net: Module, optimizer: Any) -> Trainer:
        config = self._train_config(eval_on_start=True, eval_on_train=True)
        return Trainer(net, optimizer, _loss, evaluate=_metrics, config=config, save=self.save)

    def _extras_to_state(self, fitted: NetworkState[ClassifierExtras]) -> dict[str, Any]:
        return {"pipeline": fitted.extras.pipeline.to_dict(), "classes": fitted.extras.classes}

    def _extras_from_state(self, state: dict[str, Any]) -> ClassifierExtras:
        return ClassifierExtras(pipeline_from_state(state), np.asarray(state["classes"]))

    def _val_columns(self, val: Any, extras: ClassifierExtras) -> tuple[np.ndarray, ...] | None:
        if val is None:
            return None
        if not isinstance(val, tuple | list) or len(val) != 2:
            raise InputTypeError("val must be a pair (texts, labels)")
        labels = _check_labels(val[1], len(_check_texts(val[0])))
        return (*self._encode(val[0], extras.pipeline), _class_ids(extras.classes, labels))

    # -- learned state ------------------------------------------------------------------
    @property
    def pipeline_(self) -> TextPipeline:
        """The fitted text pipeline."""
        return self._require_fitted(".pipeline_").extras.pipeline

    @property
    def classes_(self) -> np.ndarray:
        """The class labels seen in ``fit``, sorted; probability columns follow this order."""
        return self._require_fitted(".classes_").extras.classes

    @property
    def vectors(self) -> Vectors:
        """The embedding table (V, d) as :class:`~rowbook.Vectors`, keyed by the vocabulary.

        With a pipeline that numbers tokens by a byte-level BPE (no vocabulary), the keys
        are the BPE's tokens.
        """
        pipeline = self.pipeline_
        keys, counts = _table_keys(pipeline), None
        if pipeline.vocab_ is not None:
            by_key = pipeline.vocab_.counts  # the property copies: read it once
            counts = [by_key[t] for t in keys]
        return Vectors(keys, self.net_.embedding.weight.data, counts)

    # -- using the model ----------------------------------------------------------------
    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """``(N, classes)`` probabilities, columns in the order of ``classes_``."""
        net = self._require_fitted(".predict_proba()").net
        return ops.softmax(Tensor(_logits(net, *self._encode(texts))), axis=1).data

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        """The most probable class of each text."""
        return self.classes_[self.predict_proba(texts).argmax(axis=1)]

    def score(self, texts: Sequence[str], labels: Sequence[Any]) -> float:
        """Accuracy: the share of ``texts`` whose predicted class equals the label."""
        labels = _check_labels(labels, len(_check_texts(texts)))
        return float(np.mean(self.predict(texts) == labels))


def _pad_id(pipeline: TextPipeline) -> int:
    """The id padding fills batches with (row 0 when the pipeline has no ``<pad>``)."""
    return pipeline.pad_id if pipeline.pad_id is not None else 0


def _table_keys(pipeline: TextPipeline) -> list[str]:
    """The token of each row: the vocabulary's, or the byte-level BPE's without one."""
    if pipeline.vocab_ is not None:
        return list(pipeline.vocab_.itos)
    bpe = pipeline.tokenizer_
    return [bpe.id_to_token(i) for i in range(len(bpe))]


def _class_ids(classes: np.ndarray, labels: np.ndarray) -> np.ndarray:
    ids = np.searchsorted(classes, labels).clip(0, len(classes) - 1)
    unknown = classes[ids] != labels
    if unknown.any():
        raise ValueError(
            f"label {labels[unknown][0]!r} was not seen in fit; known classes: {classes.tolist()}"
        )
    return ids


class TextClassifier(_SequenceClassifier):
    """Mean of the token embeddings, then an MLP (:class:`BagOfEmbeddingsNet`).

    Parameters
    ----------
    dim
        d, the embedding size. hidden : the MLP's hidden size.
    epochs, batch_size, seed, patience, progress
        training loop settings (early stopping
        watches the validation loss; progress goes to standard error).
    lr
        learning rate; None picks 0.01 (Adam, SparseAdam) or 0.1 (SGD).
    optimizer
        ``"sparse_adam"`` (SparseAdam for the table, Adam for the rest; default),
        ``"adam"`` or ``"sgd"``.
    min_count
        tokens rarer than this in the training texts become ``<unk>``.
    max_length
        texts longer than this many tokens are cut (None: no limit).
    pipeline
        an unfitted :class:`~rowbook.text.TextPipeline` to use instead of the default
        (lower-case, word tokens, ``Vocab(min_count=min_count)``); a copy is fitted.
    freeze_embeddings
        keep the table as it starts (random, or the rows of :meth:`from_vectors`): no
        gradient, no optimizer; the layers after it still train.

    Attributes
    ----------
    classes_, pipeline_, net_, history_
        the sorted labels, the fitted pipeline, the network,
        and the per-epoch ``loss`` plus ``val_loss`` and ``val_accuracy`` with ``val``, or
        ``eval_loss`` and ``eval_accuracy`` over the training texts without it
        (``history_.initial``: the same before training).
    vectors
        the embedding table as :class:`~rowbook.Vectors`, keyed by the vocabulary.

    Examples
    --------
    >>> texts = ["good film", "bad film", "good plot", "bad plot"] * 8
    >>> clf = TextClassifier(dim=8, hidden=8, epochs=20).fit(texts, [1, 0, 1, 0] * 8)
    >>> clf.predict(["a good one", "so bad"]).tolist(), clf.score(texts, [1, 0, 1, 0] * 8)
    ([1, 0], 1.0)
    """

    _net_class = BagOfEmbeddingsNet


class LSTMClassifier(_SequenceClassifier):
    """An LSTM over the token embeddings, scored from its last real state (:class:`LSTMNet`).

    Same parameters and attributes as :class:`TextClassifier` (``hidden`` is the LSTM's
    state size). Each batch runs only as many time steps as its longest text.
    """

    _net_class = LSTMNet


def _check_texts(texts: Any) -> list[str]:
    if isinstance(texts, str):
        raise InputTypeError("texts must be a list of texts, got one str; wrap it: [text]")
    texts = list(texts)
    if not texts or not all(isinstance(t, str) for t in texts):
        raise ValueError(f"texts must be a non-empty list of str, got {len(texts)} items")
    return texts


def _check_labels(labels: Any, n: int) -> np.ndarray:
    labels = np.asarray(labels)
    if labels.shape != (n,):
        raise ValueError(f"labels must hold one label per text ({n}), got shape {labels.shape}")
    return labels
