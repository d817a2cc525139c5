"""Dense layers: Linear, the activations and dropout as modules, and Sequential."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from rowbook.autograd import Tensor, ops
from rowbook.checks import check_choice, check_int, check_number
from rowbook.nn import functional as F
from rowbook.nn import init
from rowbook.nn.module import Module, Parameter

__all__ = ["GELU", "Dropout", "Linear", "ReLU", "Sequential", "SiLU", "Sigmoid", "Tanh"]


class Linear(Module):
    """``y = x @ W.T + b``, with ``W`` of shape ``(out_features, in_features)`` as in PyTorch.

    Applied to one-hot rows, ``Linear`` with ``W = E.T`` is an embedding lookup: the
    output and the gradient for ``E`` are the same (the tests check it).

    Shape
    -----
    - Input: ``(*, in_features)``
    - Output: ``(*, out_features)``
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        *,
        dtype: Any = np.float32,
        rng: Any = None,
    ) -> None:
        self.in_features = check_int("in_features", in_features, 0)
        self.out_features = check_int("out_features", out_features, 0)
        self.weight = Parameter(np.empty((out_features, in_features), dtype=dtype))
        self.bias = Parameter(np.empty(out_features, dtype=dtype)) if bias else None
        init.linear_default_(self.weight, self.bias, rng=rng)

    def forward(self, x: Any) -> Tensor:
        x = x if isinstance(x, Tensor) else Tensor(x, dtype=self.weight.dtype)
        if x.shape[-1:] != (self.in_features,):
            raise ValueError(
                f"Linear expects inputs with last dimension {self.in_features}, got shape {x.shape}"
            )
        weight, bias = self.weight, self.bias
        if weight.dtype == np.float16:  # storage type: compute in float32, round once (torch CPU)
            out = self._forward(
                x.astype(np.float32),
                weight.astype(np.float32),
                None if bias is None else bias.astype(np.float32),
            )
            return out.astype(np.float16)
        return self._forward(x, weight, bias)

    @staticmethod
    def _forward(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        return F.linear(x, weight, bias)  # (*, out)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class ReLU(Module):
    def forward(self, x: Tensor) -> Tensor:
        return ops.relu(x)


class Tanh(Module):
    def forward(self, x: Tensor) -> Tensor:
        return ops.tanh(x)


class Sigmoid(Module):
    def forward(self, x: Tensor) -> Tensor:
        return ops.sigmoid(x)


class GELU(Module):
    """``x Phi(x)``, or with ``approximate="tanh"`` GPT-2's approximation (:func:`~rowbook.nn.activation.gelu`).

    Shape
    -----
    - Input: any shape; Output: the same
    """

    def __init__(self, approximate: Literal["none", "tanh"] = "none") -> None:
        self.approximate = check_choice("approximate", approximate, ("none", "tanh"), owner="GELU")

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x sigmoid(x)`` (:func:`~rowbook.nn.activation.silu`).

    Shape
    -----
    - Input: any shape; Output: the same
    """

    def forward(self, x: Tensor) -> Tensor:
        return F.silu(x)


class Dropout(Module):
    """Zero elements with probability ``p`` while training (``module.train()``), scaling the
    rest by ``1 / (1 - p)``; the identity after ``module.eval()``, as ``torch.nn.Dropout``.

    The masks come from the layer's own generator, seeded by ``rng``: a model built and
    run twice with the same seed drops the same elements (torch's draws are not reproduced).

    Shape
    -----
    - Input: any shape; Output: the same

    Examples
    --------
    >>> drop = Dropout(0.5, rng=0)
    >>> drop(np.ones(4, dtype=np.float32)).numpy()
    array([2., 0., 0., 0.], dtype=float32)
    >>> drop.eval()(np.ones(4, dtype=np.float32)).numpy()
    array([1., 1., 1., 1.], dtype=float32)
    """

    def __init__(self, p: float = 0.5, *, rng: Any = None) -> None:
        self.p = check_number("p", p, 0.0, 1.0, owner="Dropout")
        self.rng = init.as_generator(rng)

    def forward(self, x: Any) -> Tensor:
        return F.dropout(x, self.p, self.training, rng=self.rng)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Sequential(Module):
    """Modules applied in order: ``Sequential(Linear(8, 16), ReLU(), Linear(16, 1))``."""

    def __init__(self, *layers: Module) -> None:
        self.layers = list(layers)

    def forward(self, x: Any) -> Any:
        for layer in self.layers:
            x = layer(x)
        return x
