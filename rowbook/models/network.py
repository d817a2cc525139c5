"""The network family: models trained by :class:`~rowbook.training.Trainer`, one saved file
that holds the whole training loop, and ``resume`` from it.

A model here keeps, once fitted, one :class:`NetworkState`: its *extras* (what it needs
besides the network, as a dataclass of its own: a fitted text pipeline, the class labels;
``None`` when it needs nothing), the network and the Trainer. Its saved file
(:meth:`Model.save <rowbook.models.base.Model.save>`) holds the extras and
:meth:`Trainer.state_dict <rowbook.training.Trainer.state_dict>` (weights, optimizer
moments, the shuffle's random state, history, epoch); the Trainer writes that same file
as its checkpoint after every epoch, so a checkpoint *is* a saved model, and
``fit(..., resume=path)`` rebuilds the network and the loop from it and carries on.

A subclass of :class:`NetworkModel` implements ``_build(extras) -> (network,
optimizer)``, ``_trainer_for(network, optimizer) -> Trainer``, ``_extras_to_state`` and
``_extras_from_state`` (and, with ``from_vectors``, ``_start_rows``); whether a file may
be resumed is the one rule of
:meth:`Model._resume_state <rowbook.models.base.Model._resume_state>`. The text models
keep their :class:`~rowbook.text.TextPipeline` as its own versioned document
(:meth:`TextPipeline.to_dict <rowbook.text.TextPipeline.to_dict>`, fitted or not).

The optimizer choice they share is one table: an embedding table looked up with
``sparse=True`` gets a row-sparse gradient that :class:`~rowbook.optim.SparseAdam` steps
lazily, and the dense layers after it get :class:`~rowbook.optim.Adam`
(:func:`build_optimizer`).
"""

from __future__ import annotations

import json
import math
import os
from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, TypeVar

from rowbook.checks import ParameterError
from rowbook.models.base import Model
from rowbook.nn.module import Module, Parameter
from rowbook.optim import SGD, Adam, OptimizerChain, SparseAdam
from rowbook.text import TextPipeline
from rowbook.training import History, TrainConfig, Trainer

__all__ = [
    "DEFAULT_LR",
    "NetworkModel",
    "NetworkState",
    "OptimizerName",
    "PipelineExtras",
    "build_optimizer",
    "check_tokens_kept",
    "pipeline_from_state",
    "pipeline_of_0_1",
    "sparse_table",
]

OptimizerName = Literal["adam", "sgd", "sparse_adam"]
#: The learning rate of each optimizer when a model's ``lr`` is None.
DEFAULT_LR = {"adam": 1e-2, "sparse_adam": 1e-2, "sgd": 0.1}

X = TypeVar("X")


@dataclass(frozen=True)
class NetworkState(Generic[X]):
    """What a fitted network model holds: its ``extras`` (a dataclass of the model's own,
    or ``None``), the ``net`` and the ``trainer`` that trains it (history, epoch, optimizer)."""

    extras: X
    net: Module
    trainer: Trainer


@dataclass(frozen=True)
class PipelineExtras:
    """The extras of a text model that needs only its fitted ``pipeline`` (the NPLM's)."""

    pipeline: TextPipeline


def pipeline_from_state(state: dict[str, Any]) -> TextPipeline:
    """The fitted pipeline a saved model's ``state`` holds (field ``state.pipeline``)."""
    return TextPipeline.from_dict(state["pipeline"], "field 'state.pipeline'")


def sparse_table(optimizer: OptimizerName) -> bool:
    """Whether the embedding lookup should produce row-sparse gradients for ``optimizer``.

    >>> sparse_table("sparse_adam"), sparse_table("adam")
    (True, False)
    """
    return optimizer in ("sgd", "sparse_adam")


def build_optimizer(
    optimizer: OptimizerName, net: Module, table: Parameter, lr: float, *, freeze: bool = False
) -> Any:
    """``Adam`` or ``SGD`` over every parameter, or ``SparseAdam`` (table) + ``Adam`` (rest);
    with ``freeze`` the table gets no gradient and no optimizer (``Adam`` or ``SGD`` on the rest)."""
    params = list(net.parameters())
    if freeze:
        table.requires_grad = False
        params = [p for p in params if p is not table]
        return SGD(params, lr=lr) if optimizer == "sgd" else Adam(params, lr=lr)
    if optimizer == "adam":
        return Adam(params, lr=lr)
    if optimizer == "sgd":
        return SGD(params, lr=lr)
    rest = [p for p in params if p is not table]
    sparse = SparseAdam([table], lr=lr)
    return OptimizerChain(sparse, Adam(rest, lr=lr)) if rest else sparse


def check_tokens_kept(pipeline: TextPipeline, min_count: int) -> TextPipeline:
    """``pipeline``, if its fitted vocabulary kept a token besides the special ones; else a
    :class:`~rowbook.checks.ParameterError` of ``min_count`` (a front end names its flag).

    >>> from rowbook.text import Vocab, WordTokenizer
    >>> check_tokens_kept(TextPipeline(None, WordTokenizer(), Vocab(min_count=3)).fit(["a b a"]), 3)
    Traceback (most recent call last):
    ...
    rowbook.checks.ParameterError: min_count must be at most the count of the most frequent token, got 3; no token of the texts occurs that often, so only the special tokens would be learned: lower it or use more text
    """
    vocab = pipeline.vocab_
    if vocab is not None and len(vocab) == len(vocab.specials):
        raise ParameterError(
            "min_count",
            min_count,
            "at most the count of the most frequent token",
            fix="no token of the texts occurs that often, so only the special "
            "tokens would be learned: lower it or use more text",
        )
    return pipeline


class NetworkModel(Model, Generic[X]):
    """Base of the models trained by a :class:`~rowbook.training.Trainer` (abstract: not a
    model); ``X`` is the type of the model's extras."""

    _run_only: ClassVar[tuple[str, ...]] = ("epochs", "patience", "progress")
    #: Rows a fresh ``fit`` starts the table from (:mod:`rowbook.models.pretrained`), or None.
    _start_vectors: Any = None
    _fitted: NetworkState[X] | None

    # -- what a subclass provides -----------------------------------------------------
    @abstractmethod
    def _build(self, extras: X) -> tuple[Module, Any]:
        """The network and its optimizer, for ``extras``."""

    @abstractmethod
    def _trainer_for(self, net: Module, optimizer: Any) -> Trainer:
        """The training loop of ``net``."""

    def _start_rows(self, net: Module, extras: X, vectors: Any) -> None:
        """Write ``vectors``' rows into the table of ``net`` (a fresh fit of a model made by
        ``from_vectors``); only a model with ``from_vectors`` has it."""
        raise NotImplementedError(f"{type(self).__name__} starts from no vectors")

    def _optimizer_for(self, net: Module, table: Parameter) -> Any:
        """:func:`build_optimizer` by the model's ``optimizer``, ``lr`` (None: its
        :data:`DEFAULT_LR`) and ``freeze_embeddings``, for ``net`` and its embedding ``table``."""
        lr = self.lr if self.lr is not None else DEFAULT_LR[self.optimizer]
        return build_optimizer(self.optimizer, net, table, lr, freeze=self.freeze_embeddings)

    def _train_config(self, **extra: Any) -> TrainConfig:
        """The loop's settings from the parameters every network model has (``patience``
        where the model has one), and ``extra`` (how it logs, for one)."""
        return TrainConfig(
            epochs=self.epochs,
            batch_size=self.batch_size,
            seed=self.seed,
            patience=getattr(self, "patience", None),
            progress=self.progress,
            **extra,
        )

    def _language_model_trainer(
        self, net: Module, optimizer: Any, loss: Any, metrics: Any, **config: Any
    ) -> Trainer:
        """The loop of a language model (NPLM, TransformerLM): ``loss`` per batch, ``metrics``
        on whole sets, each epoch's perplexity ``exp(loss)`` derived from its loss, the model
        saved as its checkpoint."""
        return Trainer(
            net,
            optimizer,
            loss,
            evaluate=metrics,
            config=self._train_config(**config),
            derive=lambda m: {"perplexity": math.exp(m["loss"])},
            save=self.save,
        )

    def _extras_to_state(self, fitted: NetworkState[X]) -> dict[str, Any]:
        """The saved values of ``fitted.extras`` (they may read the network too)."""
        return {}

    def _extras_from_state(self, state: dict[str, Any]) -> X:
        """The extras a saved ``state`` holds, checked."""
        return None  # type: ignore[return-value]  # a model with extras overrides both

    # -- training ---------------------------------------------------------------------
    def _new_state(self, extras: X) -> NetworkState[X]:
        """The network, its optimizer and its Trainer built for ``extras``, untrained."""
        net, optimizer = self._build(extras)
        return NetworkState(extras, net, self._trainer_for(net, optimizer))

    def _train(
        self,
        extras: X,
        train: tuple[Any, ...],
        val: tuple[Any, ...] | None,
        *,
        checkpoint: str | os.PathLike[str] | None,
        state: dict[str, Any] | None,
    ) -> None:
        """Build the network and the Trainer, and train (continuing the saved ``state`` if
        given; a fresh fit of a model made by ``from_vectors`` starts from its rows)."""
        fitted = self._new_state(extras)
        if state is None and self._start_vectors is not None:
            self._start_rows(fitted.net, extras, self._start_vectors)
        resume = None if state is None else state["trainer"]
        with self._learning(fitted):
            fitted.trainer.fit(train, val, checkpoint=checkpoint, resume=resume)

    # -- learned state ----------------------------------------------------------------
    def _get_state(self) -> dict[str, Any]:
        fitted = self._require_fitted("save()")
        return {**self._extras_to_state(fitted), "trainer": fitted.trainer.state_dict()}

    def _set_state(self, state: dict[str, Any]) -> None:
        fitted = self._new_state(self._extras_from_state(state))
        fitted.trainer.load_state_dict(state["trainer"])
        self._adopt(fitted)

    def _set_network(self, extras: X) -> Module:
        """Make a network built for ``extras`` the learned state, and return it for a reader
        of another format (a checkpoint's weights) to fill in."""
        fitted = self._new_state(extras)
        self._adopt(fitted)
        return fitted.net

    @property
    def net_(self) -> Module:
        """The trained network."""
        return self._require_fitted(".net_").net

    @property
    def history_(self) -> History:
        """Per-epoch metrics of training (:class:`~rowbook.training.History`)."""
        return self._require_fitted(".history_").trainer.history


def pipeline_of_0_1(data: dict[str, Any] | None) -> dict[str, Any] | None:
    """A pipeline as rowbook 0.1 kept it in a model file, as a
    :mod:`~rowbook.text.pipeline_file` document (the one step from state version 1).

    >>> from rowbook.text import Vocab
    >>> old = {"normalizer": None, "tokenizer": {"type": "char", "graphemes": False},
    ...        "vocab": {"settings": Vocab().get_params()}, "fitted": False}
    >>> TextPipeline.from_dict(pipeline_of_0_1(old)).fit(["ab"]).encode("ba").tolist()
    [3, 2]
    """
    if data is None:
        return None
    tokenizer, vocab = data["tokenizer"], data["vocab"]
    if tokenizer is not None and tokenizer["type"] == "bpe":
        if tokenizer["file"] is None:
            tokenizer = {"type": "byte_level_bpe", "settings": tokenizer["params"]}
        else:
            tokenizer = {
                "type": "byte_level_bpe",
                "model": json.loads(tokenizer["file"]),
                "cache_size": tokenizer["params"]["cache_size"],
            }
    if vocab is not None and "fitted" in vocab:
        vocab = vocab["fitted"]  # a Vocab file: Vocab.from_dict reads its 0.1 field names
    elif vocab is not None:
        settings = dict(vocab["settings"])
        settings["max_vocab"] = settings.pop("max_size", settings.get("max_vocab"))
        vocab = {"settings": settings}
    return {
        "format": "rowbook",
        "kind": "text_pipeline",
        "version": 2,
        "fitted": data["fitted"],
        "normalizer": data["normalizer"],
        "tokenizer": tokenizer,
        "vocab": vocab,
    }
