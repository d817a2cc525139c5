"""A fully connected layer and binary cross entropy, on :class:`~rowbook.scratch.value.Value`.

Just enough network for the colour-harmony example: :class:`Linear` computes
``y_j = sum_i W[j][i] x_i + b_j`` one Value at a time, and :func:`bce_with_logits` scores a
logit against a 0/1 label. Their gradients come from ``Value.backward``; nothing here
writes a derivative by hand.

Examples
--------
>>> layer = Linear(2, 1, seed=0)
>>> z = layer([Value(1.0), Value(-1.0)])[0]
>>> loss = bce_with_logits(z, 1.0)
>>> loss.backward()
>>> [round(w.grad, 6) for w in layer.parameters()] == [
...     round(g, 6) for g in ((z.sigmoid().data - 1.0) * x for x in (1.0, -1.0, 1.0))]
True
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from rowbook.scratch.value import Value

__all__ = ["Linear", "bce_with_logits", "sgd_step", "zero_grad"]


class Linear:
    """``y = W x + b`` with ``W`` ``out_features`` lists of ``in_features`` Values.

    Initialised as PyTorch's ``nn.Linear``: every weight and bias from
    ``U(-1/sqrt(in_features), 1/sqrt(in_features))``, drawn by ``random.Random(seed)``.

    Shape
    -----
    - Input: ``in_features`` Values (or floats)
    - Output: ``out_features`` Values
    """

    def __init__(self, in_features: int, out_features: int, *, seed: int = 0) -> None:
        rng = random.Random(seed)
        bound = 1.0 / math.sqrt(in_features)
        self.weight = [
            [Value(rng.uniform(-bound, bound)) for _ in range(in_features)]
            for _ in range(out_features)
        ]  # (out_features, in_features)
        self.bias = [Value(rng.uniform(-bound, bound)) for _ in range(out_features)]

    def __call__(self, x: Sequence[Value | float]) -> list[Value]:
        out = []
        for w_row, b in zip(self.weight, self.bias, strict=True):
            total = b
            for w, x_i in zip(w_row, x, strict=True):
                total = total + w * x_i
            out.append(total)
        return out

    def parameters(self) -> list[Value]:
        """Every weight, row by row, then every bias."""
        return [w for row in self.weight for w in row] + list(self.bias)


def bce_with_logits(z: Value, y: float) -> Value:
    """``-[y log sigmoid(z) + (1 - y) log(1 - sigmoid(z))]``, written so it never overflows.

    Equal to ``(1 - y) z - log sigmoid(z)``, with ``log sigmoid(z)`` taken as
    ``-log(1 + e^-z)`` for ``z >= 0`` and ``z - log(1 + e^z)`` below, so ``e`` is only ever
    raised to a number <= 0.

    >>> round(bce_with_logits(Value(0.0), 1.0).data, 6)    # log 2: a coin toss
    0.693147
    >>> round(bce_with_logits(Value(800.0), 0.0).data, 1)   # e^800 would overflow
    800.0
    """
    if z.data >= 0:
        log_sigmoid = -((-z).exp() + 1.0).log()
    else:
        log_sigmoid = z - (z.exp() + 1.0).log()
    return (1.0 - y) * z - log_sigmoid


def zero_grad(parameters: Sequence[Value]) -> None:
    """Set every parameter's gradient back to 0 (gradients add up across ``backward`` calls)."""
    for p in parameters:
        p.grad = 0.0


def sgd_step(parameters: Sequence[Value], lr: float) -> None:
    """``p <- p - lr * dLoss/dp`` for every parameter."""
    for p in parameters:
        p.data -= lr * p.grad
