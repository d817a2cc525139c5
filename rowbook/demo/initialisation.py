"""How the embedding table starts: the initialisations the chapters name, compared on the
colour-harmony model.

Only the (16, 4) table's starting values change from one row of the comparison to the next;
the layers after it start from the same draws for a given seed, and every run trains as the
example does (online SGD, lr 0.1, 200 epochs). Measured (docs/layers.md): every start
reaches 100%; tables with a spread of 0.01 to 0.1 take about three times as many epochs as
those with a spread of 0.3 to 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rowbook.autograd import Tensor, no_grad
from rowbook.models.color_harmony import COLOR_NAMES, HarmonyNet, harmony_pairs
from rowbook.nn import functional as F
from rowbook.nn import init
from rowbook.optim import SGD
from rowbook.training import TrainConfig, Trainer

__all__ = ["INITIALISATIONS", "InitResult", "compare_initialisations", "init_table"]

Fill = Callable[[Any, np.random.Generator], Any]

#: name -> how it fills a (V, d) table. ``N(0, 1/d)`` is the Xavier/Glorot scaling for a
#: table whose input is one-hot (fan-in 1, fan-out d).
INITIALISATIONS: dict[str, Fill] = {
    "normal sigma=0.01": lambda w, rng: init.normal_(w, std=0.01, rng=rng),
    "normal sigma=0.1": lambda w, rng: init.normal_(w, std=0.1, rng=rng),
    "uniform a=0.05": lambda w, rng: init.uniform_(w, -0.05, 0.05, rng=rng),
    "uniform a=0.5": lambda w, rng: init.uniform_(w, -0.5, 0.5, rng=rng),
    "xavier N(0, 1/d)": lambda w, rng: init.normal_(w, std=1 / math.sqrt(w.shape[1]), rng=rng),
    "example N(0, 0.5^2)": lambda w, rng: init.normal_(w, std=0.5, rng=rng),
    "pytorch default N(0, 1)": lambda w, rng: init.normal_(w, std=1.0, rng=rng),
}


@dataclass(frozen=True)
class InitResult:
    """One initialisation over the seeds: mean final loss, mean final accuracy, and for each
    seed the first epoch (counted from 1) after which every pair was right (None: never)."""

    name: str
    loss: float
    accuracy: float
    epochs_to_100: tuple[int | None, ...]


def _train(fill: Fill, seed: int, epochs: int, lr: float) -> list[dict[str, float]]:
    """The example's training run (as :class:`ColorHarmony` trains it) with the table
    refilled by ``fill``; returns each epoch's metrics."""
    net = HarmonyNet(len(COLOR_NAMES), rng=seed)
    fill(net.embedding.weight, np.random.default_rng(10_000 + seed))
    config = TrainConfig(epochs=epochs, batch_size=1, seed=seed, eval_on_train=True)
    trainer = Trainer(net, SGD(net.parameters(), lr=lr), _loss, evaluate=_metrics, config=config)
    return trainer.fit(harmony_pairs()).epochs


def _loss(net: HarmonyNet, batch: tuple[np.ndarray, ...]) -> Tensor:
    return F.binary_cross_entropy_with_logits(net(batch[0], batch[1]), batch[2])


def _metrics(net: HarmonyNet, pairs: tuple[np.ndarray, ...]) -> dict[str, float]:
    with no_grad():
        logits = net(pairs[0], pairs[1])  # (192,)
        loss = F.binary_cross_entropy_with_logits(logits, pairs[2]).item()
    return {"loss": loss, "accuracy": float(np.mean((logits.data > 0) == (pairs[2] > 0.5)))}


def init_table(name: str, shape: tuple[int, int] = (16, 4), seed: int = 0) -> np.ndarray:
    """A ``shape`` table drawn by the initialisation ``name`` of :data:`INITIALISATIONS`.

    >>> float(init_table("uniform a=0.05", (1000, 4)).max()) <= 0.05
    True
    """
    if name not in INITIALISATIONS:
        raise ValueError(f"initialisation {name!r} is not one of {sorted(INITIALISATIONS)}")
    from rowbook.nn import Parameter

    table = Parameter(np.empty(shape))
    INITIALISATIONS[name](table, np.random.default_rng(seed))
    return table.data


def compare_initialisations(
    names: Sequence[str] = tuple(INITIALISATIONS),
    *,
    seeds: Sequence[int] = (0, 1, 2),
    epochs: int = 200,
    lr: float = 0.1,
) -> list[InitResult]:
    """Train the colour-harmony model once per initialisation and seed; one row per name."""
    results = []
    for name in names:
        init_table(name, (1, 1))  # refuses an unknown name before any training
        losses, accuracies, reached = [], [], []
        for seed in seeds:
            history = _train(INITIALISATIONS[name], seed, epochs, lr)
            losses.append(history[-1]["eval_loss"])
            accuracies.append(history[-1]["eval_accuracy"])
            first = [e["epoch"] + 1 for e in history if e["eval_accuracy"] == 1.0]
            reached.append(first[0] if first else None)
        results.append(
            InitResult(name, float(np.mean(losses)), float(np.mean(accuracies)), tuple(reached))
        )
    return results
