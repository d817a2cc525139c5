"""The colour-harmony example on the scratch pieces: Value for the network, EmbeddingTable
for the colours.

The same model as :mod:`rowbook.models.color_harmony` (16 colours on a wheel, a pair is
harmonious at wheel distance 0, 1 or 8 and clashing at 2 to 5; a (16, 4) table, the two rows
concatenated, a 16-unit ReLU layer, one logit, binary cross entropy, online SGD), with every
number a Python float. One training step shows the division of labour: the looked-up rows
enter the network's graph as plain input Values; ``Value.backward`` fills in their
gradients; :meth:`EmbeddingTable.backward` adds those into the two rows; SGD moves the
network's Values and the table's touched rows.

Examples
--------
>>> run = train_color_harmony(epochs=2, seed=0)
>>> len(run.losses), run.net.table.weight[0] != EmbeddingTable(16, 4, std=0.5, seed=0).weight[0]
(2, True)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from rowbook.scratch.mlp import Linear, bce_with_logits, sgd_step, zero_grad
from rowbook.scratch.table import EmbeddingTable
from rowbook.scratch.value import Value

__all__ = ["HarmonyRun", "ScratchHarmonyNet", "harmony_pairs", "train_color_harmony"]

Pair = tuple[int, int, float]  # (left colour, right colour, 1.0 harmonious / 0.0 clashing)


def harmony_pairs(n_colors: int = 16) -> list[Pair]:
    """Every ordered pair at wheel distance 0, 1 or ``n/2`` (label 1) or 2 to 5 (label 0).

    >>> pairs = harmony_pairs()
    >>> len(pairs), sum(label for _, _, label in pairs), pairs[:3]
    (192, 64.0, [(0, 0, 1.0), (0, 1, 1.0), (0, 2, 0.0)])
    """
    pairs = []
    for left in range(n_colors):
        for right in range(n_colors):
            wheel = min(abs(left - right), n_colors - abs(left - right))
            if wheel <= 1 or wheel == n_colors // 2:
                pairs.append((left, right, 1.0))
            elif 2 <= wheel <= 5:
                pairs.append((left, right, 0.0))
    return pairs


class ScratchHarmonyNet:
    """``logit = w2 . relu(W1 [E[left]; E[right]] + b1) + b2`` in Values and lists.

    The table starts from N(0, 0.5^2), the layers as PyTorch's ``nn.Linear``, all drawn
    from ``seed``.
    """

    def __init__(self, n_colors: int = 16, dim: int = 4, hidden: int = 16, *, seed: int = 0):
        self.dim = dim
        self.table = EmbeddingTable(n_colors, dim, std=0.5, seed=seed)  # (16, 4)
        self.hidden = Linear(2 * dim, hidden, seed=seed + 1)  # (16, 8)
        self.output = Linear(hidden, 1, seed=seed + 2)  # (1, 16)

    def parameters(self) -> list[Value]:
        """The network's Values (the table's rows are not Values: it updates them itself)."""
        return self.hidden.parameters() + self.output.parameters()

    def logit(self, left: int, right: int) -> tuple[Value, list[Value]]:
        """The pair's logit, and the ``2 * dim`` input Values its two rows became."""
        rows = self.table.lookup([left, right])  # (2, dim), copies
        x = [Value(v) for v in rows[0] + rows[1]]  # (2 dim,) inputs of the graph
        h = [u.relu() for u in self.hidden(x)]  # (hidden,)
        return self.output(h)[0], x

    def train_step(self, left: int, right: int, label: float, lr: float) -> float:
        """One SGD step on one pair; returns its loss before the step."""
        z, x = self.logit(left, right)
        loss = bce_with_logits(z, label)
        zero_grad(self.parameters())
        self.table.zero_grad()
        loss.backward()  # fills W1, b1, w2, b2 and x with their gradients
        d = self.dim
        self.table.backward([left, right], [[v.grad for v in x[:d]], [v.grad for v in x[d:]]])
        sgd_step(self.parameters(), lr)
        self.table.step(lr)
        return loss.data

    def evaluate(self, pairs: Sequence[Pair]) -> tuple[float, float]:
        """Mean loss and accuracy (logit > 0 read as harmonious) over ``pairs``."""
        total, right = 0.0, 0
        for left, right_id, label in pairs:
            z, _ = self.logit(left, right_id)
            total += bce_with_logits(z, label).data
            right += (z.data > 0) == (label > 0.5)
        return total / len(pairs), right / len(pairs)


@dataclass
class HarmonyRun:
    """What :func:`train_color_harmony` returns: the trained net, each epoch's mean step
    loss, and the final loss and accuracy over every pair."""

    net: ScratchHarmonyNet
    losses: list[float] = field(default_factory=list)
    loss: float = float("nan")
    accuracy: float = float("nan")


def train_color_harmony(
    *,
    epochs: int = 200,
    lr: float = 0.1,
    dim: int = 4,
    hidden: int = 16,
    seed: int = 0,
    net: ScratchHarmonyNet | None = None,
) -> HarmonyRun:
    """Online SGD over the 192 pairs, shuffled each epoch by ``random.Random(seed)``.

    ``net`` continues training a given net instead of making a new one from ``seed``.
    """
    if not isinstance(epochs, int) or epochs < 0:
        raise ValueError(f"epochs must be an int >= 0, got {epochs!r}")
    if not lr > 0:
        raise ValueError(f"lr must be > 0, got {lr!r}")
    pairs = harmony_pairs()
    net = ScratchHarmonyNet(16, dim, hidden, seed=seed) if net is None else net
    run, rng = HarmonyRun(net), random.Random(seed)
    for _ in range(epochs):
        order = list(range(len(pairs)))
        rng.shuffle(order)
        step_losses = [net.train_step(*pairs[i], lr) for i in order]
        run.losses.append(sum(step_losses) / len(step_losses))
    run.loss, run.accuracy = net.evaluate(pairs)
    return run
