"""A small training loop shared by the models: batches, metrics, checkpoints, early stop.

The loop is deliberately plain::

    for epoch:
        for batch in a seeded shuffle of the data:
            optimizer.zero_grad(); loss = loss_fn(model, batch); loss.backward(); optimizer.step()
        metrics = evaluate(model, val)            # optional
        checkpoint (atomic), early stopping

What it adds over writing that loop by hand: a seeded shuffle whose state is saved, so
``fit(..., resume=True)`` after an interruption ends with the same weights as an
uninterrupted run; atomic checkpoints (model, optimizer, loop state) in a pickle-free
``.npz``; and a clear stop when the loss becomes NaN or infinite, with the weights put
back to the start of the epoch and the last good checkpoint left untouched.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from rowbook.autograd import Tensor
from rowbook.io import fields_of, load_state, save_state
from rowbook.nn.module import Module

__all__ = ["History", "TrainConfig", "Trainer", "TrainingDiverged", "batches"]

LossFn = Callable[[Module, tuple[np.ndarray, ...]], Tensor]
EvalFn = Callable[[Module, tuple[np.ndarray, ...]], dict[str, float]]


class TrainingDiverged(RuntimeError):
    """The loss became NaN or infinite; the model holds the weights of the last good epoch."""


@dataclass(frozen=True)
class TrainConfig:
    """Settings of :class:`Trainer` (all keyword, all with defaults).

    ``monitor`` names the metric early stopping watches (``"val_loss"`` by default; a
    name ending in ``loss`` is minimised, anything else maximised); ``patience=None``
    turns early stopping off. ``restore_best=True`` puts the weights of the best epoch
    (by ``monitor``) back into the model when ``fit`` returns.
    """

    epochs: int = 10
    batch_size: int = 32
    shuffle: bool = True
    seed: int = 0
    patience: int | None = None
    monitor: str = "val_loss"
    checkpoint: str | Path | None = None
    progress: bool = False
    restore_best: bool = False

    def __post_init__(self) -> None:
        if self.epochs < 0:
            raise ValueError(f"epochs must be >= 0, got {self.epochs}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        if self.patience is not None and self.patience < 1:
            raise ValueError(f"patience must be >= 1 or None, got {self.patience}")


@dataclass
class History:
    """Per-epoch metrics and why training stopped (``completed``, ``early_stopping``)."""

    epochs: list[dict[str, float]] = field(default_factory=list)
    stopped: str = "completed"

    def last(self, name: str) -> float:
        return self.epochs[-1][name]


def batches(n: int, batch_size: int, rng: np.random.Generator | None) -> list[np.ndarray]:
    """Index arrays covering ``range(n)`` in batches; shuffled when ``rng`` is given.

    >>> [b.tolist() for b in batches(5, 2, None)]
    [[0, 1], [2, 3], [4]]
    """
    order = rng.permutation(n) if rng is not None else np.arange(n)
    return [order[i : i + batch_size] for i in range(0, n, batch_size)]


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
        after each epoch (names get a ``val_`` prefix).
    config
        A :class:`TrainConfig`.
    """

    def __init__(self, model: Module, optimizer: Any, loss_fn: LossFn, *,
                 evaluate: EvalFn | None = None, config: TrainConfig | None = None) -> None:  # fmt: skip
        self.model, self.optimizer, self.loss_fn = model, optimizer, loss_fn
        self.evaluate, self.config = evaluate, config or TrainConfig()

    def fit(self, train: Sequence[np.ndarray], val: Sequence[np.ndarray] | None = None,
            *, resume: bool = False) -> History:  # fmt: skip
        """Train for ``config.epochs`` epochs (or the rest of them, when resuming)."""
        train = _as_columns(train, "train")
        cfg = self.config
        rng = np.random.default_rng(cfg.seed)
        history, best, bad_epochs, start = History(), None, 0, 0
        best_state = None
        if resume:
            start, history, best, bad_epochs = self._restore(rng)
        bar = tqdm(range(start, cfg.epochs), disable=not cfg.progress, unit="epoch", initial=start, total=cfg.epochs)
        for epoch in bar:
            snapshot = self.model.state_dict()
            loss = self._run_epoch(train, rng if cfg.shuffle else None, epoch, snapshot)
            metrics = {"epoch": epoch, "loss": loss}
            if val is not None and self.evaluate is not None:
                metrics |= {f"val_{k}": float(v) for k, v in self.evaluate(self.model, _as_columns(val, "val")).items()}
            history.epochs.append(metrics)
            bar.set_postfix({k: f"{v:.4g}" for k, v in metrics.items() if k != "epoch"})
            best, bad_epochs = self._track(metrics, best, bad_epochs)
            if cfg.restore_best and bad_epochs == 0:
                best_state = self.model.state_dict()
            self._save(epoch, rng, history, best, bad_epochs)
            if cfg.patience is not None and bad_epochs >= cfg.patience:
                history.stopped = "early_stopping"
                break
        if best_state is not None:
            self.model.load_state_dict(best_state)
        return history

    # -- one epoch ----------------------------------------------------------------------
    def _run_epoch(self, train: tuple[np.ndarray, ...], rng: np.random.Generator | None,
                   epoch: int, snapshot: dict[str, np.ndarray]) -> float:  # fmt: skip
        total, seen = 0.0, 0
        for step, index in enumerate(batches(len(train[0]), self.config.batch_size, rng)):
            self.optimizer.zero_grad()
            loss = self.loss_fn(self.model, tuple(column[index] for column in train))
            value = float(loss.data)
            if not math.isfinite(value):
                self.model.load_state_dict(snapshot)
                where = f" ({self.config.checkpoint} still holds the last good epoch)" if self.config.checkpoint else ""
                raise TrainingDiverged(
                    f"loss became {value} at epoch {epoch}, step {step}; the model was reset to the "
                    f"start of that epoch{where}. Lower the learning rate or check the inputs."
                )
            loss.backward()
            self.optimizer.step()
            total += value * len(index)
            seen += len(index)
        return total / max(seen, 1)

    def _track(self, metrics: dict[str, float], best: float | None, bad_epochs: int) -> tuple[float | None, int]:
        name = self.config.monitor if self.config.monitor in metrics else "loss"
        value = metrics[name]
        better = best is None or (value < best if name.endswith("loss") else value > best)
        return (value, 0) if better else (best, bad_epochs + 1)

    # -- checkpoints --------------------------------------------------------------------
    def _save(self, epoch: int, rng: np.random.Generator, history: History, best: float | None, bad: int) -> None:
        if self.config.checkpoint is None:
            return
        state = {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "trainer": {"epoch": epoch, "rng": rng.bit_generator.state, "history": asdict(history),
                        "best": best, "bad_epochs": bad, "config": _jsonable(asdict(self.config))},
        }  # fmt: skip
        save_state(self.config.checkpoint, state, kind="checkpoint")

    def _restore(self, rng: np.random.Generator) -> tuple[int, History, float | None, int]:
        path = self.config.checkpoint
        if path is None:
            raise ValueError("resume=True needs config.checkpoint to name the checkpoint file")
        if not Path(path).exists():
            return 0, History(), None, 0  # nothing saved yet: start from scratch
        state = load_state(path, kind="checkpoint")
        with fields_of(path, "checkpoint"):
            self.model.load_state_dict(state["model"])
            self.optimizer.load_state_dict(state["optimizer"])
            loop = state["trainer"]
            rng.bit_generator.state = loop["rng"]
            history = History(**loop["history"])
            epoch, best, bad = loop["epoch"], loop["best"], loop["bad_epochs"]
            counts_ok = all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (epoch, bad))
            if not counts_ok or not (best is None or isinstance(best, int | float)) or not (
                isinstance(history.epochs, list) and all(isinstance(m, dict) for m in history.epochs)
            ):  # fmt: skip
                raise ValueError(f"checkpoint {path}: field 'trainer' must hold epoch and bad_epochs "
                                 "(integers >= 0), best (a number or null) and history.epochs (a list "
                                 f"of objects); got epoch {epoch!r}, bad_epochs {bad!r}, best {best!r}")  # fmt: skip
            return epoch + 1, history, best, bad


def _as_columns(data: Sequence[np.ndarray], name: str) -> tuple[np.ndarray, ...]:
    columns = tuple(np.asarray(c) for c in (data if isinstance(data, tuple | list) else (data,)))
    lengths = {len(c) for c in columns}
    if len(lengths) != 1:
        raise ValueError(f"{name} arrays must have the same length, got lengths {[len(c) for c in columns]}")
    if lengths == {0}:
        raise ValueError(f"{name} data is empty")
    return columns


def _jsonable(config: dict[str, Any]) -> dict[str, Any]:
    return {k: str(v) if isinstance(v, Path) else v for k, v in config.items()}
