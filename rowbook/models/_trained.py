"""What the models trained by :class:`~rowbook.training.Trainer` share: one saved file that
holds the whole training loop, and ``resume`` from it.

A model here keeps, once fitted, its *extras* (a fitted text pipeline, the class labels:
whatever it needs besides the network), the network and the Trainer. Its saved file
(:meth:`Model.save <rowbook.models.base.Model.save>`) holds the extras and
:meth:`Trainer.state_dict <rowbook.training.Trainer.state_dict>` (weights, optimizer
moments, the shuffle's random state, history, epoch); the Trainer writes that same file
as its checkpoint after every epoch, so a checkpoint *is* a saved model, and
``fit(..., resume=path)`` rebuilds the network and the loop from it and carries on.

A subclass implements ``_build(extras) -> (network, optimizer)``,
``_trainer_for(network, optimizer) -> Trainer``, ``_extras_to_state`` and
``_extras_from_state``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

from rowbook.checks import ParameterError
from rowbook.models._pipeline_state import same_json
from rowbook.models.base import Model, read_model_file
from rowbook.nn.module import Module
from rowbook.text import TextPipeline
from rowbook.training import History, Trainer

__all__ = ["_TrainerModel", "check_tokens_kept"]


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


class _TrainerModel(Model):
    """Base of the models trained by a :class:`~rowbook.training.Trainer` (not itself a model)."""

    #: Parameters a resumed run may change; every other one must equal the saved model's.
    _run_only: ClassVar[tuple[str, ...]] = ("epochs", "patience", "progress")

    # -- what a subclass provides -----------------------------------------------------
    def _build(self, extras: dict[str, Any]) -> tuple[Module, Any]:
        raise NotImplementedError

    def _trainer_for(self, net: Module, optimizer: Any) -> Trainer:
        raise NotImplementedError

    def _extras_to_state(self, extras: dict[str, Any]) -> dict[str, Any]:
        return {}

    def _extras_from_state(self, state: dict[str, Any]) -> dict[str, Any]:
        return {}

    # -- training ---------------------------------------------------------------------
    def _resume_state(self, resume: str | os.PathLike[str] | None) -> dict[str, Any] | None:
        """The saved state to continue from; None to start afresh (no ``resume``, or a path
        not written yet, so the same path can be given as ``checkpoint`` and ``resume``)."""
        if resume is None or not Path(resume).exists():
            return None
        document = read_model_file(resume)
        name = type(self).__name__
        if document["class"] != name:
            raise ValueError(
                f"cannot resume from {resume}: it holds a {document['class']} model, not a {name}"
            )
        if document["state_version"] != self._state_version:
            raise ValueError(
                f"cannot resume from {resume}: it holds {name} state version "
                f"{document['state_version']}, and this rowbook continues version "
                f"{self._state_version} only"
            )
        theirs, ours = document["params"], self._params_to_json()
        diff = {
            k: (theirs.get(k), v)
            for k, v in ours.items()
            if k not in self._run_only and not same_json(theirs.get(k), v)
        }
        if diff:
            changed = "; ".join(f"{k} saved {a!r}, now {b!r}" for k, (a, b) in diff.items())
            raise ValueError(
                f"cannot resume from {resume}: it was saved with other parameters ({changed}); "
                f"resume with the saved ones (only {', '.join(self._run_only)} may change)"
            )
        return document["state"]

    def _train(
        self,
        extras: dict[str, Any],
        train: tuple[Any, ...],
        val: tuple[Any, ...] | None,
        *,
        checkpoint: str | os.PathLike[str] | None,
        state: dict[str, Any] | None,
    ) -> None:
        """Build the network and the Trainer, and train (continuing ``state`` if given)."""
        net, optimizer = self._build(extras)
        trainer = self._trainer_for(net, optimizer)
        previous = self._fitted
        self._fitted = {**extras, "net": net, "trainer": trainer}  # checkpoints save from here
        try:
            resume = None if state is None else state["trainer"]
            trainer.fit(train, val, checkpoint=checkpoint, resume=resume)
        except BaseException:
            self._fitted = previous
            raise

    # -- learned state ----------------------------------------------------------------
    def _get_state(self) -> dict[str, Any]:
        fitted = self._require_fitted("save()")
        return {**self._extras_to_state(fitted), "trainer": fitted["trainer"].state_dict()}

    def _set_state(self, state: dict[str, Any]) -> None:
        extras = self._extras_from_state(state)
        net, optimizer = self._build(extras)
        trainer = self._trainer_for(net, optimizer)
        trainer.load_state_dict(state["trainer"])
        self._fitted = {**extras, "net": net, "trainer": trainer}

    @property
    def net_(self) -> Module:
        """The trained network."""
        return self._learned("net", "net_")

    @property
    def history_(self) -> History:
        """Per-epoch metrics of training (:class:`~rowbook.training.History`)."""
        return self._learned("trainer", "history_").history
