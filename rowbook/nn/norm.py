"""LayerNorm and RMSNorm: layers that hold a gain (and an offset) and normalise every vector.

The math, forward and backward, is in :mod:`rowbook.nn.normalization`; the layers follow
PyTorch 2.13's ``nn.LayerNorm`` and ``nn.RMSNorm`` (constructor, defaults, parameter names
``weight`` and ``bias``, ones and zeros at initialisation), so their state dicts load into
torch as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rowbook.autograd import Tensor
from rowbook.checks import check_int, check_number
from rowbook.nn import functional as F
from rowbook.nn.module import Module, Parameter

__all__ = ["LayerNorm", "RMSNorm"]


def _shape(normalized_shape: int | Sequence[int], owner: str) -> tuple[int, ...]:
    if isinstance(normalized_shape, int | np.integer):
        normalized_shape = (normalized_shape,)
    shape = tuple(
        check_int("normalized_shape", int(n) if isinstance(n, np.integer) else n, 1, owner=owner)
        for n in normalized_shape
    )
    if not shape:
        raise ValueError(f"{owner}: normalized_shape must name at least one dimension, got ()")
    return shape


class LayerNorm(Module):
    r"""``(x - mean) / sqrt(var + eps) * weight + bias`` over the last dimensions (GPT-2's norm).

    Parameters
    ----------
    normalized_shape
        The trailing dimensions normalised over (an int for the last one).
    eps
        Added to the variance.
    elementwise_affine
        Learn ``weight`` (ones at first) and, with ``bias``, ``bias`` (zeros).
    bias
        Whether there is an offset (``elementwise_affine`` only).
    dtype
        dtype of the parameters.

    Shape
    -----
    - Input: ``(*, *normalized_shape)``
    - Output: the same

    Examples
    --------
    >>> LayerNorm(3)(np.array([[1.0, 2.0, 3.0]], dtype=np.float32)).numpy().round(3)
    array([[-1.225,  0.   ,  1.225]], dtype=float32)
    """

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        *,
        dtype: Any = np.float32,
    ) -> None:
        self.normalized_shape = _shape(normalized_shape, "LayerNorm")
        self.eps = check_number("eps", eps, 0.0, owner="LayerNorm")
        self.elementwise_affine = bool(elementwise_affine)
        affine = self.elementwise_affine
        self.weight = Parameter(np.ones(self.normalized_shape, dtype=dtype)) if affine else None
        self.bias = (
            Parameter(np.zeros(self.normalized_shape, dtype=dtype)) if affine and bias else None
        )

    def forward(self, x: Any) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class RMSNorm(Module):
    r"""``x / sqrt(mean(x^2) + eps) * weight`` over the last dimensions (Llama's norm).

    Parameters
    ----------
    normalized_shape
        The trailing dimensions normalised over.
    eps
        Added to the mean square; ``None``: the input dtype's machine epsilon (torch's default).
    elementwise_affine
        Learn ``weight`` (ones at first).
    dtype
        dtype of the parameters.

    Shape
    -----
    - Input: ``(*, *normalized_shape)``
    - Output: the same

    Examples
    --------
    >>> RMSNorm(2, eps=0.0)(np.array([[3.0, 4.0]], dtype=np.float32)).numpy().round(4)
    array([[0.8485, 1.1314]], dtype=float32)
    """

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float | None = None,
        elementwise_affine: bool = True,
        *,
        dtype: Any = np.float32,
    ) -> None:
        self.normalized_shape = _shape(normalized_shape, "RMSNorm")
        self.eps = check_number("eps", eps, 0.0, allow_none=True, owner="RMSNorm")
        self.elementwise_affine = bool(elementwise_affine)
        self.weight = (
            Parameter(np.ones(self.normalized_shape, dtype=dtype)) if elementwise_affine else None
        )

    def forward(self, x: Any) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    extra_repr = LayerNorm.extra_repr  # PyTorch prints the two alike
