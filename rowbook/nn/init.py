"""Initialisers: fill a parameter in place from an explicit random generator.

Every function takes ``rng``, a :class:`numpy.random.Generator` (or an int seed), so a
model built twice with the same generator state has the same weights. Values are drawn
in float64 and cast to the parameter's dtype, so float32 and float64 tables built from
the same seed agree to float32 precision. They are drawn in blocks of rows
(:data:`BLOCK_VALUES` values at a time) and cast block by block, so filling a table
needs the table plus one block, never a float64 copy of the table: a
``(50_000_000, 64)`` float32 table (12.8 GB) fills in 12.8 GB plus 8 MB. A generator's
draws do not depend on how they are split into calls, so the values are those of one
draw of the whole shape.

Examples
--------
>>> import numpy as np
>>> from rowbook.nn import Parameter
>>> w = Parameter(np.empty((2, 3), dtype=np.float32))
>>> _ = normal_(w, std=0.02, rng=0)
>>> float(abs(w.data).max()) < 0.1
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from rowbook.autograd import Tensor
from rowbook.checks import InputTypeError

__all__ = [
    "BLOCK_VALUES",
    "as_generator",
    "fan_in_and_fan_out",
    "linear_default_",
    "normal_",
    "ones_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
]


def as_generator(rng: np.random.Generator | int | None) -> np.random.Generator:
    """``rng`` itself, or a new generator seeded with it (``None``: fresh OS entropy)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, int | np.integer):
        return np.random.default_rng(rng)
    raise InputTypeError(
        f"rng must be a numpy.random.Generator, an int seed or None, got {type(rng).__name__}"
    )


#: How many values an initialiser draws (in float64) before casting them into the table.
BLOCK_VALUES = 1 << 20


def _fill(tensor: Tensor, draw: Callable[[tuple[int, ...]], np.ndarray]) -> Tensor:
    """Fill ``tensor`` with ``draw(shape)`` block by block of leading rows, casting each block.

    Examples
    --------
    >>> from rowbook.nn import Parameter
    >>> w = Parameter(np.empty((5, 3), dtype=np.float32))
    >>> rng = np.random.default_rng(0)
    >>> _ = _fill(w, lambda shape: rng.normal(size=shape))
    >>> bool(np.array_equal(w.data, np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)))
    True
    """
    data = tensor.data
    if data.ndim == 0:
        data[...] = draw(())
        return tensor
    row_values = max(1, math.prod(data.shape[1:]))
    step = max(1, BLOCK_VALUES // row_values)
    for start in range(0, data.shape[0], step):
        block = data[start : start + step]
        block[...] = draw(block.shape)  # float64 block, cast on assignment
    return tensor


def fan_in_and_fan_out(shape: tuple[int, ...]) -> tuple[int, int]:
    """PyTorch's convention for a ``(out_features, in_features, *kernel)`` weight.

    Examples
    --------
    >>> fan_in_and_fan_out((3, 5))
    (5, 3)
    """
    if len(shape) < 2:
        raise ValueError(f"fan in and fan out need at least 2 dimensions, got shape {shape}")
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, *, rng: Any = None) -> Tensor:
    """Fill with N(mean, std^2); ``std=0.02`` is GPT-2's choice for embedding tables."""
    if std < 0:
        raise ValueError(f"std must be >= 0, got {std}")
    generator = as_generator(rng)
    return _fill(tensor, lambda shape: generator.normal(mean, std, size=shape))


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, *, rng: Any = None) -> Tensor:
    """Fill with U(a, b)."""
    if not a <= b:
        raise ValueError(f"uniform_ needs a <= b, got a={a}, b={b}")
    generator = as_generator(rng)
    return _fill(tensor, lambda shape: generator.uniform(a, b, size=shape))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, *, rng: Any = None) -> Tensor:
    """Glorot & Bengio (2010): U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = fan_in_and_fan_out(tensor.shape)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, rng=rng)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, *, rng: Any = None) -> Tensor:
    """Glorot & Bengio (2010): N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = fan_in_and_fan_out(tensor.shape)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), rng=rng)


def linear_default_(weight: Tensor, bias: Tensor | None, *, rng: Any = None) -> None:
    """PyTorch's ``nn.Linear`` default: weight and bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    rng = as_generator(rng)
    fan_in, _ = fan_in_and_fan_out(weight.shape)
    bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
    uniform_(weight, -bound, bound, rng=rng)
    if bias is not None:
        uniform_(bias, -bound, bound, rng=rng)


def zeros_(tensor: Tensor) -> Tensor:
    tensor.data[...] = 0
    return tensor


def ones_(tensor: Tensor) -> Tensor:
    tensor.data[...] = 1
    return tensor
