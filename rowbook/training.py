"""A small training loop shared by the models: batches, metrics, checkpoints, early stop.

The loop is deliberately plain::

    initial = evaluate(model, val or train)       # optional (eval_on_start)
    for epoch:
        for batch in a seeded shuffle of the data:
            optimizer.zero_grad(); loss = loss_fn(model, batch); loss.backward(); optimizer.step()
        metrics = evaluate(model, val)            # optional; on train with eval_on_train
        checkpoint (atomic), early stopping

An ``evaluate`` function scores every epoch after its last step on the held-out data given
to ``fit`` (``val_loss``, ``val_accuracy``...). Two settings of :class:`TrainConfig` make
the log the chapters print: ``eval_on_train`` scores the training data itself when there is
no held-out data (``eval_loss``, ``eval_accuracy``...: the whole set with the epoch's final
weights, where ``loss`` is the running mean over the epoch's steps), and ``eval_on_start``
scores the model before its first step into :attr:`History.initial` (Hugging Face's
``TrainingArguments`` has a setting of that name), so a log can start with the untrained
model's loss and accuracy, as the colour-harmony chapter's does ("before training:
eval_loss 0.6882, eval_accuracy 0.5729" on the progress stream). The models trained by this
loop turn both on.

What it adds over writing that loop by hand: the whole state of the loop (weights,
optimizer moments, the shuffle's random state, history, best score, epoch) as one
:meth:`Trainer.state_dict`, so ``fit(..., resume=path)`` after an interruption ends with
the same weights as an uninterrupted run; atomic checkpoints after every epoch in a
pickle-free ``.npz`` (a model that trains with a Trainer embeds that state in its own
saved-model file instead, see :mod:`rowbook.models.base`); progress counted in batches,
with an ETA, on standard error; and a clear stop when the loss becomes NaN or infinite,
with the weights put back to the start of the epoch and the last good checkpoint left
untouched.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rowbook._progress import ProgressBar, format_metrics
from rowbook.checks import check_int
from rowbook.io import fields_of, load_state, save_state

if TYPE_CHECKING:  # annotations only: the CLI imports TrainingDiverged without these stacks
    from rowbook.autograd import Tensor
    from rowbook.nn.module import Module

__all__ = [
    "CHECKPOINT_KIND",
    "History",
    "TrainConfig",
    "Trainer",
    "TrainingDiverged",
    "batches",
    "hold_out",
]

CHECKPOINT_KIND = "checkpoint"

LossFn = Callable[["Module", tuple[np.ndarray, ...]], "Tensor"]
EvalFn = Callable[["Module", tuple[np.ndarray, ...]], dict[str, float]]
PathLike = str | os.PathLike[str]


class TrainingDiverged(RuntimeError):
    """The loss became NaN or infinite; the model holds the weights of the last good epoch."""


@dataclass(frozen=True)
class TrainConfig:
    """Settings of :class:`Trainer` (all keyword, all with defaults).

    ``monitor`` names the metric early stopping watches (``"val_loss"`` by default; a
    name ending in ``loss`` is minimised, anything else maximised); ``patience=None``
    turns early stopping off. ``restore_best=True`` puts the weights of the best epoch
    (by ``monitor``) back into the model when ``fit`` returns. ``progress=True`` reports
    on standard error (see :mod:`rowbook._progress`).
    """

    epochs: int = 10
    batch_size: int = 32
    shuffle: bool = True
    seed: int = 0
    patience: int | None = None
    monitor: str = "val_loss"
    progress: bool = False
    restore_best: bool = False
    eval_on_start: bool = False
    eval_on_train: bool = False

    def __post_init__(self) -> None:
        check_int("epochs", self.epochs, 0, owner="TrainConfig")
        check_int("batch_size", self.batch_size, 1, owner="TrainConfig")
        check_int("seed", self.seed, 0, owner="TrainConfig")
        check_int("patience", self.patience, 1, allow_none=True, owner="TrainConfig")


@dataclass
class History:
    """Per-epoch metrics, why training stopped (``completed``, ``early_stopping``), the
    epochs (counted from 0) at which a resumed run picked up (``resumed_at``), and the
    evaluation of the model before its first step (``initial``: ``val_*`` or ``eval_*``
    names, empty without an ``evaluate`` function)."""

    epochs: list[dict[str, float]] = field(default_factory=list)
    stopped: str = "completed"
    resumed_at: list[int] = field(default_factory=list)
    initial: dict[str, float] = field(default_factory=dict)

    def last(self, name: str) -> float:
        return self.epochs[-1][name]


def batches(n: int, batch_size: int, rng: np.random.Generator | None) -> list[np.ndarray]:
    """Index arrays covering ``range(n)`` in batches; shuffled when ``rng`` is given.

    Examples
    --------
    >>> [b.tolist() for b in batches(5, 2, None)]
    [[0, 1], [2, 3], [4]]
    """
    order = rng.permutation(n) if rng is not None else np.arange(n)
    return [order[i : i + batch_size] for i in range(0, n, batch_size)]


def hold_out(texts: list[Any], fraction: float, seed: int) -> tuple[list[Any], list[Any]]:
    """``(training texts, held-out texts)``: ``floor(fraction * len(texts))`` texts held out,
    chosen by a random draw seeded with ``seed``; the rest keep their order.

    Examples
    --------
    >>> train, held = hold_out(["a", "b", "c", "d", "e"], 0.5, seed=0)
    >>> len(held), sorted(train + held), train == sorted(train)
    (2, ['a', 'b', 'c', 'd', 'e'], True)
    """
    n_val = int(len(texts) * fraction)
    if n_val == 0:
        return texts, []
    held = np.random.default_rng(seed).permutation(len(texts))[:n_val]
    keep = np.ones(len(texts), dtype=bool)
    keep[held] = False
    return [t for t, k in zip(texts, keep, strict=True) if k], [texts[i] for i in held]


class Trainer:
    """Fit ``model`` with ``optimizer`` by minimising ``loss_fn(model, batch)``.

    Parameters
    ----------
    model, optimizer
        A :class:`~rowbook.nn.Module` and an optimizer over its parameters (anything
        with ``zero_grad``, ``step``, ``state_dict`` and ``load_state_dict``).
    loss_fn
        ``loss_fn(model, batch) -> Tensor`` for a tuple of array slices.
    evaluate
        Optional ``evaluate(model, data) -> {name: value}``, run on the validation data
        after each epoch (names get a ``val_`` prefix); with ``config.eval_on_train`` and no
        validation data, on the training data (an ``eval_`` prefix); with
        ``config.eval_on_start``, also before training.
    config
        A :class:`TrainConfig`.
    derive
        Optional ``derive(metrics) -> {name: value}``: more training metrics computed from
        the epoch's ``loss`` before it is shown and kept (the NPLM adds ``perplexity``).
    save
        Optional ``save(path)`` that writes a checkpoint; by default
        :meth:`save_checkpoint` writes :meth:`state_dict`. A model passes its own
        ``save``, so its checkpoint is its saved-model file.
    """

    def __init__(
        self,
        model: Module,
        optimizer: Any,
        loss_fn: LossFn,
        *,
        evaluate: EvalFn | None = None,
        config: TrainConfig | None = None,
        derive: Callable[[dict[str, float]], dict[str, float]] | None = None,
        save: Callable[[PathLike], None] | None = None,
    ) -> None:
        self.model, self.optimizer, self.loss_fn = model, optimizer, loss_fn
        self.evaluate, self.config, self.derive = evaluate, config or TrainConfig(), derive
        self.save = save if save is not None else self.save_checkpoint
        self._reset()

    def _reset(self) -> None:
        self.rng = np.random.default_rng(self.config.seed)
        self.history, self.epoch, self.best, self.bad_epochs = History(), 0, None, 0
        self.best_state: dict[str, np.ndarray] | None = None

    # -- the state of the loop ----------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Everything the loop needs to continue: weights, optimizer, random state, history,
        best score, and the next epoch. Arrays are copies; the rest is JSON data."""
        return {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "rng": self.rng.bit_generator.state,
            "history": asdict(self.history),
            "epoch": self.epoch,
            "best": self.best,
            "bad_epochs": self.bad_epochs,
            "best_state": self.best_state,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Put the loop back where :meth:`state_dict` was taken."""
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.rng = np.random.default_rng(self.config.seed)
        self.rng.bit_generator.state = state["rng"]
        self.history = History(**state["history"])
        self.epoch, self.best, self.bad_epochs = state["epoch"], state["best"], state["bad_epochs"]
        self.best_state = state.get("best_state")
        _check_loop(self.epoch, self.best, self.bad_epochs, self.history)

    def save_checkpoint(self, path: PathLike) -> None:
        """Write :meth:`state_dict` to ``path`` atomically (kind ``"checkpoint"``)."""
        save_state(path, {"trainer": self.state_dict()}, kind=CHECKPOINT_KIND)

    # -- fitting ------------------------------------------------------------------------
    def fit(
        self,
        train: Sequence[np.ndarray],
        val: Sequence[np.ndarray] | None = None,
        *,
        checkpoint: PathLike | None = None,
        resume: PathLike | Mapping[str, Any] | None = None,
    ) -> History:
        """Train for ``config.epochs`` epochs, or the rest of them when resuming.

        ``checkpoint`` is a path written after every epoch (by ``save``). ``resume`` is a
        checkpoint written by :meth:`save_checkpoint`, or a :meth:`state_dict` (a model
        reads it from its own file): training continues from it and ends with the weights
        of the uninterrupted run. A ``resume`` path that does not exist yet starts afresh,
        so the same path can be given to both.
        """
        train = _as_columns(train, "train")
        val = None if val is None else _as_columns(val, "val")
        cfg = self.config
        n_batches = math.ceil(len(train[0]) / cfg.batch_size)
        self._reset()
        note = self._resume(resume)
        bar = ProgressBar(
            cfg.epochs * n_batches,
            unit="batch",
            initial=self.epoch * n_batches,
            show=cfg.progress,
            unit_scale=False,
        )
        try:
            if note:
                bar.note(note)
            elif self.evaluate is not None and cfg.eval_on_start and cfg.epochs > 0:
                held_out = val is not None
                self.history.initial = self._scores(val if held_out else train, held_out)
                bar.note(f"before training: {format_metrics(self.history.initial)}")
            while self.epoch < cfg.epochs and not self._stopped():
                self._one_epoch(train, val, bar, checkpoint)
        finally:
            bar.close()
        if cfg.restore_best and self.best_state is not None:
            self.model.load_state_dict(self.best_state)
        return self.history

    def _resume(self, resume: PathLike | Mapping[str, Any] | None) -> str | None:
        if resume is None:
            return None
        if not isinstance(resume, Mapping):
            if not Path(resume).exists():
                return f"no checkpoint {resume} yet; starting at epoch 1"
            state = load_state(resume, kind=CHECKPOINT_KIND)
            with fields_of(resume, "checkpoint"):
                self.load_state_dict(state["trainer"])
        else:
            self.load_state_dict(resume)
        self.history.resumed_at.append(self.epoch)
        return f"resumed at epoch {self.epoch + 1} of {self.config.epochs}"

    def _stopped(self) -> bool:
        patience = self.config.patience
        return patience is not None and self.bad_epochs >= patience

    def _one_epoch(
        self,
        train: tuple[np.ndarray, ...],
        val: tuple[np.ndarray, ...] | None,
        bar: ProgressBar,
        checkpoint: PathLike | None,
    ) -> None:
        start, epoch = time.perf_counter(), self.epoch
        loss = self._run_epoch(train, bar, checkpoint)
        metrics: dict[str, float] = {"epoch": epoch, "loss": loss}
        if self.derive is not None:
            metrics |= self.derive(metrics)
        if self.evaluate is not None and val is not None:
            metrics |= self._scores(val, held_out=True)
        elif self.evaluate is not None and self.config.eval_on_train:
            metrics |= self._scores(train, held_out=False)
        self.history.epochs.append(metrics)
        self._track(metrics)
        self.epoch = epoch + 1
        if self._stopped():
            self.history.stopped = "early_stopping"
        shown = {k: v for k, v in metrics.items() if k != "epoch"}
        bar.epoch_done(epoch + 1, self.config.epochs, shown, time.perf_counter() - start)
        if checkpoint is not None:
            self.save(checkpoint)

    def _scores(self, data: tuple[np.ndarray, ...], held_out: bool) -> dict[str, float]:
        """``evaluate`` on ``data``: ``val_`` names for held-out data, ``eval_`` for training data."""
        prefix = "val_" if held_out else "eval_"
        return {f"{prefix}{k}": float(v) for k, v in self.evaluate(self.model, data).items()}

    def _run_epoch(
        self, train: tuple[np.ndarray, ...], bar: ProgressBar, checkpoint: PathLike | None
    ) -> float:
        snapshot = self.model.state_dict()
        rng = self.rng if self.config.shuffle else None
        total, seen = 0.0, 0
        for step, index in enumerate(batches(len(train[0]), self.config.batch_size, rng)):
            self.optimizer.zero_grad()
            loss = self.loss_fn(self.model, tuple(column[index] for column in train))
            value = float(loss.data)
            if not math.isfinite(value):
                self.model.load_state_dict(snapshot)
                where = f" ({checkpoint} still holds the last good epoch)" if checkpoint else ""
                raise TrainingDiverged(
                    f"loss became {value} at epoch {self.epoch}, step {step}; the model was reset "
                    f"to the start of that epoch{where}. Lower the learning rate or check the inputs."
                )
            loss.backward()
            self.optimizer.step()
            total += value * len(index)
            seen += len(index)
            bar.update(1, {"loss": total / seen})
        return total / max(seen, 1)

    def _track(self, metrics: dict[str, float]) -> None:
        name = self.config.monitor if self.config.monitor in metrics else "loss"
        value = metrics[name]
        best = self.best
        better = best is None or (value < best if name.endswith("loss") else value > best)
        self.best, self.bad_epochs = (value, 0) if better else (best, self.bad_epochs + 1)
        if better and self.config.restore_best:
            self.best_state = self.model.state_dict()


def _check_loop(epoch: Any, best: Any, bad_epochs: Any, history: History) -> None:
    """The loop counters of a saved state: what a damaged file could make loop for ever."""
    counts_ok = all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (epoch, bad_epochs)
    )
    best_ok = best is None or (isinstance(best, int | float) and not isinstance(best, bool))
    epochs_ok = isinstance(history.epochs, list) and all(
        isinstance(m, dict) for m in history.epochs
    )
    resumed_ok = isinstance(history.resumed_at, list) and all(
        isinstance(n, int) and not isinstance(n, bool) for n in history.resumed_at
    )
    initial_ok = isinstance(history.initial, dict)
    if not (
        counts_ok
        and best_ok
        and epochs_ok
        and resumed_ok
        and initial_ok
        and isinstance(history.stopped, str)
    ):
        raise ValueError(
            f"the trainer state must hold epoch and bad_epochs (integers >= 0), best "
            "(a number or null), history.epochs (a list of objects), "
            "history.resumed_at (a list of integers), history.initial (an object) and "
            "history.stopped (a string); "
            f"got epoch {epoch!r}, bad_epochs {bad_epochs!r}, best {best!r}"
        )


def _as_columns(data: Sequence[np.ndarray], name: str) -> tuple[np.ndarray, ...]:
    columns = tuple(np.asarray(c) for c in (data if isinstance(data, tuple | list) else (data,)))
    lengths = {len(c) for c in columns}
    if len(lengths) != 1:
        raise ValueError(
            f"{name} arrays must have the same length, got lengths {[len(c) for c in columns]}"
        )
    if lengths == {0}:
        raise ValueError(f"{name} data is empty")
    return columns
